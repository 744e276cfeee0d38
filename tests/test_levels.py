"""Evidence levels (`harness.verdicts.levels`): a verdict's level is the lowest of the variants it reads, each
against the paper's figure for that variant (else the experiment's reference's) and chance measured on the test
set; a collapse the paper reports is skipped, an unmeasured variant leaves no level; metrics that do not depend
on learning carry none; structural and cost metrics apart; effects below interest; whose a FAIL is."""
from pathlib import Path

import pytest

from harness.loading.catalog import load_catalog
from harness.schema.spec import PaperFigure
from harness.verdicts.levels import LEARNED, Measured, accuracies_from_records, level_reader
from harness.verdicts.verify import Verdict

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)


def _verdict(claim: str, profile: str, status: str, numbers=None) -> Verdict:
    loaded = CATALOG.claim(claim)
    return Verdict(claim, loaded.paper, profile, loaded.claim.experiment, loaded.claim.source,
                   loaded.claim.statement, "expectation", status, "reason", numbers=numbers or {})


def test_the_level_is_the_share_of_the_papers_gain_over_chance_measured_on_the_test_set() -> None:
    reader = level_reader(CATALOG, {("hasfl-cifar10", "hasfl", "learning"): Measured(40.7, chance=10.4),
                                    ("hasfl-cifar10", "random-budget", "learning"): Measured(50.0, chance=10.4)})
    level = reader.level(_verdict("hasfl.parity.cifar10.random-budget-matches-hasfl", "learning", "PASS"))
    assert level.fraction == pytest.approx((40.7 - 10.4) / (74.5 - 10.4))
    assert level.group == "weak" and level.fraction < LEARNED
    assert "most frequent test label" in level.text and "Table 2" in level.text
    assert [v.variant for v in level.variants] == ["random-budget", "hasfl"]
    assert level.variants[0].fraction == pytest.approx((50.0 - 10.4) / (74.6 - 10.4))  # Table 5's own 74.6%


def test_the_lowest_variant_the_claim_reads_sets_its_level_each_against_its_own_paper_figure() -> None:
    # the guarantee-off ablation ends at 40.4% in the paper (Table 3): 29.6% is 0.64 of that gain, HAS-FL's 40.6%
    # 0.47 of its 74.5%: a claim reading both is no better evidenced than HAS-FL, one reading the ablation alone
    # is read against the ablation's own figure
    accuracies = {("hasfl-cifar10", "hasfl", "standard"): Measured(40.6, 10.0),
                  ("hasfl-cifar10", "hasfl-no-guarantee", "standard"): Measured(29.6, 10.0)}
    reader = level_reader(CATALOG, accuracies)
    both = reader.level(_verdict("hasfl.table3.cifar10.guarantee-off-ends-lower", "standard", "PASS"))
    assert both.fraction == pytest.approx((40.6 - 10) / 64.5) and both.group == "weak"
    assert "HAS-FL 40.6%" in both.text and "the lowest of the 2 variants it reads" in both.text
    assert "its figure as the experiment's reference" in both.text
    alone = reader.level(_verdict("hasfl.table3.cifar10.guarantee-off-final-accuracy", "standard", "PASS"))
    assert alone.fraction == pytest.approx((29.6 - 10) / (40.4 - 10))
    assert "HAS-FL, guarantee off 29.6% against the paper's 40.4% (its own paper figure, HAS-FL §4.3, Table 3" in \
        alone.text


def test_a_variant_whose_paper_figure_is_not_above_chance_is_skipped_and_said_so(monkeypatch) -> None:
    # SCAFFOLD with momentum diverges to chance in the paper: it gives no level, so a claim on it alone has none
    accuracies = {("hasfl-cifar10", "scaffold-momentum", "learning"): Measured(10.0, 10.0)}
    alone = level_reader(CATALOG, accuracies).level(
        _verdict("hasfl.table5.cifar10.scaffold-momentum-at-chance", "learning", "PASS"))
    assert alone.group == "unleveled" and alone.fraction is None
    assert "SCAFFOLD with momentum skipped: the paper's 10% (its own paper figure" in alone.text
    assert "a collapse the paper reports" in alone.text
    # beside a variant that has a level, the collapse is left out of the lowest and named
    loaded = CATALOG.specs["hasfl-shakespeare"]
    variants = dict(loaded.spec.variants)
    variants["fjord"] = variants["fjord"].model_copy(update={"paper": PaperFigure(accuracy=5.0, source="a collapse")})
    monkeypatch.setattr(loaded, "spec", loaded.spec.model_copy(update={"variants": variants}))
    accuracies = {("hasfl-shakespeare", "hasfl", "standard"): Measured(25.1, chance=17.8),
                  ("hasfl-shakespeare", "fjord", "standard"): Measured(10.0, chance=17.8)}
    level = level_reader(CATALOG, accuracies).level(_verdict("hasfl.table6.shakespeare.hasfl-weakest", "standard",
                                                             "PASS"))
    assert level.fraction == pytest.approx((25.1 - 17.8) / (25.5 - 17.8)) and level.group == "learned"
    assert "FjORD skipped: the paper's 5% (its own paper figure, a collapse)" in level.text


def test_a_variant_the_claim_reads_that_was_not_measured_leaves_no_level() -> None:
    accuracies = {("hasfl-cifar10", "hasfl", "learning"): Measured(70.0, 10.0)}
    level = level_reader(CATALOG, accuracies).level(
        _verdict("hasfl.table3.cifar10.guarantee-off-ends-lower", "learning", "FAIL"))
    assert level.group == "unleveled" and level.fraction is None
    assert "HAS-FL, guarantee off, which it reads, was not measured at this profile" in level.text


@pytest.mark.parametrize("claim", ["fedrolex.large-server.rolling-trains-every-coordinate",  # never_covered_fraction
                                   "hasfl.table5.cifar10.hasfl-threefold-less-upload",  # upload_reduction
                                   "hasfl.parity.cifar10.random-budget-average-capacity"])  # mean_capacity
def test_quantities_that_do_not_depend_on_learning_carry_no_level(claim: str) -> None:
    accuracies = {("fedrolex-cifar10", "fedrolex-l2", "standard"): Measured(60.0, 10.0),
                  ("hasfl-cifar10", "hasfl", "standard"): Measured(60.0, 10.0)}
    level = level_reader(CATALOG, accuracies).level(_verdict(claim, "standard", "PASS"))
    assert level.group == "independent" and level.fraction is None


def test_shakespeare_reads_table_6_against_its_most_frequent_character() -> None:
    accuracies = {("hasfl-shakespeare", "hasfl", "standard"): Measured(25.1, chance=17.8),
                  ("hasfl-shakespeare", "fjord", "standard"): Measured(30.0, chance=17.8),
                  ("hasfl-shakespeare", "uniform", "standard"): Measured(8.0, chance=17.8)}
    level = level_reader(CATALOG, accuracies).level(
        _verdict("hasfl.table6.shakespeare.hasfl-weakest", "standard", "PASS"))
    # FjORD's 30.0% is 0.82 of Table 6's own 32.6%, HAS-FL's 25.1% 0.95 of its 25.5%: FjORD sets the level
    assert level.fraction == pytest.approx((30.0 - 17.8) / (32.6 - 17.8)) and level.group == "learned"
    assert level.text.startswith("learning level 0.82 (the lowest of the 2 variants it reads): FjORD 30.0% against "
                                 "the paper's 32.6% (its own paper figure")
    assert "Table 6" in level.text


def test_fedrolex_is_graded_against_its_papers_table_3() -> None:
    accuracies = {("fedrolex-cifar10", "fedrolex-l2", "learning"): Measured(33.2, 10.0),
                  ("fedrolex-cifar10", "heterofl-l2", "learning"): Measured(35.0, 10.0),
                  ("fedrolex-cifar10", "dropout-l2", "learning"): Measured(20.0, 10.0)}
    level = level_reader(CATALOG, accuracies).level(
        _verdict("fedrolex.accuracy.high-heterogeneity-ordering", "learning", "FAIL"))
    # no variant declares a figure of its own: each is read against the reference's 69.44%, the lowest wins
    assert level.fraction == pytest.approx((20.0 - 10) / (69.44 - 10)) and level.group == "weak"
    assert "Table 3" in level.text and "Federated Dropout, L=2 20.0%" in level.text
    assert level.attribution == ""  # whose a FAIL is reads every profile's level: harness.verdicts.attribution


def test_without_a_declared_reference_the_level_is_unknown_not_weak(monkeypatch) -> None:
    loaded = CATALOG.specs["fedrolex-cifar10"]
    monkeypatch.setattr(loaded, "spec", loaded.spec.model_copy(update={"reference": None}))
    level = level_reader(CATALOG, {}).level(_verdict("fedrolex.participation.10pct", "smoke", "FAIL"))
    assert level.group == "unleveled" and "declares no reference" in level.text


def test_a_reference_not_measured_at_the_profile_gives_no_level() -> None:
    level = level_reader(CATALOG, {("hasfl-cifar10", "heterofl", "smoke"): Measured(30.0, 10.0)}).level(
        _verdict("hasfl.table3.cifar10.hasfl-matches-heterofl", "smoke", "PASS"))
    assert level.group == "unleveled" and "was not measured" in level.text


def test_chance_comes_from_the_records_majority_label() -> None:
    class Request:
        def __init__(self, key):
            self.key, self.experiment, self.variant, self.profile = key, "hasfl-cifar10", "hasfl", "smoke"

    history = [{"round": r, "test_accuracy": 0.3 + (0.1 if r == 4 else 0.0)} for r in range(10)]
    records = {f"k{s}": {"status": "ok", "result": {"history": history, "majority_accuracy": 10.0 + s,
                                                     "config": {"rounds": 10}}} for s in range(2)}
    measured = accuracies_from_records(CATALOG, [Request(f"k{s}") for s in range(2)], records)
    # the end (the last 10% of rounds) and, beside it, the best evaluation, which the paper may report; the two
    # seeds' test sets differ in their majority label: each seed's pair is kept for its own level
    assert measured[("hasfl-cifar10", "hasfl", "smoke")] == Measured(pytest.approx(30.0), 10.5, pytest.approx(40.0),
                                                                     ((pytest.approx(30.0), 10.0),
                                                                      (pytest.approx(30.0), 11.0)))
    _, text = level_reader(CATALOG, measured).learning("hasfl-cifar10", "smoke")
    assert "HAS-FL 30.0% (its best evaluation 40.0%) against the paper's" in text


def test_where_chance_differs_per_test_split_the_level_is_the_mean_of_the_seeds_levels() -> None:
    reference = CATALOG.specs["hasfl-shakespeare"].spec.reference
    seeds = ((30.0, 17.8), (28.0, 22.6))
    measured = Measured(29.0, 20.2, seeds=seeds)
    fraction, text = level_reader(CATALOG, {("hasfl-shakespeare", reference.variant, "learning"): measured}).learning(
        "hasfl-shakespeare", "learning")
    assert fraction == pytest.approx(sum((a - c) / (reference.accuracy - c) for a, c in seeds) / 2)
    assert fraction != pytest.approx((29.0 - 20.2) / (reference.accuracy - 20.2))
    assert "each seed's most frequent test label, 17.8–22.6%" in text
    same, text = level_reader(CATALOG, {("hasfl-shakespeare", reference.variant, "learning"): Measured(29.0, 20.2)}
                              ).learning("hasfl-shakespeare", "learning")
    assert same == pytest.approx((29.0 - 20.2) / (reference.accuracy - 20.2))
    assert "its most frequent test label, 20.2%" in text


def test_structural_and_cost_metrics_are_not_graded_by_learning() -> None:
    reader = level_reader(CATALOG, {})
    assert reader.level(_verdict("fedhenet.exact.equals-centralised-n10", "smoke", "PASS")).group == "analytic"
    assert reader.level(_verdict("fedhenet.protocol.one-round", "smoke", "PASS")).group == "implementation"
    assert reader.level(_verdict("fedhenet.he.coordinator-holds-no-secret-key", "smoke", "PASS")).group == \
        "implementation"
    assert reader.level(_verdict("fedhenet.energy.about-70-percent-saved", "smoke", "PASS")).group == "cost"
    assert reader.level(_verdict("hasfl.alloc.cap-at-1.4-for-tier-0.75", "smoke", "PASS")).group == "analytic"


def test_an_ordering_resting_on_less_than_the_smallest_effect_is_weak() -> None:
    claim = "hasfl.figure8.cifar10.fedavg-loss-below-fedprox"  # order: [fedprox, fedavg] of end_loss
    reader = level_reader(CATALOG, {("hasfl-cifar10", "fedavg", "standard"): Measured(80.0, 10.0),
                                    ("hasfl-cifar10", "fedprox", "standard"): Measured(60.0, 10.0)})

    def losses(fedprox: float, fedavg: float) -> dict:
        return {"FedProx (μ = 1) (end_loss)": {"mean": fedprox, "std": 0.01, "n": 5},
                "FedAvg (end_loss)": {"mean": fedavg, "std": 0.01, "n": 5}}

    weak = reader.level(_verdict(claim, "standard", "PASS", losses(2.00034, 2.0)))
    assert weak.group == "weak" and "below the smallest of interest" in weak.text
    assert reader.level(_verdict(claim, "standard", "PASS", losses(2.2, 2.0))).group == "learned"


def test_a_reference_run_shared_with_another_experiment_is_found_under_its_own_name() -> None:
    """FedHENet's one-class N=10 run of the heterogeneity experiment has the key of the one-class experiment's
    plaintext run (the same computation): planning keeps one request for both, the level reads it anyway."""
    from harness.verdicts.levels import variant_accuracies

    def lookup(experiment, variant, seed, profile):
        if (experiment, variant) == ("fedhenet-heterogeneity", "oneclass-n10"):
            return "shared-key", {"status": "ok", "result": {"accuracy": 0.598, "majority_accuracy": 10.0}}
        return "other", None

    measured = variant_accuracies(CATALOG, lookup, ["smoke"])
    assert measured[("fedhenet-heterogeneity", "oneclass-n10", "smoke")] == Measured(pytest.approx(59.8), 10.0)


def test_the_digest_lists_the_fails_the_rule_leaves_unexplained() -> None:
    from harness.report.attributions import with_attributions
    from harness.report.digest import unexplained_line

    claim = "hasfl.table6.shakespeare.hasfl-weakest-vs-uniform"
    reader = level_reader(CATALOG, {("hasfl-shakespeare", variant, profile): Measured(accuracy, chance=20.5)
                                    for profile, accuracy in (("smoke", 20.9), ("standard", 26.2), ("learning", 26.2))
                                    for variant, accuracy in (("hasfl", accuracy), ("uniform", 34.0))})
    smoke, standard = _verdict(claim, "smoke", "FAIL"), _verdict(claim, "standard", "PASS")

    def attributed(*verdicts):
        levels = {(v.claim, v.profile): reader.level(v) for v in verdicts}
        return with_attributions(CATALOG, verdicts, levels, [], ROOT)[0]

    levels = attributed(smoke, standard)  # smoke's level is 0.08 and no FAIL where the models learn
    assert levels[(claim, "smoke")].attribution.startswith("the scale, because after 30 rounds")
    assert levels[(claim, "standard")].attribution == ""
    learning = _verdict(claim, "learning", "FAIL")
    levels = attributed(smoke, standard, learning)  # a FAIL at level 1.1 refutes smoke's `the scale`
    assert levels[(claim, "smoke")].whose == "unexplained"
    assert levels[(claim, "smoke")].contradicted == "the claim says the scale"
    assert levels[(claim, "learning")].whose == "unexplained"
    (line, _) = unexplained_line([smoke, standard, learning], levels)
    assert f"at `smoke` `{claim}`; at `learning` `{claim}`." in line and "`standard`" not in line


def test_an_attribution_at_a_profile_the_claim_does_not_test_is_refused() -> None:
    from pydantic import ValidationError

    from harness.schema.claim import Claim

    raw = CATALOG.claim("hasfl.table6.shakespeare.hasfl-weakest-vs-uniform").claim.model_dump(mode="json",
                                                                                              exclude_none=True)
    raw["attribution"] = {"smok": {"whose": "the scale", "evidence": "a profile name with a typo in it"}}
    with pytest.raises(ValidationError, match="attribution at smok"):
        Claim.model_validate(raw)
    raw["attribution"] = {"smoke": {"whose": "nobody", "evidence": "a whose the schema does not know"}}
    with pytest.raises(ValidationError, match="whose"):
        Claim.model_validate(raw)


def test_every_fail_in_the_committed_report_says_whose_it_is() -> None:
    import json

    verdicts = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))["verdicts"]
    fails = [v for v in verdicts if v["status"] == "FAIL"]
    assert fails and all(v["level"]["attribution"] for v in fails), [v["claim"] for v in fails
                                                                      if not v["level"]["attribution"]]
