"""Which experiment gets the next seed: the cheapest decision first, within the budget left."""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

NOTHING_LEFT = "no undecided claim left that another seed can decide"
BUDGET = "the next seed does not fit in the budget left"


@dataclass(frozen=True)
class Candidate:
    """An undecided claim that more seeds of its experiment can decide."""

    claim: str
    experiment: str
    needed: int
    """Seeds its power figure says would decide it at the observed effect and spread."""
    have: int
    seconds_per_seed: float
    """Measured wall seconds of one seed of the variants it reads."""

    @property
    def remaining(self) -> int:
        """Seeds still to add; at least one, since a test at its power figure may still be undecided."""
        return max(1, self.needed - self.have)

    @property
    def cost(self) -> float:
        return self.remaining * self.seconds_per_seed


def rank(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Cheapest expected decision first: (seeds still needed) × (seconds per seed)."""
    return sorted(candidates, key=lambda c: (c.cost, c.remaining, c.claim))


@dataclass(frozen=True)
class Choice:
    experiment: str | None
    """The experiment to add a seed to; None when the schedule stops."""
    stop: str = ""
    """Why it stops (NOTHING_LEFT or BUDGET)."""


def choose(candidates: Sequence[Candidate], seed_seconds: Mapping[str, float], spent: float,
           budget: float | None, stored: Collection[str] = ()) -> Choice:
    """The experiment of the cheapest decision whose next seed (`seed_seconds` of its experiment)
    fits in what is left of the budget (seconds; None: no limit). A next seed whose runs are all
    in the store (its experiment in `stored`) costs nothing and always fits."""
    if not candidates:
        return Choice(None, NOTHING_LEFT)
    for candidate in rank(candidates):
        if fits(candidate.experiment, seed_seconds, spent, budget, stored):
            return Choice(candidate.experiment)
    return Choice(None, BUDGET)


def fits(experiment: str, seed_seconds: Mapping[str, float], spent: float, budget: float | None,
         stored: Collection[str]) -> bool:
    return budget is None or experiment in stored or spent + seed_seconds[experiment] <= budget
