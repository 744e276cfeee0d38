"""The stopping rule: one α per claim, spent over the planned looks, the profile's verdict the first.

A claim is looked at on the profile's seeds (look 1: the fixed-n verdict, at
`sequential_boundary.profile_level(α)` = 0.7 α) and again after every seed added to its experiment, at
most up to the experiment's seed limit: L = 1 + (limit − profile seeds) planned looks. Its test at look
j runs at the boundary's nominal level α_j (`harness.statistics.sequential_boundary`: the rest of α
spent by a Lan-DeMets function of O'Brien-Fleming type over the added seeds' fraction, calibrated on the
looks' t statistics so that the chance of a false PASS, or of a false FAIL, by look j is α(look j), and
α by the last look, whenever the looks stop, the profile's verdict included). An earlier rule tested the
profile at α and then spent a second α over the added seeds: "run the profile, then add seeds" was
falsely decided 0.074 of the time at α = 0.05; it is not kept.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from harness.statistics.sequential_boundary import (
    boundary_alone,
    calibrated,
    nominal_levels,
    plan_power,
    spent_by_look,
)

NAME = ("the profile's seeds at 0.7 alpha (look 1), then O'Brien-Fleming-type spending of the rest over the added "
        "seeds, calibrated on the looks' t statistics")
TEXT = ("Seeds added until decided (`fedclaims verify --profile P --until-decided`) continue the profile's own "
        "test: one α per claim, whatever the path. A claim is tested on the profile's seeds (look 1: the verdict "
        "every report shows, at α_1 = 0.7 α, 0.035 at α = 0.05), then after every seed added to its experiment, "
        "up to `--max-seeds` (default twice the profile's seeds): L = 1 + (max seeds − profile seeds) planned looks. "
        "The rest of α, 0.3 α, is spent over the added seeds by an O'Brien-Fleming-type (Lan-DeMets) function "
        "s(e) = 2 − 2Φ(z_{1−0.3α/2} / √e) of their information fraction e = (n_j − n_1) / (n_max − n_1), and each "
        "look's nominal level α_j is calibrated by simulating one-sided t-tests on n_j seeds so that the chance "
        "of a false PASS (or FAIL) by look j, with the true mean on the bound, is α_1 + s(e_j): α by the last "
        "look, whenever the looks stop, the profile's verdict included (at α = 0.05 over 5 → 10 seeds α_j runs "
        "0.035, 0.0138, 0.00586, 0.00687, 0.0122, 0.0203: the first added seeds spend little, their paths having "
        "mostly crossed at look 1 already). A claim the profile decided keeps that verdict: it is look "
        "1. Power at a 0.5-SD effect (5 → 10 seeds): 0.18 on the profile's seeds, 0.34 by 10; the "
        "O'Brien-Fleming boundary over all the looks would reach 0.39 but give the profile's own verdict 0.0056 "
        "(power 0.04), and a test at α on the profile's seeds followed by a second α over the added seeds "
        "(the earlier rule) was falsely decided 0.074 of the time. The levels are calibrated for t-tests of a "
        "mean or of paired differences; a range or an equivalence, whose FAIL region has two sides, looks at "
        "the lower of each look's one-sided level and that of two-sided t-tests calibrated alike (α_j = 0.035, "
        "0, 0, 0.00489, 0.00977, 0.0177 over 5 → 10 seeds): calibrated per side alone, a range a twentieth of a "
        "standard error wide with the truth on an edge was falsely FAILed 0.053 of the time at α = 0.05 (3 → 6, "
        "4 → 8 and 5 → 10 seeds), the far side's crossings adding to the near side's; a sign count over the seeds "
        "PASSes only with every seed on its side, an event each later look narrows, so it stays within α; "
        "Fisher-z tests of correlations and Holm families take α_j as their α, uncalibrated. A claim's sequential "
        "verdict is that of its first decided look. Seeds go only to the claims the profile left INCONCLUSIVE, "
        "while undecided and with a finite figure of the seeds that would decide them, cheapest decision first "
        "(seeds still needed × measured seconds per seed), until `--budget` minutes of runs added by the "
        "invocation are spent. Claims of a family are corrected together (Holm) at every look, at the lowest of "
        "their levels; each claim counts the looks of its own experiment. The plan (each look's seeds, α_j and "
        "its power) is recorded in `<store>/sequential/P.json`; a later `--until-decided` run of the profile "
        "continues it from the recorded looks (a seed already stored costs nothing against `--budget`; the file "
        "only grows, claims not selected keep their entries), and refuses a different `--max-seeds`.")

POWER_EFFECT_SD = 0.5
"""The effect a plan's power is reported at: the true mean half a seed SD beyond the bound."""


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
    def plan(cls, alpha: float, first_seeds: int, planned: int, two_sided: bool = False) -> Looks:
        """`planned` looks on first_seeds, first_seeds + 1, … seeds, at the boundary's levels; `two_sided`
        for a test that FAILs on either side of a range (its levels calibrated for both sides too)."""
        if planned < 1:
            raise ValueError(f"a sequential test plans at least one look, not {planned}")
        first = max(1, first_seeds)
        last = first + planned - 1
        return cls(alpha, tuple(range(first, last + 1)), nominal_levels(first, last, alpha, two_sided),
                   spent_by_look(first, last, alpha))

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
        """α(look j): the α spent by look j (the chance of a false PASS, or FAIL, by then)."""
        return self.spent[self._index(look)]

    def power(self, effect_sd: float = POWER_EFFECT_SD) -> tuple[float, ...]:
        """P(PASS by each look) of a one-sided t-test at the plan's levels, the truth `effect_sd` seed SDs
        beyond the bound."""
        return plan_power(self.seeds[0], self.levels, effect_sd)

    def boundary_alone_power(self, effect_sd: float = POWER_EFFECT_SD) -> float:
        """P(PASS by the last look) were α spent by O'Brien-Fleming-type spending over every look, the
        profile's included (its verdict then at α(n_1 / n_max), not 0.7 α): what the plan gives up so that
        the profile's own verdict keeps its power."""
        first, last = self.seeds[0], self.seeds[-1]
        return plan_power(first, calibrated(first, boundary_alone(first, last, self.alpha)), effect_sd)[-1]


def default_max_seeds(profile_seeds: int) -> int:
    return 2 * profile_seeds


def planned_looks(added_seeds_allowed: Iterable[int]) -> int:
    """Look 1 on the profile's seeds, then one per seed that may be added to any of the experiments
    the test reads (each given as its limit minus its profile's seeds)."""
    return 1 + sum(max(0, allowed) for allowed in added_seeds_allowed)
