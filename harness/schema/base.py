"""The strict base model every YAML object derives from."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints, model_validator
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
