"""Operating characteristics of the sequential rule of `fedclaims verify --until-decided`: the
figures of docs/architecture.md's table ("Seeds added until a claim is decided").

    .venv/bin/python -m benchmarks.sequential_power [--paths 200000]

A one-sided one-sample t-test (an `above` claim) whose seeds grow one per look from the
profile's to the max seeds, stopping at its first PASS or FAIL, under today's plan (the profile's
verdict at 0.7 α as look 1, the rest spent over the added seeds: `harness.statistics.sequential_rule`),
under the two rules before it (the profile's verdict at α, then O'Brien-Fleming spending of a second α
over the looks; and the Bonferroni split, α / L at every look, after the profile at α), and under
O'Brien-Fleming spending over every look with the profile's verdict one of them; fixed-n tests for
reference. The true mean lies d standard deviations above the bound
(d = 0: on it, where a PASS and a FAIL are both false). Paths are drawn with a generator seed of
their own, not the calibration's. Not collected by pytest (its name does not start with test_).
"""
from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import stats as scipy_stats

from harness.statistics import sequential_boundary as boundary
from harness.statistics.sequential_rule import Looks

ALPHA = 0.05
SEED = 7


def simulate(levels: list[float], first: int, effect: float, paths: int, seed: int = SEED) -> dict[str, float]:
    """P(PASS), P(FAIL) and the mean seeds used of the looks on first, first + 1, … seeds at
    `levels` (one per look); a fixed-n test is one look."""
    rng = np.random.default_rng(seed)
    last = first + len(levels) - 1
    x = effect + rng.standard_normal((paths, last))
    total, squares = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
    status = np.zeros(paths, dtype=int)  # 0 undecided, 1 PASS, -1 FAIL
    used = np.full(paths, last)
    for j, level in enumerate(levels):
        n = first + j
        mean = total[:, n - 1] / n
        sd = np.sqrt(np.maximum(squares[:, n - 1] - n * mean * mean, 0.0) / (n - 1))
        t = mean / (sd / math.sqrt(n))
        critical = scipy_stats.t.isf(level, n - 1)
        open_ = status == 0
        passed, failed = open_ & (t > critical), open_ & (t < -critical)
        status[passed], status[failed] = 1, -1
        used[passed | failed] = n
    return {"PASS": float(np.mean(status == 1)), "FAIL": float(np.mean(status == -1)),
            "seeds": float(np.mean(used))}


def designs(first: int, last: int) -> dict[str, tuple[list[float], int]]:
    looks = Looks.plan(ALPHA, first, 1 + last - first)
    alone = list(boundary.calibrated(first, boundary.boundary_alone(first, last, ALPHA)))
    return {
        f"{first} seeds, fixed n, α = {ALPHA}": ([ALPHA], first),
        f"{first} seeds, fixed n, 0.7 α (the profile's verdict now)": ([looks.levels[0]], first),
        f"{last} seeds, fixed n planned, α = {ALPHA}": ([ALPHA], last),
        f"{first} → {last} seeds, profile at α, then α / {looks.planned} per look (first rule)":
            ([ALPHA] + [ALPHA / looks.planned] * (looks.planned - 1), first),
        f"{first} → {last} seeds, profile at α, then O'Brien-Fleming over a second α (second rule)":
            ([ALPHA] + alone[1:], first),
        f"{first} → {last} seeds, O'Brien-Fleming over every look, the profile's included": (alone, first),
        f"{first} → {last} seeds, profile at 0.7 α, the rest over the added seeds (now)": (list(looks.levels), first),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=200_000)
    args = parser.parse_args()
    effects = (0.5, 1.0, 2.0)
    for first, last in ((5, 10), (3, 6)):
        looks = Looks.plan(ALPHA, first, 1 + last - first)
        print(f"\n{first} → {last}: levels α_j = " + ", ".join(f"{level:.4f}" for level in looks.levels)
              + " (O'Brien-Fleming over every look: " + ", ".join(
                  f"{level:.4f}" for level in boundary.calibrated(first, boundary.boundary_alone(first, last, ALPHA)))
              + ")")
        print("| design | false PASS (d = 0) | false FAIL (d = 0) | "
              + " | ".join(f"d = {d:g}" for d in effects) + " |")
        print("|---|---|---|" + "---|" * len(effects))
        for name, (levels, start) in designs(first, last).items():
            null = simulate(levels, start, 0.0, args.paths)
            cells = []
            for d in effects:
                r = simulate(levels, start, d, args.paths)
                cells.append(f"{r['PASS']:.2f}" + (f" ({r['seeds']:.1f})" if len(levels) > 1 else ""))
            print(f"| {name} | {null['PASS']:.3f} | {null['FAIL']:.3f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
