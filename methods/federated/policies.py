"""Allocation policies (server): the width each sampled client trains in a round.

The extraction mode (prefix, rolling, random) is chosen independently of the policy. A policy
is built from a `PolicyContext` (`from_context`), its hyperparameters in its own `Settings`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import Field
from torch import Tensor

from methods.federated.aggregation import ClientUpdate
from methods.federated.capacity import DEFAULT_TIERS
from methods.federated.parts import Part, Settings
from methods.seeding import numpy_rng

# fedclaims behaviour version: 1


@dataclass(frozen=True)
class PolicyContext:
    """What a policy is built from.

    ``config``: the run's `methods.federated.config.FederationConfig` (typed loosely: that module
    imports this one for its default policy). ``settings``: the policy's own `Settings`, validated.
    ``client_sizes``: each client's number of training samples (a server knows it from the updates it
    receives). ``oracle_tv``: each
    client's ground-truth label skew (TV distance), which no real server has: the harness passes
    it so that a positive control (a policy that allocates by the truth) can be audited; a
    policy meant for real use must not read it.
    """

    config: Any
    settings: Any
    caps: np.ndarray
    seed: int
    client_sizes: tuple[int, ...] = ()
    oracle_tv: tuple[float, ...] | None = None


class AllocationPolicy(Part, ABC):
    """Widths per round, plus an observation hook for adaptive policies.

    ``static``: the widths are fixed by the caps and seeded draws, never by what training
    computes (so widths, coverage and unit counts do not depend on floating-point kernels).
    """

    static: ClassVar[bool] = False

    @classmethod
    def from_context(cls, context: PolicyContext) -> AllocationPolicy:
        """The policy for one run (a user's policy takes the context in its constructor)."""
        return cls(context)  # type: ignore[call-arg]

    @abstractmethod
    def widths(self, round_index: int, sampled: Sequence[int]) -> dict[int, float]:
        """Width in (0, 1] of every sampled client in round ``round_index`` (0-based)."""

    def observe(self, round_index: int, updates: Sequence[ClientUpdate],
                aggregate: Mapping[str, Tensor]) -> None:
        """Called after aggregation of round ``round_index`` with the updates and Δ̄."""

    def client_statistics(self) -> dict[str, list[float]]:
        """Per-client statistics the policy keeps (its estimates), one value per client, by name.

        `fedclaims audit` validates each against capacity and ground-truth label skew.
        """
        return {}

    def adaptations(self) -> list[dict[str, Any]]:
        """JSON-safe record of every re-allocation (empty for static policies)."""
        return []


class FullPolicy(AllocationPolicy):
    """Every client trains the whole model (FedAvg, FedProx, SCAFFOLD)."""

    static = True

    @classmethod
    def from_context(cls, context: PolicyContext) -> FullPolicy:
        return cls()

    def widths(self, round_index: int, sampled: Sequence[int]) -> dict[int, float]:
        return {int(i): 1.0 for i in sampled}


class CapPolicy(AllocationPolicy):
    """HeteroFL: every client trains at its cap."""

    static = True

    @classmethod
    def from_context(cls, context: PolicyContext) -> CapPolicy:
        return cls(context.caps)

    def __init__(self, caps: np.ndarray) -> None:
        self.caps = np.asarray(caps, dtype=np.float64)

    def widths(self, round_index: int, sampled: Sequence[int]) -> dict[int, float]:
        return {int(i): float(self.caps[i]) for i in sampled}


class DynamicCapPolicy(AllocationPolicy):
    """HeteroFL's and FedRolex's "dynamic" model split (their reference code's ``dynamic`` mode): every
    round each sampled client trains at a width drawn anew, uniformly from the run's caps, i.e. from the
    tiers in the shares the caps assignment gives them (in equal shares: each of k tiers with
    probability 1/k when k divides the clients). A client's own cap plays no part."""

    static = True

    @classmethod
    def from_context(cls, context: PolicyContext) -> DynamicCapPolicy:
        return cls(context.caps, context.seed)

    def __init__(self, caps: np.ndarray, seed: int) -> None:
        self.caps = np.asarray(caps, dtype=np.float64)
        self.seed = seed

    def widths(self, round_index: int, sampled: Sequence[int]) -> dict[int, float]:
        drawn = numpy_rng(self.seed, "dynamic_caps", round_index).integers(len(self.caps), size=len(sampled))
        return {int(i): float(self.caps[d]) for i, d in zip(sampled, drawn)}


class UniformPolicy(AllocationPolicy):
    """p_i = min(width, cap_i) for every client and round (the paper's Uniform, width 0.5)."""

    class Settings(Settings):
        width: float = Field(0.5, gt=0.0, le=1.0)

    static = True

    @classmethod
    def from_context(cls, context: PolicyContext) -> UniformPolicy:
        return cls(context.caps, context.settings.width)

    def __init__(self, caps: np.ndarray, width: float = 0.5) -> None:
        self.caps = np.asarray(caps, dtype=np.float64)
        self.width = width

    def widths(self, round_index: int, sampled: Sequence[int]) -> dict[int, float]:
        return {int(i): float(min(self.width, self.caps[i])) for i in sampled}


class FjordPolicy(AllocationPolicy):
    """FjORD as the HAS-FL paper implements it: each round a fresh tier drawn uniformly from the
    tiers no larger than the client's cap (no self-distillation)."""

    class Settings(Settings):
        tiers: tuple[float, ...] = Field(DEFAULT_TIERS, min_length=1)

    static = True

    @classmethod
    def from_context(cls, context: PolicyContext) -> FjordPolicy:
        return cls(context.caps, context.settings.tiers, context.seed)

    def __init__(self, caps: np.ndarray, tiers: Sequence[float], seed: int) -> None:
        self.caps = np.asarray(caps, dtype=np.float64)
        self.tiers = np.sort(np.asarray(tiers, dtype=np.float64))
        self.seed = seed

    def widths(self, round_index: int, sampled: Sequence[int]) -> dict[int, float]:
        result = {}
        for i in sampled:
            allowed = self.tiers[self.tiers <= self.caps[i] + 1e-9]
            if len(allowed) == 0:
                result[int(i)] = float(self.caps[i])
                continue
            rng = numpy_rng(self.seed, "fjord", round_index, int(i))
            result[int(i)] = float(allowed[rng.integers(len(allowed))])
        return result


def budget_widths(caps: np.ndarray, u: np.ndarray, budget: float, floor: float,
                  iterations: int = 200) -> np.ndarray:
    """w_i = min(cap_i, max(floor, s·u_i)) with s found by bisection so that mean(w) = budget.

    Returns the caps when the budget is at least their mean, and the s = 0 widths when the
    budget is at most their mean (no scale reaches it).
    """
    caps = np.asarray(caps, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)

    def widths_at(scale: float) -> np.ndarray:
        return np.minimum(caps, np.maximum(floor, scale * u))

    if budget >= caps.mean():
        return caps.copy()
    low, high = 0.0, float(caps.max()) / max(float(u[u > 0].min(initial=1.0)), 1e-300)
    if budget <= widths_at(low).mean():
        return widths_at(low)
    if budget >= widths_at(high).mean():
        return widths_at(high)
    for _ in range(iterations):
        mid = 0.5 * (low + high)
        if widths_at(mid).mean() < budget:
            low = mid
        else:
            high = mid
        if high - low <= 1e-15 * high:
            break
    return widths_at(0.5 * (low + high))


class RandomBudgetPolicy(AllocationPolicy):
    """Matched-budget random control (HAS-FL §4.4), defined here as follows.

    Each round every sampled client i draws u_i ~ U(0, 1) and trains at
    w_i = min(cap_i, max(w_floor, s·u_i)), where the scale s is found by bisection so that the
    round's mean width over the sampled clients equals ``budget``; if the budget is at least the
    sampled clients' mean cap, every client trains at its cap. w_floor is the smallest tier.
    """

    class Settings(Settings):
        budget: float = Field(gt=0.0, le=1.0)
        """The mean width a round's sampled clients train at (HAS-FL's realized mean capacity)."""
        floor: float = Field(min(DEFAULT_TIERS), gt=0.0, le=1.0)
        """The smallest width a client trains at (the smallest tier)."""

    @classmethod
    def from_context(cls, context: PolicyContext) -> RandomBudgetPolicy:
        return cls(context.caps, context.settings.budget, context.settings.floor, context.seed)

    def __init__(self, caps: np.ndarray, budget: float, floor: float, seed: int) -> None:
        if not 0.0 < budget <= 1.0:
            raise ValueError(f"budget must lie in (0, 1], got {budget}")
        self.caps = np.asarray(caps, dtype=np.float64)
        self.budget = budget
        self.floor = floor
        self.seed = seed

    def widths(self, round_index: int, sampled: Sequence[int]) -> dict[int, float]:
        clients = [int(i) for i in sampled]
        u = numpy_rng(self.seed, "random_budget", round_index).random(len(clients))
        widths = budget_widths(self.caps[clients], u, self.budget, self.floor)
        return {i: float(w) for i, w in zip(clients, widths)}
