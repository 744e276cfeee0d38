"""The comparisons behind a verdict, each read in its own test statistic, and how far a verdict is
from changing.

Every test a verdict rests on reduces to one or more comparisons of a statistic with critical
values: a one-sided t statistic of a mean against a bound, each side of an interval against a
range, a paired t statistic of an order, a Fisher-z statistic of a correlation. A comparison is
oriented so that larger statistics favour the claim: it *passes* once the statistic reaches the
critical value of its pass level and *fails* once it falls to the negated critical value of its
fail level. A verdict is PASS when every comparison passes, FAIL when any fails, INCONCLUSIVE
otherwise. A count of seeds on one side of a bound (an exact sign test) is a comparison too: its
statistic is the normal quantile of the test's p, so it passes exactly when p ≤ its level.

The same statistics say how near a verdict sits to its decision boundary: the *margin* toward
another verdict is how far (in the statistic's units, standard errors) the statistics must move
for the verdict to become that one. A comparison decided without a spread (a deterministic
value, seeds that all agree) has an infinite statistic: no drift of the numbers moves it.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

from harness.statistics.stats import range_fail_critical, upper_quantile, upper_tail

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"


@dataclass(frozen=True)
class Evidence:
    """One comparison: `statistic` (larger favours the claim) against critical values.

    `df` is the statistic's degrees of freedom (None: standard normal). `pass_alpha`: the level
    at which a large statistic passes (None: the comparison passes whenever it does not fail, as
    for 'not significantly above'; 1.0: it never stands in the way of a PASS). `fail_alpha`: the
    level at which a small statistic fails (None: it cannot fail).
    """

    label: str
    statistic: float
    df: float | None
    pass_alpha: float | None
    fail_alpha: float | None
    se: float | None = None
    """Standard error of the estimate the statistic divides by (None: decided without a spread)."""
    seeds: int = 0
    """Seeds the estimate averages (1 for one seed's correlation)."""
    sources: tuple[str, ...] = ()
    """The observed series the estimate is formed from (one for a mean, two for a paired difference):
    the regression check reads how far the numerics move them to say how far they move the statistic."""
    fisher_z: bool = False
    """The estimate is a Fisher z (a correlation's series are r values)."""
    sign_count: bool = False
    """The statistic is the normal quantile of an exact sign test's p over `seeds` seeds (its critical
    values are those of that p): what decides it is a count of seeds, not a spread."""
    range_width: float | None = None
    """Where the comparison is one side of a two-sided range: the range's width in the statistic's units
    (standard errors). A true value on this edge may also fail on the far side, so this side fails at
    a level that counts both: the chance of FAIL is at most `fail_alpha` at every true value inside the
    range, however narrow (each side at `fail_alpha` alone would give up to twice that)."""

    def _critical(self, alpha: float) -> float:
        if alpha <= 0.0:
            return math.inf
        return upper_quantile(alpha, self.df)

    @property
    def fail_at(self) -> float:
        if self.fail_alpha is None:
            return -math.inf
        return -range_fail_critical(self.fail_alpha, self.range_width, self.df)

    @property
    def pass_at(self) -> float:
        return self.fail_at if self.pass_alpha is None else self._critical(self.pass_alpha)

    @property
    def outcome(self) -> str:
        if math.isnan(self.statistic):
            return "undecided"
        if self.statistic <= self.fail_at:
            return "fail"
        return "pass" if self.statistic >= self.pass_at else "undecided"

    @property
    def p_claim(self) -> float:
        """p-value of the claimed side (the chance of a statistic this large at the boundary)."""
        return self._tail(self.statistic)

    @property
    def p_against(self) -> float:
        """p-value of the opposite side (for a side of a range, with the far side's chance at this edge)."""
        p = self._tail(-self.statistic)
        if self.range_width is not None and not math.isinf(self.range_width) and not math.isnan(p):
            p = min(1.0, p + self._tail(-self.statistic + self.range_width))
        return p

    def _tail(self, value: float) -> float:
        if math.isnan(value):
            return math.nan
        return upper_tail(value, self.df)

    def scaled(self, factor: float) -> Evidence:
        """The same comparison with both levels multiplied by `factor` (a multiplicity correction)."""
        return replace(self, pass_alpha=None if self.pass_alpha is None else self.pass_alpha * factor,
                       fail_alpha=None if self.fail_alpha is None else self.fail_alpha * factor)

    def to_dict(self) -> dict:
        return asdict(self)


def decided(label: str, holds: bool, alpha: float = 0.05) -> Evidence:
    """A comparison read without a spread: it holds or not, and no drift of the numbers moves it."""
    return Evidence(label, math.inf if holds else -math.inf, None, alpha, alpha)


def combine(evidence: Sequence[Evidence]) -> str:
    """PASS if every comparison passes, FAIL if any fails, else INCONCLUSIVE."""
    outcomes = [e.outcome for e in evidence]
    if not outcomes:
        return INCONCLUSIVE
    if "fail" in outcomes:
        return FAIL
    return PASS if all(o == "pass" for o in outcomes) else INCONCLUSIVE


def margins(evidence: Sequence[Evidence]) -> dict[str, float]:
    """How far the statistics must move for the verdict to become each other verdict.

    Leaving PASS takes one comparison leaving its pass region; reaching PASS takes every
    comparison reaching its own; leaving FAIL takes every failing comparison leaving its fail
    region; reaching FAIL takes any one comparison. Infinite where no move of a finite size
    does it; empty where a comparison is undefined (NaN).
    """
    if not evidence or any(math.isnan(e.statistic) for e in evidence):
        return {}
    status = combine(evidence)
    to_pass = max((max(0.0, e.pass_at - e.statistic) for e in evidence), default=0.0)
    to_fail = min(e.statistic - e.fail_at for e in evidence)
    leave_pass = min(e.statistic - e.pass_at for e in evidence)
    failing = [e for e in evidence if e.outcome == "fail"]
    leave_fail = max((e.fail_at - e.statistic for e in failing), default=0.0)
    if status == PASS:
        no_middle = all(e.pass_at <= e.fail_at for e in evidence)
        result = {FAIL: to_fail}
        if not no_middle:
            result[INCONCLUSIVE] = leave_pass
        return {k: _clean(v) for k, v in result.items()}
    if status == FAIL:
        reaches_middle = any(e.pass_at > e.fail_at for e in failing)
        result = {PASS: max(leave_fail, to_pass)}
        if reaches_middle:
            result[INCONCLUSIVE] = leave_fail
        return {k: _clean(v) for k, v in result.items()}
    return {PASS: _clean(to_pass), FAIL: _clean(to_fail)}


def _clean(value: float) -> float:
    return math.inf if math.isnan(value) else float(value)


def nearest(margin: dict[str, float]) -> tuple[str, float] | None:
    """The verdict the statistics are nearest to, and the distance (None if undefined)."""
    if not margin:
        return None
    status = min(margin, key=margin.__getitem__)
    return status, margin[status]


def deciding_p(evidence: Sequence[Evidence]) -> tuple[str, float] | None:
    """The p-value that decided the verdict, in the test's own terms.

    PASS: the largest p of the claimed side (the weakest comparison); FAIL: the smallest p of
    the opposite side (the strongest contradiction); INCONCLUSIVE: the largest p of the claimed
    side (what stands between the data and a PASS).
    """
    finite = [e for e in evidence if math.isfinite(e.statistic)]
    if not finite:
        return None
    status = combine(evidence)
    if status == FAIL:
        failing = [e for e in finite if e.outcome == "fail"]
        if not failing:
            return None
        strongest = min(failing, key=lambda e: e.p_against)
        return f"p (opposite side) = {strongest.p_against:.3g} against α = {strongest.fail_alpha:.3g}", \
            strongest.p_against
    claimed = [e for e in finite if e.pass_alpha is not None]
    if not claimed:
        weakest = min(finite, key=lambda e: e.p_against)
        return f"p (opposite side) = {weakest.p_against:.3g} against α = {weakest.fail_alpha:.3g}", weakest.p_against
    weakest = max(claimed, key=lambda e: e.p_claim)
    return f"p = {weakest.p_claim:.3g} against α = {weakest.pass_alpha:.3g}", weakest.p_claim


def margin_text(evidence: Sequence[Evidence]) -> str:
    """'2.1 SE from INCONCLUSIVE; p = 0.004 against α = 0.05' (empty when nothing can move it)."""
    margin = margins(evidence)
    closest = nearest(margin)
    parts = []
    if closest is not None and math.isfinite(closest[1]):
        parts.append(f"{closest[1]:.2f} SE from {closest[0]}")
    elif closest is not None:
        parts.append("decided without a spread")
    p = deciding_p(evidence)
    if p is not None:
        parts.append(p[0])
    return "; ".join(parts)


def _holm_order(p_values: Sequence[float]) -> list[int]:
    return sorted(range(len(p_values)), key=lambda i: (math.isnan(p_values[i]), p_values[i]))


def holm_levels(p_values: Sequence[float], alpha: float) -> list[float]:
    """Holm's step-down: the level each hypothesis is tested at (0 once one is not rejected)."""
    levels = [0.0] * len(p_values)
    m = len(p_values)
    for rank, index in enumerate(_holm_order(p_values)):
        level = alpha / (m - rank)
        levels[index] = level
        if not p_values[index] < level:
            break
    return levels


def holm_rank_levels(p_values: Sequence[float], alpha: float) -> list[float]:
    """The level Holm's step-down gives each hypothesis's rank, α / (m − rank), whether or not the
    step-down reaches it (the level it is tested at once those ranked before it are rejected)."""
    levels = [0.0] * len(p_values)
    for rank, index in enumerate(_holm_order(p_values)):
        levels[index] = alpha / (len(p_values) - rank)
    return levels


def holm_rejection_levels(p_values: Sequence[float], alpha: float) -> list[float]:
    """Levels at which comparing each p with its level reproduces Holm's step-down: its rank's level
    up to the first hypothesis not rejected, and that hypothesis's level for every later one (whose
    p is no smaller, so it is not rejected either). Never 0, so the levels can divide."""
    reached = holm_levels(p_values, alpha)
    stop = max(reached, default=alpha)
    return [level if level > 0 else stop for level in reached]
