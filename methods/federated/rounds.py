"""Round hooks: who of a round's sampled clients takes part, and how much local work each does.

Without a hook every sampled client trains the configured local epochs. A hook (stragglers,
deadlines, dropouts) maps each sampled client to its local epochs for the round: 0 drops the
client (it trains nothing and is not aggregated), fewer than configured is partial work that
is aggregated like any other update.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from methods.federated.parts import Part


@dataclass(frozen=True)
class RoundContext:
    """What a round hook is built from."""

    settings: Any
    seed: int
    num_clients: int
    local_epochs: int
    """The configured local epochs E (full work)."""
    client_sizes: tuple[int, ...] = ()


class RoundHook(Part, ABC):
    """Each round's local work per sampled client."""

    @classmethod
    def from_context(cls, context: RoundContext) -> RoundHook:
        return cls(context)  # type: ignore[call-arg]

    @abstractmethod
    def local_epochs(self, round_index: int, sampled: Sequence[int]) -> dict[int, int]:
        """The local epochs of every sampled client in round ``round_index`` (0: it does not take part)."""


def work_of(hook: RoundHook | None, round_index: int, sampled: Sequence[int], epochs: int) -> dict[int, int]:
    """Every sampled client's local epochs this round: the hook's, else the configured ones."""
    if hook is None:
        return {i: epochs for i in sampled}
    work = hook.local_epochs(round_index, sampled)
    if set(work) != set(sampled) or any(int(e) != e or e < 0 for e in work.values()):
        raise ValueError(f"round hook {type(hook).__name__} must give every sampled client {list(sampled)} a "
                         f"whole number of local epochs >= 0 in round {round_index}, gave {work}")
    return {i: int(work[i]) for i in sampled}
