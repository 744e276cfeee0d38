"""The parts of a federated method a spec names (policy, objective, round hook), and their settings.

In a spec a part is its name (`policy: heterofl`) or a mapping of its name and settings
(`policy: {name: hasfl, p_min: 0.4}`); the name is a reference of the part's extension point
(`harness.extensions`: an entry point, `package.module:Class` or `path/to/file.py:Class`). The
settings are validated against the part's own `Settings`, so a field that belongs to another
part is refused with what it belongs to. The validated value is the name with every setting,
defaults included, so that the config a run is keyed by says everything the part computes with.
A setting may be a `{match: <variant>, metric: <metric>}` reference, resolved by planning.
"""
from __future__ import annotations

import functools
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationError, create_model
from pydantic_core import InitErrorDetails, PydanticCustomError

from harness.errors import unknown
from harness.extensions import ExtensionPoint, UnknownExtension
from methods.federated.objectives import LocalObjective
from methods.federated.parts import Choice, Part, Settings
from methods.federated.policies import AllocationPolicy
from methods.federated.rounds import RoundHook


def _subclass_of(base: type) -> Any:
    return lambda piece: isinstance(piece, type) and issubclass(piece, base)


POLICIES: ExtensionPoint[type[AllocationPolicy]] = ExtensionPoint(
    "fedclaims.policies", "allocation policy", _subclass_of(AllocationPolicy),
    "a subclass of methods.federated.policies.AllocationPolicy")
OBJECTIVES: ExtensionPoint[type[LocalObjective]] = ExtensionPoint(
    "fedclaims.objectives", "local objective", _subclass_of(LocalObjective),
    "a subclass of methods.federated.objectives.LocalObjective")
ROUND_HOOKS: ExtensionPoint[type[RoundHook]] = ExtensionPoint(
    "fedclaims.round_hooks", "round hook", _subclass_of(RoundHook),
    "a subclass of methods.federated.rounds.RoundHook")


def is_reference(value: Any) -> bool:
    """A `{match: <variant>, metric: <metric>}` value (another run's metric, resolved by planning)."""
    return isinstance(value, dict) and set(value) == {"match", "metric"}


def _owners(point: ExtensionPoint, setting: str) -> list[str]:
    """The registered parts that have a setting of this name."""
    owners = []
    for name in point.names():
        try:
            if setting in point.load(name).Settings.model_fields:
                owners.append(name)
        except UnknownExtension:
            continue
    return owners


def _unknown_setting(point: ExtensionPoint, name: str, part: type[Part], setting: str, value: Any) -> InitErrorDetails:
    fields = list(part.Settings.model_fields)
    message = f"{point.what} {name!r}: " + (unknown("setting", setting, fields) if fields else
                                            f"it has no settings, so not {setting!r}")
    owners = [owner for owner in _owners(point, setting) if owner != name]
    if owners:
        message += f" ({setting!r} is a setting of {', '.join(owners)})"
    return _error(message, (setting,), value)


def _error(message: str, loc: tuple, value: Any) -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError("unknown_setting", message), loc=loc, input=value)


def _reference_problems(key: str, value: dict) -> list[InitErrorDetails]:
    """A setting meant as a `{match: <variant>, metric: <metric>}` reference with another key."""
    return [_error(unknown("key of a reference", extra, ("match", "metric")), (key, extra), value[extra])
            for extra in value if extra not in ("match", "metric")]


def _validated(point: ExtensionPoint, value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise PydanticCustomError("part", "a {what} is its name, or a mapping of `name` and its settings",
                                  {"what": point.what})
    name = value["name"]
    given = {key: setting for key, setting in value.items() if key != "name"}
    try:
        part = point.load(name)
    except UnknownExtension as error:
        raise PydanticCustomError("unknown_part", "{error}", {"error": str(error)}) from None
    problems = [_unknown_setting(point, name, part, key, setting) for key, setting in given.items()
                if key not in part.Settings.model_fields]
    problems += [problem for key, setting in given.items()
                 if isinstance(setting, dict) and {"match", "metric"} & set(setting)
                 for problem in _reference_problems(key, setting)]
    if problems:
        raise ValidationError.from_exception_data(part.Settings.__name__, problems)
    referenced = frozenset(key for key, setting in given.items() if is_reference(setting))
    return {"name": name, **_settings_model(part, referenced).model_validate(given).model_dump(mode="json")}


@functools.cache
def _settings_model(part: type[Part], referenced: frozenset[str]) -> type[Settings]:
    """The part's settings, with the settings given as references taken as they are (planning
    resolves them to numbers before the run is keyed, and validates them then)."""
    if not referenced:
        return part.Settings
    return create_model(  # type: ignore[call-overload]  # fields built at runtime
        part.Settings.__name__, __base__=part.Settings,
                        **{key: (dict[str, str], ...) for key in sorted(referenced)})


def part_field(point: ExtensionPoint) -> Any:
    """The pydantic type of a spec field naming one part of `point` with its settings."""
    return Annotated[dict[str, Any], BeforeValidator(lambda value: _validated(point, value))]


def choice(point: ExtensionPoint, value: dict[str, Any]) -> Choice:
    """The part a validated field value names, with its settings (references resolved by now)."""
    part = point.load(value["name"])
    return Choice(part, part.Settings.model_validate({k: v for k, v in value.items() if k != "name"}))
