"""The evidence `harness.verdicts.attribution`'s rule reads, gathered from the catalog, the verdicts with their
levels, the scale studies' readings and the committed conformance fixtures; the same for a report being
written and for a committed REPORT.json (`from_report_json`)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.loading.catalog import Catalog, LoadedSpec
from harness.verdicts.attribution import Attribution, Claimed, Evidence, StudyHeading, VerdictAt, attribute
from harness.verdicts.levels import Level

CONFORMANCE_DIR = "conformance"
"""Where the conformance fixtures live, each a JSON file whose `covers` says which settings of which kind of
experiment its tests hold the project's methods to (`tests/test_fedrolex_conformance.py`)."""


def relations(catalog: Catalog) -> dict[str, frozenset[str]]:
    """Per claim, the claims stating the same relation: itself, for an order the orders of the same
    experiment whose adjacent variants differ by the same settings, pair by pair (FedRolex above HeteroFL at
    5%, 10% or 20% participation: extraction rolling against prefix, whatever else the pair shares), and the
    claims that repeat it (`repeats:`)."""
    by_key: dict[tuple, set[str]] = {}
    keys: dict[str, tuple] = {}
    configs: dict[tuple[str, str], dict[str, str]] = {}
    for loaded in catalog.claims:
        claim = loaded.claim
        expectation = next((e for e in claim.expect.values() if not e.skips), None)
        pairs = expectation.tested_differences() if expectation is not None else []
        if not pairs:
            keys[loaded.id] = (loaded.id,)
            continue
        target = catalog.specs[claim.experiment]
        key = (claim.experiment, tuple(_difference(_flat(target, high, configs), _flat(target, low, configs))
                                       for high, low in pairs))
        keys[loaded.id] = key
        by_key.setdefault(key, set()).add(loaded.id)
    for loaded in catalog.claims:  # a repeat states the relation of the claim it repeats
        if loaded.claim.repeats in keys:
            keys[loaded.id] = keys[loaded.claim.repeats]
            by_key.setdefault(keys[loaded.id], {loaded.claim.repeats}).add(loaded.id)
    return {claim: frozenset(by_key.get(key, {claim})) for claim, key in keys.items()}


def _flat(target: LoadedSpec, variant: str, cache: dict[tuple[str, str], dict[str, str]]) -> dict[str, str]:
    """The variant's config at the spec's first profile, flattened to dotted keys with JSON values."""
    found = cache.get((target.spec.experiment, variant))
    if found is None:
        found = dict(_flatten(target.resolve(variant, next(iter(target.spec.profiles))).model_dump(mode="json")))
        cache[(target.spec.experiment, variant)] = found
    return found


def _flatten(value: Any, prefix: str = "") -> Iterable[tuple[str, str]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(inner, f"{prefix}{key}.")
    else:
        yield prefix.rstrip("."), json.dumps(value, sort_keys=True)


def _difference(high: Mapping[str, str], low: Mapping[str, str]) -> frozenset[tuple[str, str, str]]:
    return frozenset((key, high.get(key, ""), low.get(key, "")) for key in set(high) | set(low)
                     if high.get(key) != low.get(key))


def conformance_coverage(catalog: Catalog, root: Path) -> dict[str, str]:
    """Per claim whose every variant runs settings the committed conformance fixtures cover: which
    fixtures, in words."""
    covers = [(path, json.loads(path.read_text(encoding="utf-8"))["covers"])
              for path in sorted((root / CONFORMANCE_DIR).glob("*.json"))]
    found: dict[str, str] = {}
    configs: dict[tuple[str, str], dict[str, str]] = {}
    for loaded in catalog.claims:
        target = catalog.specs[loaded.claim.experiment]
        variants = _variants_read(loaded.claim)
        for path, cover in covers:
            if target.spec.kind == cover["kind"] and variants and all(
                    _flat(target, variant, configs).get(setting) in {json.dumps(v) for v in values}
                    for variant in variants for setting, values in cover["settings"].items()):
                found[loaded.id] = f"{cover['text']} ({CONFORMANCE_DIR}/{path.name})"
                break
    return found


def _variants_read(claim) -> list[str]:
    expectation = next((e for e in claim.expect.values() if not e.skips), None)
    return [] if expectation is None else expectation.variants_read(claim.observe)


def claimed(catalog: Catalog) -> dict[tuple[str, str], Claimed]:
    """Every claim's hand-written attribution per profile, as the rule's input."""
    return {(loaded.id, profile): Claimed(a.whose, a.evidence, a.quote, a.quote_source, a.as_run or "")
            for loaded in catalog.claims for profile, a in loaded.claim.attribution.items()}


def study_headings(studies: Iterable[Mapping[str, Any]]) -> dict[str, tuple[StudyHeading, ...]]:
    """Per claim a study read, where its tested statistic heads (the series with a heading: those with a
    range to head for, an order's paired differences or a band's own series) from the studies' JSON."""
    found: dict[str, list[StudyHeading]] = {}
    for study in studies:
        for claim in study["claims"]:
            headings = tuple(t["heading"] for t in claim["trends"] if t.get("heading"))
            found.setdefault(claim["claim"], []).append(StudyHeading(study["study"], headings))
    return {claim: tuple(readings) for claim, readings in found.items()}


def attributions(catalog: Catalog, tested: Iterable[VerdictAt], studies: Iterable[Mapping[str, Any]],
                 root: Path) -> dict[tuple[str, str], Attribution]:
    """Every FAIL's attribution by the rule, keyed (claim, profile)."""
    verdicts = {(t.claim, t.profile): t for t in tested}
    evidence = Evidence(verdicts, relations(catalog), study_headings(studies), conformance_coverage(catalog, root),
                        claimed(catalog))
    return {key: attribute(*key, evidence) for key, t in verdicts.items() if t.status == "FAIL"}


def from_report_json(catalog: Catalog, report: Mapping[str, Any], studies: Iterable[Mapping[str, Any]],
                     root: Path) -> dict[tuple[str, str], Attribution]:
    """The rule's attributions recomputed from a REPORT.json's verdicts and levels and the studies' readings."""
    known = {loaded.id for loaded in catalog.claims}
    tested = [VerdictAt(v["claim"], v["profile"], v["status"], (v.get("level") or {}).get("fraction"))
              for v in report["verdicts"] if v["claim"] in known]
    return attributions(catalog, tested, studies, root)


def with_attributions(catalog: Catalog, verdicts: Iterable, levels: Mapping[tuple[str, str], Level],
                      studies: Iterable[Mapping[str, Any]], root: Path) -> dict[tuple[str, str], Level]:
    """The levels with every FAIL's attribution by the rule (`verdicts`: every profile's, so a FAIL where the
    models learn can refute `the scale` where they do not)."""
    tested = [VerdictAt(v.claim, v.profile, v.status, levels[(v.claim, v.profile)].fraction) for v in verdicts]
    found = attributions(catalog, tested, studies, root)
    return {key: level if key not in found else replace(level, attribution=found[key].text(), whose=found[key].whose,
                                                         contradicted=found[key].contradicted)
            for key, level in levels.items()}
