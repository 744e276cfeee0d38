"""A claim's verdict at a profile: its status, the numbers and comparisons it rests on, and why."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Verdict:
    claim: str
    paper: str
    profile: str
    experiment: str
    source: str
    statement: str
    expectation: str
    status: str
    reason: str
    observed: str = ""
    numbers: dict[str, Any] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)
    power: dict[str, Any] | None = None
    data_unavailable: bool = False
    """SKIPPED because a data set the claim needs is not on this machine (not a verdict on the claim)."""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    """The comparisons the verdict rests on (`harness.statistics.evidence.Evidence`), each in its test statistic."""
    margins: dict[str, float] = field(default_factory=dict)
    """How far (in standard errors of its statistics) the verdict is from each other verdict."""
    margin: str = ""
    numerics: list[str] = field(default_factory=list)
    """Numerics fingerprints of the records behind the verdict (more than one: mixed numerics)."""
    family: str = ""
    readings: list[dict[str, Any]] = field(default_factory=list)
    """Readings beside the verdict, each labelled (`kind`, `label`, `status`, `text`): the verdict of an
    expectation the claim replaced (`harness.verdicts.changes`), what the span of the paper's own runs
    predicts (`harness.verdicts.spans`)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
