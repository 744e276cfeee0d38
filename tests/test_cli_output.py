"""What the commands print and where: results on stdout (so that `fedclaims verify > file` keeps
them), progress and the files written on stderr; `plan` costs every run it lists."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.running.planning import RunRequest
from harness.running.run_costs import NO_MEASUREMENT, MeasuredCosts, RunCost, duration, total_text

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
    assert "3 runs: 0 reused, 3 run" in done.stderr  # what ran on the way is a diagnostic
    assert "fedclaims verdicts" not in done.stderr and "3 runs:" not in done.stdout
    # a log holds one unbroken, tab-separated line a verdict: the full claim id, its profile, the verdict
    rows = [line.split("\t") for line in done.stdout.splitlines() if line.startswith("hasfl.")]
    assert len(rows) == 3 and all(len(row) == 4 and row[1:3] == ["smoke", "PASS"] for row in rows)
    assert {row[0] for row in rows} == {"hasfl.alloc.cap-at-2.4-for-tier-1.0", "hasfl.alloc.cap-at-1.4-for-tier-0.75",
                                      "hasfl.alloc.cap-at-0.4-for-tier-0.5"}
    assert done.stdout.splitlines()[1] == "# claim\tprofile\tverdict\treason"
    # and no progress bar on a stderr that is not a terminal, but a line per finished run
    assert "running 3 runs" not in done.stderr and "━" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if " runs finished (" in line]) == 3


def test_the_commands_consoles_wrap_no_line_off_a_terminal() -> None:
    """Every line a command prints through its consoles (notes, trends, 'also shown') stays one line in a log."""
    line = " ".join(f"word-{i}" for i in range(60))
    done = subprocess.run([sys.executable, "-c", "from harness.cli.common import stderr, stdout\n"
                           f"stdout.print({line!r})\nstderr.print({line!r})"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120, check=True)
    assert done.stdout == line + "\n" and done.stderr == line + "\n"


def test_results_of_power_and_baseline_check_are_on_stdout(tmp_path: Path, capsys) -> None:
    options = ["--store", str(tmp_path / "store"), "--executor", "local", "--claim", CAPS]
    baseline = ["--baseline", str(tmp_path / "smoke.json")]
    assert cli.main(["--root", str(REPO), "baseline", "update", *options, *baseline]) == 0
    shown = capsys.readouterr()
    assert f"wrote {tmp_path / 'smoke.json'}" in shown.err and shown.out == ""
    assert cli.main(["--root", str(REPO), "baseline", "check", *options, *baseline]) == 0
    shown = capsys.readouterr()
    assert "3 claims compared with smoke.json: 0 differ" in shown.out
    assert "compared with" not in shown.err
    assert cli.main(["--root", str(REPO), "power", *options]) == 0
    shown = capsys.readouterr()
    assert "0 of 3 claims undecided" in shown.out and "undecided" not in shown.err


# --- plan: the cost of every run it lists ------------------------------------------------


def test_plan_costs_each_run_from_the_stored_runs_and_totals_what_it_covers(tmp_path: Path, capsys) -> None:
    store = ["--store", str(tmp_path / "store"), "--executor", "local"]
    assert cli.main(["--root", str(REPO), "verify", "--claim", ONE_CAP, *store]) == 0
    capsys.readouterr()
    assert cli.main(["--root", str(REPO), "plan", "--claim", "hasfl.alloc.*", *store, "--workers", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    stored = [line for line in lines if "  stored  " in line]
    assert len(stored) == 1 and "hasfl-allocation-rule/tier-1.0/seed 0 (smoke)" in stored[0]
    to_run = [line for line in lines if "  to run  " in line]
    rule = [line for line in to_run if "hasfl-allocation-rule/" in line]
    example = [line for line in to_run if "hasfl-allocation-example/" in line]
    assert len(rule) == 3 and all(line.endswith(": the experiment's stored runs (estimate)") and " ~" in line
                                  for line in rule)
    assert example and all(line.endswith(f": {NO_MEASUREMENT}") and "  ?  " in line for line in example)
    # the experiment with no stored run is told how to get a cost, once; the one costed is not
    (hint,) = [line for line in lines if line.startswith("no cost for ")]
    assert hint.startswith("no cost for hasfl-allocation-example at smoke: no run of it is stored there")
    assert "`fedclaims trial --profile smoke --experiment hasfl-allocation-example`" in hint
    assert "`fedclaims verify --profile smoke --claim hasfl.alloc." in hint
    assert lines[-2] == f"{1 + len(to_run)} runs: 1 stored, {len(to_run)} to run"
    assert lines[-1].startswith("cost: about ") and (
        f"of compute for 3 of the {len(to_run)} runs to run; {len(example)} have no measurement; one worker runs "
        "them one after another (--workers divides it)") in lines[-1]


def _request(variant: str, seed: int, profile: str = "smoke", experiment: str = "exp") -> RunRequest:
    return RunRequest(experiment, variant, seed, profile, "kind", {}, {}, {},
                      f"{experiment}-{variant}-{seed}-{profile}")


def test_a_run_is_costed_from_its_variant_then_its_experiment_at_its_profile_only() -> None:
    requests = [_request("a", 0), _request("a", 1), _request("b", 0), _request("a", 0, profile="paper"),
                _request("a", 0, experiment="other")]
    records = {"exp-a-0-smoke": {"provenance": {"wall_seconds": 10.0}},
               "exp-b-0-smoke": {"provenance": {"wall_seconds": 40.0}}}
    costs = MeasuredCosts(requests, records)
    assert costs.of(_request("a", 5)) == RunCost(10.0, "its 1 stored run(s)")
    assert costs.of(_request("c", 0)) == RunCost(25.0, "the experiment's stored runs (estimate)")
    assert costs.of(_request("a", 1, profile="paper")) == RunCost(None, NO_MEASUREMENT)  # profiles are not scaled
    assert costs.of(_request("a", 1, experiment="other")) == RunCost(None, NO_MEASUREMENT)


@pytest.mark.parametrize("costs, workers, text", [
    ([], 4, "nothing to run"),
    ([RunCost(None, NO_MEASUREMENT)] * 2, 4, "no estimate: none of the 2 runs to run has a measurement"),
    ([RunCost(600.0, "m")] * 4, 2, ("about 40 min of compute for all 4 runs to run; about 20 min of wall time on "
                                    "2 workers running them side by side")),
    ([RunCost(7200.0, "m"), RunCost(60.0, "m"), RunCost(None, NO_MEASUREMENT)], 8,
     ("about 2.0 h of compute for 2 of the 3 runs to run; 1 has no measurement; about 2.0 h of wall time on 8 "
      "workers running them side by side")),  # workers do not split one run
    ([RunCost(3.0, "m")], 1, ("about 3.0 s of compute for the one run to run; one worker runs them one after "
                              "another (--workers divides it)")),
])
def test_the_total_says_what_it_covers_and_what_workers_make_of_it(costs, workers, text) -> None:
    assert total_text(costs, workers) == text


def test_durations_read_in_their_unit() -> None:
    assert [duration(s) for s in (0.42, 45, 720, 12_240)] == ["0.4 s", "45 s", "12 min", "3.4 h"]


# --- validate: a spec that trains models and names no reference ------------------------------

UNREFERENCED_SPEC = """\
experiment: unreferenced
paper: test
title: a federation trained with no reference accuracy
kind: federated_training
config:
  data: {name: cifar10, partition: {scheme: iid}}
  model: {arch: conv, hidden: [4], in_channels: 3, num_classes: 10, image_size: 32}
  federation: {num_clients: 2, clients_per_round: 2, rounds: 1}
variants:
  a: {label: A}
profiles:
  smoke: {seeds: [0, 1, 2, 3, 4, 5]}
"""

UNREFERENCED_CLAIMS = """\
paper: test
title: claims on an experiment with no reference
reference: "a test"
claims:
  - id: test.learns
    statement: "The federation ends above chance."
    source: "§1"
    experiment: unreferenced
    observe: {metric: end_accuracy, of: a}
    expect:
      smoke: {above: 10.0}
  - id: test.covers
    statement: "Every coordinate is trained by some client."
    source: "§1"
    experiment: unreferenced
    observe: {metric: never_covered_fraction, of: a}
    expect:
      smoke: {below: 0.5}
"""


def test_validate_warns_of_a_training_spec_without_a_reference_and_what_the_report_loses(tmp_path, capsys) -> None:
    for relative, text in (("specs/unreferenced.yaml", UNREFERENCED_SPEC), ("claims/test.yaml", UNREFERENCED_CLAIMS)):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    assert cli.main(["--root", str(tmp_path), "validate"]) == 0
    (warning,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert warning.startswith("warning: specs/unreferenced.yaml: experiment 'unreferenced' declares no "
                              "`reference:`")
    # the accuracy claim loses its level; the coverage claim (independent of learning) has none to lose
    assert "its 1 accuracy-dependent claim (test.learns) gets no learning level" in warning


def test_validate_says_nothing_of_the_projects_referenced_specs(capsys) -> None:
    assert cli.main(["--root", str(REPO), "validate"]) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
