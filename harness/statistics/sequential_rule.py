"""The stopping rule: α spent over the planned looks by an O'Brien-Fleming-type boundary.

A claim is looked at on the profile's seeds (look 1) and again after every seed added to its
experiment, at most up to the experiment's seed limit: L = 1 + (limit − profile seeds) planned
looks. Its test at look j runs at the boundary's nominal level α_j (`harness.statistics.sequential_boundary`:
a Lan-DeMets spending function of O'Brien-Fleming type over t_j = n_j / n_max, calibrated on
the looks' t statistics so that the chance of a false PASS, or of a false FAIL, by look j is
α(t_j), and α by the last look, whenever the looks stop). It replaces the Bonferroni split
(α / L at every look), which kept α but, the looks' tests being strongly correlated, spent about
half of it: at every effect and design measured (docs/architecture.md) the boundary decides more
often within the same max seeds, so Bonferroni is not kept.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from harness.statistics.sequential_boundary import fractions, nominal_levels, spent

NAME = "O'Brien-Fleming-type alpha spending over the planned looks, calibrated on their t statistics"
TEXT = ("Seeds added until decided (`fedclaims verify --profile P --until-decided`) is a separate, sequential"
        " test: a claim is tested on the profile's seeds (look 1), then after every seed added to its "
        "experiment, up to `--max-seeds` (default twice the profile's seeds): L = 1 + (max seeds − profile "
        "seeds) planned looks. Look j, on n_j seeds, tests at a nominal level α_j of a group-sequential "
        "boundary: α is spent by an O'Brien-Fleming-type (Lan-DeMets) function α(t) = 2 − 2Φ(z_{1−α/2} / √t) "
        "of the information fraction t = n_j / n_max, and α_j is calibrated by simulating one-sided t-tests "
        "on n_j seeds so that the chance of a false PASS (or FAIL) by look j, with the true mean on the "
        "bound, is α(t_j): α by the last look, whenever the looks stop (at α = 0.05 over 5 → 10 seeds α_j "
        "rises from 0.0056 at look 1 to 0.032 at the last). It replaces the Bonferroni split α / L, which "
        "kept α but spent about half of it. The levels are calibrated for t-tests of a mean or of paired "
        "differences (a range or an equivalence: per side); a sign count over the seeds PASSes only with "
        "every seed on its side, an event each later look narrows, so it stays within α; Fisher-z tests of "
        "correlations and Holm families take α_j as their α, uncalibrated. A claim's sequential verdict is "
        "that of its first decided look. Seeds go only to the claims the profile left INCONCLUSIVE, while "
        "undecided and with a finite figure of the seeds that would decide them, cheapest decision first "
        "(seeds still needed × measured seconds per seed), until `--budget` minutes of runs added by the "
        "invocation are spent; a fixed-n PASS or FAIL that look 1 cannot decide at α_1 keeps its fixed-n "
        "verdict. Claims of a family are corrected together (Holm) at every look, at the lowest of their "
        "levels; each claim counts the looks of its own experiment. The plan (each look's seeds and α_j) is "
        "recorded in `<store>/sequential/P.json`; a later `--until-decided` run of the profile continues it "
        "from the recorded looks (a seed already stored costs nothing against `--budget`; the file only grows, "
        "claims not selected keep their entries), and refuses a different `--max-seeds`. The profile's fixed-n "
        "verdicts and its baseline are unchanged.")


@dataclass(frozen=True)
class Looks:
    """The planned looks of one claim's sequential test: each look's seeds (those its level is
    calibrated on), its nominal level α_j and the α spent by it, α(t_j)."""

    alpha: float
    seeds: tuple[int, ...]
    levels: tuple[float, ...]
    spent: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.levels:
            raise ValueError("a sequential test plans at least one look, not 0")
        if not len(self.seeds) == len(self.levels) == len(self.spent):
            raise ValueError(f"a plan gives every look its seeds, level and α spent: {len(self.seeds)} seeds, "
                             f"{len(self.levels)} levels, {len(self.spent)} α spent")

    @classmethod
    def plan(cls, alpha: float, first_seeds: int, planned: int) -> Looks:
        """`planned` looks on first_seeds, first_seeds + 1, … seeds, at the boundary's levels."""
        if planned < 1:
            raise ValueError(f"a sequential test plans at least one look, not {planned}")
        first = max(1, first_seeds)
        last = first + planned - 1
        return cls(alpha, tuple(range(first, last + 1)), nominal_levels(first, last, alpha),
                   tuple(spent(t, alpha) for t in fractions(first, last)))

    @property
    def planned(self) -> int:
        return len(self.levels)

    def _index(self, look: int) -> int:
        if not 1 <= look <= self.planned:
            raise ValueError(f"look {look} is outside the plan's {self.planned} looks")
        return look - 1

    def level_at(self, look: int) -> float:
        """α_j: the nominal level the test of look j runs at."""
        return self.levels[self._index(look)]

    def spent_at(self, look: int) -> float:
        """α(t_j): the α spent by look j (the chance of a false PASS, or FAIL, by then)."""
        return self.spent[self._index(look)]


def default_max_seeds(profile_seeds: int) -> int:
    return 2 * profile_seeds


def planned_looks(added_seeds_allowed: Iterable[int]) -> int:
    """Look 1 on the profile's seeds, then one per seed that may be added to any of the experiments
    the test reads (each given as its limit minus its profile's seeds)."""
    return 1 + sum(max(0, allowed) for allowed in added_seeds_allowed)
