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
from harness.verdicts.attribution import (
    Attribution,
    Claimed,
    CoveredPoint,
    Evidence,
    StudyHeading,
    VerdictAt,
    attribute,
)
from harness.verdicts.levels import Level

CONFORMANCE_DIR = "conformance"
"""Where the conformance fixtures live, each a JSON file whose `covers` says which parts (`parts`) of which kind
of experiment (`kind`), at which settings (`settings`: each dotted setting's values, or a list of such maps, any
one of which covers a run), its tests hold the project's methods to (`tests/test_fedrolex_conformance.py`,
`tests/test_fedrolex_client_conformance.py`)."""


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
    for field, kind in (("kind", str), ("parts", list), ("text", str), ("settings", dict | list)):
        if not isinstance((covers or {}).get(field), kind):
            raise ValueError(f"{path}: covers.{field} must be a {_kind_name(kind)} (what the fixture covers: the "
                             f"kind of experiment, the parts of its runs, in words, and the settings)")
    settings = covers["settings"]
    alternatives = settings if isinstance(settings, list) else [settings]
    if not alternatives or not all(isinstance(a, dict) and all(isinstance(v, list) for v in a.values())
                                   for a in alternatives):
        raise ValueError(f"{path}: covers.settings must map each dotted setting to its values, or list such maps "
                         f"(any one of which covers a run)")
    return {**covers, "settings": alternatives}


def _kind_name(kind: Any) -> str:
    return " or ".join(k.__name__ for k in getattr(kind, "__args__", (kind,)))


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


def _first_uncovered(alternatives: list[Mapping[str, list]], target: LoadedSpec, profile: str,
                     variants: list[str], resolved: dict[tuple[str, str, str], BaseModel]) -> str:
    """The settings of the first variant (at ``profile``) whose values every alternative of the settings leaves
    out, in words (each alternative's, joined by 'or else'); '' where some alternative covers every variant."""
    for variant in variants:
        config = _resolved(target, variant, profile, resolved)
        left = [[f"{setting} = {_setting(config, setting)}" for setting, values in settings.items()
                 if not _among(config, setting, values)] for settings in alternatives]
        if all(left):
            return f"{', or else '.join(', '.join(one) for one in left)} (variant `{variant}`)"
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


def as_run_links(catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """Per claim as the paper states it, the claims `as_run_of` it that test its relation in one other setting
    (`as_run_problem` finds none): the rule reads only those."""
    found: dict[str, list[str]] = {}
    configs: dict[tuple[str, str], dict[str, str]] = {}
    for loaded in catalog.claims:
        stated = loaded.claim.as_run_of
        if stated is not None and as_run_problem(catalog, stated, loaded.id, configs) is None:
            found.setdefault(stated, []).append(loaded.id)
    return {claim: tuple(others) for claim, others in found.items()}


def as_run_problem(catalog: Catalog, stated_id: str, as_run_id: str,
                   configs: dict[tuple[str, str], dict[str, str]] | None = None) -> str | None:
    """Why `as_run_id` is not `stated_id`'s test in one other setting (None where it is): the same observation
    and hypotheses with each variant read in its place, pair by pair, and every such pair of variants differing
    by the same settings, the setting as run."""
    configs = {} if configs is None else configs
    try:
        stated, as_run = catalog.claim(stated_id).claim, catalog.claim(as_run_id).claim
    except KeyError as missing:
        return f"no claim {missing}"
    pairs = list(zip(stated.observe.variants, as_run.observe.variants))
    if stated.experiment != as_run.experiment or len(stated.observe.variants) != len(as_run.observe.variants):
        return "it reads another experiment or another number of variants"
    renamed = dict(pairs)
    if _renamed(stated.observe.model_dump(mode="json"), renamed) != as_run.observe.model_dump(mode="json"):
        return "its observation differs beyond the variants it reads"
    differing = [p for p in set(stated.expect) & set(as_run.expect)
                 if _renamed(stated.expect[p].hypothesis(), renamed) != as_run.expect[p].hypothesis()]
    if differing:
        return f"it tests another hypothesis at {', '.join(sorted(differing))}"
    target = catalog.specs[stated.experiment]
    settings = {_difference(_flat(target, run, configs), _flat(target, plain, configs)) for plain, run in pairs}
    if len(settings) != 1 or not next(iter(settings)):
        return "its variants do not differ from the stated ones by one and the same setting"
    return None


def _renamed(value: Any, names: Mapping[str, str]) -> Any:
    """`value` with every string that names a key of `names` replaced by its value, at any depth."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list | tuple):
        return [_renamed(item, names) for item in value]
    if isinstance(value, dict):
        return {key: _renamed(item, names) for key, item in value.items()}
    return value


CONFIRMATORY_VERDICTS = ("PASS", "FAIL", "INCONCLUSIVE")
"""A confirmatory test's statuses that are its one look's verdict (not pending, not undecidable, no error)."""


def confirmed_verdicts(readings: Iterable[Mapping[str, Any]]) -> list[VerdictAt]:
    """The confirmatory tests' verdicts as the rule reads them, from their REPORT.json entries (`Reading.to_dict`):
    each at its plan's profile, named there as a confirmatory test."""
    return [VerdictAt(r["claim"], r["profile"], r["status"], (r.get("level") or {}).get("fraction"),
                      note="its confirmatory test on fresh seeds")
            for r in readings if r.get("status") in CONFIRMATORY_VERDICTS]


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


def covered_points(studies: Iterable[Mapping[str, Any]], covered: Mapping[tuple[str, str], str]
                   ) -> dict[tuple[str, str], tuple[CoveredPoint, ...]]:
    """Per (claim, a study's base profile), the study's points with a verdict where the conformance fixtures cover
    every part of the claim's runs (`covered`: `conformance`'s, which sees a study's points as profiles)."""
    found: dict[tuple[str, str], list[CoveredPoint]] = {}
    for study in studies:
        for claim in study["claims"]:
            for point in claim["points"]:
                by = covered.get((claim["claim"], point["profile"]))
                if by and point.get("verdict"):
                    found.setdefault((claim["claim"], study["base_profile"]), []).append(
                        CoveredPoint(study["study"], point["profile"], point["verdict"], by))
    return {key: tuple(points) for key, points in found.items()}


def attributions(catalog: Catalog, tested: Iterable[VerdictAt], confirmed: Iterable[VerdictAt] = (), *,
                 studies: Iterable[Mapping[str, Any]], root: Path) -> dict[tuple[str, str], Attribution]:
    """Every FAIL's attribution by the rule, keyed (claim, profile); `confirmed`: the confirmatory tests' verdicts,
    each its claim's last word at its profile."""
    return _profile_fails(_evidence(catalog, tested, studies, root, confirmed))


def confirmatory_attributions(catalog: Catalog, tested: Iterable[VerdictAt], studies: Iterable[Mapping[str, Any]],
                              root: Path, confirmed: Iterable[VerdictAt]) -> dict[tuple[str, str], Attribution]:
    """Each confirmatory FAIL's attribution by the same rule, its own verdict read in place of its profile's."""
    return _confirmatory_fails(_evidence(catalog, tested, studies, root, confirmed))


def _profile_fails(evidence: Evidence) -> dict[tuple[str, str], Attribution]:
    return {key: attribute(*key, evidence) for key, t in evidence.verdicts.items() if t.status == "FAIL"}


def _confirmatory_fails(evidence: Evidence) -> dict[tuple[str, str], Attribution]:
    return {key: attribute(*key, replace(evidence, verdicts={**evidence.verdicts, key: t}))
            for key, t in evidence.confirmed.items() if t.status == "FAIL"}


def _evidence(catalog: Catalog, tested: Iterable[VerdictAt], studies: Iterable[Mapping[str, Any]], root: Path,
              confirmed: Iterable[VerdictAt]) -> Evidence:
    covered, gaps = conformance(catalog, root)
    studies = list(studies)
    return Evidence({(t.claim, t.profile): t for t in tested}, relations(catalog), study_headings(studies), covered,
                    claimed(catalog), as_run_links(catalog), {(t.claim, t.profile): t for t in confirmed}, gaps,
                    covered_points(studies, covered))


def from_report_json(catalog: Catalog, report: Mapping[str, Any], studies: Iterable[Mapping[str, Any]],
                     root: Path) -> dict[tuple[str, str], Attribution]:
    """The rule's attributions recomputed from a REPORT.json's verdicts and levels and the studies' readings."""
    return attributions(catalog, *_report_json_verdicts(catalog, report), studies=studies, root=root)


def confirmatory_from_report_json(catalog: Catalog, report: Mapping[str, Any], studies: Iterable[Mapping[str, Any]],
                                  root: Path) -> dict[tuple[str, str], Attribution]:
    """The rule's attributions of the confirmatory FAILs recomputed from a REPORT.json and the studies' readings."""
    tested, confirmed = _report_json_verdicts(catalog, report)
    return confirmatory_attributions(catalog, tested, studies, root, confirmed)


def _report_json_verdicts(catalog: Catalog, report: Mapping[str, Any]) -> tuple[list[VerdictAt], list[VerdictAt]]:
    """A REPORT.json's profile verdicts and confirmatory verdicts, of the claims the catalog holds."""
    known = {loaded.id for loaded in catalog.claims}
    tested = [VerdictAt(v["claim"], v["profile"], v["status"], (v.get("level") or {}).get("fraction"))
              for v in report["verdicts"] if v["claim"] in known]
    confirmed = [t for t in confirmed_verdicts(report.get("confirmatory", [])) if t.claim in known]
    return tested, confirmed


def with_attributions(catalog: Catalog, verdicts: Iterable, levels: Mapping[tuple[str, str], Level],
                      studies: Iterable[Mapping[str, Any]], root: Path, confirmatory: Iterable[Mapping[str, Any]] = ()
                      ) -> tuple[dict[tuple[str, str], Level], dict[str, str]]:
    """The levels with every FAIL's attribution by the rule (`verdicts`: every profile's, so a FAIL where the
    models learn can refute `the scale` where they do not; `confirmatory`: the confirmatory tests as REPORT.json
    lists them, each its claim's last word at its profile), and per claim whose confirmatory test FAILed, whose
    that FAIL is, in words: both read from one gathering of the evidence."""
    tested = [VerdictAt(v.claim, v.profile, v.status, levels[(v.claim, v.profile)].fraction) for v in verdicts]
    evidence = _evidence(catalog, tested, studies, root, confirmed_verdicts(confirmatory))
    found = _profile_fails(evidence)
    attributed = {key: level if key not in found else replace(level, attribution=found[key].text(),
                                                              whose=found[key].whose,
                                                              contradicted=found[key].contradicted)
                  for key, level in levels.items()}
    return attributed, {claim: a.text() for (claim, _), a in _confirmatory_fails(evidence).items()}
