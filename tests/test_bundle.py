"""The records committed with the report (`harness.running.bundle`): verified when read, refused by name when
damaged, merged without ever replacing a record, read by the store where it has none, never written by it."""
from __future__ import annotations

import gzip
import json

import pytest

from harness.cli import main
from harness.running.bundle import BundleError, RecordBundle
from harness.running.store import ResultStore
from tests.record_helpers import synthetic


def _record(store: ResultStore, n: int, value: float) -> dict:
    """Run number `n`'s record, stored with the accuracy `value`, as the store wrote it."""
    record = synthetic(n, result={"final_accuracy": value}, profile="standard")
    store.put(record)
    return json.loads(store.path(record["key"]).read_text())


def test_a_bundled_record_reads_back_as_stored_under_its_key_with_fixed_bytes(tmp_path) -> None:
    record = _record(ResultStore(tmp_path / "store"), 0, 0.5)
    first, second = RecordBundle(tmp_path / "one"), RecordBundle(tmp_path / "two")
    assert first.add([record]).added == [record["key"]] and second.add([record]).added
    key = record["key"]
    assert first.path(key).relative_to(first.root).as_posix() == f"{key[:2]}/{key}.json.gz"
    assert first.path(record["key"]).read_bytes() == second.path(record["key"]).read_bytes()
    assert first.read(record["key"]) == record and first.keys() == [record["key"]]


def test_a_damaged_bundled_record_is_refused_by_name(tmp_path) -> None:
    record = _record(ResultStore(tmp_path / "store"), 1, 0.5)
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
    ours = _record(ResultStore(tmp_path / "ours"), 2, 0.5)
    theirs = _record(ResultStore(tmp_path / "theirs"), 2, 0.51)  # the same run under other numerics
    key = ours["key"]
    bundle = RecordBundle(tmp_path / "records")
    bundle.add([ours])
    before = bundle.path(key).read_bytes()
    merge = bundle.add([theirs, ours])
    assert merge.conflicts == [key] and merge.identical == [key] and not merge.added
    assert bundle.path(key).read_bytes() == before


def test_the_store_reads_the_bundle_where_it_has_no_record_and_never_writes_there(tmp_path) -> None:
    bundle = RecordBundle(tmp_path / "records")
    bundled_key = _record(ResultStore(tmp_path / "elsewhere"), 3, 0.7)["key"]
    bundle.add([json.loads(ResultStore(tmp_path / "elsewhere").path(bundled_key).read_text())])
    store = ResultStore(tmp_path / "store", bundle=bundle)
    assert store.has(bundled_key) and store.reusable(bundled_key)["result"]["final_accuracy"] == 0.7
    local_key = _record(store, 4, 0.2)["key"]
    assert store.path(local_key).exists() and not bundle.has(local_key)
    _record(store, 3, 0.8)  # a record of its own wins over the bundled one
    assert store.get(bundled_key)["result"]["final_accuracy"] == 0.8
    assert bundle.read(bundled_key)["result"]["final_accuracy"] == 0.7


def test_importing_another_bundle_merges_it(tmp_path, monkeypatch) -> None:
    project = tmp_path / "project"
    (project / "claims").mkdir(parents=True)
    (project / "specs").mkdir()
    other = RecordBundle(tmp_path / "other")
    other.add([_record(ResultStore(tmp_path / "s"), 5, 0.3)])
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
