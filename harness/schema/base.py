"""The strict base model every YAML object derives from, and the registry of the claim vocabulary: the classes a
package's modules define by their key (`discovered`), and the pydantic union tagged by those keys (`tagged_union`)."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Annotated, Any, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Discriminator, StringConstraints, Tag, model_validator
from pydantic_core import PydanticCustomError

from harness.errors import did_you_mean

Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]

# Sizes no paper's design comes near; a file beyond them is a mistake (a generated list gone wrong) and
# would otherwise hold `validate` for minutes or hours.
MAX_SEEDS = 1_000
"""Seeds of a profile or a study."""
MAX_STUDY_POINTS = 100
"""Points on a study's axis (each one a whole profile's runs)."""
MAX_LISTED = 200
"""Variants of a spec, variants one observation or one order names; a claim file holds ten times as many claims."""


class StrictModel(BaseModel):
    """Unknown keys are errors, reported with the closest valid key."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = set()
            for name, info in cls.model_fields.items():
                allowed.add(info.alias or name)
            for key in data:
                if key not in allowed:
                    raise PydanticCustomError(
                        "unknown_field", "unknown field '{field}'{hint}",
                        {"field": key, "hint": did_you_mean(str(key), allowed)})
        return data


Model = TypeVar("Model", bound=BaseModel)


def first_key(keys: tuple[str, ...]):
    """The discriminator of a union tagged by which of `keys` a mapping (or a model) holds first."""
    def tag(value: Any) -> str | None:
        if isinstance(value, dict):
            return next((k for k in keys if k in value), None)
        return next((k for k in keys if hasattr(value, k) and k in type(value).model_fields), None)
    return tag


def discovered(package: str, path: list[str], base: type[Model]) -> dict[str, type[Model]]:
    """The subclasses of `base` a package's modules define with their own `key`, by key: each module of the
    package in name order, each class in the order the module defines them."""
    found: dict[str, type[Model]] = {}
    for info in sorted(pkgutil.iter_modules(path), key=lambda module: module.name):
        module = importlib.import_module(f"{package}.{info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, base) and value.__module__ == module.__name__
                    and "key" in vars(value)):
                key = vars(value)["key"]
                if key in found:
                    raise TypeError(f"{value.__name__} and {found[key].__name__} both claim the key {key!r}")
                found[key] = value
    return found


def tagged_union(models: dict[str, type], error_type: str, what: str) -> Any:
    """The pydantic union of `models`, told apart by which of their keys a claim file's mapping holds."""
    keys = tuple(models)
    members = tuple(Annotated[model, Tag(key)] for key, model in models.items())
    return Annotated[Union[members], Discriminator(  # noqa: UP007 - a union built from a tuple of members
        first_key(keys), custom_error_type=error_type,
        custom_error_message=f"{what} needs exactly one of the keys " + ", ".join(keys))]
