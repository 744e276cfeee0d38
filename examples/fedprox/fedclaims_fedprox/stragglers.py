"""Stragglers as the FedProx authors simulate them (litian96/FedProx, flearn/trainers/fedprox.py).

Each round, of the sampled clients, round(n × (1 − fraction)) stay active and do the full E
local epochs; the others are stragglers. FedAvg drops them (`drop: true`: no training, no
update). FedProx keeps their partial work: each straggler runs a number of whole epochs drawn
uniformly from 1 … E − 1 (the authors' `np.random.randint(1, E)`; the paper says [1, E]). The
stragglers of a round are the same whether dropped or kept: one stream per (seed, round).
"""
from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from fedclaims import RoundContext, RoundHook, Settings, numpy_rng


class Stragglers(RoundHook):
    class Settings(Settings):
        fraction: float = Field(ge=0.0, le=1.0)
        """Share of each round's sampled clients that straggle (0.5, 0.9 in the paper)."""
        drop: bool
        """True: stragglers are dropped (FedAvg). False: their partial work is aggregated (FedProx)."""

    def __init__(self, context: RoundContext) -> None:
        self.fraction, self.drop = context.settings.fraction, context.settings.drop
        self.seed, self.epochs = context.seed, context.local_epochs
        if not self.drop and self.epochs < 2:
            raise ValueError("stragglers that keep partial work do 1 to E - 1 epochs: E must be at least 2")

    def local_epochs(self, round_index: int, sampled: Sequence[int]) -> dict[int, int]:
        rng = numpy_rng(self.seed, "stragglers", round_index)
        active = round(len(sampled) * (1.0 - self.fraction))
        chosen = {int(i) for i in rng.choice(list(sampled), size=active, replace=False)}
        work = {}
        for client in sampled:
            if client in chosen:
                work[client] = self.epochs
            else:
                work[client] = 0 if self.drop else int(rng.integers(1, self.epochs))
        return work
