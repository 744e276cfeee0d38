"""`fedclaims baseline check --against REV`: the working tree against a git revision, on this
machine, bit for bit.

Each test copies the project's tracked files into a fresh git repository, commits them (the
revision), then changes a method in the working tree and checks it against HEAD. Both sides read
and write the session's results store, so records whose keys the change leaves alone are shared:
the unchanged side reuses the records any earlier check (or the claim items) made.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

CLAIM = "fedrolex.accuracy.low-heterogeneity-beats-dropout"
"""Reads FedRolex and Federated Dropout at L = 5; the changes below touch Federated Dropout only."""
SPEC = "specs/fedrolex-cifar10.yaml"
ANCHOR = "      dropout-5pct: {federation: {clients_per_round: 3}}\n"
CHANGES = {
    "learning rate lowered": "      dropout-l5: {federation: {lr: 0.03}}\n",
    "weight decay moved by 0.02%": "      dropout-l5: {federation: {weight_decay: 5.001e-4}}\n",
}
"""Smoke-profile overrides of Federated Dropout at L = 5: a change of its optimiser that lowers its
accuracy, and one a hundred times smaller than any setting anyone would tune."""


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=fedclaims tests", "-c", "user.email=tests@fedclaims.invalid",
                           *args], cwd=project, capture_output=True, text=True, check=True).stdout


@pytest.fixture()
def project(tmp_path) -> Path:
    """A git repository holding the project's tracked files, committed."""
    folder = tmp_path / "project"
    for name in _git(ROOT, "ls-files").split():
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "the revision")
    return folder


def _check(project: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", "--root", str(project), "baseline", "check",
                           "--against", "HEAD", "--claim", f"^{re.escape(CLAIM)}$"],
                          capture_output=True, text=True, cwd=project, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(project)})


def _said(done: subprocess.CompletedProcess) -> str:
    return " ".join(done.stderr.split())


def test_an_unchanged_tree_reports_no_change_and_runs_nothing_new(project) -> None:
    done = _check(project)
    if _said(done).count(" 0 run,") != 2:  # the store lacked records of the revision (or of the tree)
        done = _check(project)
    said = _said(done)
    if "observed on neither side" in said:
        pytest.skip("CIFAR-10 is not available here (FEDCLAIMS_DATA)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 claims compared with" in said and "0 moved, 1 bit-identical" in said
    assert said.count(" 0 run,") == 2, said  # neither the revision nor the working tree ran anything
    assert "Detects: any change" in said


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_method_is_named_with_its_sizes(project, change: str) -> None:
    spec = project / SPEC
    text = spec.read_text(encoding="utf-8")
    assert text.count(ANCHOR) == 1, f"{SPEC} no longer holds the line these changes follow"
    spec.write_text(text.replace(ANCHOR, ANCHOR + CHANGES[change]), encoding="utf-8")
    done = _check(project)
    said = _said(done)
    if "observed on neither side" in said:
        pytest.skip("CIFAR-10 is not available here (FEDCLAIMS_DATA)")
    assert done.returncode == 1, done.stderr[-3000:]
    assert f"moved {CLAIM}" in said and "1 moved, 0 bit-identical" in said
    (line,) = [m for m in re.finditer(r"Federated Dropout, L=5 \(end_accuracy\): mean change ([-+][0-9.e+-]+)", said)]
    assert "FedRolex, L=5 (end_accuracy)" not in said.split("moved")[1]  # its runs did not change
    assert "paired t" in said or "every seed moved" in said
    assert float(line.group(1)) != 0.0
