"""The report's 'Runs still missing' section: what a partly run profile lacks and its cost."""
from harness.datasets.registry import UNAVAILABLE
from harness.report.missing import missing_runs_section
from harness.running.planning import RunRequest


def _request(variant: str, seed: int, profile: str = "learning", data: str = "abc") -> RunRequest:
    return RunRequest("hasfl-cifar10", variant, seed, profile, "federated", {}, {}, {"cifar10": data},
                      f"{variant}-{seed}-{profile}-{data}")


def _record(seconds: float) -> dict:
    return {"provenance": {"wall_seconds": seconds}}


def test_missing_runs_are_costed_from_their_variant_or_else_the_experiment():
    requests = [_request("hasfl", 0), _request("hasfl", 1), _request("hasfl", 2),
                _request("heterofl", 0), _request("heterofl", 1)]
    records = {"hasfl-0-learning-abc": _record(600.0), "hasfl-1-learning-abc": _record(620.0)}
    lines = missing_runs_section(requests, records, ["learning"], workers=2)
    text = "\n".join(lines)
    assert "| learning | hasfl-cifar10 | hasfl | 2 | 610 s | its 2 stored run(s) |" in text
    assert "| learning | hasfl-cifar10 | heterofl | 0, 1 | 1,220 s | the experiment's stored runs (estimate) |" in text
    assert "3 runs, about 0.5 h of compute, 0.3 h of wall time on 2 workers" in text


def test_nothing_when_complete_unrun_or_data_unavailable():
    complete = [_request("hasfl", 0)]
    assert missing_runs_section(complete, {"hasfl-0-learning-abc": _record(1.0)}, ["learning"], 2) == []
    assert missing_runs_section(complete, {}, ["learning"], 2) == []  # a profile never run is not costed
    lacking_data = [_request("hasfl", 0), _request("hasfl", 1, data=UNAVAILABLE)]
    assert missing_runs_section(lacking_data, {"hasfl-0-learning-abc": _record(1.0)}, ["learning"], 2) == []
