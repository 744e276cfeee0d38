"""Building a `FederationConfig` in tests: parts by their registered names, settings given flat."""
from __future__ import annotations

from typing import Any

from harness.runners.parts import OBJECTIVES, POLICIES
from methods.federated import FederationConfig
from methods.federated.parts import Choice


def part(point, name: str, values: dict[str, Any]) -> Choice:
    """The part `name` with those of `values` that are its settings (removed from `values`)."""
    cls = point.load(name)
    return Choice.of(cls, **{key: values.pop(key) for key in list(values) if key in cls.Settings.model_fields})


def federation_config(policy: str = "heterofl", objective: str = "sgd", **values: Any) -> FederationConfig:
    """A config whose policy and objective are named, each taking its own settings from `values`
    (e.g. `federation_config(policy="uniform", width=0.5, objective="fedprox", mu=1.0)`)."""
    chosen_policy = part(POLICIES, policy, values)
    chosen_objective = part(OBJECTIVES, objective, values)
    return FederationConfig(policy=chosen_policy, objective=chosen_objective, **values)
