"""Drift across numerics: measured from two recordings, and the per-series test that uses it."""
from __future__ import annotations

import math

import numpy as np
import pytest

from harness import drift


def _entry(values: dict[str, float], experiment: str = "e", quantity: str = "m", invariant: bool = False,
           numerics: str = "here", runs: str = "same records") -> dict:
    return {"experiment": experiment, "runs": runs, "numerics": [numerics],
            "numbers": {"a (m)": {"values": values, "quantity": quantity, "std": 1.0, "numerics_invariant": invariant}}}


def test_differences_are_grouped_by_experiment_and_quantity_and_counted_once() -> None:
    here = {"c.one": _entry({"0": 1.0, "1": 2.0}), "c.two": _entry({"0": 1.0, "1": 2.0}),
            "c.count": _entry({"0": 5.0}, invariant=True), "c.other": _entry({"0": 1.0}, experiment="f")}
    there = {"c.one": _entry({"0": 1.5, "1": 1.0}, numerics="there"),
             "c.two": _entry({"0": 1.5, "1": 1.0}, numerics="there"),
             "c.count": _entry({"0": 6.0}, invariant=True, numerics="there"),
             "c.other": _entry({"0": 3.0}, experiment="f", numerics="there")}
    found = drift.measured_differences(here, there)
    assert found == {"e / m": [0.5, -1.0], "f / m": [2.0]}
    other_code = {claim: {**entry, "runs": "other records"} for claim, entry in there.items()}
    assert drift.measured_differences(here, other_code) == {}  # another code's records are not drift
    assert drift.measured_differences(here, here) == {}  # nor are the same numerics
    table = drift.table([found])
    assert table["e / m"] == {"rms": pytest.approx(math.sqrt(1.25 / 2)), "count": 2}


def test_the_drift_test_holds_its_level_under_pure_drift() -> None:
    """Simulated: 2000 series of 3 seeds moved only by drift of the measured size: the F test
    rejects about α of them; a 4-scale shift is rejected almost always."""
    rng = np.random.default_rng(0)
    measured = {"groups": {"e / m": {"rms": 1.0, "count": 80}}}
    recorded = {"values": {"0": 0.0, "1": 0.0, "2": 0.0}, "std": 5.0}
    rejected = shifted = 0
    for _ in range(2000):
        moved = rng.normal(0.0, 1.0, 3)
        now = {"values": {str(i): float(v) for i, v in enumerate(moved)}}
        rejected += drift.drift_test("c", "a", "e / m", now, recorded, measured).p_value < 0.05
        now = {"values": {str(i): float(v + 4.0) for i, v in enumerate(moved)}}
        shifted += drift.drift_test("c", "a", "e / m", now, recorded, measured).p_value < 0.05
    assert rejected / 2000 < 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)
    assert shifted / 2000 > 0.95


def test_the_floor_and_the_fallback_scale() -> None:
    measured = {"groups": {"e / m": {"rms": 1e-6, "count": 10}}}
    assert drift.scale(measured, "e / m", recorded_sd=2.0, n=3).rms == pytest.approx(drift.FLOOR_FRACTION * 2.0)
    unmeasured = drift.scale({}, "e / other", recorded_sd=2.0, n=3)
    assert unmeasured.rms == pytest.approx(2.0 * math.sqrt(2)) and not unmeasured.measured and unmeasured.count == 2


def test_near_margin_follows_the_drift_of_the_statistic() -> None:
    """A paired difference of two series each drifting by 1.0 over 3 seeds, SE 0.5: the statistic
    moves by sqrt(2) / sqrt(3) / 0.5 = 1.63 SE, so near is 3 x 1.63."""
    numbers = {"a": {"quantity": "m", "std": 2.0, "n": 3, "mean": 1.0},
               "b": {"quantity": "m", "std": 2.0, "n": 3, "mean": 1.0}}
    measured = {"groups": {"e / m": {"rms": 1.0, "count": 50}}}
    evidence = [{"se": 0.5, "seeds": 3, "sources": ["a", "b"], "fisher_z": False}]
    assert drift.statistic_drift(evidence, numbers, "e", measured) == pytest.approx(math.sqrt(2 / 3) / 0.5)
    assert drift.near_margin(evidence, numbers, "e", measured) == pytest.approx(3 * math.sqrt(2 / 3) / 0.5)
    tiny = {"groups": {"e / m": {"rms": 1e-4, "count": 50}}}
    assert drift.near_margin(evidence, numbers, "e", tiny) == drift.MIN_NEAR_MARGIN
