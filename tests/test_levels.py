"""Evidence levels (`harness.verdicts.levels`): how far the models learned against the paper, the reference
variant a claim is read at, structural and cost metrics apart, and effects below interest."""
from pathlib import Path

from harness.loading.catalog import load_catalog
from harness.verdicts.levels import LEARNED, level_reader
from harness.verdicts.verify import Verdict

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)


def _verdict(claim: str, profile: str, status: str, numbers=None) -> Verdict:
    loaded = CATALOG.claim(claim)
    return Verdict(claim, loaded.paper, profile, loaded.claim.experiment, loaded.claim.source,
                   loaded.claim.statement, "expectation", status, "reason", numbers=numbers or {})


def test_the_level_is_the_share_of_the_papers_gain_over_chance() -> None:
    reader = level_reader(CATALOG, {("hasfl-cifar10", "hasfl", "learning"): 40.7})
    level = reader.level(_verdict("hasfl.parity.cifar10.random-budget-matches-hasfl", "learning", "PASS"))
    assert abs(level.fraction - (40.7 - 10) / (74.5 - 10)) < 1e-12
    assert level.group == "weak" and level.fraction < LEARNED


def test_the_reference_is_the_variant_the_paper_puts_highest_not_a_collapsed_one() -> None:
    # guarantee off collapses in the paper (40.4%): read against it, 29.6% would look like 0.64
    accuracies = {("hasfl-cifar10", "hasfl", "learning"): 40.7,
                  ("hasfl-cifar10", "hasfl-no-guarantee", "learning"): 29.6}
    level = level_reader(CATALOG, accuracies).level(
        _verdict("hasfl.table3.cifar10.guarantee-off-ends-lower", "learning", "PASS"))
    assert abs(level.fraction - 0.476) < 1e-3 and "HAS-FL:" in level.text


def test_structural_and_cost_metrics_are_not_graded_by_learning() -> None:
    reader = level_reader(CATALOG, {})
    assert reader.level(_verdict("fedhenet.protocol.one-round", "smoke", "PASS")).group == "analytic"
    assert reader.level(_verdict("fedhenet.he.coordinator-holds-no-secret-key", "smoke", "PASS")).group == "analytic"
    assert reader.level(_verdict("fedhenet.energy.about-70-percent-saved", "smoke", "PASS")).group == "cost"
    assert reader.level(_verdict("hasfl.alloc.cap-at-1.4-for-tier-0.75", "smoke", "PASS")).group == "analytic"


def test_an_ordering_resting_on_less_than_the_smallest_effect_is_weak() -> None:
    claim = "hasfl.figure8.cifar10.fedavg-loss-below-fedprox"  # order: [fedprox, fedavg] of end_loss
    reader = level_reader(CATALOG, {("hasfl-cifar10", "fedavg", "standard"): 80.0})

    def losses(fedprox: float, fedavg: float) -> dict:
        return {"FedProx (μ = 1) (end_loss)": {"mean": fedprox, "std": 0.01, "n": 5},
                "FedAvg (end_loss)": {"mean": fedavg, "std": 0.01, "n": 5}}

    labels = {v.label for v in CATALOG.specs["hasfl-cifar10"].spec.variants.values()}
    assert {"FedProx (μ = 1)", "FedAvg"} <= labels, labels
    weak = reader.level(_verdict(claim, "standard", "PASS", losses(2.00034, 2.0)))
    assert weak.group == "weak" and "below the smallest of interest" in weak.text
    assert reader.level(_verdict(claim, "standard", "PASS", losses(2.2, 2.0))).group == "learned"
