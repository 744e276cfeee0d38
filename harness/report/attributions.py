"""The evidence `harness.verdicts.attribution`'s rule reads, gathered from the catalog, the verdicts with their
levels, the scale studies' readings and the committed conformance fixtures; the same for a report being
written and for a committed REPORT.json (`from_report_json`)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from harness.loading.catalog import Catalog, LoadedSpec
from harness.verdicts.attribution import Attribution, Claimed, Evidence, StudyHeading, VerdictAt, attribute
from harness.verdicts.levels import Level

CONFORMANCE_DIR = "conformance"
"""Where the conformance fixtures live, each a JSON file whose `covers` says which parts (`parts`) of which kind
of experiment (`kind`), at which settings (`settings`), its tests hold the project's methods to
(`tests/test_fedrolex_conformance.py`, `tests/test_fedrolex_client_conformance.py`)."""


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


def conformance(catalog: Catalog, root: Path) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """Keyed (claim, profile), for each profile the claim is tested at: (where every variant it reads runs, in
    every part its kind names (`ExperimentKind.conformance_parts`) and it runs (not idle there:
    `ExperimentKind.conformance_idle`), settings some committed conformance fixture of that part covers: those
    fixtures, in words; where so in some part but not in every one: the parts not covered, and why)."""
    fixtures = [(path.name, _covers(path)) for path in sorted((root / CONFORMANCE_DIR).glob("*.json"))]
    covered: dict[tuple[str, str], str] = {}
    gaps: dict[tuple[str, str], str] = {}
    resolved: dict[tuple[str, str, str], BaseModel] = {}
    for loaded in catalog.claims:
        target = catalog.specs[loaded.claim.experiment]
        variants = _variants_read(loaded.claim)
        if not variants or not target.kind.conformance_parts:
            continue
        for profile in loaded.claim.expect:
            running = {part: [v for v in variants if _runs(part, target, profile, v, resolved)]
                       for part in target.kind.conformance_parts}
            parts = [part for part, run in running.items() if run]
            if not parts:
                continue
            found = [_part_coverage(part, target, profile, running[part], fixtures, resolved) for part in parts]
            if all(by for by, _ in found):
                covered[(loaded.id, profile)] = "; ".join(by for by, _ in found)
            elif any(by for by, _ in found):
                held = ", ".join(part for part, (by, _) in zip(parts, found) if by)
                gaps[(loaded.id, profile)] = "; ".join(why for by, why in found if not by) + f" (covered: {held})"
    return covered, gaps


def _covers(path: Path) -> dict[str, Any]:
    """A fixture's `covers`, its fields checked."""
    covers = json.loads(path.read_text(encoding="utf-8")).get("covers")
    for field, kind in (("kind", str), ("parts", list), ("text", str), ("settings", dict)):
        if not isinstance((covers or {}).get(field), kind):
            raise ValueError(f"{path}: covers.{field} must be a {kind.__name__} (what the fixture covers: the kind "
                             f"of experiment, the parts of its runs, in words, and the settings)")
    return covers


def _part_coverage(part: str, target: LoadedSpec, profile: str, variants: list[str],
                   fixtures: list[tuple[str, dict]], resolved: dict[tuple[str, str, str], BaseModel]
                   ) -> tuple[str, str]:
    """(the first fixture of ``part`` covering every variant, in words, or ''; else why not)."""
    missing = []
    for name, cover in fixtures:
        if cover["kind"] != target.spec.kind or part not in cover["parts"]:
            continue
        left = _first_uncovered(cover["settings"], target, profile, variants, resolved)
        if not left:
            return f"{cover['text']} ({CONFORMANCE_DIR}/{name})", ""
        missing.append(f"{CONFORMANCE_DIR}/{name} does not cover {left}")
    return "", f"{part}: {'; '.join(missing) or 'no conformance fixture'}"


def _first_uncovered(settings: Mapping[str, list], target: LoadedSpec, profile: str, variants: list[str],
                     resolved: dict[tuple[str, str, str], BaseModel]) -> str:
    """The settings of the first variant (at ``profile``) whose values ``settings`` leave out, in words; '' where
    they cover every variant."""
    for variant in variants:
        config = _resolved(target, variant, profile, resolved)
        left = [f"{setting} = {_setting(config, setting)}" for setting, values in settings.items()
                if not _among(config, setting, values)]
        if left:
            return f"{', '.join(left)} (variant `{variant}`)"
    return ""


def _runs(part: str, target: LoadedSpec, profile: str, variant: str,
          resolved: dict[tuple[str, str, str], BaseModel]) -> bool:
    """Whether the variant, at ``profile``, runs ``part``: at none of the settings its kind declares it idle at."""
    config = _resolved(target, variant, profile, resolved)
    return not any(_among(config, setting, values)
                   for setting, values in target.kind.conformance_idle.get(part, {}).items())


def _resolved(target: LoadedSpec, variant: str, profile: str, resolved: dict[tuple[str, str, str], BaseModel]
              ) -> BaseModel:
    key = (target.spec.experiment, variant, profile)
    if key not in resolved:
        resolved[key] = target.resolve(variant, profile)
    return resolved[key]


def _among(config: BaseModel, setting: str, values) -> bool:
    """Whether the config's dotted setting is one of `values`."""
    return _setting(config, setting) in {json.dumps(v, sort_keys=True) for v in values}


def _setting(config: BaseModel, setting: str) -> str:
    """A dotted setting of a resolved config as JSON, defaults included (a run's config leaves some out)."""
    value: Any = config
    for key in setting.split("."):
        value = value.get(key) if isinstance(value, Mapping) else getattr(value, key, None)
    return json.dumps(to_jsonable_python(value), sort_keys=True)


def _variants_read(claim) -> list[str]:
    expectation = next((e for e in claim.expect.values() if not e.skips), None)
    return [] if expectation is None else expectation.variants_read(claim.observe)


def claimed(catalog: Catalog) -> dict[tuple[str, str], Claimed]:
    """Every claim's hand-written attribution per profile, as the rule's input."""
    return {(loaded.id, profile): Claimed(a.whose, a.evidence, a.quote, a.quote_source, a.as_run or "")
            for loaded in catalog.claims for profile, a in loaded.claim.attribution.items()}


STUDIES_DIR = "studies"
"""Where `fedclaims study` writes each study's committed reading, `<study>/study.json`."""


def committed_studies(root: Path) -> list[dict[str, Any]]:
    """The committed studies' readings (`studies/*/study.json`)."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted((root / STUDIES_DIR).glob("*/study.json"))]


def study_evidence(read: Iterable[Mapping[str, Any]], committed: Iterable[Mapping[str, Any]]
                   ) -> list[Mapping[str, Any]]:
    """Per study, the reading over more points of its axis with values: the one read from the records at hand,
    or its committed reading where those records hold fewer (a study's runs at points off the profiles are in
    records/ only where `records add --study` bundled them; its reading is committed under studies/)."""
    chosen = {study["study"]: study for study in read}
    for study in committed:
        here = chosen.get(study["study"])
        if here is None or _points(study) > _points(here):
            chosen[study["study"]] = study
    return list(chosen.values())


def _points(study: Mapping[str, Any]) -> int:
    """The most points with values of any of the study's claims."""
    return max((sum(1 for point in claim["points"] if any(point.get("values", {}).values()))
                for claim in study["claims"]), default=0)


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
    covered, gaps = conformance(catalog, root)
    evidence = Evidence(verdicts, relations(catalog), study_headings(studies), covered, claimed(catalog), gaps)
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
