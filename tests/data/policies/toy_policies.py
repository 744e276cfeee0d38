"""Two allocation policies whose statistic the audit must tell apart.

`CapacityEcho` exposes a statistic that is a function of the client's capacity (plus a little
noise): confounded by construction. `OracleSkew` exposes each client's true label skew (TV),
which a real server never has: a data signal by construction. Both allocate by their statistic
with HAS-FL's rule and keep the largest-cap clients at full width.
"""
from __future__ import annotations

import numpy as np

from methods.federated.parts import Settings
from methods.federated.policies import AllocationPolicy, PolicyContext


class _ByStatistic(AllocationPolicy):
    name = "statistic"

    class Settings(Settings):
        p_min: float = 0.4
        gamma: float = 0.25

    def __init__(self, context: PolicyContext) -> None:
        self.caps = np.asarray(context.caps, dtype=float)
        self.statistic = self.compute(context)
        relative = self.statistic / self.statistic.mean()
        self.allocation = np.minimum(self.caps, context.settings.p_min + context.settings.gamma * relative)
        self.allocation[np.isclose(self.caps, self.caps.max())] = self.caps.max()

    def compute(self, context: PolicyContext) -> np.ndarray:
        raise NotImplementedError

    def widths(self, round_index, sampled):
        return {int(i): float(self.allocation[i]) for i in sampled}

    def client_statistics(self):
        return {self.name: self.statistic.tolist()}


class CapacityEcho(_ByStatistic):
    name = "capacity_echo"

    def compute(self, context):
        noise = np.random.default_rng(context.seed).normal(0.0, 0.05, size=len(context.caps))
        return 1.0 / np.asarray(context.caps, dtype=float) + noise


class OracleSkew(_ByStatistic):
    name = "oracle_skew"

    def compute(self, context):
        noise = np.random.default_rng(context.seed).normal(0.0, 0.01, size=len(context.caps))
        return np.asarray(context.oracle_tv, dtype=float) + 0.05 + noise
