"""The configurable parts of a federated method: each part is a class with typed settings.

An allocation policy (server), a local objective (client) and a round hook (who takes part in a
round and how much local work each does) are each a class whose `Settings` (a pydantic model,
unknown fields refused) holds its own hyperparameters, so that HAS-FL's `p_min` exists only on
HAS-FL. A `Choice` is one part with its settings; `FederationConfig` holds one per role.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict


class Settings(BaseModel):
    """A part's hyperparameters: unknown fields are refused, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoSettings(Settings):
    """A part without hyperparameters."""


class Part:
    """What every configurable part declares: its settings model."""

    Settings: ClassVar[type[Settings]] = NoSettings


PartT = TypeVar("PartT", bound=Part, covariant=True)


@dataclass(frozen=True)
class Choice(Generic[PartT]):
    """One part of a method and its validated settings."""

    part: type[PartT]
    settings: Settings

    @classmethod
    def of(cls, part: type[PartT], **settings: Any) -> Choice[PartT]:
        return cls(part, part.Settings(**settings))

    def describe(self) -> dict[str, Any]:
        """The part (its class's module and name) and its settings, as plain values."""
        return {"part": f"{self.part.__module__}:{self.part.__qualname__}", **self.settings.model_dump()}
