"""Imports run down the layers `harness.layers` declares, never up: every import statement of the project's
packages, at module level, under TYPE_CHECKING or inside a function; and docs/architecture.md lists the
same layers in the same order."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from harness.layers import LAYERS, layer_of
from tests.graph_helpers import cycles

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "methods", "fedclaims")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
            return [".".join([*base, *([node.module] if node.module else [])])]
        return [node.module] if node.module else []
    return []


def upward_imports(module: str, source: str, is_package: bool = False) -> list[str]:
    """'line: module -> target (layer -> layer)' for each import of `source` from a higher layer."""
    own = layer_of(module)
    found = []
    for node in ast.walk(ast.parse(source)):
        for target in _imported(node, module, is_package):
            theirs = layer_of(target)
            if own is not None and theirs is not None and theirs > own:
                found.append(f"{node.lineno}: {module} -> {target} ({LAYERS[own][0]} -> {LAYERS[theirs][0]})")
    return found


def _project_files() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_every_module_of_the_project_belongs_to_a_layer() -> None:
    unplaced = [_module_name(path) for path in _project_files()
                if _module_name(path) != "harness" and layer_of(_module_name(path)) is None]
    assert unplaced == []


def test_no_module_imports_from_a_higher_layer() -> None:
    violations = []
    for path in _project_files():
        module = _module_name(path)
        violations += [f"{path.relative_to(ROOT)}:{line}" for line in
                       upward_imports(module, path.read_text(encoding="utf-8"), path.name == "__init__.py")]
    assert violations == []


@pytest.mark.parametrize("source", [
    "from harness.report.markdown import render\n",
    "import harness.pipeline\n",
    "def f():\n    from harness.verdicts.verify import Verdict\n    return Verdict\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from harness.loading.catalog import Catalog\n",
])
def test_the_check_sees_an_import_from_a_higher_layer_wherever_it_is(source: str) -> None:
    assert len(upward_imports("harness.statistics.stats", source)) == 1


def test_the_check_lets_imports_run_down_and_within_a_layer() -> None:
    source = "from harness.statistics.stats import POWER\nfrom harness.design import readings\nimport math\n"
    assert upward_imports("harness.schema.claim", source) == []
    assert upward_imports("harness.statistics.values", "from . import evidence\n") == []


def test_a_module_sits_in_the_layer_of_its_longest_prefix() -> None:
    names = [name for name, _ in LAYERS]
    assert names[layer_of("harness.schema.base")] == "model base"
    assert names[layer_of("harness.schema.claim")] == "schema"
    assert layer_of("numpy") is None


def test_the_architecture_document_lists_the_declared_layers_in_order() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| layer")]
    documented = [(cells[0], tuple(re.findall(r"`([\w.]+)`", cells[1])))
                  for cells in ([c.strip() for c in row.strip("|").split("|")] for row in rows)]
    assert documented == [(name, prefixes) for name, prefixes in LAYERS]


def _resolved(target: str, modules: set[str]) -> str | None:
    """The project module an import names (`from a.b import c` names a.b.c where that is a module, else a.b)."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the project modules it imports, every import statement counted (TYPE_CHECKING and
    function-level ones too), `from a import b` resolved to the module a.b where there is one."""
    modules = set(sources)
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, (source, is_package) in sources.items():
        for node in ast.walk(ast.parse(source)):
            names = [f"{base}.{alias.name}" for base in _imported(node, module, is_package)
                     for alias in getattr(node, "names", [])] if isinstance(node, ast.ImportFrom) else []
            for target in [*_imported(node, module, is_package), *names]:
                found = _resolved(target, modules)
                if found is not None and found != module and not module.startswith(f"{found}."):
                    graph[module].add(found)
    return graph


def test_no_import_cycle_inside_a_layer_type_checking_included() -> None:
    sources = {_module_name(path): (path.read_text(encoding="utf-8"), path.name == "__init__.py")
               for path in _project_files()}
    assert cycles(import_graph(sources)) == []


def test_the_cycle_check_sees_a_cycle_through_type_checking() -> None:
    sources = {"harness.report.a": ("from harness.report.b import x\n", False),
               "harness.report.b": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                    "    from harness.report import a\n", False)}
    assert cycles(import_graph(sources)) == [["harness.report.a", "harness.report.b"]]
