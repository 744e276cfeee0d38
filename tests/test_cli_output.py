"""What the commands print and where: results on stdout (so that `fedclaims verify > file` keeps
them), progress and the files written on stderr."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness import cli

REPO = Path(__file__).resolve().parents[1]
CAPS = "hasfl.alloc.cap-at-*"  # three claims on three one-seed analytic runs, a second or so in all
ONE_CAP = "hasfl.alloc.cap-at-2.4-for-tier-1.0"


def _fedclaims(*argv: str, store: Path) -> subprocess.CompletedProcess:
    """The command as a user runs it, with this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "FEDCLAIMS_CACHE": str(store.parent / "cache")}
    return subprocess.run([sys.executable, "-m", "harness.cli", "--root", str(REPO), *argv, "--store", str(store),
                           "--executor", "local"], capture_output=True, text=True, timeout=300, env=env, check=False)


def test_verify_into_a_file_keeps_the_verdict_table(tmp_path: Path) -> None:
    done = _fedclaims("verify", "--claim", CAPS, store=tmp_path / "store")
    assert done.returncode == 0, done.stderr
    assert "fedclaims verdicts" in done.stdout and "PASS 3" in done.stdout
    assert "hasfl.alloc.cap-at-0.4-for" in done.stdout
    assert "3 runs: 0 reused, 3 run" in done.stderr  # what ran on the way is a diagnostic
    assert "fedclaims verdicts" not in done.stderr and "3 runs:" not in done.stdout


def test_results_of_power_and_baseline_check_are_on_stdout(tmp_path: Path, capsys) -> None:
    options = ["--store", str(tmp_path / "store"), "--executor", "local", "--claim", CAPS]
    baseline = ["--baseline", str(tmp_path / "smoke.json")]
    assert cli.main(["--root", str(REPO), "baseline", "update", *options, *baseline]) == 0
    shown = capsys.readouterr()
    assert f"wrote {tmp_path / 'smoke.json'}" in shown.err and shown.out == ""
    assert cli.main(["--root", str(REPO), "baseline", "check", *options, *baseline]) == 0
    shown = capsys.readouterr()
    assert "3 claims compared with smoke.json: 0 differences" in shown.out
    assert "compared with" not in shown.err
    assert cli.main(["--root", str(REPO), "power", *options]) == 0
    shown = capsys.readouterr()
    assert "0 of 3 claims undecided" in shown.out and "undecided" not in shown.err
