"""The golden guard (harness.running.golden): an edit that changes no number re-keys nothing and passes; one that
moves a number without a behaviour version bump fails with "bump the version or revert"; a bump asks for the
golden set to be re-recorded.

The guard's own behaviour is shown on a copy of the project whose code is edited and run in a child process
(the allocation rule's golden runs: analytic, milliseconds each); the shipped project's golden runs are checked
as they stand, which re-runs only those whose code changed since `baselines/golden.json` was written.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.running import golden
from harness.running.bundle import RecordBundle, store_for
from harness.settings import Settings

REPO = Path(__file__).resolve().parents[1]
EXPERIMENT = "hasfl-allocation-rule"


def test_the_shipped_golden_runs_are_as_recorded(catalog, tmp_path: Path) -> None:
    settings = Settings(root=REPO, store_dir=tmp_path / "store", cache_dir=tmp_path / "cache",
                        data_dir=Settings.from_env(REPO).data_dir, download=False, executor="local",
                        committed_records=True)
    recorded = golden.read_golden(REPO)["runs"]
    assert len(recorded) >= 50, "one smoke seed of every experiment and variant"
    assert {run.split("/")[0] for run in recorded} >= {"hasfl-cifar10", "hasfl-shakespeare", "fedrolex-cifar10",
                                                        "fedhenet-pipeline", EXPERIMENT}
    bundle = RecordBundle(REPO / "records")
    assert all(bundle.has(entry["key"]) for entry in recorded.values()), "every golden record is committed"
    outcomes = golden.check(catalog, settings, store_for(settings))
    failed = [outcome.text() for outcome in outcomes if outcome.failed]
    assert not failed, "\n".join(failed)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The project's code, claims, specs, golden file and the allocation rule's golden records, in tmp_path."""
    root = tmp_path / "project"
    for folder in ("harness", "methods", "fedclaims", "claims", "specs"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "baselines").mkdir()
    shutil.copy(REPO / golden.GOLDEN_FILE, root / golden.GOLDEN_FILE)
    bundle = RecordBundle(REPO / "records")
    for run, entry in golden.read_golden(REPO)["runs"].items():
        if run.startswith(f"{EXPERIMENT}/"):
            target = root / "records" / bundle.path(entry["key"]).relative_to(bundle.root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(bundle.path(entry["key"]), target)
    return root


def _guard(root: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(root), "FEDCLAIMS_CACHE": str(tmp_path / "cache"),
                   "FEDCLAIMS_RECORDS": "1", "FEDCLAIMS_DOWNLOAD": "0"}
    return subprocess.run([sys.executable, "-m", "harness.cli", "--root", str(root), "golden", "check",
                           "--experiment", EXPERIMENT, "--workers", "1"],
                          cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600)


def _edit(file: Path, old: str, new: str) -> None:
    text = file.read_text()
    assert old in text, f"{file} no longer holds {old!r}"
    file.write_text(text.replace(old, new))


def test_a_change_that_moves_no_number_passes_the_guard(copy: Path, tmp_path: Path) -> None:
    _edit(copy / "methods/allocation.py", "h_bar", "mean_estimate")  # a renamed local
    result = _guard(copy, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "code changed, numbers the same" in result.stdout and "0 failed" in result.stdout


def test_a_number_moved_without_a_version_bump_fails_the_guard(copy: Path, tmp_path: Path) -> None:
    _edit(copy / "methods/allocation.py", "h_bar = float(h_tilde.mean())", "h_bar = float(h_tilde.mean()) * 1.01")
    result = _guard(copy, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "code changed and a number moved: bump the version or revert" in result.stdout


def test_a_version_bump_asks_for_the_golden_set_to_be_recorded_anew(copy: Path, tmp_path: Path) -> None:
    _edit(copy / "harness/runners/allocation_rule.py", "# fedclaims behaviour version: 1",
          "# fedclaims behaviour version: 2")
    result = _guard(copy, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "re-record the golden set with `fedclaims golden record`" in result.stdout
