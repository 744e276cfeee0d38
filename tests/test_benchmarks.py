"""Speed of the store: a second verify with unchanged code reuses every record.

pytest-benchmark prints both in one group; the table's ratios (e.g. "(12.3)") compare the
warm verify with the cold one measured in the same session.
"""
import shutil
from pathlib import Path

import pytest

from harness.pipeline import verify
from harness.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = "hasfl.alloc.*"


def _settings(store: Path) -> Settings:
    return Settings.from_env(ROOT, store_dir=store, workers=1)


@pytest.mark.benchmark(group="verify: cold store vs warm store")
def test_verify_cold_store(benchmark, tmp_path):
    store = tmp_path / "store"

    def cold():
        shutil.rmtree(store, ignore_errors=True)
        return verify(_settings(store), pattern=CLAIMS)

    outcome = benchmark.pedantic(cold, rounds=3, iterations=1)
    assert outcome.execution.ran == len(outcome.requests) > 0


@pytest.mark.benchmark(group="verify: cold store vs warm store")
def test_verify_warm_store(benchmark, tmp_path):
    store = tmp_path / "store"
    verify(_settings(store), pattern=CLAIMS)
    outcome = benchmark.pedantic(lambda: verify(_settings(store), pattern=CLAIMS), rounds=5, iterations=1)
    assert outcome.execution.ran == 0 and outcome.execution.reused == len(outcome.requests)
    assert all(v.status == "PASS" for v in outcome.verdicts)
