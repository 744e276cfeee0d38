"""The reading beside a range's verdict where the range is the span of the paper's own runs
(`span_of_runs`): how many of our seeds fall outside it, against what such a span predicts
(`harness.statistics.spans`)."""
from __future__ import annotations

import math
from typing import Any

from harness.schema.expectations.base import ExpectationBase
from harness.statistics.outcome import FAIL, INCONCLUSIVE
from harness.statistics.series import Observed
from harness.statistics.spans import span_reading


def span_readings(expectation: ExpectationBase, observed: Observed) -> list[dict[str, Any]]:
    """One labelled reading per observed series (FAIL: more seeds outside than the span predicts, at the
    expectation's level; INCONCLUSIVE: no more than it allows), none where the range is not a span."""
    span = expectation.paper_span()
    if span is None:
        return []
    low, high, runs = span
    alpha = float(expectation.model_dump(include={"alpha"})["alpha"])
    readings = []
    for series in observed.series:
        values = {seed: value for seed, value in series.values.items() if math.isfinite(value)}
        if not values:
            continue
        reading = span_reading(values, low, high, runs, alpha)
        named = f" ({series.label})" if len(observed.series) > 1 else ""
        readings.append({"kind": "span-of-runs", "label": f"as the span of the paper's {runs} runs reads{named}",
                         "runs": runs, "outside": sorted(reading.outside), "seeds": sorted(values), "p": reading.p,
                         "status": FAIL if reading.contradicts else INCONCLUSIVE, "text": reading.text()})
    return readings
