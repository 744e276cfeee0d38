"""Load and validate every claim and spec file, and check their cross-references.

All problems of all files are collected and raised together as one SpecError;
each names its file, line and field and, for a misspelling, the closest valid name.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from harness.errors import Problem, SpecError, closest, did_you_mean, format_field, unknown
from harness.extensions import ExtensionPoint, UnknownExtension
from harness.kinds import kind as experiment_kind
from harness.kinds.base import ExperimentKind
from harness.loading.configs import deep_merge, resolved_config, settings_at  # noqa: F401 (deep_merge: part of this module's API)
from harness.loading.design import design_problems
from harness.loading.studies import PAPER_PROFILE, LoadedStudy, generated_profiles, load_studies
from harness.loading.yamlsource import Document, load_document
from harness.schema.claim import Claim, ClaimFile
from harness.schema.expectations import EXPECTATION_KEYS
from harness.schema.observations import OBSERVATION_KEYS
from harness.schema.observations.correlation import CorrelationObservation
from harness.schema.observations.difference import DifferenceObservation
from harness.schema.observations.metric import MetricObservation
from harness.schema.observations.spread import SpreadObservation
from harness.schema.spec import ExperimentSpec

TAGS = set(OBSERVATION_KEYS) | set(EXPECTATION_KEYS)


@dataclass
class LoadedSpec:
    spec: ExperimentSpec
    doc: Document
    kind: ExperimentKind

    def resolve(self, variant: str, profile: str) -> BaseModel:
        """The validated config of one variant at one profile (already checked at load)."""
        return self.kind.config_model.model_validate(resolved_config(self.spec, variant, profile))


@dataclass
class LoadedClaim:
    claim: Claim
    paper: str
    doc: Document
    path: tuple[str | int, ...]

    @property
    def id(self) -> str:
        return self.claim.id


@dataclass
class Catalog:
    specs: dict[str, LoadedSpec] = field(default_factory=dict)
    claims: list[LoadedClaim] = field(default_factory=list)
    papers: dict[str, ClaimFile] = field(default_factory=dict)
    studies: dict[str, LoadedStudy] = field(default_factory=dict)

    def claim(self, claim_id: str) -> LoadedClaim:
        for loaded in self.claims:
            if loaded.id == claim_id:
                return loaded
        raise KeyError(claim_id)

    def evidence(self, claim_id: str) -> str:
        """'empirical' or 'analytic': the evidence of the kind of experiment the claim reads."""
        return self.specs[self.claim(claim_id).claim.experiment].kind.evidence

    def study(self, name: str) -> LoadedStudy:
        if name not in self.studies:
            raise ValueError(f"unknown study {name!r}{did_you_mean(name, self.studies)}")
        return self.studies[name]

    def select(self, papers: Iterable[str] = (), pattern: str | None = None) -> list[LoadedClaim]:
        """Claims of the given papers (all if none) whose id matches a glob or regex pattern.

        A paper that does not exist, or a pattern that matches no claim of them, is a ValueError
        with the nearest valid name: a typo must not verify nothing and succeed."""
        papers = set(papers)
        for paper in sorted(papers - set(self.papers)):
            raise ValueError(f"unknown paper {paper!r} (--paper){did_you_mean(paper, self.papers)}")
        of_papers = [c for c in self.claims if not papers or c.paper in papers]
        if not pattern:
            return of_papers
        try:
            regex = re.compile(_glob_to_regex(pattern))
        except re.error as error:
            raise ValueError(f"--claim {pattern!r} is neither a glob nor a regular expression: {error}") from None
        chosen = [c for c in of_papers if regex.search(c.id)]
        if not chosen:
            among = f" of paper {', '.join(sorted(papers))}" if papers else ""
            raise ValueError(f"no claim{among} matches --claim {pattern!r}"
                             + _nearest_pattern(pattern, [c.id for c in of_papers]))
        return chosen

    def profiles(self) -> list[str]:
        """Every profile some spec defines, the points of scale studies included (spec order)."""
        return list(dict.fromkeys(p for spec in self.specs.values() for p in spec.spec.profiles))

    def by_scale(self, profiles: Iterable[str]) -> list[str]:
        """``profiles`` from the smallest scale to the largest: in the order the specs declare them
        (smoke, standard, learning, then each study's points along its axis), the paper's own
        profile last whatever its place in a spec (specs declare it first, as the base)."""
        order = [p for p in self.profiles() if p != PAPER_PROFILE] + [PAPER_PROFILE]
        rank = {profile: i for i, profile in enumerate(order)}
        return sorted(profiles, key=lambda profile: rank.get(profile, len(rank)))

    def check_profiles(self, profiles: Iterable[str]) -> None:
        """A ValueError naming the nearest profile for a name no spec defines."""
        known = self.profiles()
        for profile in profiles:
            if profile not in known:
                points = generated_profiles(self.studies.values())
                shown = [p for p in known if p not in points]
                raise ValueError(f"unknown profile {profile!r} (--profile){did_you_mean(profile, shown)}")


def _glob_to_regex(pattern: str) -> str:
    if any(ch in pattern for ch in "*?") and not any(ch in pattern for ch in "^$()|+\\"):
        return "^" + re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".") + "$"
    return pattern


def _nearest_pattern(pattern: str, ids: list[str]) -> str:
    """'; did you mean ...?' with the claim id, or the dotted prefix of one, nearest the pattern's literal part."""
    literal = re.sub(r"[*?^$()|+\\\[\]{}]", "", pattern).rstrip(".")
    prefixes = {".".join(i.split(".")[:n]) for i in ids for n in range(1, i.count(".") + 2)}
    match = closest(literal, prefixes)
    if match is None:
        return "; `fedclaims design` lists the claim ids"
    return f"; did you mean {match + '.*' if match not in ids else match!r}?"


# --- pydantic errors -> problems ------------------------------------------------

def _data_path(data: Any, loc: tuple) -> tuple[str | int, ...]:
    """Map a pydantic error location onto keys of the data, dropping union tags."""
    path: list[str | int] = []
    node = data
    parts = list(loc)
    for index, part in enumerate(parts):
        at_union = path[-1:] == ["observe"] or path[-2:-1] == ["expect"]
        if at_union and part in TAGS and index > 0 and parts[index - 1] == path[-1]:
            continue
        if isinstance(node, dict) and part in node:
            child = node[part]
            path.append(part)
            node = child
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(part)
            node = node[part]
    return tuple(path)


def _message(error: ErrorDetails, model: type[BaseModel] | None = None) -> tuple[str, tuple]:
    """The message of one pydantic error and any extra path element it points at. With the model
    that was validated (a kind's Config), an unknown key gets the closest setting at its level."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "unknown_field":
        return error["msg"], (ctx["field"],)
    if kind == "extra_forbidden" and model is not None and error["loc"]:
        key = error["loc"][-1]
        return f"unknown setting {str(key)!r}{did_you_mean(str(key), settings_at(model, error['loc'][:-1]))}", ()
    if kind in ("observation_kind", "expectation_kind") and isinstance(error.get("input"), dict):
        valid = OBSERVATION_KEYS if kind == "observation_kind" else EXPECTATION_KEYS
        for key in error["input"]:
            match = closest(str(key), valid)
            if match:
                return f"{error['msg']}; found {key!r}, did you mean {match!r}?", (key,)
        return error["msg"], ()
    if kind == "enum" and error["loc"]:
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return unknown(str(error["loc"][-1]), error.get("input"), expected), ()
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return error["msg"] + did_you_mean(str(error.get("input")), expected).replace(" (valid", " (expected"), ()
    if kind == "union_tag_invalid":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        field = re.fullmatch(r"'(\w+)'", str(ctx.get("discriminator", "")))
        return error["msg"] + did_you_mean(str(ctx.get("tag")), expected), (field[1],) if field else ()
    if kind == "missing":
        return "required field is missing", ()
    return error["msg"], ()


def _problems_from(error: ValidationError, doc: Document, root: tuple = (), data: Any = None) -> list[Problem]:
    problems = []
    data = doc.data if data is None else data
    for item in error.errors():
        message, extra = _message(item)
        path = (*root, *_data_path(data, item["loc"]), *extra)
        if item["type"] == "missing":
            path = (*path, item["loc"][-1]) if item["loc"] else path
            problems.append(Problem(doc.file, doc.line_of(path[:-1]), format_field(path), message))
        else:
            problems.append(doc.problem(path, message))
    return problems


def _config_location(doc: Document, variant: str, profile: str, loc: tuple) -> tuple:
    """The file position that set a value of a resolved config (the last layer that spells it out)."""
    candidates = [("profiles", profile, "variant_overrides", variant, *loc),
                  ("variants", variant, "config", *loc),
                  ("profiles", profile, "overrides", *loc),
                  ("config", *loc)]
    exact = next((c for c in candidates if c in doc.lines), None)
    return exact or max(candidates, key=lambda c: len(_existing_prefix(doc, c)))


def _config_problems(error: ValidationError, model: type[BaseModel], doc: Document, variant: str, profile: str,
                     merged: dict) -> list[Problem]:
    """Problems of a resolved config of `model`, placed at the file position that set the value."""
    problems = []
    for item in error.errors():
        message, extra = _message(item, model)
        loc = (*_data_path(merged, item["loc"]), *extra)
        if item["type"] == "missing":
            loc_text = format_field((*loc, item["loc"][-1]))
            message = f"required field {loc_text!r} is missing (variant {variant!r}, profile {profile!r})"
            problems.append(doc.problem(("config",), message))
            continue
        path = _config_location(doc, variant, profile, loc)
        problems.append(doc.problem(path, f"{message} (variant {variant!r}, profile {profile!r})"))
    return problems


def references(value: Any, path: tuple = ()) -> list[tuple[tuple, dict]]:
    """Every `{match: <variant>, metric: <metric>}` mapping in a config, with its path."""
    if isinstance(value, dict):
        if set(value) == {"match", "metric"}:
            return [(path, value)]
        return [found for key, item in value.items() for found in references(item, (*path, key))]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in references(item, (*path, index))]
    return []


def _leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every value inside mappings and lists, with its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


def _non_finite(value: Any) -> list[tuple]:
    return [path for path, leaf in _leaves(value) if isinstance(leaf, float) and not math.isfinite(leaf)]


def _reference_problems(spec: ExperimentSpec, doc: Document, kind: ExperimentKind,
                        profile: str) -> list[Problem]:
    """Unknown variants or metrics in config references, and reference cycles, at one profile."""
    problems = []
    edges: dict[str, list[tuple[str, tuple]]] = {}
    for variant in spec.variants:
        for loc, reference in references(resolved_config(spec, variant, profile)):
            where = _config_location(doc, variant, profile, loc)
            target, metric = reference["match"], reference["metric"]
            if target not in spec.variants:
                problems.append(doc.problem((*where, "match"), f"unknown variant {target!r} in a config reference"
                                                               f"{did_you_mean(str(target), spec.variants)}"))
            else:
                edges.setdefault(variant, []).append((target, where))
            if metric not in kind.metrics:
                problems.append(doc.problem((*where, "metric"), f"unknown metric {metric!r} for kind {kind.name!r} "
                                                                "in a config reference"
                                                                f"{did_you_mean(str(metric), kind.metrics)}"))
    reported: set[frozenset[str]] = set()
    for start in edges:
        cycle = _cycle_from(start, edges)
        if cycle and frozenset(cycle) not in reported:
            reported.add(frozenset(cycle))
            where = next(w for target, w in edges[start] if target == cycle[1])
            problems.append(doc.problem((*where, "match"), "config references form a cycle: "
                                                           + " -> ".join(cycle) + f" (profile {profile!r})"))
    return problems


def _cycle_from(start: str, edges: dict[str, list[tuple[str, tuple]]]) -> list[str] | None:
    """A path start -> ... -> start through the reference edges, if there is one."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for target, _ in edges.get(node, []):
            if target == start:
                return [*path, start]
            if target not in seen:
                seen.add(target)
                stack.append((target, [*path, target]))
    return None


def _existing_prefix(doc: Document, path: tuple) -> tuple:
    while path and path not in doc.lines:
        path = path[:-1]
    return path


# --- loading ------------------------------------------------------------------

def _relative(path: Path, root: Path | None) -> Path:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve())
        except ValueError:
            pass
    return path


def _load_docs(directories: Path | list[Path], root: Path | None, problems: list[Problem]) -> list[Document]:
    """The documents of each folder once: a folder reached twice (by the project's path and by an installed
    package's entry point, or through a link) is the same folder, known by its resolved path."""
    docs = []
    seen: set[Path] = set()
    for directory in directories if isinstance(directories, list) else [directories]:
        if directory.resolve() in seen:
            continue
        seen.add(directory.resolve())
        docs += _load_folder(directory, root, problems)
    return docs


def _load_folder(directory: Path, root: Path | None, problems: list[Problem]) -> list[Document]:
    if not directory.is_dir():
        problems.append(Problem(directory, None, "<directory>", "directory does not exist"))
        return []
    docs = []
    for file in sorted(directory.glob("*.yaml")):
        try:
            docs.append(load_document(file, _relative(file, root)))
        except SpecError as error:
            problems.extend(error.problems)
    return docs


def load_specs(specs_dir: Path | list[Path], root: Path | None, problems: list[Problem]) -> dict[str, LoadedSpec]:
    specs: dict[str, LoadedSpec] = {}
    for doc in _load_docs(specs_dir, root, problems):
        if not isinstance(doc.data, dict):
            problems.append(doc.problem((), "a spec file must be a mapping"))
            continue
        try:
            spec = ExperimentSpec.model_validate(doc.data)
        except ValidationError as error:
            problems.extend(_problems_from(error, doc))
            continue
        if spec.experiment in specs:
            other = specs[spec.experiment].doc.file
            problems.append(doc.problem(("experiment",),
                                        f"duplicate experiment id {spec.experiment!r} (also in {other})"))
            continue
        try:
            kind = experiment_kind(spec.kind)
        except UnknownExtension as error:
            problems.append(doc.problem(("kind",), str(error)))
            continue
        try:
            kind = experiment_kind(spec.kind, tuple(spec.metrics))
        except UnknownExtension as error:
            problems.append(doc.problem(("metrics",), str(error)))
            continue
        before = len(problems)
        _check_spec(spec, doc, kind, problems)
        if len(problems) == before:
            specs[spec.experiment] = LoadedSpec(spec, doc, kind)
    return specs


def _check_spec(spec: ExperimentSpec, doc: Document, kind: ExperimentKind, problems: list[Problem]) -> None:
    for profile_name, profile in spec.profiles.items():
        for variant in profile.variant_overrides:
            if variant not in spec.variants:
                problems.append(doc.problem(("profiles", profile_name, "variant_overrides", variant),
                                            f"unknown variant {variant!r}{did_you_mean(variant, spec.variants)}"))
    if spec.reference is not None:
        if spec.reference.variant not in spec.variants:
            problems.append(doc.problem(("reference", "variant"), f"unknown variant {spec.reference.variant!r}"
                                        f"{did_you_mean(spec.reference.variant, spec.variants)}"))
        if kind.learning is None:
            problems.append(doc.problem(("reference",), f"kind {kind.name!r} measures no accuracy to read a "
                                                        "learning level from"))
    for index, figure in enumerate(spec.figures):
        if figure.plot not in kind.plots:
            problems.append(doc.problem(("figures", index, "plot"),
                                        f"unknown plot {figure.plot!r} for kind {kind.name!r}"
                                        f"{did_you_mean(figure.plot, kind.plots)}"))
        for j, variant in enumerate(figure.variants):
            if variant not in spec.variants:
                problems.append(doc.problem(("figures", index, "variants", j),
                                            f"unknown variant {variant!r}{did_you_mean(variant, spec.variants)}"))
    seen: set[str] = set()

    def add(found: list[Problem]) -> None:
        for problem in found:
            key = f"{problem.line}:{problem.field}:{problem.message.split(' (variant')[0].split(' (profile')[0]}"
            if key not in seen:
                seen.add(key)
                problems.append(problem)

    for profile_name in spec.profiles:
        for variant in spec.variants:
            merged = resolved_config(spec, variant, profile_name)
            try:
                validated = kind.config_model.model_validate(merged)
            except ValidationError as error:
                add(_config_problems(error, kind.config_model, doc, variant, profile_name, merged))
                continue
            dumped = validated.model_dump(mode="python")
            add([doc.problem(_config_location(doc, variant, profile_name, loc),
                             f"non-finite number {_lookup(dumped, loc)!r} is not allowed "
                             f"(variant {variant!r}, profile {profile_name!r})")
                 for loc in _non_finite(dumped)])
            add([doc.problem(_config_location(doc, variant, profile_name, loc),
                             f"{message} (variant {variant!r}, profile {profile_name!r})")
                 for loc, message in kind.config_problems(validated)])
        add(_reference_problems(spec, doc, kind, profile_name))


def _lookup(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


def load_claims(claims_dir: Path | list[Path], root: Path | None, specs: dict[str, LoadedSpec],
                spec_ids: set[str], problems: list[Problem]) -> tuple[list[LoadedClaim], dict[str, ClaimFile]]:
    claims: list[LoadedClaim] = []
    papers: dict[str, ClaimFile] = {}
    first_seen: dict[str, Problem] = {}
    for doc in _load_docs(claims_dir, root, problems):
        if not isinstance(doc.data, dict):
            problems.append(doc.problem((), "a claim file must be a mapping"))
            continue
        try:
            claim_file = ClaimFile.model_validate(doc.data)
        except ValidationError as error:
            problems.extend(_problems_from(error, doc))
            continue
        papers.setdefault(claim_file.paper, claim_file)
        on_broken_specs: dict[str, list[int]] = {}
        for index, claim in enumerate(claim_file.claims):
            path = ("claims", index)
            if claim.id in first_seen:
                where = first_seen[claim.id]
                problems.append(doc.problem((*path, "id"),
                                            f"duplicate claim id {claim.id!r} (first at {where.file}:{where.line})"))
                continue
            first_seen[claim.id] = doc.problem((*path, "id"), "")
            if claim.experiment not in specs and claim.experiment in spec_ids:
                on_broken_specs.setdefault(claim.experiment, []).append(index)
                continue
            loaded = LoadedClaim(claim, claim_file.paper, doc, path)
            if _check_claim(loaded, specs, spec_ids, problems):
                claims.append(loaded)
        problems.extend(_broken_spec_problem(doc, experiment, indices)
                        for experiment, indices in on_broken_specs.items())
        _check_families(doc, claim_file, problems)
    return claims, papers


def _broken_spec_problem(doc: Document, experiment: str, indices: list[int]) -> Problem:
    """One problem for the claims of a file that read an experiment whose spec has problems of its
    own (listed at the spec's lines): at the first of them, counting the others."""
    others = len(indices) - 1
    more = f"; {others} more claim{'s' if others > 1 else ''} of this file read it" if others else ""
    return doc.problem(("claims", indices[0], "experiment"),
                       f"experiment {experiment!r} has errors of its own (see its spec file){more}; "
                       "claims on it are checked once it loads")


def _check_families(doc: Document, claim_file: ClaimFile, problems: list[Problem]) -> None:
    """A family is tested together (Holm across it): it names at least two claims of its file."""
    members: dict[str, list[int]] = {}
    for index, claim in enumerate(claim_file.claims):
        if claim.family:
            members.setdefault(claim.family, []).append(index)
    for family, indices in members.items():
        if len(indices) == 1:
            problems.append(doc.problem(("claims", indices[0], "family"),
                                        f"family {family!r} has one claim: a family names at least two claims "
                                        "of its file tested together"))


def _check_claim(loaded: LoadedClaim, specs: dict[str, LoadedSpec], spec_ids: set[str],
                 problems: list[Problem]) -> bool:
    claim, doc, path = loaded.claim, loaded.doc, loaded.path
    before = len(problems)

    def report(sub: tuple, message: str) -> None:
        problems.append(doc.problem((*path, *sub), message))

    target = specs.get(claim.experiment)
    if target is None:
        report(("experiment",), f"unknown experiment {claim.experiment!r}{did_you_mean(claim.experiment, spec_ids)}")
        return False
    spec, kind = target.spec, target.kind
    if spec.paper != loaded.paper:
        report(("experiment",),
               f"experiment {claim.experiment!r} belongs to paper {spec.paper!r}, not {loaded.paper!r}")
    obs = claim.observe
    variants_field = "of"
    for j, variant in enumerate(obs.variants):
        if variant not in spec.variants:
            sub = ("observe", variants_field) if isinstance(obs.of, str) else ("observe", variants_field, j)
            report(sub, f"unknown variant {variant!r} of experiment {spec.experiment!r}"
                        f"{did_you_mean(variant, spec.variants)}")
    if isinstance(obs, CorrelationObservation):
        names = [*obs.correlation, *([obs.given] if obs.given else [])]
        for j, name in enumerate(names):
            if name not in kind.client_quantities:
                sub = ("observe", "correlation", j) if j < 2 else ("observe", "given")
                report(sub, f"unknown per-client quantity {name!r} for kind {kind.name!r}"
                            f"{did_you_mean(name, kind.client_quantities)}")
    else:
        metric_key = next(k for k in OBSERVATION_KEYS if k in type(obs).model_fields)
        metric = kind.metrics.get(obs.metric)
        if metric is None:
            report(("observe", metric_key), f"unknown metric {obs.metric!r} for kind {kind.name!r}"
                                            f"{did_you_mean(obs.metric, kind.metrics)}")
        else:
            try:
                metric.args.model_validate(obs.args)
            except ValidationError as error:
                problems.extend(_problems_from(error, doc, (*path, "observe", "args"), obs.args))
    if claim.role == "implementation" and not _fixed_by_the_code_path(kind, obs):
        report(("role",), "an implementation check observes what the code path fixes (a kind that trains "
                          "nothing, or a structural metric or one that does not depend on learning); "
                          f"{getattr(obs, 'metric', 'a correlation')!r} of kind {kind.name!r} depends on how the "
                          "models learn")
    for profile, expectation in claim.expect.items():
        sub = ("expect", profile)
        if profile not in spec.profiles:
            report(sub, f"unknown profile {profile!r} of experiment {spec.experiment!r}"
                        f"{did_you_mean(profile, spec.profiles)}")
        for message in expectation.fit_problems(obs, spec.variants):
            report(sub, message)
        if profile in spec.profiles:
            for problem in (_exact_equality_of_a_varying_mean(target, obs, expectation, profile),
                            _spread_fixed_by_config(target, obs, expectation, profile)):
                if problem:
                    report(sub, problem)
    return len(problems) == before


def _fixed_by_the_code_path(kind: ExperimentKind, obs) -> bool:
    if kind.evidence == "analytic":
        return True
    metric = kind.metrics.get(getattr(obs, "metric", ""))
    return metric is not None and (metric.structural or metric.independent)


def _spread_fixed_by_config(target: LoadedSpec, obs, expectation, profile: str) -> str | None:
    """A spread observation of a metric the kind declares deterministic at `profile` for some variant."""
    if not isinstance(obs, SpreadObservation) or expectation.skips:
        return None
    metric, configs = _metric_configs(target, obs, profile)
    fixed = [variant for variant, config in configs.items() if metric is not None and metric.is_deterministic(config)]
    if not fixed:
        return None
    return (f"the spread of '{obs.metric}' over seeds is a ratio of standard deviations, but the metric "
            f"is fixed by the config of {', '.join(repr(v) for v in fixed)} at this profile (declared "
            "deterministic): its standard deviation is 0 and the ratio 0/0 or infinite on every run")


def _exact_equality_of_a_varying_mean(target: LoadedSpec, obs, expectation, profile: str) -> str | None:
    """An `equals` without a tolerance on a mean that varies with the seed."""
    if not (expectation.exact_equality_of_the_mean
            and isinstance(obs, (MetricObservation, DifferenceObservation))):
        return None
    metric, configs = _metric_configs(target, obs, profile)
    if metric is None or all(metric.is_deterministic(config) for config in configs.values()):
        return None
    return (f"equals {expectation.equals} without a tolerance, tested on the mean of '{obs.metric}', "
            "which varies with the seed: a t-interval is never a single point, so it can never PASS "
            "(state a tolerance, or read each seed with `of: every_seed`)")


def _metric_configs(target: LoadedSpec, obs, profile: str) -> tuple[Any, dict[str, dict]]:
    """The observation's metric and each of its variants' resolved config ((None, {}) where either is invalid)."""
    metric = target.kind.metrics.get(obs.metric)
    try:
        configs = {variant: target.resolve(variant, profile).model_dump(mode="json") for variant in obs.variants}
    except (KeyError, ValidationError, ValueError):
        return None, {}
    return metric, configs


def load_catalog(claims_dir: Path, specs_dir: Path, root: Path | None = None, include: Iterable[Path] = ()) -> Catalog:
    """Load everything; raise SpecError listing every problem found. A catalog whose files are valid is
    then checked for expectations no number of seeds can decide (`harness.loading.design`).

    `include`: folders of further papers (each holding claims/ and specs/), such as those installed
    packages register (`installed_papers`)."""
    problems: list[Problem] = []
    claims_dirs = [claims_dir, *(Path(folder) / "claims" for folder in include)]
    specs_dirs = [specs_dir, *(Path(folder) / "specs" for folder in include)]
    specs = load_specs(specs_dirs, root, problems)
    spec_ids = set(specs).union(*map(_declared_experiment_ids, specs_dirs))
    claims, papers = load_claims(claims_dirs, root, specs, spec_ids, problems)
    studies = load_studies(specs, claims, set().union(*map(_declared_claim_ids, claims_dirs)), problems)
    if problems:
        raise SpecError(problems)
    catalog = Catalog(specs, claims, papers, studies)
    problems = design_problems(catalog)
    if problems:
        raise SpecError(problems)
    return catalog


PAPERS: ExtensionPoint[ModuleType] = ExtensionPoint(
    "fedclaims.papers", "paper", lambda piece: isinstance(piece, ModuleType) and piece.__file__ is not None,
    "a package whose folder holds claims/ and specs/")


def installed_papers() -> list[Path]:
    """The folders of the papers installed packages register (`fedclaims.papers`: a package whose
    folder holds claims/ and specs/, loaded beside the project's own)."""
    folders = []
    for name in PAPERS.names():
        file = PAPERS.load(name).__file__
        assert file is not None  # PAPERS accepts only a package loaded from a folder
        folders.append(Path(file).parent)
    return folders


def load_project(settings) -> Catalog:
    """The project's claims and specs with those of every installed paper."""
    return load_catalog(settings.claims_dir, settings.specs_dir, settings.root, installed_papers())


def _declared_experiment_ids(specs_dir: Path) -> set[str]:
    """Experiment ids of spec files, even invalid ones, to tell 'unknown' from 'broken'."""
    ids = set()
    if specs_dir.is_dir():
        for file in specs_dir.glob("*.yaml"):
            match = re.search(r"""^experiment:\s*["']?([A-Za-z0-9._-]+)["']?\s*(#.*)?$""",
                              file.read_text(encoding="utf-8"), re.M)
            if match:
                ids.add(match.group(1))
    return ids


def _declared_claim_ids(claims_dir: Path) -> set[str]:
    """Claim ids of claim files, even invalid ones, to tell 'unknown' from 'broken'."""
    ids = set()
    if claims_dir.is_dir():
        for file in claims_dir.glob("*.yaml"):
            ids.update(re.findall(r"""^\s*-?\s*id:\s*["']?([a-z0-9][a-z0-9._-]*)["']?\s*(?:#.*)?$""",
                                  file.read_text(encoding="utf-8", errors="replace"), re.M))
    return ids
