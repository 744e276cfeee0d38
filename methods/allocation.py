"""HAS-FL's capacity allocation rule (Eq. 6) and its coverage guarantee (§3.3)."""
from __future__ import annotations

import numpy as np

EPSILON = 1e-8


def allocate(h_tilde: np.ndarray, p_max: np.ndarray, p_min: float, gamma: float,
             epsilon: float = EPSILON) -> np.ndarray:
    """Eq. 6: p_i = min(p_i^max, p_min + gamma * H~_i / (H-bar + eps)).

    H-bar is the mean of the smoothed estimates over the whole federation.
    """
    h_tilde = np.asarray(h_tilde, dtype=np.float64)
    p_max = np.asarray(p_max, dtype=np.float64)
    if h_tilde.shape != p_max.shape:
        raise ValueError(f"h_tilde has shape {h_tilde.shape} but p_max has {p_max.shape}")
    h_bar = float(h_tilde.mean())
    return np.minimum(p_max, p_min + gamma * h_tilde / (h_bar + epsilon))


def apply_coverage_guarantee(p: np.ndarray, p_max: np.ndarray) -> np.ndarray:
    """Clients whose cap equals the largest cap in the federation train at that cap.

    Under nested masks this keeps every coordinate of the global model covered
    whenever such a client is sampled (Proposition 3 is the failure without it).
    """
    p = np.array(p, dtype=np.float64)
    p_max = np.asarray(p_max, dtype=np.float64)
    largest = np.isclose(p_max, p_max.max())
    p[largest] = p_max[largest]
    return p

