"""A spec's configs: layers merged into one config, and dotted paths (`data.max_train_per_client`)
into a config and its kind's Config model."""
from __future__ import annotations

import copy
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


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models a field annotation admits (through Optional, Union, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def _is_mapping(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (dict, typing.Union) or annotation is dict:
        return origin is dict or annotation is dict or any(_is_mapping(a) for a in typing.get_args(annotation))
    return origin is typing.Annotated and _is_mapping(typing.get_args(annotation)[0])


def path_problem(model: type[BaseModel], dotted: str) -> str | None:
    """Why a dotted path names no setting of `model` (None if it does)."""
    models = [model]
    parts = dotted.split(".")
    for depth, part in enumerate(parts):
        fields = {name: info for m in models for name, info in m.model_fields.items()}
        if part not in fields:
            where = ".".join(parts[:depth]) or "the config"
            return f"unknown config path {dotted!r}: {where} has no setting {part!r}{did_you_mean(part, fields)}"
        annotation = fields[part].annotation
        models = _models_in(annotation)
        if not models and depth < len(parts) - 1:
            if _is_mapping(annotation):
                return None
            return f"unknown config path {dotted!r}: {'.'.join(parts[:depth + 1])} is a value, not a section"
    return None
