"""What every observation shares."""
from __future__ import annotations

from enum import Enum
from typing import ClassVar

from pydantic_core import PydanticCustomError

from harness.schema.base import StrictModel


class Shape(Enum):
    """What an observation's series are: what its readers (observing, deciding, rebuilding from an archive)
    dispatch on, never its class."""

    VALUES = "a metric's value per seed of each variant"
    PAIRED = "a metric's per-seed difference of two variants"
    CORRELATION = "a correlation across clients of two per-client quantities, per seed of each variant"
    SPREAD = "the ratio of two variants' seed-to-seed standard deviations of a metric"


class ObservationBase(StrictModel):
    """What a claim computes from its runs' records: its `key` in a claim file, its line in the docs, the
    shape of its series, and the variants whose records it reads."""

    key: ClassVar[str]
    """The key that names this kind of observation in a claim file."""
    doc: ClassVar[str]
    """Its line in docs/claims.md."""
    shape: ClassVar[Shape]
    """What its series are."""
    ranked: ClassVar[bool] = False
    """Whether its variants are ranked against each other (by an `order`) rather than each tested."""

    @property
    def variants(self) -> list[str]:
        raise NotImplementedError


def distinct_names(names: list[str], what: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise PydanticCustomError("repeated_name", "{what} names {names} more than once",
                                  {"what": what, "names": ", ".join(repeated)})


def shape_of(obs: ObservationBase | None) -> Shape | None:
    """An observation's shape; None for none (an expectation described on its own)."""
    return None if obs is None else obs.shape


def ranked(obs: ObservationBase | None) -> bool:
    return obs is not None and obs.ranked
