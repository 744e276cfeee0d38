"""Metrics and per-client quantities of federated_training records, on small synthetic records."""
from __future__ import annotations

import pytest

from harness.kinds import KINDS

KIND = KINDS["federated_training"]


def metric(name: str, record: dict, **args) -> float:
    spec = KIND.metrics[name]
    return spec.compute(record, spec.args.model_validate(args))


def quantity(name: str, record: dict) -> list[float]:
    return KIND.client_quantities[name].compute(record)


def hasfl_record(caps: list[float], final_allocation: list[float]) -> dict:
    return {"caps": caps, "adaptations": [{"round": 9, "allocation": final_allocation}]}


def test_at_cap_marks_the_clients_whose_final_allocation_is_their_cap() -> None:
    record = hasfl_record([0.25, 0.5, 0.5, 0.5, 1.0], [0.25, 0.5, 0.47, 0.5, 0.61])
    assert quantity("at_cap", record) == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert metric("clients_mean", record, quantity="at_cap", tier=0.5) == pytest.approx(2 / 3)


def test_at_cap_needs_an_adaptation_step() -> None:
    with pytest.raises(ValueError, match="no adaptation step"):
        quantity("at_cap", {"caps": [0.5], "adaptations": []})
