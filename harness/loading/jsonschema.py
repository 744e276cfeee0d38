"""JSON Schema of claim and spec files, so editors can validate YAML as it is typed."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter, create_model

from harness.kinds import registered_kinds
from harness.schema.claim import ClaimFile
from harness.schema.spec import ExperimentSpec


def spec_schema() -> dict:
    """Spec files, with `config` typed by the experiment kind named in `kind`."""
    members = []
    for name, kind in registered_kinds().items():
        members.append(create_model(f"Spec_{name}", __base__=ExperimentSpec,
                                    kind=(Literal[name], ...),  # type: ignore[arg-type]  # name known at runtime
                                    config=(kind.config_model, ...)))
    # The members are known at runtime only: typing.Union spells a union of a tuple of them, X | Y cannot.
    union: Any = Annotated[Union[tuple(members)], Field(discriminator="kind")]  # noqa: UP007
    schema = TypeAdapter(union).json_schema()
    schema["title"] = "fedclaims experiment spec"
    return schema


def write_schemas(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    claims = ClaimFile.model_json_schema()
    claims["title"] = "fedclaims claim file"
    paths = []
    for name, schema in (("claims.schema.json", claims), ("spec.schema.json", spec_schema())):
        path = out / name
        path.write_text(json.dumps(schema, indent=1) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
