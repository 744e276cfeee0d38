"""`fedclaims store migrate` and `records migrate`: records of format 2 (keyed by the content of their code)
carried to their format-3 keys (keyed by declared behaviour versions) without re-running anything, where
they were made by the code this checkout runs; any other refused by name.

The format-2 records are made here: the allocation claims' runs are computed with this code, then each
record is rewritten as format 2 wrote it (its key of format 2's definition) and its format-3 record removed.
"""
from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.provenance import code_hash
from harness.running.bundle import RecordBundle
from harness.running.execution import execute
from harness.running.migration import carried, format2_key, migrate_bundle, migrate_store
from harness.running.planning import plan
from harness.running.store import ResultStore, canonical, parse_record

PATTERN = "hasfl.alloc.*"


def _format2(record: dict) -> dict:
    """The record as format 2 stored it: no behaviour in its provenance, its key format 2's."""
    provenance = {k: v for k, v in record["provenance"].items() if k != "behaviour"}
    old = {**{k: v for k, v in record.items() if k != "checksum"}, "format": 2, "provenance": provenance}
    old["key"] = format2_key(old)
    return {**old, "checksum": hashlib.sha256(canonical(old).encode()).hexdigest()}


def _write(store: ResultStore, record: dict) -> Path:
    path = store.path(record["key"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


@pytest.fixture
def old_store(catalog, settings) -> tuple[ResultStore, dict[str, dict]]:
    """The allocation runs, each stored as its format-2 record only: (store, {key today: format-2 record})."""
    store = ResultStore(settings.store_dir)
    requests, _ = plan(catalog, catalog.select(pattern=PATTERN), ["smoke"], settings, store)
    execute(requests, store, settings)
    olds = {}
    for request in requests:
        record = store.get(request.key)
        olds[request.key] = _format2(record)
        store.path(request.key).unlink()
        _write(store, olds[request.key])
    return store, olds


def test_a_format2_record_is_kept_not_read_nor_moved_aside(old_store) -> None:
    store, olds = old_store
    key, old = next(iter(olds.items()))
    assert store.get(key) is None and store.get(old["key"]) is None
    assert store.path(old["key"]).exists() and store.events == []


def test_migration_carries_every_record_of_this_code_and_runs_nothing(catalog, settings, old_store) -> None:
    store, olds = old_store
    migration = migrate_store(store)
    assert not migration.refused and sorted(migration.carried.values()) == sorted(olds)
    for key, old in olds.items():
        new = store.get(key)
        assert new is not None and new["result"] == old["result"]
        assert new["provenance"]["migrated"]["old_key"] == old["key"]
        assert new["provenance"]["numerics"] == old["provenance"]["numerics"]  # nothing re-ran
        assert store.path(old["key"]).exists()  # old records stay
    requests, _ = plan(catalog, catalog.select(pattern=PATTERN), ["smoke"], settings, store)
    assert {r.key for r in requests} <= set(olds)


def test_a_record_made_by_other_code_or_forged_is_refused_by_name(old_store) -> None:
    store, olds = old_store
    old = next(iter(olds.values()))
    other_code = {**old, "provenance": {**old["provenance"], "code": {**old["provenance"]["code"],
                                                                       "methods.allocation": "0" * 64}}}
    other_code["key"] = format2_key(other_code)
    with pytest.raises(ValueError, match="made by other code than this checkout runs .*methods.allocation"):
        carried(other_code["key"], other_code)
    assert carried(other_code["key"], other_code, vouched=frozenset({code_hash(other_code["provenance"]["code"])}))
    forged = {**old, "seed": old["seed"] + 3}
    with pytest.raises(ValueError, match="do not give its key"):
        carried(old["key"], forged)
    with pytest.raises(ValueError, match="status is error"):
        broken = {**old, "status": "error"}
        carried(format2_key(broken), broken)


def test_records_migrate_replaces_the_bundles_format2_records(tmp_path, old_store, monkeypatch) -> None:
    store, olds = old_store
    bundle = RecordBundle(tmp_path / "project" / "records")
    for old in olds.values():
        path = bundle.path(old["key"])
        path.parent.mkdir(parents=True, exist_ok=True)

        path.write_bytes(gzip.compress(json.dumps(old).encode()))
    migration = migrate_bundle(bundle)
    assert not migration.refused and len(migration.carried) == len(olds)
    assert bundle.keys() == sorted(olds)
    for key in bundle.keys():
        assert parse_record(json.dumps(bundle.read(key)).encode(), key)["key"] == key


def test_the_store_migrate_command_prints_what_it_carried(old_store, settings, capsys, monkeypatch) -> None:
    store, olds = old_store
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(settings.cache_dir))
    assert main(["store", "migrate", "--store", str(store.root)]) == 0
    out = capsys.readouterr().out
    assert f"carried {len(olds)} record(s) to their new keys, refused 0; nothing re-run" in out
