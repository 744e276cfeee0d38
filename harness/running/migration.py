"""Carry records to the keys this code gives them (`fedclaims store migrate`, `fedclaims records migrate`).

A key holds the behaviour versions a run's code declares (format 3, harness.provenance), so an edit that
changes no number re-keys nothing and needs no migration. What still gives a record a new key without
changing a number is a change of the key's definition (format 2 keyed the content of the code) or a
versioned module moved to another name. A migration carries such a record, re-running nothing, where:
- it reads as a record of its format: checksum, fields, and its key recomputed from its own fields
  (a record whose fields do not give its key was not made as it says);
- it finished (`ok`): a record that did not is never reused, so never carried;
- its config still validates as its kind's config;
- the code it was made with is the code this checkout runs for its config (its provenance's content
  digests, names left out, equal), or code the golden guard has shown to give the same numbers
  (`harness.running.golden`: the fingerprints it vouched for).
The carried record keeps its numbers, data, libraries, device and threads, takes this code's behaviour
and code fingerprint, and notes in provenance.migrated the format and key it came from (and any earlier
migration). Every other record is refused by name, saying why; nothing is re-run. A store's old records
are left in place; a bundle's (records/) are replaced by the carried ones, since the bundle holds
records of this format only and git keeps the old ones.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from harness.kinds import kind as experiment_kind
from harness.provenance import code_hash
from harness.running.bundle import BundleError, RecordBundle
from harness.running.planning import run_behaviour, run_code
from harness.running.store import ResultStore, content_key, record_key, sealed

FORMAT2_KEYED = ("datasets", "libraries", "device", "threads")


def format2_key(record: dict[str, Any]) -> str:
    """The key a format-2 record's fields give under format 2's definition (code: the set of its
    modules' content digests)."""
    provenance = record["provenance"]
    return content_key({"format": 2, "kind": record["kind"], "config": record["config"], "seed": record["seed"],
                        "code": code_hash(provenance["code"]),
                        **{name: provenance[name] for name in FORMAT2_KEYED}})


@dataclass
class Migration:
    """What a migration did: records carried (old key -> new key) and refused (label -> why)."""

    carried: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        return f"carried {len(self.carried)} record(s) to their new keys, refused {len(self.refused)}; nothing re-run"

    def lines(self) -> list[str]:
        return [f"refused {label}: {why}" for label, why in sorted(self.refused.items())] + [self.text()]


def label(key: str, record: dict[str, Any]) -> str:
    return f"{record.get('experiment')}/{record.get('variant')}/seed {record.get('seed')} ({record.get('profile')}) " \
           f"{key[:12]}"


def carried(key: str, record: dict[str, Any], vouched: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`record` (of format 2, under `key`) under the key this code gives it; ValueError saying why not."""
    if record.get("format") != 2:
        raise ValueError(f"a record of format {record.get('format')} is not carried: re-run it")
    if format2_key(record) != key:
        raise ValueError("its fields do not give its key under format 2")
    if record["status"] != "ok":
        raise ValueError(f"its status is {record['status']}")
    try:
        kind = experiment_kind(record["kind"])
        config = kind.config_model.model_validate(record["config"])
    except (ValueError, ValidationError) as error:
        raise ValueError(f"its kind or config no longer loads ({type(error).__name__})") from None
    made_with, runs_now = code_hash(record["provenance"]["code"]), run_code(kind, config)
    if made_with != code_hash(runs_now) and made_with not in vouched:
        changed = sorted(set(record["provenance"]["code"].items()) ^ set(runs_now.items()))
        names = sorted({name for name, _ in changed})
        raise ValueError(f"made by other code than this checkout runs ({', '.join(names[:4])}"
                         f"{' and more' if len(names) > 4 else ''}), which no golden run vouched for")
    provenance = dict(record["provenance"])
    migrated = {"from_format": 2, "old_key": key, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if "migrated" in provenance:
        migrated["earlier"] = provenance["migrated"]
    provenance.update(behaviour=run_behaviour(kind, config), code=runs_now, migrated=migrated)
    new = {**{k: v for k, v in record.items() if k not in ("checksum", "format", "key")}, "provenance": provenance}
    new["key"] = record_key(new)
    return sealed(new)


def _migrate(olds: Iterable[tuple[str, dict[str, Any]]], vouched: frozenset[str]) -> tuple[Migration, list]:
    migration, records = Migration(), []
    for key, old in olds:
        try:
            new = carried(key, old, vouched)
        except ValueError as why:
            migration.refused[label(key, old)] = str(why)
            continue
        migration.carried[key] = new["key"]
        records.append(new)
    return migration, records


def migrate_store(store: ResultStore, vouched: frozenset[str] = frozenset()) -> Migration:
    """Carry the store's records of format 2 to their format-3 keys; old records stay in place."""
    store.check_readable()
    store.check()
    migration, records = _migrate(store.old_records(), vouched)
    for record in records:
        if store.reusable(record["key"]) is None:
            store.put(record)
    migration.refused.update({f"store: {event}": "unreadable" for event in store.events})
    return migration


def migrate_bundle(bundle: RecordBundle, vouched: frozenset[str] = frozenset()) -> Migration:
    """Carry the bundle's records of format 2 to their format-3 keys, replacing each carried file."""
    olds: list[tuple[str, dict[str, Any]]] = []
    migration = Migration()
    for key in bundle.keys():
        try:
            old = bundle.read_old(key)
        except BundleError as refused:
            migration.refused[key[:12]] = str(refused)
            continue
        if old is not None:
            olds.append((key, old))
    carried_now, records = _migrate(olds, vouched)
    merge = bundle.add(records)
    for old_key, new_key in carried_now.carried.items():
        if new_key in merge.conflicts:
            carried_now.refused[old_key[:12]] = f"its new key {new_key[:12]} is bundled with other content"
            continue
        bundle.path(old_key).unlink()
        migration.carried[old_key] = new_key
    migration.refused.update(carried_now.refused)
    return migration
