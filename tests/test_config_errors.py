"""A kind's config, as a new user misspells it: each problem at its file, line and field, with the
closest valid name (a setting at its nesting level, an enum's or literal's value) and, once per
spec, not once per claim that reads it."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated, Literal, Optional, Union

import pytest
from pydantic import BaseModel, ConfigDict, Field

from harness.errors import Problem, SpecError, unknown
from harness.loading.catalog import load_catalog
from harness.loading.configs import path_problem, settings_at

REPO = Path(__file__).resolve().parents[1]
SPEC = "specs/hasfl-cifar10.yaml"


def _problems(project: Path) -> list[Problem]:
    with pytest.raises(SpecError) as raised:
        load_catalog(project / "claims", project / "specs", project)
    return raised.value.problems


def _spec_alone(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """A project holding only the CIFAR-10 spec with `old` replaced by `new`; the line `new` starts on."""
    (tmp_path / "claims").mkdir(parents=True)
    (tmp_path / "specs").mkdir()
    text = (REPO / SPEC).read_text(encoding="utf-8")
    assert text.count(old) == 1
    (tmp_path / SPEC).write_text(text.replace(old, new), encoding="utf-8")
    return tmp_path, text[:text.index(old)].count("\n") + 1


def _one_problem(tmp_path: Path, old: str, new: str) -> tuple[Problem, int]:
    project, line = _spec_alone(tmp_path, old, new)
    problems = _problems(project)
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0], line


def _problem_at(tmp_path: Path, old: str, new: str, field: str) -> tuple[Problem, int]:
    """The problem at `field` (a misspelt key may leave a required one missing, or fail other union members)."""
    project, line = _spec_alone(tmp_path, old, new)
    problems = _problems(project)
    found = [p for p in problems if p.field == field]
    assert len(found) == 1, "\n".join(map(str, problems))
    return found[0], line


# --- closest setting at the error's nesting level -------------------------------------


def test_a_misspelt_setting_of_a_section_gets_the_closest_setting_of_that_section(tmp_path: Path) -> None:
    problem, line = _one_problem(tmp_path, "federation:\n    num_clients", "federation:\n    num_client")
    assert (str(problem.file), problem.field) == (SPEC, "config.federation.num_client")
    assert problem.message.startswith("unknown setting 'num_client'; did you mean 'num_clients'?")


def test_a_misspelt_setting_of_a_method_part_gets_the_closest_of_its_own_settings(tmp_path: Path) -> None:
    problem, line = _one_problem(tmp_path, "t_adapt: 5, coverage_guarantee: true}",
                                 "t_adpt: 5, coverage_guarantee: true}")
    assert (str(problem.file), problem.field) == (SPEC, "variants.hasfl.config.federation.policy.t_adpt")
    assert problem.line == line
    assert problem.message.startswith("allocation policy 'hasfl': unknown setting 't_adpt'; did you mean 't_adapt'?")


def test_a_setting_of_another_part_is_refused_naming_the_part_it_belongs_to(tmp_path: Path) -> None:
    problem, line = _one_problem(tmp_path, "config: {federation: {policy: heterofl}}\n",
                                 "config: {federation: {policy: {name: heterofl, p_min: 0.4}}}\n")
    assert (problem.line, problem.field) == (line, "variants.heterofl.config.federation.policy.p_min")
    assert problem.message.startswith("allocation policy 'heterofl': it has no settings, so not 'p_min' ('p_min' "
                                      "is a setting of hasfl)")


def test_a_misspelt_setting_inside_a_tagged_union_is_matched_against_the_chosen_member(tmp_path: Path) -> None:
    problem, line = _problem_at(tmp_path, "{arch: conv, hidden:", "{arch: conv, hiden:", "config.model.hiden")
    assert problem.line == line
    assert "did you mean 'hidden'?" in problem.message
    far, _ = _one_problem(tmp_path / "far", "{arch: conv, hidden:", "{arch: conv, zzz: 1, hidden:")
    valid = "arch, batchnorm_eps_exponent, hidden, image_size, in_channels, num_classes, width_scale"
    assert f"unknown setting 'zzz' (valid: {valid})" in far.message
    assert "seq_len" not in far.message  # the char_lstm member's settings are not the conv model's


def test_a_misspelt_setting_inside_a_plain_union_is_matched_against_its_models(tmp_path: Path) -> None:
    field = "variants.random-budget.config.federation.policy.budget.metrc"
    problem, line = _problem_at(tmp_path, "budget: {match: hasfl, metric: mean_capacity}",
                                "budget: {match: hasfl, metric: mean_capacity, metrc: 1}", field)
    assert problem.line == line
    assert "unknown key of a reference 'metrc'; did you mean 'metric'?" in problem.message


class Leaf(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rate: float = 0.1
    renamed: int = Field(0, alias="per-round")


class Cat(BaseModel):
    model_config = ConfigDict(extra="forbid")
    animal: Literal["cat"]
    whiskers: int = 1


class Dog(BaseModel):
    model_config = ConfigDict(extra="forbid")
    animal: Literal["dog"]
    bark: str = "woof"


class Root(BaseModel):
    """Every way a field holds a model; `typing.Union` and `X | Y` spellings both (they differ at runtime)."""

    model_config = ConfigDict(extra="forbid")
    leaf: Optional[Leaf] = None  # noqa: UP045
    leaves: list[Leaf] = []
    named: dict[str, Leaf] = {}
    pair: tuple[Leaf, Cat] | None = None
    pet: Annotated[Union[Cat, Dog], Field(discriminator="animal")]  # noqa: UP007
    either: Leaf | Dog | float = 0.0
    free: dict[str, float] = {}


@pytest.mark.parametrize("loc, settings", [
    ((), ["either", "free", "leaf", "leaves", "named", "pair", "pet"]),
    (("leaf",), ["per-round", "rate"]),
    (("leaves", 3), ["per-round", "rate"]),
    (("named", "any"), ["per-round", "rate"]),
    (("pair", 1), ["animal", "whiskers"]),
    (("pet", "dog"), ["animal", "bark"]),
    (("pet",), ["animal", "bark", "whiskers"]),
    (("either", "Leaf"), ["per-round", "rate"]),
    (("free",), []),
    (("leaf", "rate"), []),
    (("nothing",), []),
])
def test_settings_are_read_from_any_model_along_an_error_location(loc: tuple, settings: list[str]) -> None:
    assert settings_at(Root, loc) == settings


def test_every_extra_key_pydantic_rejects_is_located_among_the_settings_of_its_level() -> None:
    from pydantic import ValidationError
    data = {"leaf": {"rat": 1}, "leaves": [{}, {"per_round": 2}], "named": {"a": {"rates": 1}},
            "pet": {"animal": "dog", "barks": "x"}, "either": {"animal": "dog", "brak": "y"}}
    with pytest.raises(ValidationError) as raised:
        Root.model_validate(data)
    extras = [e["loc"] for e in raised.value.errors() if e["type"] == "extra_forbidden"]
    assert {loc[-1] for loc in extras} == {"rat", "per_round", "rates", "barks", "brak", "animal"}
    for loc in extras:
        assert settings_at(Root, loc[:-1]), loc


def test_a_dotted_path_is_checked_through_the_same_models() -> None:
    assert path_problem(Root, "leaf.rate") is None
    assert path_problem(Root, "free.anything") is None
    assert "did you mean 'rate'?" in path_problem(Root, "leaf.rat")
    assert "leaf.rate is a value, not a section" in path_problem(Root, "leaf.rate.x")


# --- enum and literal values ----------------------------------------------------------


def test_a_misspelt_objective_names_its_setting_the_closest_and_every_valid_value(tmp_path: Path) -> None:
    problem, line = _one_problem(tmp_path, "objective: {name: fedprox,", "objective: {name: fedprx,")
    assert (problem.line, problem.field) == (line, "variants.fedprox.config.federation.objective")
    assert problem.message.startswith("unknown local objective 'fedprx'; did you mean 'fedprox'? valid: fedprox, "
                                      "scaffold, sgd (registered in fedclaims.objectives)")


@pytest.mark.parametrize("setting, wrong, closest, valid", [
    ("weighting", "sample", "samples", "samples"),
    ("extraction", "prefx", "prefix", "prefix"),
    ("client_execution", "batch", "batched", "sequential"),
])
def test_every_enum_setting_of_the_federation_lists_its_values(tmp_path: Path, setting, wrong, closest,
                                                                valid) -> None:
    problem, _ = _one_problem(tmp_path, "    weighting: samples\n", f"    weighting: samples\n    {setting}: {wrong}\n"
                              if setting != "weighting" else f"    weighting: {wrong}\n")
    assert problem.field == f"config.federation.{setting}"
    assert f"unknown {setting} {wrong!r}; did you mean {closest!r}? valid: " in problem.message
    assert valid in problem.message.split("valid: ")[1]


def test_a_literal_error_keeps_the_values_pydantic_lists_and_suggests_one(tmp_path: Path) -> None:
    problem, line = _one_problem(tmp_path, "    name: cifar10\n", "    name: cifar\n")
    assert (problem.line, problem.field) == (line, "config.data.name")
    assert "'cifar10', 'emnist' or 'shakespeare'; did you mean 'cifar10'?" in problem.message


def test_a_misspelt_union_tag_is_placed_at_the_tag_with_the_closest_one(tmp_path: Path) -> None:
    problem, line = _one_problem(tmp_path, "{arch: conv,", "{arch: con,")
    assert (problem.line, problem.field) == (line, "config.model.arch")
    assert "'conv', 'preresnet18', 'char_lstm'; did you mean 'conv'?" in problem.message


def test_the_unknown_name_message() -> None:
    assert unknown("plot", "zzz", ["a", "b"]) == "unknown plot 'zzz'; valid: a, b"
    assert unknown("objective", "fedprx", ["sgd", "fedprox"]) == ("unknown objective 'fedprx'; did you mean "
                                                                  "'fedprox'? valid: sgd, fedprox")


# --- one problem per spec ---------------------------------------------------------------


def test_a_broken_spec_is_one_problem_not_one_per_claim_that_reads_it(tmp_path: Path) -> None:
    shutil.copytree(REPO / "claims", tmp_path / "claims")
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    text = (tmp_path / SPEC).read_text(encoding="utf-8")
    (tmp_path / SPEC).write_text(text.replace("objective: {name: fedprox,", "objective: {name: fedprx,"),
                                 encoding="utf-8")
    catalog = load_catalog(REPO / "claims", REPO / "specs", REPO)
    readers = [c for c in catalog.claims if c.claim.experiment == "hasfl-cifar10"]
    assert len(readers) > 2

    problems = _problems(tmp_path)
    assert [str(p.file) for p in problems] == [SPEC, "claims/hasfl.yaml"], "\n".join(map(str, problems))
    spec_problem, claim_problem = problems
    assert spec_problem.field == "variants.fedprox.config.federation.objective"
    first = readers[0]
    assert claim_problem.field == f"claims[{first.path[1]}].experiment"
    assert claim_problem.line == first.doc.line_of((*first.path, "experiment"))
    assert f"{len(readers) - 1} more claims of this file read it" in claim_problem.message
