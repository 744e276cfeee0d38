"""`fedclaims validate` on the largest spec its ceilings accept (harness/schema/base.py), against the
shipped project in the same session (issue 42: it must stay under 10 s; a benchmark, not a timed test).

The large project is the shipped one plus one spec at every ceiling: MAX_LISTED variants, a profile of
MAX_SEEDS seeds, a study of MAX_STUDY_POINTS points over MAX_SEEDS seeds, and a claim file of claims
that each observe MAX_LISTED variants. `extra_info.ratio_to_shipped` is its time over the shipped
project's; `extra_info.seconds` the time itself (one round in the quick form, three in the full).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from harness import cli
from harness.schema.base import MAX_LISTED, MAX_SEEDS, MAX_STUDY_POINTS

pytestmark = pytest.mark.benchmarks

REPO = Path(__file__).resolve().parents[1]
CLAIMS = 20


def _largest_spec() -> dict:
    variants = {f"v{i}": {"label": f"variant {i}", "config": {"federation": {"lr": 0.01 + i * 1e-4}}}
                for i in range(MAX_LISTED)}
    return {
        "experiment": "at-the-ceilings", "paper": "hasfl", "title": "every list at its ceiling",
        "kind": "federated_training",
        "config": {"data": {"name": "cifar10", "partition": {"scheme": "iid"}},
                   "model": {"arch": "conv", "hidden": [4], "in_channels": 3, "num_classes": 10, "image_size": 32},
                   "federation": {"num_clients": 4, "clients_per_round": 2, "rounds": 2}},
        "variants": variants,
        "profiles": {"smoke": {"seeds": list(range(MAX_SEEDS))}},
        "studies": {"rounds": {"title": "rounds", "profile": "smoke", "axis": "federation.rounds",
                               "points": list(range(1, MAX_STUDY_POINTS + 1)), "seeds": list(range(MAX_SEEDS)),
                               "paper_scale": {"value": 200}, "claims": ["ceiling.0"]}},
    }


def _largest_claims() -> dict:
    every = [f"v{i}" for i in range(MAX_LISTED)]
    return {"paper": "hasfl", "title": "claims at the ceilings", "reference": "none",
            "claims": [{"id": f"ceiling.{i}", "statement": "Every variant ends above chance.", "source": "none",
                        "experiment": "at-the-ceilings", "observe": {"metric": "final_accuracy", "of": every},
                        "expect": {"smoke": {"above": 10.0}}} for i in range(CLAIMS)]}


@pytest.fixture(scope="module")
def projects(tmp_path_factory) -> dict[str, Path]:
    shipped = tmp_path_factory.mktemp("shipped")
    largest = tmp_path_factory.mktemp("largest")
    for root in (shipped, largest):
        shutil.copytree(REPO / "claims", root / "claims")
        shutil.copytree(REPO / "specs", root / "specs")
    (largest / "specs" / "at-the-ceilings.yaml").write_text(yaml.safe_dump(_largest_spec()), encoding="utf-8")
    (largest / "claims" / "zz_ceilings.yaml").write_text(yaml.safe_dump(_largest_claims()), encoding="utf-8")
    return {"shipped": shipped, "largest": largest}


@pytest.fixture(scope="module")
def shipped_seconds() -> dict[str, float]:
    return {}


@pytest.mark.parametrize("project", ["shipped", "largest"])
def test_validate(benchmark, bench_scale, projects, shipped_seconds, project: str, capsys, monkeypatch,
                  tmp_path_factory) -> None:
    benchmark.group = "fedclaims validate"

    def fresh_cache() -> None:  # the design check, remembered by content, is timed as a first validation pays it
        monkeypatch.setenv("FEDCLAIMS_CACHE", str(tmp_path_factory.mktemp("cache")))

    codes = bench_scale.run(benchmark, lambda: cli.main(["--root", str(projects[project]), "validate"]),
                            before_each=fresh_cache, full_rounds=3)
    capsys.readouterr()
    assert codes == 0
    seconds = benchmark.stats.stats.min
    benchmark.extra_info["seconds"] = round(seconds, 3)
    if project == "shipped":
        shipped_seconds["min"] = seconds
    elif "min" in shipped_seconds:
        benchmark.extra_info["ratio_to_shipped"] = round(seconds / shipped_seconds["min"], 3)
