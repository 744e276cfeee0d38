"""docs/adding-a-paper.md's templates are code that runs, built from the public API alone.

Every ```python block of the page is written to a module of its own and imported; a block that
imports from `harness` or `methods` (the internal packages) fails the test, however it spells the
import. A block that declares a kind runs its example through the generic kind contract
(tests/test_kinds.py), so a template whose run or metrics break fails here too.
"""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from harness.kinds.base import ExperimentKind
from tests.test_kinds import example_record, read_everything

PAGE = Path(__file__).resolve().parent.parent / "docs" / "adding-a-paper.md"
INTERNAL = {"harness", "methods"}
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)


def _imported_packages(source: str) -> set[str]:
    packages = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            packages.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            packages.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            packages.add(str(node.args[0].value).split(".")[0])
    return packages


def test_the_page_has_its_templates() -> None:
    assert len(BLOCKS) >= 6


def test_the_import_check_sees_every_spelling() -> None:
    spellings = ["import harness.kinds", "from methods.federated import x", "from harness import kinds as k",
                 "import importlib\nimportlib.import_module('methods.seeding')"]
    assert all(_imported_packages(source) & INTERNAL for source in spellings)
    assert not _imported_packages("from fedclaims import Metric\nimport numpy") & INTERNAL


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_template_imports_only_the_public_api_and_runs(index: int, tmp_path: Path, monkeypatch) -> None:
    source = BLOCKS[index]
    assert not _imported_packages(source) & INTERNAL, f"template {index} imports an internal package"
    name = f"docs_template_{index}"
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    kind = getattr(module, "KIND", None)
    if isinstance(kind, ExperimentKind):
        values = read_everything(kind, example_record(kind))
        assert values, f"no metric of template {index}'s kind reads its example"
