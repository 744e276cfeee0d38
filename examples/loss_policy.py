"""An allocation policy as a user would write one: size sub-models by each client's training loss.

The HAS-FL paper's discussion (§4.7) names loss-based signals among those exposed to the capacity
confound once sub-model width varies with the device. This policy follows HAS-FL's recipe with
the loss in place of update divergence: after a warm-up at the caps, every `t_adapt` rounds each
participant's mean local training loss updates an exponential moving average L̃_i, and every
client is allocated p_i = min(p_max_i, p_min + γ · L̃_i / mean(L̃)), with the clients of the
largest cap kept at full width so that every coordinate keeps being trained.

Audit it:   fedclaims audit examples/loss_policy.py:LossAllocation
"""
from __future__ import annotations

import math

import numpy as np

from methods.federated.parts import Settings
from methods.federated.policies import AllocationPolicy, PolicyContext


class LossAllocation(AllocationPolicy):
    """Eq. 6 of HAS-FL driven by a smoothed training loss instead of update divergence."""

    class Settings(Settings):
        """HAS-FL's values (§4.1); a spec may set them as `policy: {name: ..., p_min: ...}`."""

        p_min: float = 0.4
        gamma: float = 0.25
        beta: float = 0.9
        t_warm: int = 10
        t_adapt: int = 5

    def __init__(self, context: PolicyContext) -> None:
        settings = context.settings
        self.caps = np.asarray(context.caps, dtype=float)
        self.p_min, self.gamma, self.beta = settings.p_min, settings.gamma, settings.beta
        self.t_warm, self.t_adapt = settings.t_warm, settings.t_adapt
        self.smoothed_loss = np.full(len(self.caps), np.nan)  # a client's first loss starts its average
        self.allocation = self.caps.copy()

    def widths(self, round_index, sampled):
        return {int(i): float(self.allocation[i]) for i in sampled}

    def observe(self, round_index, updates, aggregate):
        completed = round_index + 1
        if completed < self.t_warm or completed % self.t_adapt:
            return
        for update in updates:
            if math.isfinite(update.train_loss):
                previous = self.smoothed_loss[update.client]
                self.smoothed_loss[update.client] = (update.train_loss if math.isnan(previous) else
                                                     self.beta * previous + (1 - self.beta) * update.train_loss)
        if np.isnan(self.smoothed_loss).all():
            return
        loss = np.nan_to_num(self.smoothed_loss, nan=np.nanmean(self.smoothed_loss))  # unseen clients: average
        relative = loss / loss.mean()
        allocation = np.minimum(self.caps, self.p_min + self.gamma * relative)
        allocation[np.isclose(self.caps, self.caps.max())] = self.caps.max()
        self.allocation = allocation

    def client_statistics(self):
        return {"smoothed_loss": self.smoothed_loss.tolist()}
