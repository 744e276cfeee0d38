"""Command-line typos and broken baseline files: a clear error with a suggestion and a non-zero
exit, before anything runs (issue 23, cases 7 and 9)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness import cli

REPO = Path(__file__).resolve().parents[1]


def _error(capsys, argv: list[str]) -> str:
    assert cli.main(["--root", str(REPO), *argv]) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, expected", [
    (["verify", "--profile", "standrd", "--claim", "fedrolex.*"],
     "unknown profile 'standrd' (--profile); did you mean 'standard'?"),
    (["plan", "--profile", "smok"], "unknown profile 'smok' (--profile); did you mean 'smoke'?"),
    (["verify", "--claim", "fedrolx.*"], "no claim matches --claim 'fedrolx.*'; did you mean 'fedrolex.*'?"),
    (["verify", "--claim", "hasfl.table4.cifar10.estimate-tracks-capacty"],
     "did you mean 'hasfl.table4.cifar10.estimate-tracks-capacity'?"),
    (["verify", "--paper", "fedrolex", "--claim", "hasfl.*"], "no claim of paper fedrolex matches --claim 'hasfl.*'"),
    (["plan", "--paper", "fedrolx"], "unknown paper 'fedrolx' (--paper); did you mean 'fedrolex'?"),
    (["verify", "--claim", "fedrolex.("], "is neither a glob nor a regular expression"),
])
def test_a_typo_in_the_selection_is_an_error_with_a_suggestion(capsys, tmp_path: Path, argv, expected) -> None:
    err = _error(capsys, [*argv, "--store", str(tmp_path / "store")])
    assert expected in err
    assert not (tmp_path / "store").exists(), "nothing may run before the selection is known to be valid"


def test_a_glob_selects_with_a_character_class_as_the_shell_does() -> None:
    """`hasfl.table[34].cifar10.*` is a glob: it once had its brackets escaped and matched nothing."""
    from harness.loading.catalog import load_catalog
    catalog = load_catalog(REPO / "claims", REPO / "specs", REPO)
    chosen = {c.id for c in catalog.select(pattern="hasfl.table[34].cifar10.*")}
    expected = {c.id for c in catalog.claims if c.id.startswith(("hasfl.table3.cifar10.", "hasfl.table4.cifar10."))}
    assert chosen == expected and len(expected) > 2
    assert {c.id for c in catalog.select(pattern="hasfl.table?.shakespeare.*")} == {
        c.id for c in catalog.claims if c.id.startswith("hasfl.table") and ".shakespeare." in c.id}


def test_numerics_refuses_a_store_that_does_not_exist_or_is_a_file(capsys, tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    (tmp_path / "file").write_text("x")
    err = _error(capsys, ["numerics", str(tmp_path / "stor"), str(tmp_path / "store")])
    assert f"results store {tmp_path / 'stor'} does not exist; did you mean 'store'?" in err
    assert "is a file, not a folder" in _error(capsys, ["numerics", str(tmp_path / "store"), str(tmp_path / "file")])
    assert "does not exist" in _error(capsys, ["power", "--store", str(tmp_path / "stor")])


def _broken_baseline(tmp_path: Path, change) -> Path:
    data = json.loads((REPO / "baselines" / "smoke.json").read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "smoke.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _first_claim(data: dict) -> dict:
    return data["claims"]["fedrolex.accuracy.low-heterogeneity-beats-heterofl"]


@pytest.mark.parametrize("change, field, found", [
    (lambda d: d.update(drift="garbage"), "drift: Input should be a valid dictionary", "'garbage'"),
    (lambda d: d.update(tolerance={"absolute": "x"}), "tolerance.absolute: Input should be a valid number", "'x'"),
    (lambda d: d["drift"]["groups"][next(iter(d["drift"]["groups"]))].update(rms=None),
     "rms: Input should be a valid number", "None"),
    (lambda d: _first_claim(d).update(margins=[1]),
     "claims.fedrolex.accuracy.low-heterogeneity-beats-heterofl.margins", "[1]"),
    (lambda d: _first_claim(d)["numbers"][next(iter(_first_claim(d)["numbers"]))]["values"].update({"0": "x"}),
     "values.0: Input should be a valid number", "'x'"),
])
def test_a_corrupt_baseline_section_is_named_before_anything_trains(capsys, tmp_path: Path, change, field,
                                                                     found) -> None:
    path = _broken_baseline(tmp_path, change)
    started = time.perf_counter()
    err = _error(capsys, ["baseline", "check", "--baseline", str(path), "--claim", "fedrolex.accuracy.*",
                          "--store", str(tmp_path / "store")])
    assert f"{path}: " in err and field in err and f"(found {found})" in err
    assert not (tmp_path / "store").exists() and time.perf_counter() - started < 30


def test_the_committed_baselines_and_recordings_are_well_formed() -> None:
    from harness.regression import baseline_file
    from harness.running.golden import GOLDEN_FILE, read_golden
    files = sorted((REPO / "baselines").glob("*.json")) + sorted((REPO / "baselines" / "numerics").glob("*.json"))
    files.remove(REPO / GOLDEN_FILE)  # the golden guard's file, read by its own reader
    assert len(files) >= 4
    for path in files:
        assert baseline_file.problems(json.loads(path.read_text(encoding="utf-8")), path) == []
    assert read_golden(REPO)["runs"]


def test_a_corrupt_drift_recording_is_named(capsys, tmp_path: Path) -> None:
    baseline = _broken_baseline(tmp_path, lambda d: None)
    recording = tmp_path / "smoke-other-machine.json"
    recording.write_text(json.dumps({**json.loads(baseline.read_text()), "claims": {"c": {"status": 3}}}))
    err = _error(capsys, ["baseline", "drift", "--baseline", str(baseline), "--recording", str(recording)])
    assert "smoke-other-machine.json: claims.c.status: Input should be a valid string" in err
    assert json.loads(baseline.read_text()) == json.loads((REPO / "baselines" / "smoke.json").read_text())


@pytest.mark.parametrize("command", [["verify"], ["report", "--output", "R.md"], ["plan"], ["power"],
                                     ["baseline", "check"], ["audit", "hasfl"]])
def test_a_store_that_is_a_file_is_refused_before_anything_runs(capsys, tmp_path: Path, command) -> None:
    (tmp_path / "file").write_text("not a store")
    err = _error(capsys, [*command, "--store", str(tmp_path / "file")])
    assert f"results store {tmp_path / 'file'} is a file, not a folder; pass a folder with --store" in err
    assert (tmp_path / "file").read_text() == "not a store" and not (tmp_path / "R.md").exists()


def test_the_projects_report_is_written_from_a_clean_tree_only(monkeypatch, tmp_path, capsys) -> None:
    import argparse

    from harness import cli, provenance
    from harness.cli.runs import _refuse_dirty_report
    from harness.settings import Settings
    monkeypatch.setattr(provenance, "git_commit", lambda directory: "abc123+uncommitted changes")
    root = Path(__file__).resolve().parents[1]
    assert cli.main(["--root", str(root), "report"]) == 2
    assert "uncommitted changes" in capsys.readouterr().err
    settings = Settings.from_env(root)
    elsewhere = argparse.Namespace(output=str(tmp_path / "REPORT.md"), allow_dirty=False)
    _refuse_dirty_report(elsewhere, settings)  # a report written elsewhere is the user's own
    told = argparse.Namespace(output=str(root / "REPORT.md"), allow_dirty=True)
    _refuse_dirty_report(told, settings)


@pytest.mark.parametrize("argv, option", [
    (["baseline", "check", "--against", "", "--claim", "hasfl.alloc.*"], "--against"),
    (["baseline", "check", "--against", "  ", "--claim", "hasfl.alloc.*"], "--against"),
    (["verify", "--store", "", "--claim", "hasfl.alloc.*"], "--store"),
    (["plan", "--data", "", "--claim", "hasfl.alloc.*"], "--data"),
    (["verify", "--profile", "", "--claim", "hasfl.alloc.*"], "--profile"),
    (["report", "--output", "", "--claim", "hasfl.alloc.*"], "--output"),
    (["verify", "--claim", ""], "--claim"),
])
def test_an_empty_option_is_refused_not_read_as_left_out(capsys, argv, option) -> None:
    assert f"{option} is empty (an unset shell variable?)" in _error(capsys, argv)


def test_a_read_only_store_is_read_and_refused_only_for_a_missing_run(capsys, tmp_path: Path, monkeypatch) -> None:
    from harness.running.store import ResultStore
    store = ["--store", str(tmp_path / "store"), "--no-records"]
    assert cli.main(["--root", str(REPO), "verify", "--claim", "hasfl.alloc.cap-at-2.4-for-tier-1.0", *store]) == 0
    monkeypatch.setattr(ResultStore, "read_only", lambda self: True)
    monkeypatch.setattr(ResultStore, "check", lambda self: pytest.fail("a read-only store was checked for writing"))
    capsys.readouterr()
    assert cli.main(["--root", str(REPO), "verify", "--claim", "hasfl.alloc.cap-at-2.4-for-tier-1.0", *store]) == 0
    assert "PASS" in capsys.readouterr().out
    message = _error(capsys, ["verify", "--claim", "hasfl.alloc.*", *store])
    assert "is read-only and lacks" in message
    report = tmp_path / "out" / "REPORT.md"
    assert cli.main(["--root", str(REPO), "report", "--claim", "hasfl.alloc.cap-at-2.4-for-tier-1.0",
                     "--output", str(report), *store]) == 0
    assert "- read-only store: its records were read without taking a lock" in report.read_text(encoding="utf-8")


def test_a_revision_before_the_baselines_is_refused_in_one_line(capsys) -> None:
    import subprocess
    roots = subprocess.run(["git", "-C", str(REPO), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                           text=True).stdout.split()
    if not roots or subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{roots[-1]}:baselines"],
                                   capture_output=True).returncode == 0:
        pytest.skip("no commit of this clone predates the baselines (a shallow clone)")
    message = _error(capsys, ["baseline", "check", "--against", roots[-1], "--claim", "hasfl.alloc.*"])
    assert "predates the regression baselines" in message and len(message.strip().splitlines()) == 1
