"""A spec's configs: layers merged into one config, and dotted paths (`data.max_train_per_client`)
into a config and its kind's Config model."""
from __future__ import annotations

import collections.abc
import copy
import types
import typing
from typing import Any

from pydantic import BaseModel

from harness.errors import did_you_mean
from harness.schema.spec import ExperimentSpec


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Recursively merged copy; mappings merge key by key, anything else is replaced."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def resolved_config(spec: ExperimentSpec, variant: str, profile: str) -> dict[str, Any]:
    """base config <- profile overrides <- variant config <- profile's override of that variant."""
    prof = spec.profiles[profile]
    config = deep_merge(spec.config, prof.overrides)
    config = deep_merge(config, spec.variants[variant].config)
    return deep_merge(config, prof.variant_overrides.get(variant, {}))


def nested(settings: dict[str, Any]) -> dict[str, Any]:
    """{'a.b': 1, 'a.c': 2} -> {'a': {'b': 1, 'c': 2}}."""
    tree: dict[str, Any] = {}
    for dotted, value in settings.items():
        *parents, leaf = dotted.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = copy.deepcopy(value)
    return tree


def sets_path(config: dict[str, Any], dotted: str) -> bool:
    """Whether a (partial) config spells out the value at a dotted path."""
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _alternatives(annotation: Any) -> list[Any]:
    """The types an annotation admits, through Annotated, Optional and unions (None left out)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _alternatives(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [option for arg in typing.get_args(annotation) for option in _alternatives(arg)]
    return [] if annotation is type(None) else [annotation]


def _is_model(option: Any) -> bool:
    return isinstance(option, type) and issubclass(option, BaseModel)


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    """A model's settings by the key a config spells them with."""
    return {info.alias or name: info.annotation for name, info in model.model_fields.items()}


def _tags(model: type[BaseModel]) -> set[str]:
    """What pydantic names a union member in an error's location: its class, or its discriminator value."""
    literals = [typing.get_args(a) for a in _fields(model).values() if typing.get_origin(a) is typing.Literal]
    return {model.__name__} | {str(value) for values in literals for value in values}


def _inside(annotation: Any, part: str | int) -> list[Any]:
    """The types a value of `annotation` may hold at `part`: a model's field, a union member
    (named by its tag), a list's item, a mapping's value."""
    found = []
    for option in _alternatives(annotation):
        origin, args = typing.get_origin(option), typing.get_args(option)
        if _is_model(option):
            fields = _fields(option)
            if part in fields:
                found.append(fields[part])
            elif part in _tags(option):
                found.append(option)
        elif origin in (list, set, frozenset, collections.abc.Sequence) and isinstance(part, int) and args:
            found.append(args[0])
        elif origin is tuple and isinstance(part, int) and args:
            found.append(args[0] if args[-1] is Ellipsis else args[part] if part < len(args) else None)
        elif origin in (dict, collections.abc.Mapping) and len(args) == 2:
            found.append(args[1])
    return [a for a in found if a is not None]


def _settings_of(annotations: list[Any]) -> list[str]:
    """The keys the models among these types accept (none: not a section of settings)."""
    return sorted({key for a in annotations for option in _alternatives(a) if _is_model(option)
                   for key in _fields(option)})


def settings_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys a config of `model` may spell at a pydantic error location (union tags included,
    as pydantic puts them: `('model', 'conv')` is the conv member of the `model` union)."""
    annotations: list[Any] = [model]
    for part in loc:
        annotations = [inner for a in annotations for inner in _inside(a, part)]
    return _settings_of(annotations)


def _is_mapping(annotations: list[Any]) -> bool:
    return any(typing.get_origin(option) in (dict, collections.abc.Mapping) or option is dict
               for a in annotations for option in _alternatives(a))


def path_problem(model: type[BaseModel], dotted: str) -> str | None:
    """Why a dotted path names no setting of `model` (None if it does)."""
    annotations: list[Any] = [model]
    parts = dotted.split(".")
    for depth, part in enumerate(parts):
        settings = _settings_of(annotations)
        if part not in settings:
            where = ".".join(parts[:depth]) or "the config"
            return f"unknown config path {dotted!r}: {where} has no setting {part!r}{did_you_mean(part, settings)}"
        annotations = [inner for a in annotations for option in _alternatives(a) if _is_model(option)
                       for inner in _inside(option, part)]
        if depth < len(parts) - 1 and not _settings_of(annotations):
            if _is_mapping(annotations):
                return None
            return f"unknown config path {dotted!r}: {'.'.join(parts[:depth + 1])} is a value, not a section"
    return None
