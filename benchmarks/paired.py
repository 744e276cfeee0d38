"""Interleaved pairs of rounds: a speed-up with its interval, and what identical code shows.

A row of the training benchmark runs its reference's round right before each of its own, so
every pair shares the machine's state of the moment. A pair's ratio is the reference's seconds
over the candidate's (above 1: the candidate is faster). The median ratio gets a
distribution-free interval (the binomial order-statistic interval of `scipy.stats.quantile_test`),
since the pairs' ratios are skewed by whatever else the machine did.

Pairs of one process are not independent: where the C allocator placed a round's buffers moves a
kernel's speed by several per cent for the life of the process, so two identical loops can
differ by that much in one process and the other way in the next. A control row (the reference
paired with itself) measures this in the same session, and a candidate is called faster or
slower only where its interval clears both 1 and the control's interval.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import quantile_test

CONFIDENCE = 0.95


@dataclass(frozen=True)
class PairedSpeedup:
    """The median of the pairs' ratios and its interval (NaN bounds where pairs are too few)."""

    median: float
    low: float
    high: float
    pairs: int

    @classmethod
    def of(cls, reference_seconds: Sequence[float], candidate_seconds: Sequence[float]) -> PairedSpeedup:
        if len(reference_seconds) != len(candidate_seconds) or not reference_seconds:
            raise ValueError(f"need as many reference rounds as candidate rounds, at least one; got "
                             f"{len(reference_seconds)} and {len(candidate_seconds)}")
        ratios = np.divide(reference_seconds, candidate_seconds)
        interval = quantile_test(ratios, q=1.0, p=0.5).confidence_interval(CONFIDENCE)
        return cls(float(np.median(ratios)), float(interval.low), float(interval.high), len(ratios))

    @property
    def resolved(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    def interval_text(self) -> str:
        return f"[{self.low:.3f}, {self.high:.3f}]" if self.resolved else "too few pairs"


def speed_verdict(candidate: PairedSpeedup, control: PairedSpeedup | None) -> str:
    """Faster or slower where the candidate's interval lies beyond 1 and beyond the control's;
    otherwise what the session could not tell apart, and where the interval would have had to lie
    to be called either."""
    if not candidate.resolved:
        return f"not resolved: {candidate.pairs} pair(s)"
    if control is None or not control.resolved:
        return "not resolved: no control measured in this session"
    slower_below, faster_above = min(1.0, control.low), max(1.0, control.high)
    if candidate.low > faster_above:
        return "faster"
    if candidate.high < slower_below:
        return "slower"
    return (f"no difference resolved: identical code measured {control.median:.3f} {control.interval_text()}; "
            f"slower needs the interval below {slower_below:.3f}, faster above {faster_above:.3f}")
