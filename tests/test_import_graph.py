"""The project's runtime import graph has no cycle.

An edge is an `import` or `from ... import` of a project module anywhere in a module (inside
functions included), except under `if TYPE_CHECKING:`. `from package import name` counts as an
edge to `package.name` where that is a module, else to `package`. The implicit import of a
package's `__init__` when one of its modules is imported is not an edge (a package that imports
its own modules would otherwise always be a cycle).
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.graph_helpers import cycles

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "methods", "fedclaims")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for file in (ROOT / package).rglob("*.py"):
            parts = list(file.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = file
    return found


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
                                         or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(node: ast.AST):
    for child in ast.iter_child_nodes(node):
        if _is_type_checking(child):
            for statement in child.orelse:
                yield statement
                yield from _runtime_nodes(statement)
            continue
        yield child
        yield from _runtime_nodes(child)


def _edges(name: str, file: Path, modules: dict[str, Path]) -> set[str]:
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in _runtime_nodes(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            targets.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names)
    return {target for target in targets if target in modules and target != name}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _edges(name, file, modules) for name, file in modules.items()}


def test_the_runtime_import_graph_has_no_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_edges_include_imports_inside_functions_but_not_type_checking_blocks(tmp_path: Path) -> None:
    file = tmp_path / "module.py"
    file.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import harness.verdicts.verify\n"
                    "def f():\n    from harness.running import store\n    import harness.running.planning\n")
    modules = _modules()
    assert _edges("harness.example", file, modules) == {"harness.running.store", "harness.running.planning"}
