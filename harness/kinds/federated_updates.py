"""What clients send in a federated record: each update's norm and size, and per-client cost.

Rounds record, for each participant, the L2 norm of its update over the coordinates it
trained and the number of those coordinates (its upload); runs record the parameter and MAC
fractions of every width a client trained at (`width_costs`). Records made before these were
measured raise, so a claim on them is an ERROR that says to re-run, never a silent NaN.
"""
from __future__ import annotations

import math
import statistics

from harness.kinds.base import NotApplicable


def _per_round(result, key: str) -> list[tuple[list[int], list[float]]]:
    rounds = result["history"]
    if rounds and key not in rounds[0]:
        raise NotApplicable(f"this record has no per-round '{key}' (made before updates were measured): re-run it")
    return [(r["clients"], r[key]) for r in rounds]


def _client_means(result, key: str) -> list[float]:
    """Each client's mean over the rounds it took part in (NaN for a client never sampled)."""
    values: list[list[float]] = [[] for _ in result["caps"]]
    for clients, per_client in _per_round(result, key):
        for client, value in zip(clients, per_client):
            values[client].append(math.nan if value is None else float(value))
    return [statistics.fmean(v) if v else math.nan for v in values]


def mean_update_norm(result) -> list[float]:
    return _client_means(result, "update_norms")


def mean_update_size(result) -> list[float]:
    return _client_means(result, "update_sizes")


def _upload_sizes(result) -> list[float]:
    return [float(size) for _, per_client in _per_round(result, "update_sizes") for size in per_client]


def mean_upload_size(result, args) -> float:
    """The mean update size per client-round, in coordinates."""
    sizes = _upload_sizes(result)
    return statistics.fmean(sizes) if sizes else math.nan


def upload_reduction(result, args) -> float:
    """Full-model coordinates over the mean update size per client-round."""
    sizes = _upload_sizes(result)
    return result["total_coordinates"] / statistics.fmean(sizes) if sizes else math.nan


def compute_reduction(result, args) -> float:
    """One over the mean MAC fraction of the full model per client-round (training cost scales with MACs)."""
    if "width_costs" not in result:
        raise NotApplicable("this record has no width_costs (made before per-client cost was measured): re-run it")
    mac_fraction = {row["width"]: row["mac_fraction"] for row in result["width_costs"]}
    fractions = [mac_fraction[w] for r in result["history"] for w in r["widths"]]
    return 1.0 / statistics.fmean(fractions) if fractions else math.nan
