"""What the span of a paper's own runs predicts of ours: a reading beside a range's verdict.

A range that is the span (lowest to highest) of the paper's k runs is not a tolerance interval: a further
run of the same method falls outside it with probability 2/(k + 1) (it is equally likely to take any of
the k + 1 ranks among them, two of which lie outside), whatever the distribution. Our n seeds are all
compared with the same k runs, so their count outside is not binomial: given the span, its coverage C is
Beta(k − 1, 2), and the count outside is beta-binomial(n, 2, k − 1), with the binomial's mean n·2/(k + 1) but
a wider spread (a narrow span puts many of our seeds outside at once). The reading tests, one-sided, whether
more of our seeds fall outside than that predicts: p = P(X ≥ observed). A plain binomial test of the share
would reject a faithful reproduction more often than its level says (tests/test_spans.py)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scipy import stats


def outside_probability(runs: int) -> float:
    """The chance that one more run of the same method falls outside the span of `runs` runs."""
    return 2.0 / (runs + 1)


def more_outside_p(outside: int, seeds: int, runs: int) -> float:
    """P(at least `outside` of `seeds` further runs fall outside the span of `runs` runs), all drawn alike."""
    if outside <= 0:
        return 1.0
    return float(stats.betabinom.sf(outside - 1, seeds, 2, runs - 1))


def fewest_seeds_to_contradict(runs: int, alpha: float, most: int = 1000) -> int | None:
    """The fewest seeds whose count outside can contradict the span at `alpha` (all of them outside), None
    beyond `most`: a span of few runs is wide open (k = 3 at α = 0.035: 11 seeds)."""
    return next((n for n in range(1, most + 1) if more_outside_p(n, n, runs) <= alpha), None)


@dataclass(frozen=True)
class SpanReading:
    runs: int
    low: float
    high: float
    outside: dict[int, float]
    """Our seeds outside the span, with their values."""
    seeds: int
    p: float
    alpha: float

    @property
    def contradicts(self) -> bool:
        """More of our seeds outside than the span of the paper's runs predicts, at `alpha`."""
        return self.p <= self.alpha

    def text(self) -> str:
        listed = ", ".join(f"s{seed} = {value:.4g}" for seed, value in sorted(self.outside.items()))
        found = (f"{len(self.outside)} of {self.seeds} seeds outside ({listed})" if self.outside
                 else f"none of {self.seeds} seeds outside")
        fewest = fewest_seeds_to_contradict(self.runs, self.alpha)
        verdict = (f"more of ours outside than the paper's runs predict (p ≤ α = {self.alpha:.3g})" if self.contradicts
                   else f"not more outside than the paper's runs predict at α = {self.alpha:.3g}" + (
                       f" (no count of {self.seeds} seeds could contradict a span of {self.runs} runs at α = "
                       f"{self.alpha:.3g}: that takes {fewest or 'more than 1000'} seeds all outside)"
                       if fewest is None or fewest > self.seeds else ""))
        return (f"[{self.low:.4g}, {self.high:.4g}] is the span of the paper's {self.runs} runs: a run of the same "
                f"method falls outside it with probability 2/(k + 1) = {outside_probability(self.runs):.3g}, "
                f"{self.seeds * outside_probability(self.runs):.2g} of {self.seeds} expected; {found}; "
                f"P(≥ {len(self.outside)} outside) = {self.p:.3g} (beta-binomial: all our seeds meet the same "
                f"{self.runs} runs): {verdict}")


def span_reading(values: Mapping[int, float], low: float, high: float, runs: int, alpha: float) -> SpanReading:
    """The reading of seeds' `values` against the span [low, high] of the paper's `runs` runs, at `alpha`."""
    outside = {seed: value for seed, value in values.items() if not low <= value <= high}
    return SpanReading(runs, low, high, outside, len(values),
                       more_outside_p(len(outside), len(values), runs), alpha)
