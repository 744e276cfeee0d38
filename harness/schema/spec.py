"""Experiment spec files (`specs/*.yaml`): how a claim is measured."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictFloat, StrictInt, field_validator
from pydantic_core import PydanticCustomError

from harness.schema.base import MAX_LISTED, MAX_SEEDS, MAX_STUDY_POINTS, Identifier, StrictModel

ConfigPath = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")]
"""A dotted path into an experiment's config, e.g. `data.max_train_per_client`."""
AxisValue = StrictInt | StrictFloat


class PaperFigure(StrictModel):
    """The accuracy the paper prints for a variant's own setting, and where."""

    accuracy: float = Field(gt=0.0, le=100.0)
    """In %, as printed (with its rounding)."""
    source: str = Field(min_length=1)
    """Where the paper prints it (table, row and setting, or section)."""


class Variant(StrictModel):
    """One arm of an experiment: a method, or a setting of an analytic measurement."""

    label: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    paper: PaperFigure | None = None
    """The paper's accuracy for this variant where it prints one: a verdict reading the variant reads its learning
    level against it (`harness.verdicts.levels`); without one, against the experiment's `reference`. Not part of
    the variant's config, so no run's key depends on it."""


class Profile(StrictModel):
    """A scale at which the experiment runs (`paper`, `smoke`, ...)."""

    description: str = ""
    seeds: list[int] = Field(min_length=1, max_length=MAX_SEEDS)
    overrides: dict[str, Any] = Field(default_factory=dict)
    variant_overrides: dict[Identifier, dict[str, Any]] = Field(default_factory=dict)


class FigureSpec(StrictModel):
    """A figure drawn from the experiment's records for the report."""

    plot: str
    title: str
    variants: list[Identifier] = Field(default_factory=list)


class PaperScale(StrictModel):
    """The value of a study's axis at which the paper ran, and what it means there."""

    value: AxisValue
    note: str = ""


class LearningReference(StrictModel):
    """The paper's main method of an experiment and the accuracy the paper gives it: the figure a variant without
    a paper figure of its own (`Variant.paper`) reads its learning level against (`harness.verdicts.levels`), and
    the variant whose level each experiment's profile line quotes."""

    variant: Identifier
    accuracy: float = Field(gt=0.0, le=100.0)
    """The paper's accuracy of the variant, in %."""
    source: str = Field(min_length=1)
    """Where the paper states it (table, row and setting)."""


class Study(StrictModel):
    """Claims observed at every point of one config axis, on top of a base profile.

    Each point is a generated profile (`harness.loading.studies`): the base profile with the `fixed`
    settings and the axis value applied to its overrides. The claims' variants run at every
    point; each point's verdict uses the claim's expectation at the base profile.
    """

    title: str
    description: str = ""
    profile: Identifier
    axis: ConfigPath
    points: list[AxisValue] = Field(min_length=2, max_length=MAX_STUDY_POINTS)
    fixed: dict[ConfigPath, Any] = Field(default_factory=dict)
    seeds: list[int] | None = Field(None, min_length=1, max_length=MAX_SEEDS)
    paper_scale: PaperScale
    claims: list[str] = Field(min_length=1)

    @field_validator("points")
    @classmethod
    def _distinct_points(cls, points: list) -> list:
        seen: set = set()
        repeated: set = set()
        for point in points:
            (repeated if point in seen else seen).add(point)
        if repeated:
            raise PydanticCustomError("repeated_points", "the points repeat {repeated}", {"repeated": sorted(repeated)})
        return points


class ExperimentSpec(StrictModel):
    experiment: Identifier
    paper: Identifier
    title: str
    kind: str
    """An experiment kind: a registered name (`fedclaims.kinds`), `package.module:KIND` or `path/to/file.py:KIND`."""
    metrics: list[str] = Field(default_factory=list)
    """Metrics added to the kind for this experiment's claims: `fedclaims.metrics` names,
    `package.module:NAME` or `path/to/file.py:NAME` (each an `ExtensionMetric`)."""
    description: str = ""
    departures: list[str] = Field(default_factory=list)
    """Where the experiment differs from the paper or the authors' code, or chooses where both are silent,
    each with its reason."""
    adopted: list[str] = Field(default_factory=list)
    """What the experiment takes from the authors' public code that the paper does not state, each with
    the setting that gives it."""
    reference: LearningReference | None = None
    """The paper's main method and its accuracy: how far the experiment's models learned, and the figure a
    variant without its own `paper:` is read against."""
    config: dict[str, Any] = Field(default_factory=dict)
    variants: dict[Identifier, Variant] = Field(min_length=1, max_length=MAX_LISTED)
    profiles: dict[Identifier, Profile] = Field(min_length=1)
    figures: list[FigureSpec] = Field(default_factory=list)
    studies: dict[Identifier, Study] = Field(default_factory=dict)
