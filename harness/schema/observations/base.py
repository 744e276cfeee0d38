"""What every observation shares."""
from __future__ import annotations

from typing import ClassVar

from pydantic_core import PydanticCustomError

from harness.schema.base import StrictModel


class ObservationBase(StrictModel):
    """What a claim computes from its runs' records: its `key` in a claim file, its line in the docs, and the
    variants whose records it reads."""

    key: ClassVar[str]
    """The key that names this kind of observation in a claim file."""
    doc: ClassVar[str]
    """Its line in docs/claims.md."""

    @property
    def variants(self) -> list[str]:
        raise NotImplementedError


def distinct_names(names: list[str], what: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise PydanticCustomError("repeated_name", "{what} names {names} more than once",
                                  {"what": what, "names": ", ".join(repeated)})
