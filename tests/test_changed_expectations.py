"""An expectation changed after seeds were run against it is a new claim (`changed:` in a claim file,
`harness.schema.changes`): the new one is tested only on seeds run after the change, the old verdict stays
beside it, and the sequential file says so. The project's own changes are checked against git history."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from harness.extensions import ALLOW_CODE_PATHS_VARIABLE
from harness.loading.catalog import load_catalog
from harness.schema.claim import ClaimFile
from harness.sequential import recorded, results
from harness.sequential.driver import until_decided
from harness.settings import Settings
from harness.statistics.outcome import FAIL, INCONCLUSIVE, PASS

ROOT = Path(__file__).resolve().parent.parent

SPEC = """\
experiment: noise
paper: synthetic
title: One listed value per seed
kind: tests.synthetic_kind:SYNTHETIC
config: {values: [0.0]}
variants:
  shifty: {config: {values: [5.0, 5.2, 4.8, -0.5, 0.4, -0.3, 0.2, -0.1]}}
profiles:
  smoke: {seeds: [0, 1, 2]}
"""
"""The first three seeds lie far above zero, the later ones around it."""

CLAIM = """\
paper: synthetic
title: Synthetic claims
reference: none
claims:
  - id: syn.shifty
    statement: "The shifty variant lies on one side of zero."
    source: "test"
    experiment: noise
    observe: {metric: value, of: shifty}
    expect: {smoke: EXPECTATION}
CHANGED"""

CHANGE = """\
    changed:
      - date: "2026-12-04T15:16:43+00:00"
        commit: 8507a06d906285319a717e7490ff52e5041adc72
        expect: {smoke: {below: 0.0}}
        seen: {smoke: [0, 1, 2]}
        why: "Re-read after its FAIL on seeds 0-2 was seen (planted by a test)."
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv(ALLOW_CODE_PATHS_VARIABLE, str(Path(__file__).resolve().parent))
    monkeypatch.setenv("FEDCLAIMS_WORKERS", "1")
    (tmp_path / "claims").mkdir()
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "noise.yaml").write_text(SPEC)
    return tmp_path


def _claims(project: Path, expectation: str, changed: str = "") -> None:
    (project / "claims" / "synthetic.yaml").write_text(
        CLAIM.replace("EXPECTATION", expectation).replace("CHANGED", changed))


def _settings(project: Path) -> Settings:
    return Settings(root=project, store_dir=project / "store", cache_dir=project / "cache", data_dir=None,
                    download=False, executor="local", committed_records=False)


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=160)


def test_without_the_change_recorded_the_new_expectation_passes_on_the_seeds_that_suggested_it(project) -> None:
    """What a change unrecorded allows: the hypothesis read off seeds 0-2 PASSes on them."""
    settings = _settings(project)
    _claims(project, "{below: 0.0}")
    results.write(until_decided(settings, "smoke", console=_quiet()), settings.store_dir)
    _claims(project, "{above: 0.0}")
    track = until_decided(settings, "smoke", console=_quiet()).tracks[0]
    assert (track.fixed.status, track.verdict.status, track.seeds) == (PASS, PASS, [0, 1, 2])


def test_a_changed_expectation_cannot_pass_on_the_seeds_run_before_the_change(project) -> None:
    settings = _settings(project)
    _claims(project, "{below: 0.0}")
    first = until_decided(settings, "smoke", console=_quiet())
    results.write(first, settings.store_dir)
    assert (first.tracks[0].verdict.status, first.tracks[0].seeds) == (FAIL, [0, 1, 2])
    _claims(project, "{above: 0.0}", CHANGE)
    console = _quiet()
    second = until_decided(settings, "smoke", console=console)
    results.write(second, settings.store_dir)
    track = second.tracks[0]
    # On the profile's seeds (all seen): no verdict, and the old one beside it, dated.
    assert track.fixed.status == INCONCLUSIVE and "2026-12-04 (commit 8507a06)" in track.fixed.reason
    (before,) = track.fixed.readings
    assert (before["kind"], before["status"], before["seeds"], before["commit"]) == (
        "before-change", FAIL, [0, 1, 2], "8507a06d906285319a717e7490ff52e5041adc72")
    # Seeds added after the change are its only evidence: around zero, they never make it PASS.
    assert track.verdict.status != PASS
    assert track.seeds and not set(track.seeds) & {0, 1, 2}
    assert set(track.seeds) <= set(second.seeds["noise"]) - {0, 1, 2}
    assert track.looks.seeds == (2, 3)  # fresh seeds: at least the 2 a spread needs, up to max 6 less 3 seen
    assert "planned anew" in " ".join(console.file.getvalue().split())
    # The sequential file says so, and reads back.
    (entry,) = results.load(settings.store_dir, "smoke")["claims"]
    assert entry["changed"]["seen"] == [0, 1, 2] and entry["changed"]["before"]["status"] == FAIL
    assert entry["changed"]["commit"].startswith("8507a06")
    again = recorded.read(settings.store_dir, "smoke").claims["syn.shifty"]
    assert again.seen == (0, 1, 2) and again.change_commit.startswith("8507a06")
    # A later invocation continues that plan rather than planning it anew.
    third = until_decided(settings, "smoke", console=_quiet())
    assert third.tracks[0].looks == track.looks and third.tracks[0].seeds == track.seeds


def test_a_sequential_file_whose_changed_claim_reads_a_seen_seed_is_refused(project) -> None:
    settings = _settings(project)
    _claims(project, "{above: 0.0}", CHANGE)
    results.write(until_decided(settings, "smoke", console=_quiet()), settings.store_dir)
    path = recorded.path_for(settings.store_dir, "smoke")
    data = json.loads(path.read_text())
    data["claims"][0]["changed"]["seen"] = [0, 1, data["claims"][0]["seeds"][0]]  # as many seen, one read
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"claims\[0\]\.seeds.*before its expectation changed"):
        recorded.read(settings.store_dir, "smoke")


# --- the project's own changes, against git history ------------------------------------------------

def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


def _changes() -> list[tuple[str, object, object]]:
    catalog = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
    return [(str(loaded.doc.file), loaded.claim, change) for loaded in catalog.claims
            for change in loaded.claim.changed]


def _claim_at(commit: str, path: str, claim_id: str):
    text = _git("show", f"{commit}:{Path(path).resolve().relative_to(ROOT)}")
    return next(c for c in ClaimFile.model_validate(yaml.safe_load(text)).claims if c.id == claim_id)


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_every_recorded_change_is_what_git_history_holds() -> None:
    """Each `changed:` entry's old expectation is the claim's at the parent of its commit, the commit first
    holds another, at the recorded date; and the seeds it says were seen cover those the committed
    baseline and sequential plan of each profile held then."""
    changes = _changes()
    assert {claim.id for _, claim, _ in changes} >= {"hasfl.table3.cifar10.guarantee-off-largest-allocation",
                                                      "hasfl.table3.cifar10.guarantee-off-untrained-channels"}
    for path, claim, change in changes:
        parent = _git("rev-parse", f"{change.commit}^").strip()
        old, new = _claim_at(parent, path, claim.id), _claim_at(change.commit, path, claim.id)
        for profile, expectation in change.expect.items():
            assert old.expect[profile] == expectation, (claim.id, profile)
            assert new.expect[profile] != expectation, (claim.id, profile)
        assert _git("show", "-s", "--format=%cI", change.commit).strip() == change.date.isoformat()
        for profile, seen in change.seen.items():
            assert _seeds_committed(parent, claim, profile) <= set(seen), (claim.id, profile)


def _seeds_committed(commit: str, claim, profile: str) -> set[int]:
    """The seeds at `profile` the evidence committed at `commit` held for the claim's experiment."""
    seeds: set[int] = set()
    for path, read in ((f"baselines/{profile}.json", _baseline_seeds), (f"records/sequential/{profile}.json",
                                                                           _plan_seeds)):
        try:
            seeds |= read(json.loads(_git("show", f"{commit}:{path}")), claim)
        except subprocess.CalledProcessError:
            continue  # no such file then
    return seeds


def _baseline_seeds(baseline: dict, claim) -> set[int]:
    entry = baseline.get("claims", {}).get(claim.id) or {}
    return {int(seed) for series in (entry.get("numbers") or {}).values() for seed in series.get("values", {})}


def _plan_seeds(plan: dict, claim) -> set[int]:
    return set(plan.get("experiments", {}).get(claim.experiment, {}).get("seeds", []))


def test_validate_names_the_claims_whose_expectation_changed_after_their_records(project) -> None:
    from harness.loading.catalog import load_catalog as load
    from harness.sequential.changes import declared, recorded_otherwise
    settings = _settings(project)
    _claims(project, "{below: 0.0}")
    results.write(until_decided(settings, "smoke", console=_quiet()), settings.store_dir)

    def named() -> tuple[list[str], list[str]]:
        catalog = load(project / "claims", project / "specs", project)
        return declared(catalog), recorded_otherwise(catalog, [settings.store_dir])

    assert named() == ([], [])
    _claims(project, "{above: 0.0}")  # changed, and not declared
    (undeclared,) = named()[1]
    assert "syn.shifty at smoke: its expectation changed after the looks recorded" in undeclared
    assert "no `changed:` entry says so" in undeclared
    _claims(project, "{above: 0.0}", CHANGE)  # declared; the plan does not record it yet
    (change,), (stale,) = named()
    assert change.startswith("syn.shifty: changed on 2026-12-04 (commit 8507a06) at smoke")
    assert "(smoke 0, 1, 2)" in change
    assert "do not record its change of 2026-12-04 (commit 8507a06)" in stale
    results.write(until_decided(settings, "smoke", console=_quiet()), settings.store_dir)
    assert named() == ([change], [])


def test_a_claims_page_shows_the_replaced_verdict_and_flags_looks_that_do_not_record_the_change(project) -> None:
    from harness.loading.catalog import load_catalog as load
    from harness.report.readings import reading_lines, recorded_before_change
    settings = _settings(project)
    _claims(project, "{above: 0.0}", CHANGE)
    result = until_decided(settings, "smoke", console=_quiet())
    lines = reading_lines({"smoke": result.tracks[0].fixed}, ["smoke"])
    assert lines[1] == "Beside the verdicts:"
    assert lines[2].startswith("- `smoke`, before the change of 2026-12-04 (commit 8507a06): < 0 (one-sided t-test")
    assert ": **FAIL** on seeds 0, 1, 2 — " in lines[2]
    claim = load(project / "claims", project / "specs", project).claim("syn.shifty").claim
    entry = results.to_dict(result)["claims"][0]
    assert recorded_before_change(claim, "smoke", entry) is None
    entry.pop("changed")
    assert "do not record its expectation's change of 2026-12-04 (commit 8507a06)" in \
        recorded_before_change(claim, "smoke", entry)


def test_the_sequential_sections_row_says_where_its_looks_do_not_record_the_change(project) -> None:
    from harness.report.sequential import render
    settings = _settings(project)
    _claims(project, "{above: 4.9}")  # INCONCLUSIVE on seeds 0-2 (mean 5.0, sd 0.2): its row is shown
    results.write(until_decided(settings, "smoke", budget_minutes=0.0, console=_quiet()), settings.store_dir)
    data = results.load(settings.store_dir, "smoke")
    stale = "looks planned before the change"
    (row,) = [line for line in render(data, lambda entry: stale) if "`syn.shifty`" in line]
    assert f"| {stale} " in row
    assert not [line for line in render(data) if stale in line]


def test_a_changed_span_claim_reads_the_span_on_every_seed_and_can_only_contradict_it(project) -> None:
    """The span reading of an expectation changed after its seeds were seen reads those seeds too: it can
    FAIL the paper's span, never PASS the claim (the verdict itself waits for fresh seeds)."""
    settings = _settings(project)
    (project / "specs" / "noise.yaml").write_text(SPEC.replace("seeds: [0, 1, 2]", "seeds: [0, 1, 2, 3, 4, 5]"))
    change = CHANGE.replace("seen: {smoke: [0, 1, 2]}", "seen: {smoke: [0, 1, 2, 3, 4, 5]}")
    _claims(project, "{between: [-2.0, 2.0], span_of_runs: 20}", change)
    fixed = until_decided(settings, "smoke", console=_quiet()).tracks[0].fixed
    assert fixed.status == INCONCLUSIVE
    before, span = fixed.readings
    assert before["kind"] == "before-change"
    assert (span["kind"], span["seeds"], span["outside"]) == ("span-of-runs", [0, 1, 2, 3, 4, 5], [0, 1, 2])
    assert "those run before the change included" in span["label"]
    # Three of six outside a span of 20 runs (each outside with probability 2/21) contradicts it.
    assert span["status"] == FAIL
