"""Whose a FAIL is, derived by a rule over evidence (`harness.verdicts.attribution`, issue 54): the rule
on hand-made evidence, the relations and the claims' own attributions it reads from the catalog, and every
FAIL of the committed REPORT.json recomputed from its verdicts and the committed studies."""
import json
import shutil
from pathlib import Path

import pytest

from harness.loading.catalog import load_catalog
from harness.report.attributions import (
    CONFORMANCE_DIR,
    as_run_links,
    as_run_problem,
    attributions,
    claimed,
    committed_studies,
    confirmatory_from_report_json,
    conformance,
    covered_points,
    from_report_json,
    relations,
    study_evidence,
)
from harness.verdicts.attribution import (
    IMPLEMENTATION,
    PAPER,
    SCALE,
    SETTING,
    UNEXPLAINED,
    WHOSE,
    Claimed,
    CoveredPoint,
    Evidence,
    StudyHeading,
    VerdictAt,
    attribute,
)

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)


def _evidence(*tested: VerdictAt, related=(), **more) -> Evidence:
    claims = {t.claim for t in tested}
    group = frozenset(related) | {"c"}
    return Evidence({(t.claim, t.profile): t for t in tested},
                    {c: (group if c in group else frozenset({c})) for c in claims}, **more)


def test_below_the_learned_level_with_no_fail_where_models_learn_a_fail_is_the_scales() -> None:
    evidence = _evidence(VerdictAt("c", "small", "FAIL", 0.3), VerdictAt("c", "large", "PASS", 0.6))
    found = attribute("c", "small", evidence)
    assert found.whose == SCALE and "0.30" in found.why and not found.contradicted


def test_a_fail_of_the_same_relation_where_models_learn_refutes_the_scale() -> None:
    evidence = _evidence(VerdictAt("c", "small", "FAIL", 0.3), VerdictAt("c", "large", "SKIPPED", 0.6),
                         VerdictAt("sibling", "large", "FAIL", 0.56), related={"sibling"},
                         claimed={("c", "small"): Claimed(SCALE, "the models barely learn at this profile")})
    found = attribute("c", "small", evidence)
    assert found.whose == UNEXPLAINED
    assert found.contradicted == "the claim says the scale" and "`sibling` FAILs at large (level 0.56)" in found.why
    unrelated = _evidence(VerdictAt("c", "small", "FAIL", 0.3), VerdictAt("sibling", "large", "FAIL", 0.56))
    assert attribute("c", "small", unrelated).whose == SCALE


def test_at_or_above_the_learned_level_the_scale_needs_a_study_moving_toward_the_claim() -> None:
    tested = VerdictAt("c", "large", "FAIL", 0.8)
    assert attribute("c", "large", _evidence(tested)).whose == UNEXPLAINED
    flat = {"c": (StudyHeading("rounds", ("flat",)),)}
    assert attribute("c", "large", _evidence(tested, studies=flat)).whose == UNEXPLAINED
    toward = {"c": (StudyHeading("rounds", ("toward", "inside")),)}
    found = attribute("c", "large", _evidence(tested, studies=toward))
    assert found.whose == SCALE and "study `rounds`" in found.why


def test_the_paper_needs_a_quoted_contradiction_and_its_source() -> None:
    bare = Claimed(PAPER, "the paper's own table disagrees with the sentence")
    tested = VerdictAt("c", "small", "FAIL", 0.3)
    found = attribute("c", "small", _evidence(tested, claimed={("c", "small"): bare}))
    assert found.whose == SCALE and "quotes no contradiction" in found.contradicted
    quoted = Claimed(PAPER, bare.evidence, quote="HeteroFL 63.90 ± 2.74", quote_source="Table 3, arXiv v2")
    found = attribute("c", "small", _evidence(tested, claimed={("c", "small"): quoted}))
    assert found.whose == PAPER and "Table 3, arXiv v2" in found.why and not found.contradicted


def test_the_papers_setting_needs_the_verdict_to_flip_as_the_authors_code_ran_it() -> None:
    said = Claimed(SETTING, "the authors' clients ran Adam, not the SGD the paper states", as_run="c.as-run")
    stated = VerdictAt("c", "learning", "FAIL", 0.6)
    flips = _evidence(stated, VerdictAt("c.as-run", "learning", "PASS", 0.6), claimed={("c", "learning"): said})
    assert attribute("c", "learning", flips).whose == SETTING
    stays = _evidence(stated, VerdictAt("c.as-run", "learning", "FAIL", 0.6), claimed={("c", "learning"): said})
    found = attribute("c", "learning", stays)
    assert found.whose == UNEXPLAINED and "does not PASS at learning (FAIL)" in found.contradicted


def test_the_papers_setting_is_derived_where_the_claim_run_as_the_authors_code_ran_it_passes_at_its_last_word(
        ) -> None:
    stated, as_run = VerdictAt("c", "learning", "FAIL", 0.6), VerdictAt("c.as-run", "learning", "INCONCLUSIVE", 0.24)
    links = {"c": ("c.as-run",)}
    pending = attribute("c", "learning", _evidence(stated, as_run, related={"c.as-run"}, as_run=links))
    assert pending.whose == UNEXPLAINED
    assert "not the paper's setting: `c.as-run` (as the authors' code ran it) is INCONCLUSIVE at learning" \
        in pending.why
    untested = attribute("c", "smoke", _evidence(VerdictAt("c", "smoke", "FAIL", 0.6), as_run, as_run=links,
                                                 related={"c.as-run"}))
    assert "`c.as-run` (as the authors' code ran it) is not tested at smoke" in untested.why
    confirmed = {("c.as-run", "learning"): VerdictAt("c.as-run", "learning", "PASS", 0.24,
                                                     note="its confirmatory test on fresh seeds")}
    flips = attribute("c", "learning", _evidence(stated, as_run, related={"c.as-run"}, as_run=links,
                                                 confirmed=confirmed))
    assert flips.whose == SETTING and "PASSes at learning in its confirmatory test on fresh seeds" in flips.why
    unlinked = attribute("c", "learning", _evidence(stated, as_run, related={"c.as-run"}, confirmed=confirmed))
    assert unlinked.whose == UNEXPLAINED, "a claim not run as this one's setting says nothing of it"
    failed = {("c.as-run", "learning"): VerdictAt("c.as-run", "learning", "FAIL", 0.6, note="its confirmatory test")}
    weak = VerdictAt("c", "standard", "FAIL", 0.3)
    found = attribute("c", "standard", _evidence(weak, as_run, related={"c.as-run"}, as_run=links, confirmed=failed))
    assert found.whose == UNEXPLAINED and "`c.as-run` FAILs at learning in its confirmatory test" in found.why


def test_every_claim_run_as_the_authors_code_ran_it_tests_the_stated_claim_in_one_other_setting() -> None:
    declared = {loaded.id: loaded.claim.as_run_of for loaded in CATALOG.claims if loaded.claim.as_run_of}
    assert len(declared) == 4 and all(as_run_problem(CATALOG, stated, run) is None for run, stated in declared.items())
    assert as_run_links(CATALOG) == {stated: (run,) for run, stated in declared.items()}
    mislinked = {("fedrolex.participation.10pct", "fedrolex.as-run.large-server.rolling-above-static"):
                 "observation differs",
                 ("fedrolex.accuracy.high-heterogeneity-ordering", "fedrolex.as-run.participation.10pct"):
                 "another number of variants",
                 ("fedrolex.participation.10pct", "fedrolex.participation.10pct-vs-dropout"):
                 "by one and the same setting"}
    for (stated, run), why in mislinked.items():
        assert why in (as_run_problem(CATALOG, stated, run) or ""), (stated, run)


def test_conformance_fixtures_rule_out_the_implementation() -> None:
    said = Claimed(IMPLEMENTATION, "a departure of this project's server from the authors'")
    tested = VerdictAt("c", "learning", "FAIL", 0.6)
    found = attribute("c", "learning", _evidence(tested, claimed={("c", "learning"): said},
                                                 conformance={("c", "learning"): "the authors' server reproduced"}))
    assert found.whose == UNEXPLAINED and "ruled out: the authors' server reproduced" in found.contradicted
    assert attribute("c", "learning", _evidence(tested, claimed={("c", "learning"): said})).whose == IMPLEMENTATION
    reproduced = {("c", "learning"): "the authors' server reproduced"}
    plain = attribute("c", "learning", _evidence(tested, conformance=reproduced))
    assert plain.whose == UNEXPLAINED and "implementation is ruled out" in plain.why


def test_fedrolex_over_heterofl_is_one_relation_at_every_participation() -> None:
    found = relations(CATALOG)
    same = found["fedrolex.participation.5pct"]
    assert {"fedrolex.participation.10pct", "fedrolex.participation.20pct"} <= same
    assert "fedrolex.homogeneous.heterofl-below-lower-bound" not in same  # another pair of settings
    assert "fedrolex.accuracy.high-heterogeneity-ordering" not in same  # three variants, two pairs


def test_hasfls_norm_gap_moving_away_where_models_learn_is_not_the_scales() -> None:
    # the learning profile's records read 0.67 (four seeds), farther from [3.16, 31.6] than standard's 1.52
    claim = "hasfl.updates.cifar10.norm-differs-by-an-order-of-magnitude"
    assert "learning" in CATALOG.claim(claim).claim.expect
    evidence = _evidence(VerdictAt(claim, "standard", "FAIL", 0.15), VerdictAt(claim, "learning", "FAIL", 0.55))
    found = attribute(claim, "standard", evidence)
    assert found.whose == UNEXPLAINED and f"`{claim}` FAILs at learning" in found.why


def _shown_whose(attribution: str) -> str:
    return next((w for w in sorted(WHOSE, key=len, reverse=True) if attribution.startswith(w)), UNEXPLAINED)


def test_every_committed_fails_attribution_is_the_one_the_rule_derives() -> None:
    """Recomputes every FAIL's attribution from REPORT.json and studies/*/study.json; fails where the report
    shows a whose the rule does not derive (the report before the rule: the scale where the same relation
    FAILs where the models learn, the paper without a quoted source)."""
    report = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    derived = from_report_json(CATALOG, report, committed_studies(ROOT), ROOT)
    shown = {(v["claim"], v["profile"]): v["level"]["attribution"] for v in report["verdicts"] if v["status"] == "FAIL"}
    assert set(derived) == set(shown)
    wrong = [f"{claim} at {profile}: shown {_shown_whose(shown[(claim, profile)])!r}, derived {a.text()}"
             for (claim, profile), a in derived.items() if _shown_whose(shown[(claim, profile)]) != a.whose]
    assert not wrong, "\n".join(wrong)


def test_every_committed_confirmatory_fails_attribution_is_the_one_the_rule_derives() -> None:
    report = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    derived = confirmatory_from_report_json(CATALOG, report, committed_studies(ROOT), ROOT)
    shown = {(r["claim"], r["profile"]): r.get("attribution", "") for r in report["confirmatory"]
             if r.get("status") == "FAIL"}
    assert set(derived) == set(shown)
    assert all(_shown_whose(shown[key]) == a.whose for key, a in derived.items())


def test_a_confirmatory_fail_is_attributed_by_the_rule_with_its_own_verdict_in_place_of_its_profiles() -> None:
    from harness.report.attributions import confirmatory_attributions
    claim = "fedrolex.large-server.rolling-above-static"
    tested = [VerdictAt(claim, "learning", "INCONCLUSIVE", 0.3)]
    weak = VerdictAt(claim, "learning", "FAIL", 0.3, note="its confirmatory test on fresh seeds")
    found = confirmatory_attributions(CATALOG, tested, [], ROOT, [weak])
    assert found[(claim, "learning")].whose == SCALE, "below the learned level, no FAIL of it where models learn"
    learned = VerdictAt(claim, "learning", "FAIL", 0.7, note="its confirmatory test on fresh seeds")
    found = confirmatory_attributions(CATALOG, tested, [], ROOT, [learned])
    assert found[(claim, "learning")].whose == UNEXPLAINED
    assert confirmatory_attributions(CATALOG, tested, [], ROOT, [VerdictAt(claim, "learning", "PASS", 0.7)]) == {}


@pytest.mark.parametrize("claim", ["fedrolex.homogeneous.heterofl-below-lower-bound",
                                   "fedrolex.homogeneous.dropout-below-lower-bound"])
def test_table_3_figures_without_their_source_do_not_make_a_fail_the_papers(claim: str) -> None:
    said = claimed(CATALOG)
    evidence = Evidence({(claim, "standard"): VerdictAt(claim, "standard", "FAIL", 0.3)}, relations(CATALOG),
                        claimed=said)
    found = attribute(claim, "standard", evidence)
    assert said[(claim, "standard")].whose == PAPER
    assert (found.whose, found.contradicted.startswith("the claim says the paper")) == (SCALE, True)


SCALER_EPS = "learning@model.batchnorm_eps_exponent=2"
"""The `scaler-eps` study's point where the CNN takes the authors' Scaler's batch-norm eps."""


def test_the_committed_conformance_fixtures_rule_out_the_implementation_only_where_they_cover() -> None:
    """The server's fixture and the augmentation's cover FedRolex's runs, the client's HeteroFL's CNN at width 1,
    and below it only with the authors' Scaler's batch-norm eps (`model.batchnorm_eps_exponent` 2): every part
    is covered only at the `scaler-eps` study's point there, and each FedRolex claim the server's covers
    elsewhere says what of its clients' training is not."""
    covered, gaps = conformance(CATALOG, ROOT)
    studied = {loaded.id for loaded in CATALOG.claims if SCALER_EPS in loaded.claim.expect}
    assert studied and set(covered) == {(claim, SCALER_EPS) for claim in studied}
    claim = "fedrolex.participation.10pct"
    learning, paper = gaps[(claim, "learning")], gaps[(claim, "paper")]
    assert learning.startswith("client: conformance/fedrolex_client.json does not cover caps.tiers = ")
    assert "or else model.batchnorm_eps_exponent = 0.0 (variant `fedrolex-l2`)" in learning
    assert "augmentation" not in learning.removesuffix("(covered: server, augmentation)")
    assert learning.endswith("(covered: server, augmentation)") and paper.endswith("(covered: server, augmentation)")
    assert "preresnet18" in paper and "preresnet18" not in learning  # each profile's own model
    reads_update_weights = [loaded.id for loaded in CATALOG.claims
                            if "fedrolex-update-weights" in getattr(loaded.claim.observe, "of", [])]
    assert reads_update_weights
    for key in [key for key in gaps if key[0] in reads_update_weights]:  # the stem differs there
        assert gaps[key].startswith("server: conformance/fedrolex.json does not cover federation.weighting = ")
    assert not any(claim.startswith("hasfl.") for claim, _ in {*covered, *gaps})


def _fixtures(root: Path, committed: tuple[str, ...] = ("fedrolex.json",), **covers: dict) -> Path:
    """A repository root whose conformance fixtures are the ``committed`` ones (the server's unless told) and the
    ``covers`` given (file name -> `covers`)."""
    (root / CONFORMANCE_DIR).mkdir(parents=True)
    for name in committed:
        shutil.copy(ROOT / CONFORMANCE_DIR / name, root / CONFORMANCE_DIR / name)
    for name, cover in covers.items():
        (root / CONFORMANCE_DIR / f"{name}.json").write_text(json.dumps({"covers": cover}), encoding="utf-8")
    return root


def _client(settings: dict) -> dict:
    return {"kind": "federated_training", "parts": ["client"], "text": "a client step reproduced", "settings": settings}


def test_a_claim_the_server_fixture_alone_covers_is_not_ruled_out(tmp_path: Path) -> None:
    claim = "fedrolex.participation.10pct"
    covered, gaps = conformance(CATALOG, _fixtures(tmp_path))
    assert (claim, "learning") not in covered
    assert gaps[(claim, "learning")] == ("client: no conformance fixture; augmentation: no conformance fixture "
                                         "(covered: server)")
    tested = VerdictAt(claim, "learning", "FAIL", 0.6)
    found = attribute(claim, "learning", Evidence({(claim, "learning"): tested}, relations(CATALOG),
                                                  conformance=covered, conformance_gaps=gaps))
    assert found.whose == UNEXPLAINED
    assert "the implementation is not ruled out: client: no conformance fixture" in found.why
    said = Claimed(IMPLEMENTATION, "the clients' training departs from the authors'")
    assert attribute(claim, "learning", Evidence({(claim, "learning"): tested}, relations(CATALOG), conformance=covered,
                                                 claimed={(claim, "learning"): said})).whose == IMPLEMENTATION


SERVER_AND_AUGMENTATION = ("fedrolex.json", "fedrolex_augmentation.json")


def test_fixtures_of_every_part_rule_the_implementation_out_and_name_each(tmp_path: Path) -> None:
    claim = "fedrolex.participation.10pct"
    stated, as_run = _client({"federation.optimizer": ["sgd"]}), _client({"federation.optimizer": ["adam"]})
    covered, gaps = conformance(CATALOG, _fixtures(tmp_path / "both", SERVER_AND_AUGMENTATION, client=stated,
                                                   narrow=as_run))
    assert (claim, "learning") in covered and (claim, "learning") not in gaps
    assert "resnet_server.py" in covered[(claim, "learning")] and "RandomCrop" in covered[(claim, "learning")]
    assert "a client step reproduced (conformance/client.json)" in covered[(claim, "learning")]
    covered, gaps = conformance(CATALOG, _fixtures(tmp_path / "narrow", SERVER_AND_AUGMENTATION, narrow=as_run))
    assert (claim, "learning") not in covered
    assert gaps[(claim, "learning")] == ("client: conformance/narrow.json does not cover federation.optimizer = "
                                         "\"sgd\" (variant `fedrolex-l2`) (covered: server, augmentation)")


def test_a_claim_whose_clients_crop_and_flip_is_not_ruled_out_without_the_augmentation_fixture(tmp_path: Path
                                                                                                ) -> None:
    """Server and client covered, augmentation not: the FAIL stays unexplained and names the part; an
    augmentation fixture that covers only `none` names the setting it leaves out."""
    claim = "fedrolex.participation.10pct"
    client = _client({"federation.optimizer": ["sgd", "adam"]})
    covered, gaps = conformance(CATALOG, _fixtures(tmp_path / "none", client=client))
    assert (claim, "learning") not in covered
    assert gaps[(claim, "learning")] == "augmentation: no conformance fixture (covered: server, client)"
    tested = VerdictAt(claim, "learning", "FAIL", 0.6)
    found = attribute(claim, "learning", Evidence({(claim, "learning"): tested}, relations(CATALOG),
                                                  conformance=covered, conformance_gaps=gaps))
    assert found.whose == UNEXPLAINED
    assert "the implementation is not ruled out: augmentation: no conformance fixture" in found.why
    identity = {"kind": "federated_training", "parts": ["augmentation"], "text": "no augmentation",
                "settings": {"federation.augmentation": ["none"]}}
    covered, gaps = conformance(CATALOG, _fixtures(tmp_path / "identity", client=client, identity=identity))
    assert (claim, "learning") not in covered
    assert gaps[(claim, "learning")] == ("augmentation: conformance/identity.json does not cover "
                                         "federation.augmentation = \"crop_flip\" (variant `fedrolex-l2`) "
                                         "(covered: server, client)")
    covered, _ = conformance(CATALOG, _fixtures(tmp_path / "all", SERVER_AND_AUGMENTATION, client=client))
    assert "conformance/fedrolex_augmentation.json" in covered[(claim, "learning")]


def test_a_part_no_variant_runs_needs_no_fixture(tmp_path: Path) -> None:
    """HaSFL's variants do not augment (`federation.augmentation: none`, where federated training declares the
    augmentation part idle): fixtures of the server and the client covering every setting rule the
    implementation out for its claims without any augmentation fixture, not for FedRolex's, which crop and
    flip."""
    everything = {"kind": "federated_training", "text": "reproduced", "settings": {}}
    covered, gaps = conformance(CATALOG, _fixtures(tmp_path, (), server={**everything, "parts": ["server"]},
                                                   client={**everything, "parts": ["client"]}))
    hasfl = "hasfl.updates.cifar10.norm-differs-by-an-order-of-magnitude"
    assert covered[(hasfl, "learning")] == "reproduced (conformance/server.json); reproduced (conformance/client.json)"
    claim = "fedrolex.participation.10pct"
    assert gaps[(claim, "learning")] == "augmentation: no conformance fixture (covered: server, client)"


def test_a_fixture_without_its_parts_is_refused_naming_the_file(tmp_path: Path) -> None:
    root = _fixtures(tmp_path, bare={"kind": "federated_training", "text": "a client step", "settings": {}})
    with pytest.raises(ValueError, match=r"bare\.json: covers\.parts must be a list"):
        conformance(CATALOG, root)


def test_covers_may_list_alternatives_any_one_of_which_covers_a_run(tmp_path: Path) -> None:
    """A client fixture covering width 1 at any eps, or every width at the authors' eps: the learning tier's
    runs (every width, eps exponent 0) are covered by neither, and the text names what each leaves out."""
    claim = "fedrolex.participation.10pct"
    client = _client([{"caps.tiers": [[1.0]]}, {"model.batchnorm_eps_exponent": [2.0]}])
    covered, gaps = conformance(CATALOG, _fixtures(tmp_path / "two", SERVER_AND_AUGMENTATION, client=client))
    assert gaps[(claim, "learning")] == (
        "client: conformance/client.json does not cover caps.tiers = [1.0, 0.5, 0.25, 0.125, 0.0625], or else "
        "model.batchnorm_eps_exponent = 0.0 (variant `fedrolex-l2`) (covered: server, augmentation)")
    widened = _client([{"caps.tiers": [[1.0]]}, {"model.batchnorm_eps_exponent": [0.0, 2.0]}])
    covered, _ = conformance(CATALOG, _fixtures(tmp_path / "wide", SERVER_AND_AUGMENTATION, client=widened))
    assert (claim, "learning") in covered
    with pytest.raises(ValueError, match=r"bad\.json: covers\.settings must map each dotted setting"):
        conformance(CATALOG, _fixtures(tmp_path / "bad", bad=_client([{"caps.tiers": 1.0}])))


def test_a_covered_study_point_rules_the_implementation_out_or_makes_the_fail_its() -> None:
    """Where a study's point runs the claim with every part covered: a FAIL there too rules the implementation
    out (and contradicts a claimed `the implementation`), a PASS there makes the FAIL the implementation's, an
    undecided point leaves it open and says so."""
    tested = VerdictAt("c", "learning", "FAIL", 0.6)

    def at_point(status: str, **more) -> Evidence:
        point = CoveredPoint("eps", "learning@eps=2", status, "every part reproduced")
        return _evidence(tested, covered_points={("c", "learning"): (point,)},
                         conformance_gaps={("c", "learning"): "client: not below width 1"}, **more)

    failed = attribute("c", "learning", at_point("FAIL"))
    assert failed.whose == UNEXPLAINED and "not ruled out" not in failed.why
    assert ("the implementation is ruled out: at study `eps`'s point `learning@eps=2`, where the fixtures cover "
            "every part, it FAILs too (every part reproduced)") in failed.why
    said = Claimed(IMPLEMENTATION, "the clients' batch norm departs from the authors'")
    claimed_fail = attribute("c", "learning", at_point("FAIL", claimed={("c", "learning"): said}))
    assert claimed_fail.whose == UNEXPLAINED and "ruled out" in claimed_fail.contradicted
    passed = attribute("c", "learning", at_point("PASS"))
    assert passed.whose == IMPLEMENTATION and "`learning@eps=2`" in passed.why and "PASSes" in passed.why
    undecided = attribute("c", "learning", at_point("INCONCLUSIVE"))
    assert undecided.whose == UNEXPLAINED
    assert "not ruled out: client: not below width 1 (at study `eps`" in undecided.why
    assert "it is INCONCLUSIVE" in undecided.why
    assert "it is not tested" in attribute("c", "learning", at_point("SKIPPED")).why  # no records there yet


def test_a_studys_point_is_read_where_the_committed_fixtures_cover_every_part() -> None:
    """From a study reading, as REPORT.json and studies/ hold it: the `scaler-eps` point at the authors' eps is
    covered, so its verdict speaks for the learning tier's FAIL; the project's own eps (point 0) is not."""
    claim = "fedrolex.as-run.participation.10pct"
    covered, _ = conformance(CATALOG, ROOT)
    study = {"study": "scaler-eps", "base_profile": "learning", "claims": [{"claim": claim, "trends": [], "points": [
        {"profile": "learning@model.batchnorm_eps_exponent=0", "verdict": "PASS"},
        {"profile": SCALER_EPS, "verdict": "FAIL"}]}]}
    points = covered_points([study], covered)
    assert [(p.profile, p.status) for p in points[(claim, "learning")]] == [(SCALER_EPS, "FAIL")]
    tested = [VerdictAt(claim, "learning", "FAIL", 0.55)]
    found = attributions(CATALOG, tested, studies=[study], root=ROOT)[(claim, "learning")]
    assert found.whose == UNEXPLAINED and f"ruled out: at study `scaler-eps`'s point `{SCALER_EPS}`" in found.why
    study["claims"][0]["points"][1]["verdict"] = "PASS"
    assert attributions(CATALOG, tested, studies=[study], root=ROOT)[(claim, "learning")].whose == IMPLEMENTATION


def _study(name: str, points: int, heading: str, listed: int = 3) -> dict:
    """A study reading listing `listed` points, the first `points` of them with values."""
    read = [{"values": {"a − b": {"0": 1.0}} if k < points else {}} for k in range(listed)]
    return {"study": name, "claims": [{"claim": "c", "points": read, "trends": [{"heading": heading}]}]}


def test_a_study_is_read_over_the_more_points_the_records_at_hand_or_its_committed_reading_hold() -> None:
    """A study's runs off the profiles stay in the store that ran them: a report read from the committed records
    alone sees one point of the rounds study, its committed reading three, and only the latter can show a trend."""
    read = [_study("rounds", 1, ""), _study("size", 3, "toward")]
    committed = [_study("rounds", 3, "flat"), _study("size", 2, "away"), _study("other", 2, "inside")]
    chosen = {s["study"]: s["claims"][0]["trends"][0]["heading"] for s in study_evidence(read, committed)}
    assert chosen == {"rounds": "flat", "size": "toward", "other": "inside"}
    rounds = next(s for s in committed_studies(ROOT) if s["study"] == "rolling-rounds")
    assert max(len(c["points"]) for c in rounds["claims"]) >= 2
