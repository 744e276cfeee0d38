"""The claim vocabulary is a registry: every observation and expectation module's class is found by its key,
meets one contract, and is what the claim schema, the validator's key suggestions and docs/claims.md read."""
from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from harness.schema.base import discovered
from harness.schema.expectations import EXPECTATIONS, Expectation
from harness.schema.expectations.base import ExpectationBase
from harness.schema.observations import OBSERVATIONS, Observation


@pytest.mark.parametrize("key", sorted(EXPECTATIONS))
def test_every_expectation_names_its_field_documents_itself_and_reads_as_written(key: str) -> None:
    model = EXPECTATIONS[key]
    assert key in model.model_fields and model.doc.startswith(f"`{{{key}:")
    assert callable(model.describe) and callable(model.brief) and callable(model.decide)


@pytest.mark.parametrize("key", sorted(OBSERVATIONS))
def test_every_observation_names_its_field_and_documents_itself(key: str) -> None:
    model = OBSERVATIONS[key]
    assert key in model.model_fields and model.doc.startswith(f"`{{{key}:")


def test_every_observation_has_a_shape_and_every_shape_a_reader() -> None:
    """Readers dispatch on an observation's declared shape, never its class: an observation of a shape they
    read needs no other module."""
    from harness.schema.observations import Shape
    from harness.verdicts.observe import OBSERVERS

    assert all(isinstance(model.shape, Shape) for model in OBSERVATIONS.values())
    assert set(OBSERVERS) == set(Shape)


def test_readers_never_dispatch_on_an_observation_class() -> None:
    root = Path(__file__).resolve().parents[1] / "harness"
    classes = "|".join(model.__name__ for model in OBSERVATIONS.values())
    found = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(rf"isinstance\([^)]*\b({classes})\b", line)]
    assert found == []


def test_the_schema_unions_are_built_from_the_registry() -> None:
    between = TypeAdapter(Expectation).validate_python({"between": [0.1, 0.3]})
    assert type(between) is EXPECTATIONS["between"] and between.as_written() == "between: (0.1, 0.3)"
    assert type(TypeAdapter(Observation).validate_python({"metric": "m", "of": "a"})) is OBSERVATIONS["metric"]
    needs = "an expectation needs exactly one of the keys " + ", ".join(EXPECTATIONS)
    with pytest.raises(ValidationError, match=needs):
        TypeAdapter(Expectation).validate_python({"betwen": [0.1, 0.3]})


def _package(tmp_path: Path, name: str, modules: dict[str, str]) -> list[str]:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for module, source in modules.items():
        (folder / f"{module}.py").write_text(textwrap.dedent(source))
    sys.path.insert(0, str(tmp_path))
    return [str(folder)]


AT_LEAST = """
    from typing import ClassVar
    from harness.schema.expectations.base import ExpectationBase

    class AtLeast(ExpectationBase):
        key: ClassVar[str] = "at_least"
        doc: ClassVar[str] = "`{at_least: B}` — an example."
        at_least: float
"""


def test_a_new_expectation_module_is_found_by_its_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    path = _package(tmp_path, "extra_expectations", {"at_least": AT_LEAST})
    found = discovered("extra_expectations", path, ExpectationBase)
    assert list(found) == ["at_least"] and found["at_least"].__name__ == "AtLeast"


def test_two_classes_claiming_one_key_are_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    other = AT_LEAST.replace("class AtLeast", "class NoLessThan")
    path = _package(tmp_path, "clashing_expectations", {"a": AT_LEAST, "b": other})
    with pytest.raises(TypeError, match="NoLessThan and AtLeast both claim the key 'at_least'"):
        discovered("clashing_expectations", path, ExpectationBase)
