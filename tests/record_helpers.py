"""Synthetic run records that are their keys: the fields a format-3 key is made of, and that key."""
from __future__ import annotations

from typing import Any

from harness.running.store import record_key

KEYED_PROVENANCE = {"behaviour": {"tests.synthetic": "version 1"}, "datasets": {}, "libraries": {"python": "test"},
                    "device": "cpu", "threads": 1}


def keyed(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with the provenance fields its key is made of (where it lacks them) and the key they give."""
    record = {**record, "provenance": {**KEYED_PROVENANCE, **(record.get("provenance") or {})}}
    return {**record, "key": record_key(record)}


def synthetic(n: int, status: str = "ok", result: dict | None = None, **fields: Any) -> dict[str, Any]:
    """Record number `n` of an experiment 'exp' (its config {'a': n}: one key per n), keyed."""
    return keyed({"experiment": "exp", "variant": "v", "seed": 0, "profile": "smoke", "kind": "k", "config": {"a": n},
                  "status": status, "result": result if result is not None or status != "ok" else {"value": 1.5},
                  "error": None if status == "ok" else {"type": "RunFailure", "message": "boom", "traceback": ""},
                  **fields})
