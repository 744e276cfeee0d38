"""Experiment spec files (`specs/*.yaml`): how a claim is measured."""
from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.schema.base import Identifier, StrictModel


class Variant(StrictModel):
    """One arm of an experiment: a method, or a setting of an analytic measurement."""

    label: str = ""
    config: dict[str, Any] = Field(default_factory=dict)


class Profile(StrictModel):
    """A scale at which the experiment runs (`paper`, `smoke`, ...)."""

    description: str = ""
    seeds: list[int] = Field(min_length=1)
    overrides: dict[str, Any] = Field(default_factory=dict)
    variant_overrides: dict[Identifier, dict[str, Any]] = Field(default_factory=dict)


class FigureSpec(StrictModel):
    """A figure drawn from the experiment's records for the report."""

    plot: str
    title: str
    variants: list[Identifier] = Field(default_factory=list)


class ExperimentSpec(StrictModel):
    experiment: Identifier
    paper: Identifier
    title: str
    kind: str
    description: str = ""
    departures: list[str] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)
    variants: dict[Identifier, Variant] = Field(min_length=1)
    profiles: dict[Identifier, Profile] = Field(min_length=1)
    figures: list[FigureSpec] = Field(default_factory=list)
