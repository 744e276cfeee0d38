"""`fedclaims store migrate`: format-1 records carried over to format-2 keys only where re-running a
sample of their group with this code gives the same bits.

The old store is made here: the allocation claims' runs are computed with this code, then each
record is rewritten as format 1 wrote it (format 1, each module's bytes hashed by name, the key of
format 1's definition) and its format-2 record removed.
"""
from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from harness import provenance
from harness.cli import main
from harness.regression.numerics_drift import pairs
from harness.running.execution import execute
from harness.running.migration import format1_key, migrate
from harness.running.planning import plan
from harness.running.store import ResultStore, canonical, content_key

PATTERN = "hasfl.alloc.*"
RULE, EXAMPLE = "hasfl-allocation-rule", "hasfl-allocation-example"


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=200)


def _format1(record: dict) -> dict:
    """The record as format 1 stored it: its code each module's bytes by name, its key format 1's."""
    code = {name: hashlib.sha256(provenance._module_file(name).read_bytes()).hexdigest()
            for name in provenance.import_closure(f"harness.runners.{record['kind']}")}
    old = {**record, "format": 1, "provenance": {**record["provenance"], "code": code}}
    lines = "\n".join(f"{name} {digest}" for name, digest in sorted(code.items()))
    old["key"] = content_key({"kind": old["kind"], "config": old["config"], "seed": old["seed"],
                              "code": hashlib.sha256(lines.encode()).hexdigest(),
                              "datasets": old["provenance"]["datasets"], "libraries": old["provenance"]["libraries"],
                              "device": old["provenance"]["device"], "threads": old["provenance"]["threads"]})
    return old


def _write(store: ResultStore, record: dict) -> Path:
    body = {k: v for k, v in record.items() if k != "checksum"}
    path = store.path(record["key"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**body, "checksum": hashlib.sha256(canonical(body).encode()).hexdigest()}))
    return path


def _store_rewritten(catalog, settings, rewrite, write) -> tuple[ResultStore, dict, dict]:
    """The allocation runs computed with this code, each record then `rewrite`n as an older one, stored
    with `write` and its own record removed: (store, {key today: old record}, {key today: request}).
    HAS-FL's example is altered past what this code reproduces; one tier was made under other numerics."""
    store = ResultStore(settings.store_dir)
    requests, _ = plan(catalog, catalog.select(pattern=PATTERN), ["smoke"], settings, store)
    execute(requests, store, settings, _quiet())
    olds = {}
    for request in requests:
        old = rewrite(store.get(request.key))
        if request.experiment == EXAMPLE:  # a group whose old records the new code does not reproduce
            old["result"]["allocation"] = [value + 1e-12 for value in old["result"]["allocation"]]
        if (request.experiment, request.variant) == (RULE, "tier-0.75"):  # made under other numerics
            old["provenance"]["numerics"] = {**old["provenance"]["numerics"], "fingerprint": "0" * 16}
        write(store, old)
        store.path(request.key).unlink()
        olds[request.key] = old
    return store, olds, {request.key: request for request in requests}


@pytest.fixture
def old_store(catalog, settings):
    """A store holding the allocation runs as format-1 records: (store, {new key: old record}, requests)."""
    store, olds, requests = _store_rewritten(catalog, settings, _format1, _write)
    assert {format1_key(old) for old in olds.values()} == {old["key"] for old in olds.values()}
    return store, olds, requests


def test_a_format1_record_is_kept_not_read_nor_moved_aside(old_store) -> None:
    store, olds, _ = old_store
    for old in olds.values():
        assert store.get(old["key"]) is None and store.path(old["key"]).is_file()
    assert list(pairs(store, store)) == [] and store.events == []
    assert {key for key, _ in store.old_records()} == {old["key"] for old in olds.values()}


def test_a_damaged_format1_record_is_reported_and_left_in_place(old_store) -> None:
    store, olds, _ = old_store
    damaged = next(iter(olds.values()))
    path = store.path(damaged["key"])
    text = path.read_text().replace('"seed": 0', '"seed": 7')
    path.write_text(text)
    assert damaged["key"] not in dict(store.old_records())
    assert len(store.events) == 1 and "checksum" in store.events[0] and "left in place" in store.events[0]
    assert store.get(damaged["key"]) is None and path.read_text() == text


def test_migration_carries_a_group_its_rerun_reproduces_and_leaves_the_others(catalog, settings, old_store) -> None:
    store, olds, requests = old_store
    before = {old["key"]: store.path(old["key"]).read_bytes() for old in olds.values()}
    migration = migrate(settings, catalog, catalog.select(pattern=PATTERN), ["smoke"], sample=1, console=_quiet())

    rule, example = migration.groups[RULE, "smoke"], migration.groups[EXAMPLE, "smoke"]
    assert [(c.label, c.identical) for c in rule.checks] == [("tier-0.25/seed 0", True)]
    assert sorted(rule.carried) == ["tier-0.5/seed 0", "tier-1.0/seed 0"]
    assert "numerics 0000000000000000" in rule.recomputed["tier-0.75/seed 0"]
    assert [(c.label, c.identical) for c in example.checks] == [("guarantee-off/seed 0", False)]
    assert "allocation(" in example.checks[0].differences[0] and "recorded" in example.checks[0].differences[0]
    assert example.carried == [] and list(example.recomputed) == ["guarantee-on/seed 0"]

    for key, old in olds.items():
        record = store.get(key)
        label = (requests[key].experiment, requests[key].variant)
        if label in ((RULE, "tier-0.5"), (RULE, "tier-1.0")):
            assert record["result"] == old["result"] and record["format"] == 2
            assert record["provenance"]["migrated"]["old_key"] == old["key"]
            assert record["provenance"]["migrated"]["checked_by"] == [{"run": "tier-0.25/seed 0",
                                                                      "key": rule.checks[0].key}]
            assert record["provenance"]["code"] == requests[key].code
            assert record["provenance"]["numerics"] == old["provenance"]["numerics"]
        elif label in ((RULE, "tier-0.25"), (EXAMPLE, "guarantee-off")):
            assert "migrated" not in record["provenance"]  # re-run with this code
        else:
            assert record is None  # left to be recomputed
    assert {key: store.path(key).read_bytes() for key in before} == before  # old records untouched

    assert (migration.already, migration.unmatched, migration.unused) == (0, 0, 0)

    again = migrate(settings, catalog, catalog.select(pattern=PATTERN), ["smoke"], console=_quiet())
    assert (again.already, again.unused) == (4, 0) and not any(g.carried for g in again.groups.values())
    assert [(c.label, c.identical) for c in again.groups[EXAMPLE, "smoke"].checks] == [("guarantee-on/seed 0", False)]


def test_the_store_migrate_command_prints_each_group(old_store, settings, capsys) -> None:
    root = settings.root
    code = main(["--root", str(root), "store", "migrate", "--store", str(settings.store_dir), "--profile", "smoke",
                 "--claim", PATTERN, "--sample", "2"])
    printed = capsys.readouterr().out
    assert code == 0
    assert f"{RULE} @ smoke: carried 1 of 4" in printed and "tier-0.25/seed 0 (identical)" in printed
    assert "tier-0.5/seed 0 (identical)" in printed
    assert f"{EXAMPLE} @ smoke: carried 0 of 2" in printed and "(differs)" in printed
    assert main(["--root", str(root), "store", "migrate", "--store", str(settings.store_dir), "--sample", "0"]) == 2


def _made_under_earlier_code(record: dict) -> dict:
    """The record as an earlier version of the code would have stored it: one module's digest
    differs, and so its key (format 2's definition)."""
    code = {**record["provenance"]["code"], "methods.removed_module": "0" * 64}
    old = {**record, "provenance": {**record["provenance"], "code": code}}
    old["key"] = content_key({"format": 2, "kind": old["kind"], "config": old["config"], "seed": old["seed"],
                              "code": provenance.code_hash(code), "datasets": old["provenance"]["datasets"],
                              "libraries": old["provenance"]["libraries"], "device": old["provenance"]["device"],
                              "threads": old["provenance"]["threads"]})
    return old


@pytest.fixture
def stale_store(catalog, settings):
    """A store holding the allocation runs as made under earlier code: (store, {key today: old record})."""
    store, olds, _ = _store_rewritten(catalog, settings, _made_under_earlier_code, ResultStore.put)
    return store, olds


def test_migration_carries_records_made_under_earlier_code_where_a_rerun_gives_their_bits(
        catalog, settings, stale_store) -> None:
    store, olds = stale_store
    before = {old["key"]: store.path(old["key"]).read_bytes() for old in olds.values()}
    migration = migrate(settings, catalog, catalog.select(pattern=PATTERN), sample=1, console=_quiet())

    (rule,) = [g for key, g in migration.groups.items() if key[:2] == (RULE, "smoke")]
    (example,) = [g for key, g in migration.groups.items() if key[:2] == (EXAMPLE, "smoke")]
    assert rule.change and "→" in rule.change and rule.change in rule.text()
    assert [c.identical for c in rule.checks] == [True] and len(rule.carried) == 2
    assert "numerics 0000000000000000" in rule.recomputed["tier-0.75/seed 0"]
    assert [c.identical for c in example.checks] == [False] and example.carried == []
    carried = {key for key in olds if (store.get(key) or {}).get("provenance", {}).get("migrated")}
    assert len(carried) == 2
    for key in carried:
        record = store.get(key)
        assert record["result"] == olds[key]["result"]
        assert record["provenance"]["migrated"]["old_key"] == olds[key]["key"]
        assert record["provenance"]["migrated"]["old_code"] == olds[key]["provenance"]["code"]
    assert {key: store.path(key).read_bytes() for key in before} == before  # old records untouched

    again = migrate(settings, catalog, catalog.select(pattern=PATTERN), sample=1, console=_quiet())
    assert again.already == 4 and not any(g.carried for g in again.groups.values())


def test_an_old_record_lacking_a_field_todays_runner_records_is_not_carried() -> None:
    """Its metrics equal bit for bit, a record made before the runner recorded the test set's chance
    (`majority_accuracy`) would carry a result no run of this code gives: the fields are compared too."""
    from harness.kinds.base import ExperimentKind, Metric
    from harness.running.result_comparison import differences
    kind = ExperimentKind(name="k", description="d", runner="r", evidence="empirical",
                          metrics={"x": Metric("x", lambda result, args: result["x"])})
    new = {"x": 1.5, "majority_accuracy": 10.0}
    assert differences(kind, {}, {"x": 1.5, "majority_accuracy": 10.0}, new) == []
    (found,) = differences(kind, {}, {"x": 1.5}, new)
    assert found == "result fields: the record lacks majority_accuracy"
