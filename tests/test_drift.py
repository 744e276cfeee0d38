"""Drift across numerics: measured from two recordings, and the per-series test that uses it."""
from __future__ import annotations

import math

import numpy as np
import pytest

from harness.regression import drift, nearness


def _entry(values: dict[str, float], experiment: str = "e", quantity: str = "m", invariant: bool = False,
           numerics: str = "here", runs: str = "same records") -> dict:
    return {"experiment": experiment, "runs": runs, "numerics": [numerics],
            "numbers": {"a (m)": {"values": values, "quantity": quantity, "std": 1.0, "numerics_invariant": invariant}}}


def _recording(values: dict[str, dict[str, float]], experiment: str = "e", quantity: str = "m",
               numerics: str = "here", runs: str = "same records") -> dict:
    """One claim per series label, each {seed: value}."""
    return {f"c.{label}": {"experiment": experiment, "runs": runs, "numerics": [numerics],
                           "numbers": {label: {"values": seeds, "quantity": quantity, "std": 1.0}}}
            for label, seeds in values.items()}


def test_bit_identical_recordings_count_as_one_numerics() -> None:
    """Five recordings of three numerics (two numerics recorded twice, by two codes whose records
    are bit-identical): each (series, seed) gives 2 degrees of freedom (the rule before counted 4
    pairs of differences for it)."""
    a = _recording({"x": {"0": 0.0, "1": 1.0}}, numerics="a")
    b = _recording({"x": {"0": 0.3, "1": 1.6}}, numerics="b")
    c = _recording({"x": {"0": -0.3, "1": 1.3}}, numerics="c")
    old_code = {name: {claim: {**entry, "runs": "older records"} for claim, entry in recording.items()}
                for name, recording in (("a", a), ("b", b))}
    found = drift.measure({"a": a, "a, older code": old_code["a"], "b": b, "b, older code": old_code["b"], "c": c})
    group = found["groups"]["e / m"]
    assert group["count"] == 4
    squares = sum((v - sum(vs) / 3) ** 2 for vs in ([0.0, 0.3, -0.3], [1.0, 1.6, 1.3]) for v in vs)
    assert group["rms"] == pytest.approx(math.sqrt(2 * squares / 4))
    assert found["numerics"]["e"] == ["a", "b", "c"]


def test_a_recording_without_its_numerics_is_the_numerics_it_is_bit_identical_to() -> None:
    """Older recordings did not store their numerics: one that agrees bit for bit with a recording
    of known numerics is that numerics (it adds no degree of freedom); one that differs is its own."""
    a = _recording({"x": {"0": 0.0, "1": 1.0}}, numerics="a")
    b = _recording({"x": {"0": 0.3, "1": 1.6}}, numerics="b")
    again = _recording({"x": {"0": 0.3, "1": 1.6}}, numerics="unrecorded")
    other = _recording({"x": {"0": -0.3, "1": 1.3}}, numerics="unrecorded")
    assert drift.measure({"a": a, "b": b, "b, unrecorded": again})["groups"]["e / m"]["count"] == 2
    assert drift.measure({"a": a, "b": b, "elsewhere": other})["groups"]["e / m"]["count"] == 4


def test_a_recording_of_two_numerics_is_compared_one_numerics_at_a_time() -> None:
    """A baseline whose later claims were recorded on another machine holds values of two numerics;
    an unrecorded recording bit-identical to one of them is still that numerics (the rule before
    compared it with both, found a mismatch and counted it as a numerics of its own)."""
    a = _recording({"x": {"0": 0.0, "1": 1.0}}, numerics="a")
    b = _recording({"y": {"0": 5.0, "1": 6.0}}, numerics="b")
    baseline = {**a, **b}
    again = _recording({"x": {"0": 0.0, "1": 1.0}, "y": {"0": 5.5, "1": 6.5}}, numerics="unrecorded")
    elsewhere = _recording({"x": {"0": 0.3, "1": 1.6}, "y": {"0": 5.2, "1": 6.1}}, numerics="c")
    group = drift.measure({"baseline": baseline, "older code": again, "c": elsewhere})["groups"]["e / m"]
    assert group["series"]["x"]["count"] == 2, "the unrecorded recording is numerics a on x"
    assert group["series"]["y"]["count"] == 4, "and a numerics of its own on y, where it differs from b"


def test_only_records_of_one_code_and_trained_series_are_drift() -> None:
    here = _recording({"x": {"0": 1.0}}, numerics="here")
    other_code = _recording({"x": {"0": 3.0}}, numerics="there", runs="other records")
    assert drift.measure({"here": here, "there": other_code})["groups"] == {}
    agreeing = _recording({"x": {"0": 1.0}}, numerics="there")  # other numerics, the same bits: no drift
    assert drift.measure({"here": here, "there": agreeing})["groups"]["e / m"]["rms"] == 0.0
    invariant = {k: {**v, "numbers": {"x": {**v["numbers"]["x"], "numerics_invariant": True}}}
                 for k, v in _recording({"x": {"0": 2.0}}, numerics="there").items()}
    assert drift.measure({"here": here, "there": invariant})["groups"] == {}


def _heterogeneous() -> dict:
    """Series `calm` drifts by 0.1, `wild` by 1.0 (per difference), over 40 seeds and 2 numerics."""
    rng = np.random.default_rng(3)
    first = {"calm": {}, "wild": {}}
    second = {"calm": {}, "wild": {}}
    for seed in range(40):
        for label, tau in (("calm", 0.1), ("wild", 1.0)):
            first[label][str(seed)] = 0.0
            second[label][str(seed)] = float(rng.normal(0.0, tau))
    return drift.measure({"a": _recording(first, numerics="a"), "b": _recording(second, numerics="b")})


def test_series_that_drift_differently_are_tested_against_their_own_drift() -> None:
    measured = _heterogeneous()
    group = measured["groups"]["e / m"]
    assert group["heterogeneity_p"] < 1e-6
    pooled = drift.scale(measured, "e / m", 1.0, 3, "calm")
    wild = drift.scale(measured, "e / m", 1.0, 3, "wild")
    unmeasured = drift.scale(measured, "e / m", 1.0, 3, "new")
    assert pooled.source == drift.MEASURED and wild.source == drift.OWN and unmeasured.source == drift.LARGEST
    assert wild.rms == pytest.approx(group["series"]["wild"]["rms"]) and wild.rms > 1.3 * pooled.rms
    # the wild series moved by its own drift is no alarm; against the pooled value it was one
    recorded = {"values": {"0": 0.0, "1": 0.0, "2": 0.0}, "std": 5.0}
    now = {"values": {"0": 1.9, "1": -1.7, "2": 1.8}}
    assert drift.drift_test("c", "wild", "e / m", now, recorded, measured).p_value > 0.01
    flat = {**measured, "groups": {"e / m": {k: v for k, v in group.items() if k != "heterogeneity_p"}}}
    assert drift.drift_test("c", "wild", "e / m", now, recorded, flat).p_value < 0.01


def test_the_detectable_shift_has_the_stated_power() -> None:
    """Simulated: a constant shift of `detectable_shift` is flagged in 80% of draws."""
    scale = drift.Scale(0.7, 40, drift.MEASURED)
    level = 0.01 / 80
    shift = drift.detectable_shift(scale, 5, level)
    rng = np.random.default_rng(1)
    critical = float(drift.stats.f.isf(level, 5, 40))
    hits = 0
    for _ in range(4000):
        tau = 0.7 * math.sqrt(rng.chisquare(40) / 40)  # the measured scale is itself an estimate
        d = rng.normal(shift, 0.7, 5)
        hits += float(np.sum(d * d)) / (5 * tau * tau) > critical
    assert abs(hits / 4000 - drift.POWER) < 0.03
    assert drift.detectable_shift(scale, 5, level) < drift.detectable_shift(scale, 3, level)


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


def test_a_measured_drift_is_taken_as_measured_and_the_fallback_scale() -> None:
    measured = {"groups": {"e / m": {"rms": 1e-6, "count": 10}}}
    assert drift.scale(measured, "e / m", recorded_sd=2.0, n=3).rms == pytest.approx(1e-6)
    unmeasured = drift.scale({}, "e / other", recorded_sd=2.0, n=3)
    assert unmeasured.rms == pytest.approx(2.0 * math.sqrt(2)) and not unmeasured.measured and unmeasured.count == 2
    assert "NOT MEASURED" in unmeasured.text()


def test_a_series_is_not_held_to_the_drift_of_the_one_other_series_measured() -> None:
    """HAS-FL's mean capacity was measured across numerics, its guarantee-off ablation never: the
    ablation falls back on its own seed spread instead of borrowing HAS-FL's drift (a twentieth of the
    ablation's move on one seed at standard); the measured series keeps its measurement."""
    measured = {"groups": {"e / m": {"rms": 3e-6, "count": 5, "heterogeneity_p": 1.0,
                                     "series": {"HAS-FL (m)": {"rms": 3e-6, "count": 5}}}}}
    own = drift.scale(measured, "e / m", recorded_sd=0.015, n=5, label="HAS-FL (m)")
    other = drift.scale(measured, "e / m", recorded_sd=0.015, n=5, label="guarantee off (m)")
    assert own.source == drift.MEASURED and own.rms == pytest.approx(3e-6)
    assert other.source == drift.FALLBACK and other.rms == pytest.approx(0.015 * math.sqrt(2))
    recorded = {"values": {"0": 0.4434, "1": 0.4431, "2": 0.4481, "3": 0.4792, "4": 0.4554}, "std": 0.015}
    moved = {"values": {"0": 0.4434 + 5.7e-5, "1": 0.4431 + 8.6e-6, "2": 0.4481 - 2.2e-6, "3": 0.4792 + 3.3e-6,
                        "4": 0.4554 - 2.6e-6}}
    assert drift.drift_test("c", "guarantee off (m)", "e / m", moved, recorded, measured).p_value > 0.5
    assert drift.drift_test("c", "HAS-FL (m)", "e / m", moved, recorded, measured).p_value < 0.001


def test_no_reach_is_simulated_for_a_series_its_group_never_measured() -> None:
    """FedHENet's plaintext-minus-FedAvg difference (16.3, 14.4, 13.3 points) shares its group with the
    one measured difference, encrypted minus plaintext (drift 0): the fallback scale (√2 × its seed sd,
    2.1 points) is a guess the regression check may test against, not a drift to call a verdict 13 SE
    from its boundary fragile by (70 SE of simulated reach); the measured series keeps its reach."""
    measured = {"groups": {"e / difference of accuracy": {
        "rms": 0.0, "count": 6, "heterogeneity_p": 1.0,
        "series": {"encrypted − plaintext (accuracy)": {"rms": 0.0, "count": 6}}}}}
    values = {"0": 16.3, "1": 14.4, "2": 13.3}
    x = np.array(list(values.values()))
    se = float(np.std(x, ddof=1)) / math.sqrt(3)
    numbers = {label: {"quantity": "difference of accuracy", "std": float(np.std(x, ddof=1)), "n": 3, "values": values}
               for label in ("plaintext − FedAvg (accuracy)", "encrypted − plaintext (accuracy)")}
    item = {"se": se, "seeds": 3, "df": 2, "statistic": float(x.mean()) / se}
    unmeasured = {**item, "sources": ["plaintext − FedAvg (accuracy)"]}
    assert nearness.statistic_reach(unmeasured, numbers, "e", measured) is None
    assert nearness.near_margin([unmeasured], numbers, "e", measured) == nearness.MIN_NEAR_MARGIN
    assert nearness.statistic_reach({**item, "sources": ["encrypted − plaintext (accuracy)"]}, numbers, "e",
                                    measured) == 0.0


def test_near_margin_follows_the_drift_of_the_statistic() -> None:
    """A paired difference of two series each drifting by 1.0 over 3 seeds, SE 0.5: the statistic
    moves by sqrt(2) / sqrt(3) / 0.5 = 1.63 SE, so near is 3 x 1.63."""
    numbers = {"a": {"quantity": "m", "std": 2.0, "n": 3, "mean": 1.0},
               "b": {"quantity": "m", "std": 2.0, "n": 3, "mean": 1.0}}
    measured = {"groups": {"e / m": {"rms": 1.0, "count": 50}}}
    evidence = [{"se": 0.5, "seeds": 3, "sources": ["a", "b"], "fisher_z": False}]
    assert nearness.statistic_drift(evidence, numbers, "e", measured) == pytest.approx(math.sqrt(2 / 3) / 0.5)
    assert nearness.near_margin(evidence, numbers, "e", measured) == pytest.approx(3 * math.sqrt(2 / 3) / 0.5)
    tiny = {"groups": {"e / m": {"rms": 1e-4, "count": 50}}}
    assert nearness.near_margin(evidence, numbers, "e", tiny) == nearness.MIN_NEAR_MARGIN


def test_a_paired_difference_moves_by_the_drift_of_the_difference() -> None:
    """Two series that move together across seeds (seed sd 10, sd of their difference 0.1): the
    pairing keeps the drift of their difference small, measured or not (the rule before added
    the two series' own fallbacks: hundreds of SE)."""
    a = {"0": 10.0, "1": 20.0, "2": 30.0}
    b = {"0": 10.1, "1": 19.95, "2": 30.02}
    numbers = {"a": {"quantity": "m", "std": 10.0, "n": 3, "values": a},
               "b": {"quantity": "m", "std": 10.0, "n": 3, "values": b}}
    differences = [a[s] - b[s] for s in a]
    se = float(np.std(differences, ddof=1)) / math.sqrt(3)
    evidence = [{"se": se, "seeds": 3, "sources": ["a", "b"], "fisher_z": False}]
    unmeasured = nearness.statistic_drift(evidence, numbers, "e", {})
    assert unmeasured == pytest.approx(math.sqrt(2) * math.sqrt(3) / math.sqrt(3))  # √2 × sd / (sd / √n) / √n
    measured = {"groups": {"e / difference of m": {"rms": 0.01, "count": 30}, "e / m": {"rms": 5.0, "count": 30}}}
    assert nearness.statistic_drift(evidence, numbers, "e", measured) == pytest.approx(0.01 / math.sqrt(3) / se)


def test_the_reach_of_the_drift_counts_the_moving_seed_spread() -> None:
    """Three seeds (sd 0.55) drifting by 0.7 each: the t statistic moves through its spread as much
    as through its mean. Simulated moves exceed the linear margin (3 × drift / SE) in 5% of draws,
    which made a far move, a failure, of drift alone; they exceed the simulated reach in under 1%."""
    x = [0.0, 0.4, 1.1]
    sd = float(np.std(x, ddof=1))
    se = sd / math.sqrt(3)
    statistic = float(np.mean(x)) / se
    numbers = {"a": {"quantity": "m", "std": sd, "n": 3, "values": {str(i): v for i, v in enumerate(x)}}}
    measured = {"groups": {"e / m": {"rms": 0.7, "count": 60}}}
    item = {"se": se, "seeds": 3, "sources": ["a"], "df": 2, "statistic": statistic}
    near = nearness.near_margin([item], numbers, "e", measured)
    linear = nearness.NEAR_DRIFTS * nearness.statistic_drift([item], numbers, "e", measured)
    moved = np.array(x) + 0.7 * np.random.default_rng(99).standard_normal((20000, 3))
    moves = np.abs(moved.mean(axis=1) / (moved.std(axis=1, ddof=1) / math.sqrt(3)) - statistic)
    assert (moves > linear).mean() > 0.03
    assert (moves > near).mean() <= 1.0 - nearness.NEAR_QUANTILE


def test_a_metric_that_barely_drifts_shows_a_change_far_inside_its_seed_spread() -> None:
    """HAS-FL's mean capacity drifted by 8.9e-6 between the recorded machines (6 df) against a seed sd of
    0.049; a scalar H-bar in the allocation rule moved it by 0.021, 0.002 and 0.013 on the three smoke seeds
    (measured on this machine). Against a twentieth of the seed sd (the floor before) the move is p = 0.0004,
    which Holm over a check's hundreds of series does not reach; against the drift itself it is beyond doubt,
    while the drift alone stays quiet."""
    measured = {"groups": {"hasfl-cifar10 / mean_capacity": {"rms": 8.923e-06, "count": 6}}}
    recorded = {"values": {"0": 0.46156, "1": 0.53480, "2": 0.55531}, "std": 0.049287}
    mutated = {"values": {"0": 0.48299, "1": 0.53685, "2": 0.56782}}
    test = drift.drift_test("c", "HAS-FL (mean_capacity)", "hasfl-cifar10 / mean_capacity", mutated, recorded,
                            measured)
    assert test is not None and test.p_value < drift.ALPHA / 1000
    rng = np.random.default_rng(0)
    quiet = [drift.drift_test("c", "a", "hasfl-cifar10 / mean_capacity",
                              {"values": {k: v + rng.normal(0.0, 8.923e-06)
                                          for k, v in recorded["values"].items()}}, recorded, measured).p_value
             for _ in range(400)]
    assert sum(p < 0.01 for p in quiet) / 400 < 0.05


def test_numerics_no_recording_holds_are_tested_against_the_larger_of_the_measured_drift_and_the_fallback() -> None:
    from harness.regression.drift import FALLBACK, MEASURED, UNRECORDED, recorded, scale
    drift = {"numerics": {"e": ["amd"]}, "groups": {"e / end_accuracy": {"rms": 0.66, "count": 66}}}
    assert scale(drift, "e / end_accuracy", 2.0, 3).source == MEASURED
    wide = scale(drift, "e / end_accuracy", 2.0, 3, recorded_numerics=False)
    assert wide.source == UNRECORDED and wide.rms == pytest.approx(2.0 * 2 ** 0.5) and wide.count == 2
    assert scale(drift, "e / end_accuracy", 0.1, 3, recorded_numerics=False).source == MEASURED  # drift the larger
    assert scale({}, "e / end_accuracy", 2.0, 3, recorded_numerics=False).source == FALLBACK
    assert recorded(drift, "e", ["amd"]) and not recorded(drift, "e", ["amd", "intel"])
    assert recorded(drift, "other", ["intel"])  # where the drift does not say which numerics it measured
