"""A timing's verdict moved: beyond its runs' spread (a changed method) or within it (the machine's load).

A claim on a timing (`compare: verdict` in a baseline: FedHENet's seconds and their saved fractions) differs
between any two runs, and its verdict with the load and the machine under it; comparing it exactly would fail
a check for noise. Its per-seed values are set against the baseline's by Welch's t-test, one series at a time
(Bonferroni over its series): a move beyond `ALPHA` is a regression, a smaller one a fragile verdict.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from scipy import stats

ALPHA = 0.01


def _values(series: Mapping[str, Any] | None) -> list[float]:
    values = (series or {}).get("values") or {}
    return [float(v) for v in values.values() if v is not None and math.isfinite(float(v))]


def timing_move(before: str, after: str, reason: str, numbers: Mapping[str, Any],
                recorded: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(failure, fragile note) of a timing claim whose verdict moved from `before` to `after`."""
    moved = f"verdict changed from {before} to {after} ({reason})"
    tests = []
    for label in sorted(set(numbers) & set(recorded)):
        new, old = _values(numbers[label]), _values(recorded[label])
        if len(new) >= 2 and len(old) >= 2:
            p = float(stats.ttest_ind(new, old, equal_var=False).pvalue)
            tests.append((min(1.0, p * len(numbers)) if math.isfinite(p) else 0.0, label, old, new))
    if not tests:
        return f"{moved}; a timing, but no recorded seeds to set its move against", None
    p, label, old, new = min(tests)
    means = f"{label}: mean {sum(old) / len(old):.4g} → {sum(new) / len(new):.4g}, Welch p = {p:.2g}"
    if p < ALPHA:
        return f"{moved}; the timing moved beyond its runs' spread ({means})", None
    return None, (f"timing: {before} → {after} within its runs' spread ({means}); a timing differs between any "
                  "two runs and with the machine's load")
