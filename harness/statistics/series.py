"""An observation's values: one value per seed per series (`Series`), and the series of one
observation (`Observed`), as `harness.verdicts.observe` reads them from records and the tests of
`harness.verdicts` decide them."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from harness.statistics.correlation_estimates import Correlation, PooledCorrelation, pooled_correlation
from harness.statistics.stats import summarize


def _fmt(v: float) -> str:
    return f"{v:.4g}"


@dataclass
class Series:
    """Per-seed values of one variant (or of a paired difference, or a correlation across clients).

    `deterministic`: every value is fixed by its run's config (one seed decides a mean), up to a
    relative `agreement`. `correlations`: for a correlation observation, the per-seed statistic
    with its interval. `invariant`: the values do not depend on the CPU's floating-point kernels.
    `quantity` names what is observed (a metric, a paired difference, a correlation) for the
    regression check's drift measurements. `structural`: the metric is fixed by the protocol's
    structure or exact algebra (`Metric.structural`): each seed is a check of its own, not a draw.
    """

    label: str
    values: dict[int, float]
    deterministic: bool = False
    correlations: dict[int, Correlation] = field(default_factory=dict)
    invariant: bool = False
    agreement: float = 0.0
    quantity: str = ""
    structural: bool = False
    notes: list[str] = field(default_factory=list)
    """Missing evaluations the metric's definition treated (skipped), each naming its record and round."""

    @property
    def finite(self) -> list[float]:
        return [v for v in self.values.values() if math.isfinite(v)]

    @property
    def undefined(self) -> dict[int, str]:
        """Seeds whose correlation is undefined, with the reason."""
        return {seed: c.undefined for seed, c in self.correlations.items() if c.undefined}

    @property
    def pooled(self) -> PooledCorrelation | None:
        """Inverse-variance pooled correlation over the seeds (None unless every seed is defined)."""
        if not self.correlations or self.undefined:
            return None
        return pooled_correlation(list(self.correlations.values()))

    def _seed_text(self, seed: int, value: float) -> str:
        c = self.correlations.get(seed)
        if c is None:
            return f"s{seed}: {_fmt(value)}"
        if c.undefined:
            return f"s{seed}: undefined ({c.undefined})"
        return f"s{seed}: {_fmt(value)} [{_fmt(c.low)}, {_fmt(c.high)}] (n = {c.n} clients)"

    def text(self) -> str:
        values = list(self.values.values())
        per_seed = ", ".join(self._seed_text(seed, v) for seed, v in self.values.items())
        if self.correlations:
            pooled = self.pooled
            pooled_text = (f"pooled {_fmt(pooled.r)} [{_fmt(pooled.low)}, {_fmt(pooled.high)}]; "
                           if pooled is not None and len(values) > 1 else "")
            return f"{self.label}: {pooled_text}{per_seed}"
        if len(values) == 1:
            return f"{self.label}: {_fmt(values[0])}"
        s = summarize(values)
        return f"{self.label}: {_fmt(s.mean)} ± {s.spread_text()} (n={s.n}; {per_seed})"

    def numbers(self) -> dict[str, Any]:
        s = summarize(list(self.values.values()))
        data: dict[str, Any] = {"mean": s.mean, "std": s.std, "n": s.n,
                                "values": {str(k): v for k, v in self.values.items()},
                                "quantity": self.quantity, "numerics_invariant": self.invariant}
        if self.correlations:
            data["intervals"] = {str(k): [c.low, c.high] for k, c in self.correlations.items()}
            data["clients"] = {str(k): c.n for k, c in self.correlations.items()}
            pooled = self.pooled
            if pooled is not None:
                data["pooled"] = {"r": pooled.r, "low": pooled.low, "high": pooled.high}
        return data


@dataclass
class Observed:
    series: list[Series]
    spread: Series | None = None
    spread_ratio: bool = False
    """The observation is the ratio of the two series' seed-to-seed standard deviations."""

    @property
    def notes(self) -> list[str]:
        """The missing evaluations every series' metric treated as its definition says."""
        spread = [self.spread] if self.spread is not None else []
        return list(dict.fromkeys(note for s in [*self.series, *spread] for note in s.notes))

    def text(self) -> str:
        text = "; ".join(s.text() for s in self.series)
        if self.spread_ratio:
            first, second = (summarize(list(s.values.values())).std for s in self.series)
            ratio = first / second if second > 0 else math.inf
            text += f"; ratio of their seed standard deviations {_fmt(ratio)}"
        return text
