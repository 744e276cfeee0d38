"""REPORT.md's scale-studies section and each study's own detail file, from the studies' outcomes."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.pipeline import Outcome
from harness.report.cells import DETAIL_DIR
from harness.report.studies import StudyReading, read_outcome


def studies_section(studies: Mapping[str, Outcome], report_path: Path, figures_dir: Path
             ) -> tuple[list[str], dict[Path, str], list[StudyReading]]:
    """The scale studies with records in the store: their trend readings in REPORT.md, each study's
    figures, verdicts per point and readings in its own detail file, and the readings."""
    lines, files, readings, unread = [], {}, [], []
    for name, outcome in studies.items():
        if all(v.status == "SKIPPED" for v in outcome.verdicts):
            unread.append(f"`{name}` ({outcome.catalog.study(name).study.title})")
            continue
        reading = read_outcome(outcome, name, figures_dir)
        readings.append(reading)
        path = report_path.parent / DETAIL_DIR / f"study-{name}.md"
        files[path] = "\n".join(["# Scale study", "", "Back to [REPORT.md](../REPORT.md).", "",
                                  *reading.markdown(path.parent)]) + "\n"
        lines += [f"### `{name}`: {reading.title}", "",
                  f"Axis `{reading.axis}` on `{reading.base}`; the paper's scale {reading.paper_value}. Figures, "
                  "verdicts at every point and the readings: "
                  f"[{DETAIL_DIR}/study-{name}.md]({DETAIL_DIR}/study-{name}.md).",
                  ""]
        for claim in reading.claims:
            fail = claim.whose_fail()
            lines.append(f"- `{claim.claim}` (verdicts {claim.verdicts})" + (f": {fail}" if fail else ""))
            lines += [f"  - {trend.label}: {trend.text}" for trend in claim.trends]
        measured = sum(sum(c.walls) for c in reading.costs)
        to_run = [(c.value, c.estimate * c.planned) for c in reading.costs if not c.walls and c.estimate is not None]
        lines.append(f"- Cost: {measured:,.0f} s of single-threaded runs measured"
                     + (f"; the points not run yet ({', '.join(str(value) for value, _ in to_run)}) would take "
                        f"about {sum(seconds for _, seconds in to_run):,.0f} s more (estimate)" if to_run else "")
                     + ".")
        lines.append("")
    if unread:
        lines += ["Not read here (none of their runs is in this store; `fedclaims study NAME` runs them): "
                  + ", ".join(unread) + ".", ""]
    lines = ["## Scale studies", "",
             "Where a profile cannot decide a claim, a study observes it along one scale axis toward the paper's "
             "own point; the trend says which way the observation moves against the paper's range.", "", *lines]
    return lines, files, readings
