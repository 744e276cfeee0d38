"""The records committed with the report (`harness.running.bundle`): verified when read, refused by name when
damaged, merged without ever replacing a record, read by the store where it has none, never written by it."""
from __future__ import annotations

import gzip
import json

import pytest

from harness.cli import main
from harness.running.bundle import BundleError, RecordBundle
from harness.running.store import ResultStore


def _record(store: ResultStore, key: str, value: float) -> dict:
    store.put({"key": key, "experiment": "e", "variant": "v", "seed": 0, "profile": "standard", "kind": "k",
               "config": {"x": 1}, "status": "ok", "result": {"final_accuracy": value}, "provenance": {}})
    return json.loads(store.path(key).read_text())


def test_a_bundled_record_reads_back_as_stored_under_its_key_with_fixed_bytes(tmp_path) -> None:
    record = _record(ResultStore(tmp_path / "store"), "ab" + "0" * 62, 0.5)
    first, second = RecordBundle(tmp_path / "one"), RecordBundle(tmp_path / "two")
    assert first.add([record]).added == [record["key"]] and second.add([record]).added
    assert first.path(record["key"]).relative_to(first.root).as_posix() == f"ab/{record['key']}.json.gz"
    assert first.path(record["key"]).read_bytes() == second.path(record["key"]).read_bytes()
    assert first.read(record["key"]) == record and first.keys() == [record["key"]]


def test_a_damaged_bundled_record_is_refused_by_name(tmp_path) -> None:
    record = _record(ResultStore(tmp_path / "store"), "cd" + "1" * 62, 0.5)
    bundle = RecordBundle(tmp_path / "records")
    bundle.add([record])
    path = bundle.path(record["key"])
    forged = {**record, "result": {"final_accuracy": 0.9}}  # an edited number: the checksum no longer matches
    path.write_bytes(gzip.compress(json.dumps(forged).encode()))
    with pytest.raises(BundleError, match=f"{path}: checksum does not match"):
        bundle.read(record["key"])
    store = ResultStore(tmp_path / "empty", bundle=bundle)
    assert store.get(record["key"]) is None
    assert any(str(path) in event and "refused" in event for event in store.events)
    path.write_bytes(b"not gzip")
    with pytest.raises(BundleError, match="not a readable gzip file"):
        bundle.read(record["key"])


def test_merging_never_replaces_a_bundled_record_and_reports_the_conflict(tmp_path) -> None:
    key = "ef" + "2" * 62
    ours = _record(ResultStore(tmp_path / "ours"), key, 0.5)
    theirs = _record(ResultStore(tmp_path / "theirs"), key, 0.51)  # the same run under other numerics
    bundle = RecordBundle(tmp_path / "records")
    bundle.add([ours])
    before = bundle.path(key).read_bytes()
    merge = bundle.add([theirs, ours])
    assert merge.conflicts == [key] and merge.identical == [key] and not merge.added
    assert bundle.path(key).read_bytes() == before


def test_the_store_reads_the_bundle_where_it_has_no_record_and_never_writes_there(tmp_path) -> None:
    bundled_key, local_key = "aa" + "3" * 62, "bb" + "4" * 62
    bundle = RecordBundle(tmp_path / "records")
    bundle.add([_record(ResultStore(tmp_path / "elsewhere"), bundled_key, 0.7)])
    store = ResultStore(tmp_path / "store", bundle=bundle)
    assert store.has(bundled_key) and store.reusable(bundled_key)["result"]["final_accuracy"] == 0.7
    _record(store, local_key, 0.2)
    assert store.path(local_key).exists() and not bundle.has(local_key)
    _record(store, bundled_key, 0.8)  # a record of its own wins over the bundled one
    assert store.get(bundled_key)["result"]["final_accuracy"] == 0.8
    assert bundle.read(bundled_key)["result"]["final_accuracy"] == 0.7


def test_importing_another_bundle_merges_it(tmp_path, monkeypatch) -> None:
    project = tmp_path / "project"
    (project / "claims").mkdir(parents=True)
    (project / "specs").mkdir()
    other = RecordBundle(tmp_path / "other")
    other.add([_record(ResultStore(tmp_path / "s"), "cc" + "5" * 62, 0.3)])
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(tmp_path / "cache"))
    assert main(["--root", str(project), "records", "import", str(other.root)]) == 0
    assert RecordBundle(project / "records").keys() == other.keys()
    assert main(["--root", str(project), "records", "import", str(tmp_path / "nowhere")]) == 2


def test_the_committed_records_are_read_unless_turned_off(tmp_path, monkeypatch) -> None:
    """A fresh store on the shipped project reads `records/`; with $FEDCLAIMS_RECORDS=0 (or --no-records)
    it reads only its own."""
    from pathlib import Path

    from harness.running.bundle import store_for
    from harness.settings import Settings

    project = Path(__file__).resolve().parents[1]
    key = RecordBundle(project / "records").keys()[0]
    monkeypatch.setenv("FEDCLAIMS_RECORDS", "1")
    reading = Settings.from_env(project, store_dir=tmp_path / "store", workers=1)
    assert reading.committed_records and store_for(reading).has(key)
    monkeypatch.setenv("FEDCLAIMS_RECORDS", "0")
    hermetic = Settings.from_env(project, store_dir=tmp_path / "store", workers=1)
    assert not hermetic.committed_records and not store_for(hermetic).has(key)
