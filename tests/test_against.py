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
pytestmark = [pytest.mark.slow, pytest.mark.integration]

CLAIMS = {
    "fedrolex.accuracy.low-heterogeneity-beats-dropout": "FedRolex, L=5 − Federated Dropout, L=5 (end_accuracy)",
    "fedrolex.accuracy.low-heterogeneity-beats-heterofl": "FedRolex, L=5 − HeteroFL, L=5 (end_accuracy)",
}
"""Two claims reading FedRolex at L = 5, each against another method; the changes below touch those
other methods only, so FedRolex's runs are shared by both revisions."""
SPEC = "specs/fedrolex-cifar10.yaml"
ANCHOR = "      dropout-5pct: {federation: {clients_per_round: 3}}\n"
CHANGES = ("      dropout-l5: {federation: {lr: 0.03}}\n"  # learning rate lowered: 0.1 → 0.03
           "      heterofl-l5: {federation: {weight_decay: 5.001e-4}}\n")  # weight decay moved by 0.02%
"""Smoke-profile overrides: a change of Federated Dropout's optimiser that lowers its accuracy, and
a change of HeteroFL's a hundred times smaller than any setting anyone would tune."""


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
    selection = "^(" + "|".join(re.escape(claim) for claim in CLAIMS) + ")$"
    return subprocess.run([sys.executable, "-m", "harness.cli", "--root", str(project), "baseline", "check",
                           "--against", "HEAD", "--claim", selection],
                          capture_output=True, text=True, cwd=project, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(project)})


def _said(done: subprocess.CompletedProcess) -> str:
    """What the check printed (its results on stdout, its progress on stderr), on one line; a skip
    where CIFAR-10 is not available here."""
    said = " ".join((done.stdout + "\n" + done.stderr).split())
    if "observed on neither side" in said:
        pytest.skip("CIFAR-10 is not available here (FEDCLAIMS_DATA)")
    return said


def test_changed_methods_are_named_with_their_sizes(project) -> None:
    spec = project / SPEC
    text = spec.read_text(encoding="utf-8")
    assert text.count(ANCHOR) == 1, f"{SPEC} no longer holds the line these changes follow"
    spec.write_text(text.replace(ANCHOR, ANCHOR + CHANGES), encoding="utf-8")
    done = _check(project)
    said = _said(done)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "2 claims compared with" in said and "2 moved, 0 bit-identical" in said
    for claim, series in CLAIMS.items():
        assert f"moved {claim}" in said
        sizes = re.search(re.escape(series) + r": mean change ([-+][0-9.e+-]+) = ([-+][0-9.e+-]+) seed SDs", said)
        assert sizes and float(sizes[1]) != 0.0, (claim, said[-2000:])
    assert said.count("paired t = ") + said.count("every seed moved") >= 2


def test_an_unchanged_tree_reports_no_change_and_runs_nothing_new(project) -> None:
    done = _check(project)
    if _said(done).count(" 0 run,") != 2:  # the store lacked records of the revision (or of the tree)
        done = _check(project)
    said = _said(done)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 claims compared with" in said and "0 moved, 2 bit-identical" in said
    assert said.count(" 0 run,") == 2, said  # neither the revision nor the working tree ran anything
    assert "Detects: any change" in said
