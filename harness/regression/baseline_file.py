"""The shape of a regression baseline file, checked when it is read and before anything runs.

A baseline is committed JSON that people edit and merge; a section of the wrong type
(`"drift": "garbage"`, `"tolerance": {"absolute": "x"}`) must be named with its file and field
when the file is read, not surface as a traceback from the comparison after the selection has
trained. Only the fields the check reads are typed; others (a note, what `update` may add
later) pass through.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.errors import format_field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Tolerance(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    absolute: float | None = None
    relative: float | None = None


class Series(_Open):
    mean: float | None = None
    std: float | None = None
    n: int | None = None
    values: dict[str, float | None] = {}
    quantity: str | None = None
    numerics_invariant: bool = False


class Evidence(_Open):
    label: str
    statistic: float | None = None
    df: int | float | None = None
    pass_alpha: float | None = None
    fail_alpha: float | None = None
    se: float | None = None
    seeds: int = 0
    sources: list[str] = []
    fisher_z: bool = False
    sign_count: bool = False


class ClaimEntry(_Open):
    status: str
    experiment: str | None = None
    runs: str | None = None
    numerics: list[str] = []
    margins: dict[str, float | None] = {}
    evidence: list[Evidence] = []
    numbers: dict[str, Series] = {}
    tolerance: Tolerance | None = None
    compare: str | None = None


class SeriesDrift(_Open):
    rms: float
    count: int


class DriftGroup(_Open):
    rms: float
    count: int
    heterogeneity_p: float | None = None
    series: dict[str, SeriesDrift] = {}


class Drift(_Open):
    rule: str | None = None
    recordings: list[str] = []
    numerics: dict[str, list[str]] = {}
    groups: dict[str, DriftGroup] = {}


class BaselineFile(_Open):
    profile: str
    tolerance: Tolerance | None = None
    numerics: dict[str, Any] = {}
    claims: dict[str, ClaimEntry]
    drift: Drift | None = None


def problems(data: Any, path: Path) -> list[str]:
    """One line per field of `data` that a baseline cannot hold, naming the file and the field."""
    try:
        BaselineFile.model_validate(data)
    except ValidationError as error:
        return [f"{path}: {format_field(item['loc'])}: {item['msg']} (found {_shown(item.get('input'))})"
                for item in error.errors()]
    return []


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
