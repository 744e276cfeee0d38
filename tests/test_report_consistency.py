"""The committed report reads one record per run: a run's value is the same in every claim that shows it."""
from __future__ import annotations

import json
from pathlib import Path

from harness.loading.catalog import load_catalog
from harness.running.bundle import RecordBundle

ROOT = Path(__file__).resolve().parents[1]


def repeated_runs(report: dict, catalog) -> list[str]:
    """Every (experiment, series, seed, profile) shown with two different values, as text."""
    seen: dict[tuple, float] = {}
    clashes = []
    for verdict in report["verdicts"]:
        observe = catalog.claim(verdict["claim"]).claim.observe
        if getattr(observe, "args", None):  # a metric read with arguments: the label does not name them
            continue
        for label, numbers in (verdict.get("numbers") or {}).items():
            if label.startswith("spread reference: ") or not isinstance(numbers, dict):
                continue
            for seed, value in (numbers.get("values") or {}).items():
                run = (verdict["experiment"], label, seed, verdict["profile"])
                if run in seen and seen[run] != value:
                    clashes.append(f"{run}: {seen[run]} and {value} ({verdict['claim']})")
                seen.setdefault(run, value)
    return clashes


def test_no_run_has_two_values_in_the_committed_report() -> None:
    catalog = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
    report = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    assert repeated_runs(report, catalog) == []


def test_a_run_shown_with_two_values_is_found() -> None:
    catalog = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
    claim = "fedrolex.accuracy.high-heterogeneity-ordering"
    series = {"HeteroFL, L=2 (end_accuracy)": {"values": {"0": 25.47}}}
    other = {"HeteroFL, L=2 (end_accuracy)": {"values": {"0": 25.4}}}
    report = {"verdicts": [{"claim": claim, "experiment": "fedrolex-cifar10", "profile": "standard", "numbers": n}
                           for n in (series, other)]}
    assert len(repeated_runs(report, catalog)) == 1


def listed_twice(report: dict) -> list[tuple]:
    runs = [(r["experiment"], r["variant"], r["seed"], r["profile"], r["key"]) for r in report["runs"]]
    return sorted({run for run in runs if runs.count(run) > 1})


def test_the_committed_report_lists_each_run_once() -> None:
    report = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    assert listed_twice(report) == []


def test_a_report_rebuilt_from_its_own_archive_adds_no_run_twice() -> None:
    from harness.verdicts.archive import listed_once
    run = {"experiment": "e", "variant": "v", "seed": 0, "profile": "learning", "key": "k"}
    other = {**run, "seed": 1, "key": "k1"}
    assert listed_once([run, other, dict(run)]) == [run, other]
    assert listed_twice({"runs": [run, other, dict(run)]}) == [("e", "v", 0, "learning", "k")]


def test_each_committed_run_names_the_record_its_values_came_from() -> None:
    """REPORT.json lists, per run, its record's content digest; a run whose record is committed names that one."""
    from harness.running.bundle import RecordBundle

    report = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    bundle = RecordBundle(ROOT / "records")
    committed = [run for run in report["runs"] if run["profile"] != "smoke" and bundle.has(run["key"])]
    assert len(committed) > 100
    differing = [run["key"][:16] for run in committed if run.get("record") != bundle.read(run["key"])["checksum"]]
    assert differing == []


def test_the_counts_table_counts_the_runs_behind_every_profiles_verdicts() -> None:
    """A profile verified from committed records (not run by the report's own invocation) still counts the runs
    its verdicts read: the table's runs are those REPORT.json lists for the paper at the profile whose records
    are committed (a verdict re-verified from archived observations alone lists runs it has no record of)."""
    report = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    lines = (ROOT / "REPORT.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("## Counts")
    rows = [line.split(" | ") for line in lines[start:] if line.startswith("| fedrolex | ")]
    experiments = {v["experiment"] for v in report["verdicts"] if v["paper"] == "fedrolex"}
    bundle = RecordBundle(ROOT / "records")
    assert {row[1] for row in rows} >= {"smoke", "standard", "learning"}
    for row in rows:
        profile, runs = row[1], int(row[-2])
        # a run of the same config at two profiles (the coverage rules') has one key and counts at both
        stored = {r["key"] for r in report["runs"]
                  if r["profile"] == profile and r["experiment"] in experiments and bundle.has(r["key"])}
        assert runs == len(stored) > 0, (profile, runs, len(stored))
