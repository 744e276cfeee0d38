"""The layers of the code, lowest first: a module imports only from its own layer or lower ones, at module
level or inside a function (tests/test_layers.py reads every import). A module belongs to the layer whose
longest prefix names it, so `harness.schema.base` sits below the rest of `harness.schema`.
docs/architecture.md's layer table lists these, in this order."""
from __future__ import annotations

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("methods", ("methods",)),
    ("foundation", ("harness.errors", "harness.numerics", "harness.provenance", "harness.behaviour")),
    ("extension points and settings", ("harness.extensions", "harness.settings")),
    ("data sets", ("harness.datasets",)),
    ("runners", ("harness.runners",)),
    ("model base", ("harness.schema.base",)),
    ("kinds", ("harness.kinds",)),
    ("statistics", ("harness.statistics",)),
    ("design", ("harness.design",)),
    ("schema", ("harness.schema",)),
    ("loading", ("harness.loading",)),
    ("running", ("harness.running",)),
    ("verdicts", ("harness.verdicts",)),
    ("pipeline", ("harness.pipeline",)),
    ("sequential", ("harness.sequential",)),
    ("regression", ("harness.regression",)),
    ("report", ("harness.report",)),
    ("entry points", ("harness.audit", "harness.pytest_plugin", "harness.cli", "harness.layers")),
    ("public API", ("fedclaims",)),
)


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the layer a dotted module name belongs to (None: not one of the project's)."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]
