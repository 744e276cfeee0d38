"""Missing evaluations are never silent: metrics refuse them (or say how they treat them), verdicts
name the record, variant, seed and round, and numerics drift pairs rounds by index."""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib
import pytest

from harness.kinds import kind
from harness.kinds.evaluations import MissingValue
from harness.loading.catalog import load_catalog
from harness.regression.numerics_drift import accuracy_growth, pairs
from harness.running.store import ResultStore
from harness.verdicts.verify import ERROR, FAIL, PASS, verify_claim
from tests.record_helpers import keyed

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parents[1]
FEDERATED = kind("federated_training")
ROUNDS, EVERY = 64, 4
"""As the smoke FedRolex runs: 16 evaluations; end_accuracy's window (6 rounds) holds rounds 60 and 64."""


def federated_result(accuracies: list[float], seed: int = 0) -> dict:
    """A run of ROUNDS rounds evaluated every EVERY rounds: one history row per round, the rows off the
    schedule null by design."""
    history = [{"round": t, "test_accuracy": None, "test_loss": None} for t in range(ROUNDS)]
    for index, accuracy in enumerate(accuracies):
        row = history[(index + 1) * EVERY - 1]
        row["test_accuracy"], row["test_loss"] = accuracy, 2.0 - accuracy
    return {"seed": seed, "config": {"rounds": ROUNDS, "eval_every": EVERY}, "history": history, "num_classes": 10,
            "diverged": False, "diverged_round": None}


def nulled(result: dict, round_index: int, field: str = "test_accuracy") -> dict:
    result["history"][round_index][field] = None
    return result


def metric(name: str, result: dict) -> float:
    spec = FEDERATED.metrics[name]
    return spec.compute(result, spec.args())


def rising(offset: float = 0.0) -> list[float]:
    return [0.1 + 0.01 * i + offset for i in range(ROUNDS // EVERY)]


def test_rounds_not_evaluated_by_design_are_not_missing() -> None:
    result = federated_result(rising())
    assert metric("end_accuracy", result) == pytest.approx(100 * (0.24 + 0.25) / 2)
    assert metric("final_accuracy", result) == pytest.approx(25.0)


@pytest.mark.parametrize("name", ["final_accuracy", "best_accuracy", "end_accuracy", "peak_to_end_drop",
                                  "peak_to_final_drop", "accuracy_above_chance"])
def test_an_evaluated_null_accuracy_is_refused_naming_field_and_round(name: str) -> None:
    with pytest.raises(MissingValue) as refused:
        metric(name, nulled(federated_result(rising()), ROUNDS - 1))
    assert "test_accuracy at round 64/64 is null" in str(refused.value)
    assert "eval_every = 4" in str(refused.value)


def diverged_result() -> dict:
    """Diverged at round 10 (0-based): evaluated there off the schedule, the loss NaN (stored null)."""
    result = federated_result(rising()[:2])
    result["history"] = result["history"][:11]
    result["history"][10].update(test_accuracy=0.1, test_loss=None)
    result.update(diverged=True, diverged_round=10)
    return result


@pytest.mark.parametrize("name", ["final_loss", "end_loss", "loss_rise_after_min"])
def test_a_diverged_rounds_null_loss_is_refused_by_the_loss_metrics(name: str) -> None:
    with pytest.raises(MissingValue, match=r"test_loss at round 11/64 is null \(evaluated at the round the run "
                                           r"diverged"):
        metric(name, diverged_result())


def test_min_loss_skips_a_null_loss_as_its_definition_says() -> None:
    assert metric("min_loss", diverged_result()) == pytest.approx(2.0 - 0.11)
    assert FEDERATED.metrics["min_loss"].tolerates is not None


def test_fedhenets_null_accuracy_is_refused() -> None:
    spec = kind("fedhenet").metrics["accuracy"]
    with pytest.raises(MissingValue, match="accuracy is null"):
        spec.compute({"accuracy": None}, spec.args())


# --- verdicts ---------------------------------------------------------------------------

CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
LOW_HETEROGENEITY = "fedrolex.accuracy.low-heterogeneity-beats-heterofl"
"""FedRolex L=5 minus HeteroFL L=5 (end_accuracy) above 0, smoke seeds 0-2."""


def key_of(variant: str, seed: int) -> str:
    return f"{seed}{variant}".ljust(64, "0")


def stored(experiment: str, variant: str, seed: int, result: dict) -> dict:
    return {"key": key_of(variant, seed), "experiment": experiment, "variant": variant, "seed": seed, "status": "ok",
            "config": {}, "result": result}


def verdict(claim: str, profile: str, results: dict[tuple[str, int], dict], experiment: str,
            seeds: list[int] | None = None):
    records = {where: stored(experiment, *where, result) for where, result in results.items()}
    lookup = lambda experiment, variant, seed, profile: (records[(variant, seed)]["key"],  # noqa: E731
                                                         records[(variant, seed)])
    return verify_claim(CATALOG, CATALOG.claim(claim), profile, lookup, seeds=seeds)


def behind_by(points: list[float]) -> dict[tuple[str, int], dict]:
    """FedRolex behind HeteroFL by the given accuracy on each seed."""
    results = {}
    for seed, gap in enumerate(points):
        results[("fedrolex-l5", seed)] = federated_result(rising(), seed)
        results[("heterofl-l5", seed)] = federated_result(rising(gap), seed)
    return results


def test_a_null_evaluation_makes_the_verdict_error_naming_record_variant_seed_and_round() -> None:
    results = behind_by([0.039, 0.032, 0.018])
    assert verdict(LOW_HETEROGENEITY, "smoke", results, "fedrolex-cifar10").status == FAIL
    nulled(results[("heterofl-l5", 1)], ROUNDS - 1)  # read before as the mean of what was left
    found = verdict(LOW_HETEROGENEITY, "smoke", results, "fedrolex-cifar10")
    assert found.status == ERROR
    for named in (f"record {key_of('heterofl-l5', 1)[:12]}", "fedrolex-cifar10", "variant heterofl-l5", "seed 1",
                  "test_accuracy at round 64/64", "end_accuracy refuses"):
        assert named in found.reason


def test_a_metric_that_tolerates_a_missing_value_says_so_in_the_reason() -> None:
    claim = "hasfl.figure8.cifar10.hasfl-loss-minimum"  # min_loss ≈ 1.24 ± 10% at the paper profile
    results = {("hasfl", seed): federated_result([0.76, 0.75, 0.77, 0.74] * 4, seed) for seed in range(3)}
    nulled(results[("hasfl", 2)], 7, "test_loss")
    found = verdict(claim, "paper", results, "hasfl-cifar10", seeds=[0, 1, 2])
    assert found.status == PASS
    assert f"record {key_of('hasfl', 2)[:12]}" in found.reason and "seed 2" in found.reason
    assert "test_loss at round 8/64 is null" in found.reason and "min_loss skips it" in found.reason


# --- figures ----------------------------------------------------------------------------

def test_accuracy_curves_pair_seeds_by_round_and_leave_a_missing_evaluation_as_a_gap() -> None:
    fig, ax = plt.subplots()
    results = [federated_result(rising(), 0), nulled(federated_result(rising(), 1), 27)]
    FEDERATED.plots["accuracy_curves"].draw(ax, {"v": results}, {"v": "v"})
    rounds, mean = ax.lines[0].get_data()
    plt.close(fig)
    assert list(rounds) == list(range(EVERY, ROUNDS + 1, EVERY))
    assert math.isnan(mean[6]) and mean[7] == pytest.approx(100 * rising()[7])


# --- numerics drift ---------------------------------------------------------------------

def numerics_record(run: str, fingerprint: str, result: dict) -> dict:
    return keyed({"experiment": "e", "variant": "v", "seed": 0, "profile": "smoke",
                  "kind": "federated_training", "config": {"run": run}, "status": "ok", "error": None, "result": result,
                  "provenance": {"numerics": {"fingerprint": fingerprint}}})


def test_drift_pairs_rounds_by_index_and_lists_a_round_only_one_store_has(tmp_path: Path) -> None:
    first, second = ResultStore(tmp_path / "a"), ResultStore(tmp_path / "b")
    first.put(numerics_record("k1", "here", federated_result(rising())))
    second.put(numerics_record("k1", "there", nulled(federated_result(rising()), 27)))
    forward, = accuracy_growth(list(pairs(first, second)))
    backward, = accuracy_growth(list(pairs(second, first)))
    assert forward.rms == backward.rms and forward.rounds == backward.rounds
    assert 27 not in forward.rounds and len(forward.rounds) == ROUNDS // EVERY - 1
    assert set(forward.rms) == {0.0}  # bit-identical runs: no drift on any round both evaluated
    key = numerics_record("k1", "here", {})["key"]
    assert f"round 28 of {key[:12]} (v, seed 0): null in the second store" in forward.text()
    assert "null in the first store" in backward.text()
