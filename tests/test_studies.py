"""Scale studies: generated point profiles, their planning, the trend reading, and a whole tiny
study run, resumed from the store and rendered."""
from __future__ import annotations

import io
import json
import math
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from harness import cli
from harness.loading.catalog import load_catalog
from harness.loading.studies import point_profile_name, point_settings
from harness.pipeline import stored_profiles, verify
from harness.report.studies import (
    ClaimReading,
    PointReading,
    add_tested_differences,
    paper_band,
    read_outcome,
    series_trend,
)
from harness.running.bundle import RecordBundle
from harness.running.planning import plan, variants_needed
from harness.running.store import ResultStore
from harness.schema.expectations.approx import Approx
from harness.schema.expectations.between import Between
from harness.schema.expectations.bounds import Above, Below, NotAbove, NotBelow
from harness.schema.expectations.order import Order
from harness.schema.spec import Study
from harness.settings import Settings
from harness.statistics.trend import EXTRAPOLATED, INSIDE, Band

REPO = Path(__file__).resolve().parents[1]
TINY = Path(__file__).resolve().parent / "data" / "study-project"
"""A claim file and a spec, kept out of any claims/ folder so that the claims plugin does not collect them."""
POINTS = [4, 8, 16, 32]


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for folder, name in (("claims", "tiny-claims.yaml"), ("specs", "tiny-coverage-spec.yaml")):
        (root / folder).mkdir(parents=True)
        shutil.copy(TINY / name, root / folder / name)
    return root


@pytest.fixture
def settings(project: Path, tmp_path: Path) -> Settings:
    return Settings(root=project, store_dir=tmp_path / "store", cache_dir=tmp_path / "cache", data_dir=None,
                    download=False, executor="local", committed_records=False)


@pytest.fixture
def catalog(project: Path):
    return load_catalog(project / "claims", project / "specs", project)


# --- generated profiles -------------------------------------------------------------------

def test_each_point_is_a_profile_with_the_axis_value_over_the_base(catalog) -> None:
    study = catalog.study("groups")
    assert [p.profile for p in study.points] == [f"small@index_groups={v}" for v in POINTS]
    spec = catalog.specs["tiny-coverage"]
    for point in study.points:
        profile = spec.spec.profiles[point.profile]
        assert profile.overrides == {"index_groups": point.value}
        assert profile.seeds == [0, 1, 2]
        assert spec.resolve("random", point.profile).index_groups == point.value
    # declared profiles are untouched
    assert spec.resolve("random", "small").index_groups == 8


def test_a_point_verifies_a_claim_against_its_base_expectation(catalog) -> None:
    for claim_id in ("tiny.random-near-formula", "tiny.rolling-exact", "tiny.random-above-rolling"):
        claim = catalog.claim(claim_id).claim
        assert all(claim.expect[p.profile] == claim.expect["small"] for p in catalog.study("groups").points)
    assert not any("@" in p for p in catalog.claim("tiny.static-covers").claim.expect)


def test_fixed_settings_are_part_of_the_name_and_the_overrides() -> None:
    study = Study(title="t", profile="standard", axis="federation.local_epochs", points=[1, 5],
                  fixed={"data.max_train_per_client": 320}, paper_scale={"value": 5}, claims=["a.b"])
    settings = point_settings(study, 5)
    assert settings == {"data.max_train_per_client": 320, "federation.local_epochs": 5}
    assert point_profile_name("standard", settings) == \
        "standard@data.max_train_per_client=320,federation.local_epochs=5"


def test_unknown_study_and_point_are_named(catalog) -> None:
    with pytest.raises(ValueError, match="unknown study 'group'; did you mean 'groups'"):
        catalog.study("group")
    with pytest.raises(ValueError, match="no point 5 on index_groups"):
        catalog.study("groups").select([5])


def test_study_points_are_not_report_profiles(settings) -> None:
    verify(settings, study="groups", points=[4], console=_quiet())
    assert stored_profiles(settings) == []


# --- planning ----------------------------------------------------------------------------

def test_a_study_plans_only_the_variants_its_claims_observe_and_shares_records(catalog, settings) -> None:
    chosen = catalog.study("groups").select()
    claims = [catalog.claim(c) for c in chosen.claim_ids]
    requests, waiting = plan(catalog, claims, chosen.profiles, settings, ResultStore(settings.store_dir),
                             variants_for=chosen.variants_for)
    assert waiting == 0
    assert {r.variant for r in requests} == {"random", "rolling"}  # not 'static'
    assert len(requests) == 2 * len(POINTS) * 3
    # the point at the base profile's own value has the base profile's keys
    base, _ = plan(catalog, [catalog.claim("tiny.rolling-exact")], ["small"], settings)
    at_eight = {r.key for r in requests if r.profile == "small@index_groups=8" and r.variant == "rolling"}
    assert at_eight == {r.key for r in base}


def test_a_claim_skipped_at_the_base_still_runs_its_variants_at_the_points(catalog) -> None:
    loaded = catalog.claim("tiny.random-above-rolling")
    point = catalog.study("groups").points[0].profile
    assert variants_needed(loaded, point) == []
    assert catalog.study("groups").select().variants_for(loaded, point) == ["random", "rolling"]


def test_the_table4_study_runs_only_hasfl_and_shares_standard_records() -> None:
    catalog = load_catalog(REPO / "claims", REPO / "specs", REPO)
    settings = Settings(root=REPO, store_dir=REPO / "no-store", cache_dir=REPO / "no-cache", data_dir=None,
                        download=False, committed_records=False)
    study = catalog.study("table4-data")
    chosen = study.select()
    claims = [catalog.claim(c) for c in chosen.claim_ids]
    requests, _ = plan(catalog, claims, chosen.profiles, settings, variants_for=chosen.variants_for)
    assert {r.variant for r in requests} == {"hasfl"}
    assert sorted({r.config["data"]["max_train_per_client"] for r in requests}) == [64, 320, 1280, 2500]
    at_64 = {r.key for r in requests if r.config["data"]["max_train_per_client"] == 64}
    standard, _ = plan(catalog, claims, ["standard"], settings)
    standard_keys = {r.key for r in standard if r.variant == "hasfl"}
    assert len(at_64) == 4 and at_64 <= standard_keys  # seeds 0-3 of standard's five


# --- the paper's band (the trend's reading: tests/test_trend.py) ------------------------------

def test_paper_band_of_each_expectation() -> None:
    assert paper_band(Between(between=(-0.6, 0.1))) == Band(-0.6, 0.1)
    assert paper_band(Approx(approx=74.5, tolerance=5.6)) == Band(68.9, 80.1)
    assert paper_band(Below(below=0.1)) == Band(-math.inf, 0.1)
    assert paper_band(NotAbove(not_above=0.1)) == Band(-math.inf, 0.1)
    assert paper_band(NotBelow(not_below=2.0)) == Band(2.0, math.inf)
    assert paper_band(Order(order=["a", "b"])) is None


# --- a whole study -------------------------------------------------------------------------

def test_a_study_runs_resumes_from_the_store_and_renders(settings, tmp_path: Path) -> None:
    first = verify(settings, study="groups", points=[4, 8], console=_quiet())
    assert (first.execution.ran, first.execution.reused) == (12, 0)
    outcome = verify(settings, study="groups", console=_quiet())
    assert (outcome.execution.ran, outcome.execution.reused) == (12, 12)
    again = verify(settings, study="groups", console=_quiet())
    assert (again.execution.ran, again.execution.reused) == (0, 24)
    assert {v.profile for v in outcome.verdicts} == {f"small@index_groups={v}" for v in POINTS}
    assert {v.status for v in outcome.verdicts if v.claim == "tiny.rolling-exact"} == {"PASS"}
    assert {v.status for v in outcome.verdicts if v.claim == "tiny.random-above-rolling"} == {"SKIPPED"}

    reading = read_outcome(outcome, "groups", tmp_path / "out" / "figures")
    assert len(reading.figures) == 3 and all(path.stat().st_size > 0 for path in reading.figures)
    by_claim = {c.claim: c for c in reading.claims}
    skipped = by_claim["tiny.random-above-rolling"]
    assert [p.status for p in skipped.points] == ["SKIPPED"] * 4
    assert all(len(p.values["random − rolling (mean_rounds_to_cover)"]) == 3 for p in skipped.points)
    assert skipped.trends[0].trend.interval[0] > 0  # random falls ever further behind as the layer widens
    assert len(skipped.trends[0].trend.lines) == 3  # one line a seed
    exact = by_claim["tiny.rolling-exact"].trends[0]
    assert exact.trend.slope == 0.0 and exact.heading == INSIDE and exact.text.startswith("inside the paper's range")
    assert exact.at_paper.source == EXTRAPOLATED and "at index_groups = 256 (extrapolated" in exact.text
    text = "\n".join(reading.markdown(tmp_path / "out"))
    assert "| 32 | mean 1 ± 0 (3 seeds) | PASS |" in text
    assert "**Extrapolation, not a measurement**" in text and "index_groups = 256" in text
    assert "(figures/study-groups-tiny.rolling-exact.png)" in text
    data = json.loads(json.dumps(reading.to_dict(tmp_path / "out"), allow_nan=False))
    assert data["claims"][0]["points"][0]["value"] == 4
    assert data["claims"][0]["figure"].startswith("figures/"), "no path of this machine"
    trend = {c["claim"]: c for c in data["claims"]}["tiny.rolling-exact"]["trends"][0]
    assert (trend["heading"], trend["seeds"], trend["df"]) == (INSIDE, 3, 2)
    assert trend["at_paper_scale"]["source"] == EXTRAPOLATED and trend["at_paper_scale"]["value"] == 256


def test_the_study_command_writes_its_reading_and_reads_the_store(settings, tmp_path: Path) -> None:
    out = tmp_path / "study"
    common = ["--root", str(settings.root), "study", "groups", "--store", str(settings.store_dir),
              "--output", str(out), "--workers", "1"]
    assert cli.main([*common, "--from-store"]) == 2, "a store that does not exist is a typo, not an empty store"
    settings.store_dir.mkdir()
    assert cli.main([*common, "--from-store"]) == 0
    assert "not run at profile" in json.loads((out / "study.json").read_text())["claims"][0]["points"][0]["reason"]
    assert cli.main([*common, "--point", "4", "--point", "32"]) == 0
    data = json.loads((out / "study.json").read_text())
    assert [p["value"] for p in data["claims"][0]["points"]] == [4, 32]
    assert (out / "STUDY.md").read_text().startswith("# Scale study `groups`")
    assert cli.main(["--root", str(settings.root), "plan", "--study", "groups", "--point", "16",
                     "--store", str(settings.store_dir)]) == 0


def test_a_points_cost_is_measured_or_estimated_from_the_nearest_measured_point() -> None:
    from harness.report.study_costs import point_costs
    costs = point_costs([64, 320, 1280, 2500], {64: [30.0, 34.0], 1280: [570.0, 580.0]}, planned=4)
    assert [c.walls for c in costs][0] == [30.0, 34.0] and costs[0].estimate is None
    assert costs[1].estimate == pytest.approx(575.0 * 320 / 1280)  # nearer 1280 (×4) than 64 (×5) on a log axis
    assert costs[3].estimate == pytest.approx(575.0 * 2500 / 1280)
    assert costs[2].text() == "| 1280 | 2 of 4 | 575 | 1,150 |"
    assert "about 4,492 (estimate)" in costs[3].text()
    assert point_costs([1, 2], {}, planned=4)[1].estimate is None
    assert point_costs([0, 2], {0: [480.0]}, planned=25)[1].estimate is None  # an exponent's 0 scales nothing


def test_an_order_claims_study_trends_the_paired_differences_its_verdict_tests() -> None:
    """An order's verdict decides on each adjacent pair's per-seed difference, not on each variant's
    value: a study trends those differences, against 'the order holds' (≥ 0)."""
    def point(value: int, shift: float) -> PointReading:
        return PointReading(value, f"base@rounds={value}", "FAIL", "", {
            "A (m)": {0: 10.0 + shift, 1: 11.0 + shift, 2: 12.0 + shift},
            "B (m)": {0: 11.0, 1: 11.5, 2: 12.0},
            "C (m)": {0: 9.0, 1: 9.0, 2: 9.0}})

    points = [point(100, -1.0), point(300, 0.0), point(900, 1.0)]
    bands = add_tested_differences(points, Order(order=["a", "b", "c"]), ["a", "b", "c"])
    assert bands == {"A (m) − B (m), paired per seed": Band(0.0, math.inf),
                     "B (m) − C (m), paired per seed": Band(0.0, math.inf)}
    assert points[0].values["A (m) − B (m), paired per seed"] == {0: -2.0, 1: -1.5, 2: -1.0}
    rising = series_trend("A (m) − B (m), paired per seed", points, Band(0.0, math.inf), 2700, "rounds")
    assert rising.trend.slope > 0 and rising.trend.interval[0] > 0
    assert add_tested_differences(points, Above(above=0.0), ["a", "b", "c"]) == {}


def test_a_study_says_whether_a_fail_stands_as_the_axis_grows() -> None:
    def claim(*statuses: str) -> ClaimReading:
        points = [PointReading(v, f"base@rounds={v}", s, "") for v, s in zip((192, 576, 1600), statuses)]
        return ClaimReading("c", "", [], None, "", points, [])

    assert claim("PASS", "PASS", "PASS").whose_fail() is None
    assert "the FAIL stands as the axis grows" in claim("FAIL", "FAIL", "FAIL").whose_fail()
    faded = claim("FAIL", "FAIL", "INCONCLUSIVE").whose_fail()
    assert faded.startswith("FAIL at 192, 576 but INCONCLUSIVE at the largest point measured (1600)")
    assert "whose the FAIL is stays open" in faded, "an INCONCLUSIVE largest point attributes the FAIL to nothing"
    assert "where the claim holds: it is the smaller scales'" in claim("FAIL", "PASS", "PASS").whose_fail()
    assert claim("FAIL", "SKIPPED", "SKIPPED").whose_fail() is None, "one measured point says nothing of a trend"


def test_records_add_bundles_a_studys_runs_so_a_fresh_store_reads_its_points(settings, tmp_path: Path,
                                                                               monkeypatch) -> None:
    """A study's runs off the profiles live in the store that ran them; `records add --study` commits them to
    records/, so a clone with an empty store reads the study's points from the committed records."""
    monkeypatch.setenv("FEDCLAIMS_RECORDS", "1")  # the commands read the project's records, as a user's do
    root = str(settings.root)
    assert cli.main(["--root", root, "study", "groups", "--point", "4", "--point", "8", "--store",
                     str(settings.store_dir), "--output", str(tmp_path / "ran"), "--workers", "1"]) == 0
    assert cli.main(["--root", root, "records", "add", "--study", "groups", "--point", "4",
                     "--store", str(settings.store_dir)]) == 0
    bundled = {record["profile"] for record in RecordBundle(settings.root / "records").records()}
    assert bundled == {"small@index_groups=4"}, "only the point asked for"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert cli.main(["--root", root, "study", "groups", "--from-store", "--store", str(fresh),
                     "--output", str(tmp_path / "read")]) == 0
    claims = json.loads((tmp_path / "read" / "study.json").read_text())["claims"]
    read = {p["value"]: p for p in next(c for c in claims if c["claim"] == "tiny.rolling-exact")["points"]}
    assert read[4]["verdict"] == "PASS", read[4]["reason"]
    assert read[8]["verdict"] == "SKIPPED" and "not run at profile" in read[8]["reason"]
