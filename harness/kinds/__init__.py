"""Experiment kinds and the metrics added to them, found through their extension points.

A kind is an `ExperimentKind` registered in the `fedclaims.kinds` entry-point group (the
project's own in its pyproject.toml) or named by a spec as `package.module:KIND` or
`path/to/file.py:KIND`; a metric for existing kinds is an `ExtensionMetric` in the
`fedclaims.metrics` group or named in a spec's `metrics` (`harness.extensions`).
"""
from __future__ import annotations

import functools
from dataclasses import replace

from harness.extensions import CodeScope, ExtensionPoint, UnknownExtension, code_scope
from harness.kinds.aggregates import with_client_aggregates
from harness.kinds.base import ExperimentKind, ExtensionMetric

KINDS: ExtensionPoint[ExperimentKind] = ExtensionPoint(
    "fedclaims.kinds", "experiment kind", lambda piece: isinstance(piece, ExperimentKind),
    "an ExperimentKind (harness.kinds.base)")
METRICS: ExtensionPoint[ExtensionMetric] = ExtensionPoint(
    "fedclaims.metrics", "metric", lambda piece: isinstance(piece, ExtensionMetric),
    "an ExtensionMetric (harness.kinds.base)")


def _with_metrics(declared: ExperimentKind, added: list[ExtensionMetric]) -> ExperimentKind:
    for extension in added:
        if declared.name not in extension.kinds:
            raise UnknownExtension(f"metric {extension.name!r} applies to {', '.join(extension.kinds)}, not to "
                                   f"kind {declared.name!r}")
        if extension.name in declared.metrics:
            raise UnknownExtension(f"metric {extension.name!r} is already a metric of kind {declared.name!r}")
    return with_client_aggregates(replace(declared, metrics={**declared.metrics,
                                                             **{m.name: m.metric for m in added}}))


def kind(reference: str, metrics: tuple[str, ...] = ()) -> ExperimentKind:
    """The kind `reference` names, with the registered metrics that apply to it, the metrics a spec
    names (`metrics`: references of `METRICS`) and the per-client aggregates."""
    return _kind(reference, metrics, code_scope())


@functools.cache
def _kind(reference: str, metrics: tuple[str, ...], scope: CodeScope) -> ExperimentKind:
    declared = KINDS.load(reference)
    registered = [METRICS.load(name) for name in METRICS.names()]
    return _with_metrics(declared, [m for m in registered if declared.name in m.kinds]
                         + [METRICS.load(name) for name in metrics])


PROJECT = "fedclaims"
"""The distribution whose entry points are the project's own pieces."""


def registered_kinds(distribution: str | None = None) -> dict[str, ExperimentKind]:
    """Every registered kind by name (every installed package's, or only `distribution`'s)."""
    return {name: kind(name) for name in KINDS.names(distribution)}

