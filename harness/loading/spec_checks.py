"""What a spec must hold beyond its schema: config references that resolve without cycles, finite numbers,
and every variant at every profile valid under its kind's config model."""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from harness.errors import Problem, did_you_mean
from harness.kinds import held
from harness.kinds.base import ExperimentKind
from harness.loading.configs import resolved_config
from harness.loading.validation_errors import config_location, config_problems
from harness.loading.yamlsource import Document
from harness.schema.spec import ExperimentSpec


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
            where = config_location(doc, variant, profile, loc)
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


def check_spec(spec: ExperimentSpec, doc: Document, kind: ExperimentKind, problems: list[Problem]) -> None:
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
    if kind.learning is None:
        problems += [doc.problem(("variants", name, "paper"), f"kind {kind.name!r} measures no accuracy to read a "
                                                              "paper figure against")
                     for name, variant in spec.variants.items() if variant.paper is not None]
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
                add(config_problems(error, kind.config_model, doc, variant, profile_name, merged))
                continue
            dumped = validated.model_dump(mode="python")
            add([doc.problem(config_location(doc, variant, profile_name, loc),
                             f"non-finite number {_lookup(dumped, loc)!r} is not allowed "
                             f"(variant {variant!r}, profile {profile_name!r})")
                 for loc in _non_finite(dumped)])
            add([doc.problem(config_location(doc, variant, profile_name, loc),
                             f"{message} (variant {variant!r}, profile {profile_name!r})")
                 for loc, message in held.config_problems(kind, validated)])
        add(_reference_problems(spec, doc, kind, profile_name))


def _lookup(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data
