"""The observations a claim can name, one module each (a class with its `key` and `doc`), found by
`harness.schema.base.discovered`: adding one is adding its module."""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness.schema.base import discovered, tagged_union
from harness.schema.observations.base import ObservationBase

OBSERVATIONS = discovered(__name__, __path__, ObservationBase)
"""Every observation class, by the key that names it in a claim file."""
OBSERVATION_KEYS = tuple(OBSERVATIONS)

if TYPE_CHECKING:  # the static union mypy narrows with isinstance; at run time the registry's
    from harness.schema.observations.compare import CompareObservation
    from harness.schema.observations.correlation import CorrelationObservation
    from harness.schema.observations.difference import DifferenceObservation
    from harness.schema.observations.metric import MetricObservation
    from harness.schema.observations.spread import SpreadObservation
    Observation = (MetricObservation | DifferenceObservation | CorrelationObservation | CompareObservation
                   | SpreadObservation)
else:
    Observation = tagged_union(OBSERVATIONS, "observation_kind", "an observation")
