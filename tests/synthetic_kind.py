"""A tiny experiment kind for tests of seeds added until decided: a run returns the value its
config lists for its seed (cycling), so a test fixes every seed's observation in advance."""
from __future__ import annotations

import time

from pydantic import Field

from harness.kinds.base import ExperimentKind, Metric
from harness.runners.references import MetricOf
from harness.schema.base import StrictModel


class Config(StrictModel):
    values: list[float] = Field(min_length=1)
    seconds: float = 0.01
    """How long a run takes, so that its record measures a cost above zero."""
    shift: float | MetricOf = 0.0
    """Added to the value; may be another variant's value for the same seed."""


def run(config: Config, seed: int, context) -> dict:
    time.sleep(config.seconds)
    return {"value": config.values[seed % len(config.values)] + config.shift}


SYNTHETIC = ExperimentKind(
    name="synthetic",
    description="One listed value per seed.",
    runner=__name__,
    metrics={"value": Metric("the value listed for the run's seed", lambda result, args: result["value"])},
    evidence="empirical",
)
