"""The rules of REPORT.md's opening: findings per paper, counts split by evidence, profile columns
only for profiles that trained, and disagreements only under one expectation."""
from pathlib import Path

from harness.loading.catalog import load_catalog
from harness.pipeline import Outcome
from harness.report.findings import findings, profiles_that_ran
from harness.report.markdown import _Report
from harness.settings import Settings
from harness.verdicts.levels import Level, Measured, level_reader
from harness.verdicts.verify import Verdict

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)

ORDER = "fedrolex.participation.10pct"  # empirical; the same expectation at smoke and standard
ABLATION = "hasfl.table3.cifar10.guarantee-off-ends-lower"  # empirical
TABLE4 = "hasfl.table4.cifar10.no-data-signal-given-capacity"  # empirical; expectations differ by profile
RULE = "hasfl.alloc.cap-at-1.4-for-tier-0.75"  # analytic
DIAGNOSTIC = "fedhenet.he.payload-2.25x.this-implementation"


def _verdict(claim: str, profile: str, status: str, observed: str = "observed numbers") -> Verdict:
    loaded = CATALOG.claim(claim)
    return Verdict(claim, loaded.paper, profile, loaded.claim.experiment, loaded.claim.source,
                   loaded.claim.statement, "expectation", status, f"reason of {status}", observed=observed)


def _levels(verdicts, accuracies=None) -> dict[tuple[str, str], Level]:
    reader = level_reader(CATALOG, accuracies or {})
    return {(v.claim, v.profile): reader.level(v) for v in verdicts}


def _findings(verdicts, profiles, accuracies=None):
    return "\n".join(findings(CATALOG, verdicts, _levels(verdicts, accuracies), profiles, lambda claim: f"#{claim}"))


def test_findings_group_verdicts_by_evidence_level() -> None:
    verdicts = [_verdict(ORDER, "standard", "FAIL", "FedRolex 17.3 < HeteroFL 20.9"),
                _verdict(ABLATION, "standard", "INCONCLUSIVE"), _verdict(RULE, "standard", "PASS"),
                _verdict(TABLE4, "standard", "PASS")]
    learned = {("hasfl-cifar10", "hasfl", "standard"): Measured(60.0, 10.0),  # (60 - 10) / (74.5 - 10) = 0.78
               ("hasfl-cifar10", "hasfl-no-guarantee", "standard"): Measured(35.0, 10.0)}  # 25 / 30.4 = 0.82
    text = _findings(verdicts, ["standard"], learned)
    hasfl = text.split("### Capacity Confounds")[1]
    assert "where the models learn: 1 PASS, 1 INCONCLUSIVE" in hasfl, "the analytic rule is counted apart"
    assert "analytic: 1 of 1 hold" in hasfl
    assert "Reproduced where the models learn:" in hasfl and f"[`{TABLE4}`]" in hasfl
    assert "What this scale cannot decide" in hasfl and f"[`{ABLATION}`]" in hasfl
    fedrolex = text.split("### FedRolex")[1].split("###")[0]
    assert "Fails where no learning level could be read:" in fedrolex
    assert "FedRolex 17.3 < HeteroFL 20.9" in fedrolex and "FedRolex, L=2, which it reads, was not measured" in fedrolex


def test_a_relation_tested_where_the_models_barely_learn_is_weak() -> None:
    verdicts = [_verdict(TABLE4, "standard", "PASS")]
    barely = {("hasfl-cifar10", "hasfl", "standard"): Measured(21.7, 10.0)}  # (21.7 - 10) / 64.5 = 0.18
    text = _findings(verdicts, ["standard"], barely)
    assert "Holds where the models barely learn (weak evidence" in text and "learning level 0.18" in text
    assert "Reproduced where the models learn" not in text


def test_a_finding_shows_the_tested_bound_and_the_paper_one_apart() -> None:
    energy = "fedhenet.energy.about-70-percent-saved"
    text = _findings([_verdict(energy, "standard", "PASS")], ["standard"])
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"- [`{energy}`]"))
    assert lines[start + 2] == "  - tested: > 0; the paper: in [0.63, 0.77], not tested at this scale"


def test_a_paper_not_run_at_a_profile_gets_one_line_and_skipped_checks_are_not_counted_as_failing() -> None:
    verdicts = [_verdict(ORDER, "learning", "FAIL"), _verdict("fedrolex.coverage.random-coupon-collector",
                                                                "learning", "SKIPPED"),
                _verdict(DIAGNOSTIC, "learning", "SKIPPED")]
    text = _findings(verdicts, ["learning"])
    assert "**At `learning`** — no claim of this paper was run at this profile." in text.split("### FedHENet")[1]
    fedrolex = text.split("### FedRolex")[1]
    assert "analytic:" not in fedrolex.split("\n\n")[0], "a skipped check is not counted as failing"
    assert "not tested here: 1" in fedrolex


def test_only_profiles_that_decided_an_empirical_claim_are_columns() -> None:
    verdicts = [_verdict(RULE, "paper", "PASS"), _verdict(ORDER, "paper", "SKIPPED"),
                _verdict(ORDER, "smoke", "INCONCLUSIVE"), _verdict(RULE, "smoke", "PASS")]
    assert profiles_that_ran(CATALOG, verdicts) == ["smoke"]


def test_disagreements_list_only_claims_with_one_expectation_at_both_profiles(tmp_path) -> None:
    verdicts = [_verdict(ORDER, "smoke", "INCONCLUSIVE"), _verdict(ORDER, "standard", "FAIL"),
                _verdict(TABLE4, "smoke", "PASS"), _verdict(TABLE4, "standard", "FAIL")]
    outcome = Outcome(CATALOG, [], ["smoke", "standard"], [], verdicts=verdicts)
    settings = Settings(root=ROOT, store_dir=tmp_path, cache_dir=tmp_path, data_dir=None, committed_records=False)
    lines = _Report(outcome, settings, tmp_path / "REPORT.md", tmp_path / "figures").disagreements()
    rows = [line for line in lines if line.startswith("| [`")]
    assert len(rows) == 1 and ORDER in rows[0], rows


def test_findings_carry_each_study_point_and_trend_under_its_paper() -> None:
    from harness.report.studies import ClaimReading, PointReading, SeriesTrend, StudyReading, study_findings
    label = "HAS-FL r(h_tilde, tv | p_max)"
    points = [PointReading(64, "standard@data.max_train_per_client=64", "FAIL", "", {label: {0: 0.4, 1: 0.5}}),
              PointReading(2500, "standard@data.max_train_per_client=2500", "SKIPPED", "", {})]
    claim = ClaimReading(TABLE4, "statement", [label], None, "in [-0.605, 0.105]", points,
                         [SeriesTrend(label, None, "too few values for a trend")])
    study = StudyReading("table4-data", "hasfl-cifar10", "title", "", "data.max_train_per_client", "standard",
                         [0, 1], 2500, "", [claim])
    lines = study_findings(CATALOG, [study])["hasfl"]
    assert len(lines) == 1 and "64: mean 0.45 ± 0.0707 (2 seeds)" in lines[0] and "2500:" not in lines[0]
    assert "the paper: in [-0.605, 0.105]" in lines[0] and "Trend: too few values for a trend." in lines[0]
    verdicts = [_verdict(TABLE4, "standard", "FAIL")]
    text = "\n".join(findings(CATALOG, verdicts, _levels(verdicts), ["standard"], lambda claim: f"#{claim}",
                              {"hasfl": lines}))
    assert "**Along the scale studies**" in text.split("### Capacity Confounds")[1]


def test_the_digest_carries_what_a_study_found_of_a_central_claim() -> None:
    from harness.report.studies import ClaimReading, PointReading, StudyReading, central_along_studies
    central = "fedrolex.accuracy.high-heterogeneity-ordering"
    points = [PointReading(v, f"standard@federation.rounds={v}", s, "")
              for v, s in ((192, "FAIL"), (576, "FAIL"), (1600, "INCONCLUSIVE"))]
    claims = [ClaimReading(central, "statement", [], None, "", points, []),
              ClaimReading("fedrolex.participation.10pct-vs-dropout", "statement", [], None, "", points, [])]
    study = StudyReading("rolling-rounds", "fedrolex-cifar10", "title", "", "federation.rounds", "standard",
                         [0], 3200, "", claims)
    (line,) = central_along_studies(CATALOG, [study])["fedrolex"]
    assert f"`{central}`: 192: FAIL, 576: FAIL, 1600: INCONCLUSIVE" in line and "stays open" in line


def test_the_digest_shows_a_verdict_that_seeds_added_until_decided_changed_beside_the_fixed_n_one() -> None:
    from harness.report.digest import digest
    central = "hasfl.table3.cifar10.guarantee-off-ends-lower"
    assert central in CATALOG.papers["hasfl"].central
    verdicts = [_verdict(central, "smoke", "INCONCLUSIVE"), _verdict(central, "learning", "INCONCLUSIVE")]
    changed = {"status": "PASS", "seeds": [0, 1, 2, 3, 4, 5], "fixed_n": {"status": "INCONCLUSIVE"}}
    kept = {"status": "INCONCLUSIVE", "seeds": [0, 1, 2], "fixed_n": {"status": "INCONCLUSIVE"}}
    text = "\n".join(digest(CATALOG, verdicts, _levels(verdicts), ["smoke", "learning"], lambda claim: f"#{claim}",
                            sequential={(central, "learning"): changed, (central, "smoke"): kept}))
    (row,) = [line for line in text.splitlines() if f"#{central}" in line]
    # a PASS of "collapses" tested as "> 0" reads as one against a weaker bound than the paper's (issue 59)
    assert ("| INCONCLUSIVE, no level | INCONCLUSIVE, no level; PASS at 6 seeds (sequential) (> 0; the paper's "
            f"{CATALOG.claim(central).claim.paper_bound}: not tested) |") in row


def test_the_digest_says_where_seeds_were_added_in_vain() -> None:
    from harness.report.digest import digest
    central = "hasfl.table6.shakespeare.hasfl-weakest"
    verdicts = [_verdict(central, "learning", "INCONCLUSIVE")]
    extended = {"status": "INCONCLUSIVE", "seeds": list(range(7)), "looks": 5, "fixed_n": {"status": "INCONCLUSIVE"}}
    text = "\n".join(digest(CATALOG, verdicts, _levels(verdicts), ["learning"], lambda claim: f"#{claim}",
                            sequential={(central, "learning"): extended}))
    (row,) = [line for line in text.splitlines() if f"#{central}" in line]
    assert "| INCONCLUSIVE, no level; still INCONCLUSIVE at 7 seeds (sequential) |" in row


def test_the_digests_number_is_the_last_looks_where_seeds_were_added() -> None:
    from harness.report.digest import digest
    central = "hasfl.table3.cifar10.guarantee-off-ends-lower"
    verdict = _verdict(central, "learning", "INCONCLUSIVE")
    verdict.numbers = {"HAS-FL − guarantee off": {"mean": 14.04, "std": 10.93, "n": 4}}
    extended = {"status": "INCONCLUSIVE", "seeds": list(range(6)), "looks": 3, "fixed_n": {"status": "INCONCLUSIVE"},
                "numbers": {"HAS-FL − guarantee off": {"mean": 15.54, "std": 9.033, "n": 6}}}

    def row(entry) -> str:
        text = "\n".join(digest(CATALOG, [verdict], _levels([verdict]), ["learning"], lambda claim: f"#{claim}",
                                sequential={(central, "learning"): entry}))
        (line,) = [line for line in text.splitlines() if f"#{central}" in line]
        return line

    assert "`learning`: 15.5 ± 9 at 6 seeds (sequential) (tested: > 0" in row(extended)
    # A plan recorded before its looks' numbers were: the profile's number, said to be at fixed n.
    assert "`learning`: 14 ± 11 at fixed n (tested: > 0" in row({**extended, "numbers": {}})


def test_the_digest_counts_central_claims_decided_where_the_models_learn() -> None:
    from harness.report.digest import decided_where_learning
    central = CATALOG.papers["fedrolex"].central
    headline = central[0]
    verdicts = {headline: {"smoke": _verdict(headline, "smoke", "FAIL"), "learning": _verdict(headline, "learning",
                                                                                              "PASS")}}
    weak = {(headline, "smoke"): Level("weak", 0.3), (headline, "learning"): Level("weak", 0.4)}
    learned = {**weak, (headline, "learning"): Level("learned", 0.7)}
    assert decided_where_learning(central, verdicts, weak, ["smoke", "learning"]).startswith(
        f"**Central claims decided where the models learn: 0 of {len(central)}**")
    line = decided_where_learning(central, verdicts, learned, ["smoke", "learning"])
    short = headline.split(".", 1)[1]
    assert f": 1 of {len(central)}**" in line and f"PASS at `learning`: `{short}`" in line
    every = {claim: {"learning": _verdict(claim, "learning", "FAIL")} for claim in central}
    many = {(claim, "learning"): Level("learned", 0.7) for claim in central}
    line = decided_where_learning(central * 3, {**every}, many, ["learning"])
    assert len(line) <= 300 and "FAIL at `learning`" in line  # too many to name: counted


def test_a_central_claim_decided_by_the_seeds_added_until_decided_counts() -> None:
    from harness.report.digest import decided_where_learning
    central = CATALOG.papers["hasfl"].central
    claim = "hasfl.table3.cifar10.guarantee-off-ends-lower"
    verdicts = {claim: {"learning": _verdict(claim, "learning", "INCONCLUSIVE")}}
    levels = {(claim, "learning"): Level("learned", 0.55)}
    plan = {(claim, "learning"): {"status": "PASS", "seeds": list(range(7)), "looks": 4,
                                  "fixed_n": {"status": "INCONCLUSIVE"}}}
    assert ": 0 of" in decided_where_learning(central, verdicts, levels, ["learning"])
    line = decided_where_learning(central, verdicts, levels, ["learning"], plan)
    assert ": 1 of" in line and "PASS at `learning` (sequential): `table3.cifar10.guarantee-off-ends-lower`" in line


def test_a_central_claim_decided_by_its_confirmatory_test_counts_as_such_and_that_is_its_last_word() -> None:
    from harness.report.digest import decided_where_learning
    central = CATALOG.papers["hasfl"].central
    claim = "hasfl.abstract.shakespeare.random-budget-surpasses-hasfl"
    verdicts = {claim: {"learning": _verdict(claim, "learning", "INCONCLUSIVE")}}
    levels = {(claim, "learning"): Level("learned", 1.6)}
    assert ": 0 of" in decided_where_learning(central, verdicts, levels, ["learning"])
    line = decided_where_learning(central, verdicts, levels, ["learning"], confirmed={claim: ("PASS", "learning")})
    assert ": 1 of" in line and "PASS at `learning` (confirmatory): `abstract.shakespeare.random-budget" in line
    verdicts[claim]["learning"] = _verdict(claim, "learning", "FAIL")  # decided at fixed n too: counted once
    line = decided_where_learning(central, verdicts, levels, ["learning"], confirmed={claim: ("PASS", "learning")})
    assert ": 1 of" in line and "FAIL" not in line


def test_a_number_that_stands_in_for_the_papers_quantity_says_so_with_the_conversion() -> None:
    import dataclasses

    from harness.report.proxies import proxy_notes

    upload = dataclasses.replace(_verdict("fedrolex.cost.communication-below-upper-bound", "smoke", "FAIL"),
                                 runs=["u"])
    energy = dataclasses.replace(_verdict("fedhenet.energy.about-70-percent-saved", "standard", "PASS"),
                                 runs=["cpu", "rapl"])
    records = {"u": {"status": "ok", "result": {}},
               "cpu": {"status": "ok", "result": {"energy_source": "cpu-time-proxy"}},
               "rapl": {"status": "ok", "result": {"energy_source": "rapl"}}}
    notes = proxy_notes(CATALOG, [upload, energy], records)
    assert notes[(upload.claim, "smoke")].startswith("communication counted in model coordinates")
    assert "CPU seconds at an assumed 10 W per busy core" in notes[(energy.claim, "standard")]
    measured = dataclasses.replace(energy, runs=["rapl"])
    assert (energy.claim, "standard") not in proxy_notes(CATALOG, [measured], records), "RAPL is a measurement"
    text = "\n".join(findings(CATALOG, [upload], _levels([upload]), ["smoke"], lambda claim: f"#{claim}",
                              proxies=notes))
    assert "  - a proxy: communication counted in model coordinates" in text


def test_what_cannot_be_decided_is_read_at_the_last_look_where_seeds_were_added() -> None:
    claim = "fedrolex.as-run.large-server.rolling-above-static"
    verdict = _verdict(claim, "learning", "INCONCLUSIVE")
    verdict.power = {"unit": "seeds", "needed": 201}
    spent = {"status": "INCONCLUSIVE", "seeds": list(range(10)), "looks": 6, "fixed_n": {"status": "INCONCLUSIVE"},
             "alpha": 0.05, "alpha_spent": 0.05, "stopped": "max seeds reached",
             "power": {"unit": "seeds", "needed": 22}}

    def line(entry) -> str:
        text = "\n".join(findings(CATALOG, [verdict], _levels([verdict]), ["learning"], lambda c: f"#{c}",
                                  sequential={} if entry is None else {(claim, "learning"): entry}))
        after = text.split("What this scale cannot decide:")[1].splitlines()
        return next(row for row in after if row.startswith("  - ") and "would decide it" in row)

    assert line(None) == "  - about 201 seeds would decide it"
    assert line(spent) == ("  - still INCONCLUSIVE at 10 seeds, added until decided (max seeds reached): about 22 "
                           "seeds would decide it at the observed effect and spread; its plan's α is spent, so a "
                           "further test takes fresh, pre-registered seeds")
    left = {**spent, "seeds": list(range(7)), "looks": 3, "alpha_spent": 0.036, "stopped": "budget spent"}
    assert "at 7 seeds, added until decided (budget spent)" in line(left) and "its plan has α left" in line(left)
    hopeless = {**spent, "power": {"unit": "seeds", "needed": None, "note": "the observed effect is too small"}}
    text = "\n".join(findings(CATALOG, [verdict], _levels([verdict]), ["learning"], lambda c: f"#{c}",
                              sequential={(claim, "learning"): hopeless}))
    assert ("added until decided (max seeds reached): the observed effect is too small; its plan's α is spent"
            in text), "where no number of seeds would decide it, the look's own reason is given"
