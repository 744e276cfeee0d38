"""A config value taken from another run's record (e.g. a matched capacity budget)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class MetricOf(BaseModel):
    """`{match: <variant>, metric: <metric>}`: that variant's metric, same seed and profile.

    Planning replaces it by the number before the run is keyed, so the value is part of the key.
    """

    model_config = ConfigDict(extra="forbid")
    match: str
    metric: str
