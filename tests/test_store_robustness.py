"""The results store survives any one bad record, a lost race to move it aside, and a store
path that names a file: no command fails for them, and nothing is run into a store that cannot keep it."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from harness.loading.catalog import load_catalog
from harness.regression.numerics_drift import pairs
from harness.running import store as store_module
from harness.running.execution import execute
from harness.running.planning import plan
from harness.running.store import ResultStore, content_key
from harness.settings import Settings
from tests.record_helpers import synthetic

REPO = Path(__file__).resolve().parents[1]
KEY = synthetic(1, provenance={"numerics": {"fingerprint": "abc"}, "wall_seconds": 0.5})["key"]


def _record(status: str = "ok", **changes) -> dict:
    """Record KEY, with `changes` made after its key was computed (its fields may no longer give it)."""
    record = synthetic(1, provenance={"numerics": {"fingerprint": "abc"}, "wall_seconds": 0.5})
    return {**record, "status": status, **changes}


@pytest.fixture
def store(tmp_path: Path) -> ResultStore:
    return ResultStore(tmp_path / "store")


def _stored_as_is(store: ResultStore, record: dict) -> None:
    """Write a record file exactly as given, with a checksum that matches it (a writer's bug, not damage)."""
    record = {**record, "format": record.get("format", store_module.RECORD_FORMAT)}
    record["checksum"] = store_module._checksum(record)
    _write(store, json.dumps(record).encode())


def _write(store: ResultStore, data: bytes) -> None:
    store.path(KEY).parent.mkdir(parents=True, exist_ok=True)
    store.path(KEY).write_bytes(data)


def _valid_text() -> str:
    record = {**_record(), "format": store_module.RECORD_FORMAT}
    record["checksum"] = store_module._checksum(record)
    return json.dumps(record)


def _with_value(text: str) -> bytes:
    return _valid_text().replace('"value": 1.5', f'"value": {text}').encode()


DAMAGED_BYTES = {
    "nan": (_with_value("NaN"), "non-finite number NaN"),
    "infinity": (_with_value("Infinity"), "non-finite number Infinity"),
    "minus-infinity": (_with_value("-Infinity"), "non-finite number -Infinity"),
    "overflowing-float": (_with_value("1e999"), "beyond a float's range"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply to parse"),
    "deep-field": (_with_value("[" * 100_000 + "]" * 100_000), "nested too deeply to parse"),
    "deeper-than-records-go": (_with_value("[" * 200 + "]" * 200), "nested deeper than 64 levels"),
    "huge-integer": (_with_value("9" * 5000), "unreadable (ValueError: Exceeds the limit"),
    "not-utf8": (b"\xff\xfe{\x00", "not UTF-8 text"),
    "empty": (b"", "unreadable (JSONDecodeError"),
    "not-an-object": (b'"a string"', "not a JSON object"),
}


TRUNCATED = _valid_text()[:40].encode()
"""Damage the store has always recognised, so that the race tests fail only for the race."""


@pytest.mark.parametrize("case", sorted(DAMAGED_BYTES))
def test_unreadable_record_is_moved_aside_once_and_recomputed(store: ResultStore, case: str) -> None:
    data, reason = DAMAGED_BYTES[case]
    _write(store, data)
    _assert_moved_aside_once(store, reason)


MISSING = object()

DAMAGED_FIELDS = {
    "no-status": ({"status": MISSING}, "no 'status' field"),
    "status-of-a-list": ({"status": ["ok"]}, "field 'status' is a list"),
    "unknown-status": ({"status": "done"}, "status 'done' is none of"),
    "result-a-string": ({"result": "oops"}, "the result of a record with status 'ok' is a str"),
    "ok-without-result": ({"result": None}, "the result of a record with status 'ok' is a NoneType"),
    "error-without-message": ({"status": "error", "result": None, "error": {"type": "X"}},
                              "not an object with a message"),
    "seed-a-bool": ({"seed": True}, "field 'seed' is a bool"),
    "config-a-list": ({"config": [1]}, "field 'config' is a list"),
    "no-experiment": ({"experiment": MISSING}, "no 'experiment' field"),
    "provenance-a-list": ({"provenance": [1]}, "its provenance is a list"),
    "numerics-a-string": ({"provenance": {"numerics": "x"}}, "numerics is not an object"),
    "wall-seconds-a-string": ({"provenance": {"wall_seconds": "1"}}, "wall_seconds is a str"),
    "format-true": ({"format": True}, "record format True"),
    "format-a-string": ({"format": "1"}, "record format '1'"),
    "key-missing": ({"key": MISSING}, "holds key None"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED_FIELDS))
def test_record_of_the_wrong_shape_is_moved_aside_once_and_recomputed(store: ResultStore, case: str) -> None:
    changes, reason = DAMAGED_FIELDS[case]
    _stored_as_is(store, {name: value for name, value in _record(**changes).items() if value is not MISSING})
    _assert_moved_aside_once(store, reason)


def test_bad_checksum_of_a_record_with_a_non_finite_number_is_reported_not_raised(store: ResultStore) -> None:
    # The reported case: a record file holding NaN made every command fail with
    # "Out of range float values are not JSON compliant" while checking its checksum.
    record = json.loads(_valid_text())
    record["result"]["value"] = float("nan")
    _write(store, json.dumps(record).encode())
    _assert_moved_aside_once(store, "non-finite number NaN")


def test_a_folder_where_a_record_should_be_is_moved_aside(store: ResultStore) -> None:
    store.path(KEY).mkdir(parents=True)
    assert store.get(KEY) is None
    assert not store.path(KEY).exists()
    assert len(store.events) == 1 and "is not a regular file" in store.events[0]


def _assert_moved_aside_once(store: ResultStore, reason: str) -> None:
    damaged = store.path(KEY).read_bytes()
    assert store.get(KEY) is None
    assert store.reusable(KEY) is None and not store.path(KEY).exists()
    aside = list(store.path(KEY).parent.glob(f"{KEY}.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == damaged
    assert len(store.events) == 1, store.events
    assert reason in store.events[0] and str(store.path(KEY)) in store.events[0]
    assert f"moved to {aside[0].name} and recomputed" in store.events[0]
    store.put(_record())
    assert store.reusable(KEY)["result"] == {"value": 1.5} and len(store.events) == 1


def test_a_record_that_would_read_back_as_corrupt_is_refused(store: ResultStore) -> None:
    for bad in (_record(status="done"), _record(result="oops"), _record(seed="0")):
        with pytest.raises(ValueError, match="refusing to store a record"):
            store.put(bad)
    assert not store.root.exists() or not any(p.is_file() for p in store.root.rglob("*"))


def test_numerics_drift_skips_a_corrupt_record_of_either_store(tmp_path: Path) -> None:
    first, second = ResultStore(tmp_path / "a"), ResultStore(tmp_path / "b")
    second.put(_record())
    _write(first, DAMAGED_BYTES["nan"][0])
    assert list(pairs(first, second)) == []
    assert len(first.events) == 1 and "non-finite number NaN" in first.events[0]


def test_losing_the_race_to_move_a_corrupt_record_aside_is_not_an_error(store: ResultStore, monkeypatch) -> None:
    """Two invocations read the same corrupt record; the other one renames it first."""
    _write(store, TRUNCATED)
    winner = ResultStore(store.root)
    real_replace = os.replace

    def other_process_first(source, target):
        monkeypatch.setattr(store_module.os, "replace", real_replace)
        assert winner.get(KEY) is None  # the winner moves it aside between our read and our rename
        real_replace(source, target)

    monkeypatch.setattr(store_module.os, "replace", other_process_first)
    assert store.get(KEY) is None
    assert len(list(store.path(KEY).parent.glob(f"{KEY}.json.corrupt-*"))) == 1
    assert len(winner.events) == 1 and "moved to" in winner.events[0]
    assert len(store.events) == 1 and "another invocation moved it aside first" in store.events[0]


def test_a_record_rewritten_after_a_corrupt_read_is_not_moved_aside(store: ResultStore, monkeypatch) -> None:
    """The other invocation moved the corrupt file aside and stored the recomputed record before we
    renamed: the good record stays."""
    _write(store, TRUNCATED)
    real_parse = store_module.parse_record

    def other_process_recomputes(data, key):
        monkeypatch.setattr(store_module, "parse_record", real_parse)
        other = ResultStore(store.root)
        assert other.get(key) is None
        other.put(_record())
        return real_parse(data, key)

    monkeypatch.setattr(store_module, "parse_record", other_process_recomputes)
    assert store.get(KEY) is None
    assert "another invocation moved it aside first" in store.events[0]
    assert store.reusable(KEY)["result"] == {"value": 1.5}


RACER = """
import sys, time
from pathlib import Path
from harness.running.store import ResultStore, content_key
root, start, keys = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3].split(",")
store = ResultStore(root)
time.sleep(max(0.0, start - time.time()))
for key in keys:
    store.get(key)
print(sum("moved to" in e for e in store.events), sum("moved it aside first" in e for e in store.events))
"""


def test_two_processes_reading_the_same_corrupt_records_move_each_aside_once(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "store")
    keys = [content_key({"race": n}) for n in range(300)]
    for key in keys:
        store.path(key).parent.mkdir(parents=True, exist_ok=True)
        store.path(key).write_bytes(TRUNCATED)
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    start = str(time.time() + 1.5)
    racers = [subprocess.Popen([sys.executable, "-c", RACER, str(store.root), start, ",".join(keys)], cwd=REPO,
                               env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
    outputs = [racer.communicate(timeout=60) for racer in racers]
    assert [racer.returncode for racer in racers] == [0, 0], [err[-2000:] for _, err in outputs]
    moved = [tuple(map(int, out.split())) for out, _ in outputs]
    assert sum(first for first, _ in moved) == len(keys)  # each moved aside by exactly one of them
    assert all(first + second <= len(keys) for first, second in moved)  # a lost race is named, not raised
    assert len(list(store.root.glob("*/*.corrupt-*"))) == len(keys)
    assert not list(store.root.glob("*/*.json"))


def test_check_names_a_store_that_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "store.txt"
    file.write_text("")
    with pytest.raises(ValueError, match=r"results store .*store.txt is a file, not a folder; pass a folder "
                                         r"with --store"):
        ResultStore(file).check()
    with pytest.raises(ValueError, match=r"cannot be created: .*store.txt is a file, not a folder"):
        ResultStore(file / "deeper" / "store").check()
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="which does not exist"):
        ResultStore(link).check()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "store.txt"]  # nothing created


def test_check_accepts_a_folder_or_one_that_can_be_created_and_creates_nothing(tmp_path: Path) -> None:
    ResultStore(tmp_path).check()
    ResultStore(tmp_path / "new" / "store").check()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_check_names_a_parent_that_cannot_be_written(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(ValueError, match="is not writable"):
            ResultStore(locked / "store").check()
    finally:
        locked.chmod(0o700)


def test_put_into_a_store_that_is_a_file_fails_with_the_reason(tmp_path: Path) -> None:
    file = tmp_path / "store"
    file.write_text("")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        ResultStore(file).put(_record())
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / KEY[:2]).write_text("")
    with pytest.raises(ValueError, match="cannot store a record in"):
        ResultStore(tmp_path / "good").put(_record())


def test_nothing_runs_into_a_store_that_is_a_file(tmp_path: Path, monkeypatch) -> None:
    import harness.running.execution as execution
    monkeypatch.setattr(execution, "run_request", lambda *a, **k: pytest.fail("a run started"))
    file = tmp_path / "store"
    file.write_text("")
    settings = Settings(root=REPO, store_dir=file, cache_dir=tmp_path / "cache", data_dir=None, download=False,
                        committed_records=False)
    catalog = load_catalog(REPO / "claims", REPO / "specs", REPO)
    store = ResultStore(file)
    requests, _ = plan(catalog, catalog.select(pattern="hasfl.alloc.*"), ["smoke"], settings, store)
    with pytest.raises(ValueError, match="is a file, not a folder"):
        execute(requests, store, settings, Console(file=io.StringIO()))


def test_a_lock_denied_for_permissions_is_a_clear_error_naming_it(tmp_path: Path, monkeypatch) -> None:
    import filelock

    from harness.running import runlocks

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", self.lock_file)

    monkeypatch.setattr(filelock.BaseFileLock, "acquire", denied)
    store = ResultStore(tmp_path / "store")

    class Run:
        key = KEY

    claims = runlocks.RunClaims(store, lambda run: None)
    with pytest.raises(ValueError, match="permission denied") as raised:
        list(claims.claimed([Run()]))
    assert str(store.lock_path(KEY)) in str(raised.value)
