"""The observations a claim can name, one module each (a class with its `key` and `doc`), found by
`harness.schema.base.discovered`: adding one is adding its module."""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness.schema.base import discovered, tagged_union
from harness.schema.observations.base import ObservationBase, Shape

OBSERVATIONS = discovered(__name__, __path__, ObservationBase)
"""Every observation class, by the key that names it in a claim file."""
OBSERVATION_KEYS = tuple(OBSERVATIONS)

if TYPE_CHECKING:  # statically, what every observation shares; readers dispatch on `shape`
    Observation = ObservationBase
else:
    Observation = tagged_union(OBSERVATIONS, "observation_kind", "an observation")

__all__ = ["OBSERVATIONS", "OBSERVATION_KEYS", "Observation", "ObservationBase", "Shape"]
