"""Pydantic's validation errors as problems at a file, line and field, with the closest valid name for a
misspelling."""
from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from harness.errors import Problem, closest, did_you_mean, format_field, unknown
from harness.loading.configs import settings_at
from harness.loading.yamlsource import Document
from harness.schema.expectations import EXPECTATION_KEYS
from harness.schema.observations import OBSERVATION_KEYS

TAGS = set(OBSERVATION_KEYS) | set(EXPECTATION_KEYS)


def _data_path(data: Any, loc: tuple) -> tuple[str | int, ...]:
    """Map a pydantic error location onto keys of the data, dropping union tags."""
    path: list[str | int] = []
    node = data
    parts = list(loc)
    for index, part in enumerate(parts):
        at_union = path[-1:] == ["observe"] or path[-2:-1] == ["expect"]
        if at_union and part in TAGS and index > 0 and parts[index - 1] == path[-1]:
            continue
        if isinstance(node, dict) and part in node:
            child = node[part]
            path.append(part)
            node = child
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(part)
            node = node[part]
    return tuple(path)


def _message(error: ErrorDetails, model: type[BaseModel] | None = None) -> tuple[str, tuple]:
    """The message of one pydantic error and any extra path element it points at. With the model
    that was validated (a kind's Config), an unknown key gets the closest setting at its level."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "unknown_field":
        return error["msg"], (ctx["field"],)
    if kind == "extra_forbidden" and model is not None and error["loc"]:
        key = error["loc"][-1]
        return f"unknown setting {str(key)!r}{did_you_mean(str(key), settings_at(model, error['loc'][:-1]))}", ()
    if kind in ("observation_kind", "expectation_kind") and isinstance(error.get("input"), dict):
        valid = OBSERVATION_KEYS if kind == "observation_kind" else EXPECTATION_KEYS
        for key in error["input"]:
            match = closest(str(key), valid)
            if match:
                return f"{error['msg']}; found {key!r}, did you mean {match!r}?", (key,)
        return error["msg"], ()
    if kind == "enum" and error["loc"]:
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return unknown(str(error["loc"][-1]), error.get("input"), expected), ()
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return error["msg"] + did_you_mean(str(error.get("input")), expected).replace(" (valid", " (expected"), ()
    if kind == "union_tag_invalid":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        field = re.fullmatch(r"'(\w+)'", str(ctx.get("discriminator", "")))
        return error["msg"] + did_you_mean(str(ctx.get("tag")), expected), (field[1],) if field else ()
    if kind == "missing":
        return "required field is missing", ()
    return error["msg"], ()


def problems_from(error: ValidationError, doc: Document, root: tuple = (), data: Any = None) -> list[Problem]:
    problems = []
    data = doc.data if data is None else data
    for item in error.errors():
        message, extra = _message(item)
        path = (*root, *_data_path(data, item["loc"]), *extra)
        if item["type"] == "missing":
            path = (*path, item["loc"][-1]) if item["loc"] else path
            problems.append(Problem(doc.file, doc.line_of(path[:-1]), format_field(path), message))
        else:
            problems.append(doc.problem(path, message))
    return problems


def argument_problems(model: type[BaseModel], args: Any, doc: Document, root: tuple) -> list[Problem]:
    """The problems of a metric's arguments under its `args` model, whatever that model's base: an unknown
    key is one line with the closest valid one (and not, besides, the field it misspells as missing)."""
    if isinstance(args, dict) and model.model_config.get("extra") != "allow":
        valid = {info.alias or name for name, info in model.model_fields.items()}
        unknown_keys = [key for key in args if key not in valid]
        if unknown_keys:
            return [doc.problem((*root, key), f"unknown field {str(key)!r}{did_you_mean(str(key), valid)}")
                    for key in unknown_keys]
    try:
        model.model_validate(args)
    except ValidationError as error:
        return problems_from(error, doc, root, args)
    return []


def config_location(doc: Document, variant: str, profile: str, loc: tuple) -> tuple:
    """The file position that set a value of a resolved config (the last layer that spells it out)."""
    candidates = [("profiles", profile, "variant_overrides", variant, *loc),
                  ("variants", variant, "config", *loc),
                  ("profiles", profile, "overrides", *loc),
                  ("config", *loc)]
    exact = next((c for c in candidates if c in doc.lines), None)
    return exact or max(candidates, key=lambda c: len(existing_prefix(doc, c)))


def config_problems(error: ValidationError, model: type[BaseModel], doc: Document, variant: str, profile: str,
                     merged: dict) -> list[Problem]:
    """Problems of a resolved config of `model`, placed at the file position that set the value."""
    problems = []
    for item in error.errors():
        message, extra = _message(item, model)
        loc = (*_data_path(merged, item["loc"]), *extra)
        if item["type"] == "missing":
            loc_text = format_field((*loc, item["loc"][-1]))
            message = f"required field {loc_text!r} is missing (variant {variant!r}, profile {profile!r})"
            problems.append(doc.problem(("config",), message))
            continue
        path = config_location(doc, variant, profile, loc)
        problems.append(doc.problem(path, f"{message} (variant {variant!r}, profile {profile!r})"))
    return problems


def existing_prefix(doc: Document, path: tuple) -> tuple:
    while path and path not in doc.lines:
        path = path[:-1]
    return path


# --- loading ------------------------------------------------------------------
