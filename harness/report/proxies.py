"""Where a claim's number stands in for the paper's quantity (`Metric.proxy`): the proxy's words and
conversion, read from the records behind each verdict, for every place the report shows the number."""
from __future__ import annotations

from collections.abc import Mapping

from harness.loading.catalog import Catalog


def proxy_notes(catalog: Catalog, verdicts, records: Mapping[str, dict | None]) -> dict[tuple[str, str], str]:
    """Per (claim, profile), the distinct proxy texts of its metric over the records it read ('' : none)."""
    notes: dict[tuple[str, str], str] = {}
    for verdict in verdicts:
        claim = catalog.claim(verdict.claim).claim
        metric = catalog.specs[claim.experiment].kind.metrics.get(getattr(claim.observe, "metric", ""))
        if metric is None or not metric.proxy:
            continue
        if callable(metric.proxy):
            texts = [metric.proxy(record["result"]) for key in verdict.runs
                     if (record := records.get(key)) is not None and record.get("status") == "ok"]
        else:
            texts = [metric.proxy]
        found = list(dict.fromkeys(text for text in texts if text))
        if found:
            notes[(verdict.claim, verdict.profile)] = "; ".join(found)
    return notes
