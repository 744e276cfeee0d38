"""The content-addressed results store: round trip, atomic writes, corruption handling."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from harness.running import store as store_module
from harness.running.store import ResultStore, content_key
from tests.record_helpers import synthetic

KEY, OTHER = synthetic(1)["key"], synthetic(2)["key"]


def _record(key: str, status: str = "ok", **result) -> dict:
    return synthetic(1 if key == KEY else 2, status, result or None)


@pytest.fixture
def store(tmp_path: Path) -> ResultStore:
    return ResultStore(tmp_path / "store")


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_content_key_is_order_independent_and_sensitive() -> None:
    assert content_key({"a": 1, "b": [1, 2]}) == content_key({"b": [1, 2], "a": 1})
    assert content_key({"a": 1, "b": [1, 2]}) != content_key({"a": 1, "b": [2, 1]})
    assert len(KEY) == 64 and KEY != OTHER


def test_put_get_round_trip(store: ResultStore) -> None:
    record = _record(KEY, value=0.25, curve=[1, 2, 3], nested={"x": None})
    path = store.put(record)
    assert path == store.root / KEY[:2] / f"{KEY}.json"
    got = store.get(KEY)
    assert got is not None
    for field in record:
        assert got[field] == record[field]
    assert got["format"] == store_module.RECORD_FORMAT
    assert "checksum" in got
    assert store.reusable(KEY) == got
    assert store.get(OTHER) is None
    assert store.events == []


def test_put_overwrites_atomically_and_leaves_no_temporary_files(store: ResultStore) -> None:
    store.put(_record(KEY, value=1.0))
    store.put(_record(KEY, value=2.0))
    store.put(_record(OTHER, value=3.0))
    files = _files(store.root)
    assert {f.name for f in files} == {f"{KEY}.json", f"{OTHER}.json"}
    assert not any(f.name.startswith(".tmp-") for f in store.root.rglob("*"))
    assert store.get(KEY)["result"] == {"value": 2.0}


def test_failed_write_leaves_old_record_and_no_temporary(store: ResultStore, monkeypatch) -> None:
    store.put(_record(KEY, value=1.0))

    def broken_dump(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(store_module.json, "dump", broken_dump)
    with pytest.raises(OSError, match="disk full"):
        store.put(_record(KEY, value=2.0))
    monkeypatch.undo()
    assert not any(f.name.startswith(".tmp-") for f in store.root.rglob("*"))
    assert store.get(KEY)["result"] == {"value": 1.0}


def test_non_finite_floats_and_numpy_values_stored_as_plain_json(store: ResultStore) -> None:
    store.put(_record(KEY, nan=math.nan, inf=math.inf, minus=-math.inf, fine=0.5,
                      array=np.array([1.0, np.nan]), scalar=np.float64(2.5), integer=np.int64(3)))
    text = store.path(KEY).read_text()
    assert "NaN" not in text and "Infinity" not in text
    result = store.get(KEY)["result"]
    assert result == {"nan": None, "inf": None, "minus": None, "fine": 0.5, "array": [1.0, None],
                      "scalar": 2.5, "integer": 3}


def test_unstorable_value_is_refused(store: ResultStore) -> None:
    with pytest.raises(TypeError):
        store.put(_record(KEY, thing=object()))
    assert _files(store.root) == []


def _corrupt_by_truncation(store: ResultStore) -> None:
    path = store.path(KEY)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def _corrupt_by_editing(store: ResultStore) -> None:
    path = store.path(KEY)
    record = json.loads(path.read_text())
    record["result"]["value"] = 99.0  # checksum left as it was
    path.write_text(json.dumps(record))


def _corrupt_by_moving(store: ResultStore) -> None:
    # A valid record of another key sitting at KEY's path.
    store.put(_record(OTHER, value=7.0))
    store.path(OTHER).replace(store.path(KEY))


@pytest.mark.parametrize("corrupt, reason", [
    (_corrupt_by_truncation, "unreadable"),
    (_corrupt_by_editing, "checksum does not match"),
    (_corrupt_by_moving, "holds key"),
], ids=["truncated", "edited", "wrong-key"])
def test_corrupt_record_is_moved_aside_reported_and_not_returned(store: ResultStore, corrupt, reason) -> None:
    store.put(_record(KEY, value=1.0))
    corrupt(store)
    damaged = store.path(KEY).read_bytes()
    assert store.get(KEY) is None
    assert not store.path(KEY).exists()
    aside = [f for f in _files(store.root) if ".corrupt-" in f.name]
    assert len(aside) == 1
    assert aside[0].name.startswith(f"{KEY}.json.corrupt-")
    assert aside[0].read_bytes() == damaged  # nothing is lost
    assert len(store.events) == 1
    assert reason in store.events[0] and KEY in store.events[0] and aside[0].name in store.events[0]
    # Once moved aside, the key is simply absent; a new record can take its place.
    assert store.get(KEY) is None and len(store.events) == 1
    store.put(_record(KEY, value=2.0))
    assert store.reusable(KEY)["result"] == {"value": 2.0}
    assert aside[0].exists()


def test_record_of_another_format_is_corrupt(store: ResultStore) -> None:
    store.put(_record(KEY))
    record = json.loads(store.path(KEY).read_text())
    record["format"] = 0
    store.path(KEY).write_text(json.dumps(record))
    assert store.get(KEY) is None
    assert "record format 0" in store.events[0]


def test_json_that_is_not_an_object_is_corrupt(store: ResultStore) -> None:
    store.path(KEY).parent.mkdir(parents=True)
    store.path(KEY).write_text("[1, 2, 3]")
    assert store.get(KEY) is None
    assert "not a JSON object" in store.events[0]


@pytest.mark.parametrize("status", ["error", "unavailable"])
def test_error_and_unavailable_records_are_not_reusable(store: ResultStore, status: str) -> None:
    store.put(_record(KEY, status=status))
    assert store.get(KEY)["status"] == status  # kept and readable ...
    assert store.reusable(KEY) is None  # ... but always retried
    assert store.events == []


def test_two_corruptions_in_one_second_keep_both_copies(store: ResultStore, monkeypatch) -> None:
    monkeypatch.setattr(store_module.time, "strftime", lambda fmt, *a: "20250101T000000")
    for value in (1.0, 2.0):
        store.put(_record(KEY, value=value))
        _corrupt_by_editing(store)
        assert store.get(KEY) is None
    assert len([f for f in _files(store.root) if ".corrupt-" in f.name]) == 2
