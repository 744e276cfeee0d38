"""Device capacity caps p_i^max (HAS-FL §4.1): constrained devices are the more prevalent."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEFAULT_TIERS = (0.25, 0.5, 0.75, 1.0)
DEFAULT_PROBABILITIES = (0.35, 0.25, 0.2, 0.2)
"""Expected mean cap 0.5625; the paper reports a realized mean of about 0.56 over its 3 seeds."""


def draw_capacity_caps(num_clients: int, tiers: Sequence[float] = DEFAULT_TIERS,
                       probabilities: Sequence[float] = DEFAULT_PROBABILITIES, *,
                       rng: np.random.Generator) -> np.ndarray:
    """One cap per client, drawn i.i.d. from ``tiers`` with ``probabilities``."""
    tiers_arr = np.asarray(tiers, dtype=np.float64)
    probs = np.asarray(probabilities, dtype=np.float64)
    if tiers_arr.shape != probs.shape or tiers_arr.ndim != 1 or len(tiers_arr) == 0:
        raise ValueError("tiers and probabilities must be non-empty and of equal length")
    if np.any(tiers_arr <= 0) or np.any(tiers_arr > 1):
        raise ValueError(f"tiers must lie in (0, 1], got {list(tiers)}")
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0):
        raise ValueError(f"probabilities must be non-negative and sum to 1, got {list(probabilities)}")
    return tiers_arr[rng.choice(len(tiers_arr), size=num_clients, p=probs / probs.sum())]


def equal_share_caps(num_clients: int, tiers: Sequence[float], *, rng: np.random.Generator) -> np.ndarray:
    """Each tier held by an equal share of the clients (FedRolex's setting), in random order.

    With a number of clients not divisible by the number of tiers, the first tiers get one more.
    """
    tiers_arr = np.asarray(tiers, dtype=np.float64)
    if tiers_arr.ndim != 1 or len(tiers_arr) == 0 or np.any(tiers_arr <= 0) or np.any(tiers_arr > 1):
        raise ValueError(f"tiers must be a non-empty list in (0, 1], got {list(tiers)}")
    caps = np.resize(tiers_arr, num_clients)
    return caps[rng.permutation(num_clients)]
