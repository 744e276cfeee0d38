"""The stopping rule: alpha spent over the planned looks with a Bonferroni bound.

A claim is looked at on the profile's seeds (look 1) and again after every seed added to its
experiment, at most up to the experiment's seed limit: L = 1 + (limit − profile seeds) planned
looks. Its test at every look runs at α / L, α being its expectation's level. Each look's test
keeps its level for the seeds it reads (a t-test on n seeds is exact whatever came before), so by
the union bound the chance of a false verdict at any look, and so under any stopping rule, is at
most L · α / L = α.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

NAME = "Bonferroni alpha spending over the planned looks"
TEXT = ("Seeds added until decided (`fedclaims verify --profile P --until-decided`) is a separate, sequential "
        "test: a claim is tested on the profile's seeds (look 1), then after every seed added to its experiment, "
        "up to `--max-seeds` (default twice the profile's seeds): L = 1 + (max seeds − profile seeds) planned "
        "looks, each test at α / L (alpha spending with a Bonferroni bound). Each look's test keeps its level, so "
        "the chance of a false PASS or FAIL at any look, whenever the looks stop, is at most α. A claim's "
        "sequential verdict is that of its first decided look. Seeds go only to the claims the profile left "
        "INCONCLUSIVE, while undecided and with a finite figure of the seeds that would decide them, cheapest "
        "decision first (seeds still needed × measured seconds per seed), until `--budget` minutes of added runs "
        "are spent; a fixed-n PASS or FAIL that look 1 cannot decide at α / L keeps its fixed-n verdict. Claims of a family are "
        "corrected together (Holm) at every look, with L counting the looks of all their experiments. The "
        "profile's fixed-n verdicts and its baseline are unchanged.")


@dataclass(frozen=True)
class Looks:
    """The planned looks of one claim's sequential test and the level each test runs at."""

    alpha: float
    planned: int

    def __post_init__(self) -> None:
        if self.planned < 1:
            raise ValueError(f"a sequential test plans at least one look, not {self.planned}")

    @property
    def level(self) -> float:
        """α_j: the same at every look, so the levels of the planned looks add up to α."""
        return self.alpha / self.planned


def default_max_seeds(profile_seeds: int) -> int:
    return 2 * profile_seeds


def planned_looks(added_seeds_allowed: Iterable[int]) -> int:
    """Look 1 on the profile's seeds, then one per seed that may be added to any of the experiments
    the test reads (each given as its limit minus its profile's seeds)."""
    return 1 + sum(max(0, allowed) for allowed in added_seeds_allowed)
