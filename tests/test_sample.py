"""The claims suite's retrained sample (harness.running.sample): one golden run of every experiment, the
cheapest by its committed record, retrained into the store's own folder and compared with that record."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.datasets.registry import UNAVAILABLE
from harness.running import golden, sample
from harness.running.bundle import store_for
from harness.running.store import wall_seconds
from harness.settings import Settings

REPO = Path(__file__).resolve().parents[1]
ANALYTIC = "hasfl-allocation-rule"


@pytest.fixture
def reading_records(tmp_path: Path) -> Settings:
    return Settings(root=REPO, store_dir=tmp_path / "store", cache_dir=tmp_path / "cache",
                    data_dir=Settings.from_env(REPO).data_dir, download=False, executor="local", committed_records=True)


def test_the_sample_is_the_cheapest_committed_golden_run_of_every_experiment(catalog, reading_records) -> None:
    store = store_for(reading_records)
    requests = sample.sample_requests(catalog, reading_records, store)
    every = golden.golden_requests(catalog, reading_records, store)
    recorded = golden.read_golden(REPO)["runs"]
    candidates = {run: r for run, r in every.items() if run in recorded and recorded[run]["key"] == r.key
                  and UNAVAILABLE not in r.datasets.values()}
    assert sorted(r.experiment for r in requests) == sorted({r.experiment for r in candidates.values()})
    assert ANALYTIC in {r.experiment for r in requests}
    for request in requests:
        costs = {run: wall_seconds(store.get(r.key)) for run, r in candidates.items()
                 if r.experiment == request.experiment}
        assert costs[f"{request.experiment}/{request.variant}"] == min(costs.values()), costs
        assert request.seed == golden.SEED and request.profile == golden.PROFILE


def test_a_sample_is_retrained_into_the_store_and_compared_with_its_record(catalog, reading_records) -> None:
    store = store_for(reading_records)
    (outcome,), ran = sample.retrain(catalog, reading_records, store, experiments=[ANALYTIC])
    assert outcome.state == "same numbers" and ran == 1, outcome.text()
    assert store.path(outcome.request.key).is_file(), "retrained into the store's own folder"


def test_a_sample_that_differs_from_its_record_is_named(catalog, reading_records) -> None:
    """The store's own record of the sample run (as a changed method would make it, under the same key) moved."""
    store = store_for(reading_records)
    (request,) = sample.sample_requests(catalog, reading_records, store, [ANALYTIC])
    record = store.get(request.key)
    assert record is not None
    record["result"]["cap_reached_at"] += 1e-9
    store.put(record)
    (outcome,), ran = sample.retrain(catalog, reading_records, store, experiments=[ANALYTIC])
    assert ran == 0 and outcome.failed and outcome.state == "moved", outcome.text()
    assert "cap_reached_at" in outcome.text()
