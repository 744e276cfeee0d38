"""The findings that open REPORT.md: per paper, in plain words, what reproduced, what did not, and
what the scale that ran cannot decide, generated from the verdicts.

Claims are counted in three groups: the paper's *empirical* claims (their runs train models or
time real pipelines), its *analytic and structural* checks (a rule, a count, a coverage: no
training), and *diagnostics* (labelled measurements that are not the paper's claims). Every
accuracy relation is shown with the accuracy level it was tested at beside the paper's own level.
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from harness.catalog import Catalog
from harness.schema import claim as schema
from harness.verify import describe

ACCURACY_METRICS = ("end_accuracy", "final_accuracy", "best_accuracy", "accuracy")
LEVEL_METRIC = {"federated_training": "end_accuracy", "fedhenet": "accuracy"}
"""The metric a kind's accuracy level is read by (what the relations of its claims compare)."""


def evidence_of(catalog: Catalog, claim_id: str) -> str:
    """'empirical', 'analytic' or 'diagnostic'."""
    loaded = catalog.claim(claim_id)
    if getattr(loaded.claim, "role", "paper") == "diagnostic":
        return "diagnostic"
    return catalog.specs[loaded.claim.experiment].kind.evidence


def profiles_that_ran(catalog: Catalog, verdicts) -> list[str]:
    """Profiles at which some empirical claim was decided from records (not only analytic ones that
    every profile shares)."""
    ran = []
    for verdict in verdicts:
        if (verdict.profile not in ran and verdict.status in ("PASS", "FAIL", "INCONCLUSIVE", "ERROR")
                and evidence_of(catalog, verdict.claim) == "empirical"):
            ran.append(verdict.profile)
    return ran


def paper_levels(catalog: Catalog) -> dict[tuple[str, str], tuple[float, str]]:
    """The paper's accuracy per (experiment, variant), from its claims that state one (value, claim id)."""
    levels = {}
    for loaded in catalog.claims:
        claim = loaded.claim
        paper = claim.expect.get("paper")
        if (isinstance(claim.observe, schema.MetricObservation) and len(claim.observe.variants) == 1
                and claim.observe.metric in ACCURACY_METRICS and getattr(claim, "role", "paper") == "paper"):
            value = (paper.approx if isinstance(paper, schema.Approx) else
                     sum(paper.between) / 2 if isinstance(paper, schema.Between) else None)
            if value is not None:
                levels.setdefault((claim.experiment, claim.observe.variants[0]), (value, claim.id))
    return levels


@dataclass
class Levels:
    """Accuracy levels measured at a profile: (experiment, variant, profile) -> mean over seeds."""

    measured: Mapping[tuple[str, str, str], float]
    paper: Mapping[tuple[str, str], tuple[float, str]]

    def text(self, catalog: Catalog, claim_id: str, profile: str) -> str:
        loaded = catalog.claim(claim_id)
        claim = loaded.claim
        metric = getattr(claim.observe, "metric", None)
        if metric not in ACCURACY_METRICS or isinstance(claim.observe, schema.CorrelationObservation):
            return ""
        spec = catalog.specs[claim.experiment].spec
        parts = []
        for variant in claim.observe.variants:
            level = self.measured.get((claim.experiment, variant, profile))
            if level is None:
                continue
            paper = self.paper.get((claim.experiment, variant))
            label = spec.variants[variant].label or variant
            parts.append(f"{label} {level:.1f}%" + (f" (paper {paper[0]:g}%)" if paper else ""))
        return "tested at " + ", ".join(parts) if parts else ""


def measured_levels(catalog: Catalog, requests, records: Mapping[str, dict | None]) -> dict:
    found: dict[tuple[str, str, str], list[float]] = {}
    for request in requests:
        record = records.get(request.key)
        loaded = catalog.specs.get(request.experiment)
        metric = LEVEL_METRIC.get(request.kind)
        if record is None or record.get("status") != "ok" or loaded is None or metric is None:
            continue
        value = loaded.kind.metrics[metric].compute(record["result"], loaded.kind.metrics[metric].args())
        if value == value:  # not NaN
            found.setdefault((request.experiment, request.variant, request.profile), []).append(float(value))
    return {key: statistics.fmean(values) for key, values in found.items()}


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def findings(catalog: Catalog, verdicts, levels: Levels, profiles: list[str], link,
             studies: Mapping[str, list[str]] | None = None) -> list[str]:
    """The findings section: per paper and per profile that ran, then the paper's scale studies
    (lines per paper, `harness.report.studies.study_findings`)."""
    lines = ["## Findings", "",
             "Per paper, at each profile that trained models. *Empirical* claims need trained models (their numbers "
             "depend on the scale); *analytic and structural* checks compute a rule, a count or a coverage and hold "
             "at any scale; *diagnostics* are labelled measurements that are not the paper's claims. The detail of "
             "every claim follows below the findings.", ""]
    by_paper: dict[str, list] = {}
    for verdict in verdicts:
        by_paper.setdefault(verdict.paper, []).append(verdict)
    for paper, paper_verdicts in by_paper.items():
        lines += [f"### {catalog.papers[paper].title}", ""]
        for profile in profiles:
            at = [v for v in paper_verdicts if v.profile == profile]
            if at:
                lines += _paper_at_profile(catalog, at, levels, profile, link)
        if (studies or {}).get(paper):
            lines += ["**Along the scale studies** — where the observation moves as the scale grows toward the "
                      "paper's (the value at each point, then the trend on a log axis):", "", *studies[paper], ""]
    return lines


def _paper_at_profile(catalog: Catalog, verdicts, levels: Levels, profile: str, link) -> list[str]:
    groups = {"empirical": [], "analytic": [], "diagnostic": []}
    for verdict in verdicts:
        groups[evidence_of(catalog, verdict.claim)].append(verdict)
    empirical = groups["empirical"]

    def count(items, status):
        return sum(v.status == status for v in items)

    if all(v.status == "SKIPPED" for v in verdicts):
        return [f"**At `{profile}`** — no claim of this paper was run at this profile.", ""]
    decided = [v for v in empirical if v.status in ("PASS", "FAIL", "INCONCLUSIVE")]
    analytic = groups["analytic"]
    analytic_run = [v for v in analytic if v.status != "SKIPPED"]
    analytic_text = (f"{count(analytic, 'PASS')} of {len(analytic_run)} hold"
                     + (f", {count(analytic, 'FAIL')} fail" if count(analytic, 'FAIL') else "")
                     + (f" ({len(analytic) - len(analytic_run)} not run at this profile)"
                        if len(analytic_run) < len(analytic) else ""))
    lines = [f"**At `{profile}`** — {len(empirical)} empirical claims: {count(empirical, 'PASS')} reproduced, "
             f"{count(empirical, 'FAIL')} did not, {count(empirical, 'INCONCLUSIVE')} undecided by the data, "
             f"{count(empirical, 'SKIPPED')} not tested at this scale, {count(empirical, 'ERROR')} errors. "
             f"Analytic and structural checks: {analytic_text}. Diagnostics: {len(groups['diagnostic'])} "
             "(counted apart).", ""]
    if not decided:
        return lines + ["No empirical claim of this paper was decided at this profile.", ""]

    def row(verdict, what: str) -> str:
        loaded = catalog.claim(verdict.claim)
        paper = loaded.claim.expect.get("paper")
        paper_text = describe(paper, loaded.claim.observe) if paper is not None else "—"
        level = levels.text(catalog, verdict.claim, profile)
        extra = f" — {level}" if level else ""
        return (f"- [`{verdict.claim}`]({link(verdict.claim)}): {_short(loaded.claim.statement, 120)} "
                f"{what}: {_short(verdict.observed, 200) or '—'}; the paper: {_short(paper_text, 90)}{extra}")

    failed = [v for v in empirical if v.status == "FAIL"]
    if failed:
        lines += ["Did not reproduce:", ""]
        for verdict in failed:
            note = catalog.claim(verdict.claim).claim.note
            lines.append(row(verdict, "Observed") + (f". {_short(_first_sentence(note), 240)}" if note else ""))
        lines.append("")
    passed = [v for v in empirical if v.status == "PASS"]
    if passed:
        lines += ["Reproduced:", ""] + [row(v, "Observed") for v in passed] + [""]
    undecided = [v for v in empirical if v.status == "INCONCLUSIVE"]
    if undecided:
        lines += ["What this scale cannot decide (the data straddles the bound):", ""]
        for verdict in undecided:
            power = verdict.power or {}
            needed = (f"about {power['needed']} {power.get('unit', 'seeds')} would decide it"
                      if power.get("needed") else _short(power.get("note") or "no practical number of seeds"))
            lines.append(row(verdict, "Observed") + f"; {needed}")
        lines.append("")
    skipped = [v for v in empirical if v.status == "SKIPPED"]
    if skipped:
        reasons: dict[str, list[str]] = {}
        for verdict in skipped:
            reasons.setdefault(_short(verdict.reason, 200), []).append(verdict.claim)
        lines += ["Not tested at this scale:", ""]
        for reason, claims in reasons.items():
            lines.append(f"- {len(claims)} claim(s): {reason}")
        lines.append("")
    broken = [v for v in groups["analytic"] if v.status == "FAIL"]
    if broken:
        lines += ["Analytic or structural checks that fail:", ""] + [row(v, "Observed") for v in broken] + [""]
    return lines
