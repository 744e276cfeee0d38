"""The findings below REPORT.md's digest: per paper and per profile that trained models, what
reproduced where the models learn, what holds only where they barely learn (weak evidence), the
measured costs, what did not reproduce, what the scale cannot decide and what it did not test.

Each verdict's group is its evidence level (`harness.verdicts.levels`). Every row shows the bound the
verdict tested and, where the profile's expectation differs from the paper's, the paper's beside
it, labelled as not tested at this scale.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from harness.loading.catalog import Catalog
from harness.report.digest import counts_line, tested_and_paper
from harness.report.sequential import extended
from harness.report.tally import Sequential, last_word
from harness.schema import claim as schema
from harness.verdicts.levels import LEARNED, Level


def evidence_of(catalog: Catalog, claim_id: str) -> str:
    """'empirical', 'analytic' or 'diagnostic' by the claim's role and its kind's declaration."""
    loaded = catalog.claim(claim_id)
    if getattr(loaded.claim, "role", "paper") in schema.LABELLED_ROLES:
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


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def findings(catalog: Catalog, verdicts, levels: Mapping[tuple[str, str], Level], profiles: list[str], link,
             studies: Mapping[str, list[str]] | None = None,
             data_problems: Mapping[str, str] | None = None, legend: Sequence[str] = (),
             proxies: Mapping[tuple[str, str], str] | None = None, sequential: Sequential | None = None) -> list[str]:
    """The findings section, opened by the verdicts' `legend`: per paper and per profile that ran, then
    the paper's scale studies (lines per paper, `harness.report.studies.study_findings`); each verdict under
    its last word (`harness.report.tally`), as the digest counts it."""
    lines = ["## Findings", "", *legend, "",
             "Per paper and profile, verdicts are grouped by evidence level:",
             f"- *where the models learn*: every variant the claim reads reached at least {LEARNED} of the paper's "
             "gain in accuracy over chance (against the paper's figure for that variant, else the experiment's "
             "reference's), and the effect is no smaller than its metric's smallest of interest;",
             "- *where they barely learn* (weak evidence): a PASS there is not a reproduction, a FAIL not a "
             "non-reproduction, by itself;",
             "- measured costs, and analytic and structural checks (a rule, a count, exact algebra: they hold at any "
             "scale).",
             "", "Every row gives the bound tested at that profile, and the paper's where it differs.", ""]
    by_paper: dict[str, list] = {}
    for verdict in verdicts:
        by_paper.setdefault(verdict.paper, []).append(verdict)
    for paper, paper_verdicts in by_paper.items():
        lines += [f"### {catalog.papers[paper].title}", ""]
        for profile in profiles:
            at = [v for v in paper_verdicts if v.profile == profile]
            if at:
                lines += _paper_at_profile(catalog, at, levels, profile, link, data_problems or {}, proxies or {},
                                           sequential or {})
        along = (studies or {}).get(paper)
        if along:
            lines += ["**Along the scale studies** — where the observation moves as the scale grows toward the "
                      "paper's (the value at each point, then the trend):", "", *along, ""]
    return lines


def _row(catalog: Catalog, verdict, level: Level, link, proxy: str = "") -> list[str]:
    """A claim's item: its statement, then what was observed (and what it is a proxy for), the bound
    tested, its level and whose FAIL."""
    loaded = catalog.claim(verdict.claim)
    return [f"- [`{verdict.claim}`]({link(verdict.claim)}): {_short(loaded.claim.statement, 110)}",
            f"  - observed: {_short(verdict.observed, 240) or '—'}",
            *([f"  - a proxy: {_short(proxy, 280)}"] if proxy else []),
            f"  - {tested_and_paper(catalog, verdict.claim, verdict.profile)}",
            f"  - {_short(level.text, 280)}" + (f"; whose FAIL: {level.attribution}" if level.attribution else "")]


def _needed(power: Mapping | None, detail: str = "") -> str:
    """The seeds (or clients) a test's power figure says would decide it, else why no number would."""
    power = power or {}
    if power.get("needed"):
        return f"about {power['needed']} {power.get('unit', 'seeds')} would decide it{detail}"
    return _short(power.get("note") or "no practical number of seeds would decide it", 160)


def _still_needed(verdict, entry: Mapping | None) -> str:
    """What would decide an undecided verdict: at the profile's seeds, or, where seeds were added until decided,
    at its last look, and whether that plan can go on (α left) or a further test needs fresh seeds."""
    if verdict.status != "INCONCLUSIVE":
        return _short(verdict.reason, 280)
    if entry is None or not extended(entry):
        return _needed(verdict.power)
    power = entry.get("power") or {}
    needed = _needed(power, " at the observed effect and spread")
    if entry.get("alpha_spent", 0) >= entry.get("alpha", 1):
        then = "; its plan's α is spent, so a further test takes fresh, pre-registered seeds"
    elif power.get("needed"):
        then = "; its plan has α left for more of its planned looks (`fedclaims verify --until-decided`)"
    else:
        then = ""
    return (f"still INCONCLUSIVE at {len(entry['seeds'])} seeds, added until decided ({entry.get('stopped', '')}): "
            f"{needed}{then}")


DATASET = re.compile(r"dataset '([^']+)'")


def _skipped_lines(verdicts, data_problems: Mapping[str, str]) -> list[str]:
    lines = []
    unavailable: dict[str, list[str]] = {}
    reasons: dict[str, list[str]] = {}
    for verdict in verdicts:
        if verdict.data_unavailable:
            match = DATASET.search(verdict.reason)
            unavailable.setdefault(match.group(1) if match else "a data set", []).append(verdict.claim)
        else:
            reasons.setdefault(_short(verdict.reason, 200), []).append(verdict.claim)
    for name, claims in unavailable.items():
        where = _short(data_problems.get(name, ""), 300)
        lines.append(f"- {len(claims)} claim(s) on {name}: data set not available here"
                     + (f" ({where})" if where else "") + ".")
    for reason, claims in reasons.items():
        lines.append(f"- {len(claims)} claim(s): {reason}")
    return lines


SECTIONS = (
    ("learned", "PASS", "Reproduced where the models learn:"),
    ("learned", "FAIL", "Did not reproduce where the models learn:"),
    ("weak", "PASS", "Holds where the models barely learn (weak evidence, not a reproduction by itself):"),
    ("weak", "FAIL", "Fails where the models barely learn (cannot count as a non-reproduction by itself):"),
    ("unleveled", "PASS", "Holds where no learning level could be read:"),
    ("unleveled", "FAIL", "Fails where no learning level could be read:"),
    ("independent", "PASS", "Quantities independent of learning that hold:"),
    ("independent", "FAIL", "Quantities independent of learning that do not:"),
    ("cost", "PASS", "Measured costs that hold:"),
    ("cost", "FAIL", "Measured costs that do not:"),
    ("analytic", "FAIL", "Analytic or structural checks that fail:"),
    ("implementation", "FAIL", "Implementation checks that fail (the implementation departs from the paper):"),
    ("diagnostic", "FAIL", "Diagnostics that fail (labelled measurements, not the paper's claims):"),
)


def _paper_at_profile(catalog: Catalog, verdicts, levels: Mapping[tuple[str, str], Level], profile: str, link,
                      data_problems: Mapping[str, str], proxies: Mapping[tuple[str, str], str],
                      sequential: Sequential) -> list[str]:
    if all(v.status == "SKIPPED" for v in verdicts):
        return [f"**At `{profile}`** — no claim of this paper was run at this profile.", ""]
    lines = [f"**At `{profile}`** — {counts_line(verdicts, levels, sequential)}.", ""]

    def level(verdict) -> Level:
        return levels[(verdict.claim, verdict.profile)]

    def said(verdict) -> str:
        return last_word(verdict, sequential)

    for group, status, title in SECTIONS:
        chosen = [v for v in verdicts if said(v) == status and level(v).group == group]
        if not chosen:
            continue
        lines += [title, ""]
        for verdict in chosen:
            note = catalog.claim(verdict.claim).claim.note if status == "FAIL" else ""
            lines += _row(catalog, verdict, level(verdict), link, proxies.get((verdict.claim, profile), ""))
            if said(verdict) != verdict.status:
                entry = sequential[(verdict.claim, profile)]
                lines.append(f"  - {verdict.status} on the profile's seeds; {said(verdict)} at "
                             f"{len(entry['seeds'])} seeds, added until decided")
            if note:
                lines.append(f"  - the claim's note: {_short(_first_sentence(note), 240)}")
        lines.append("")
    undecided = [v for v in verdicts if said(v) in ("INCONCLUSIVE", "ERROR") and level(v).group != "analytic"]
    if undecided:
        lines += ["What this scale cannot decide:", ""]
        for v in undecided:
            lines += [*_row(catalog, v, level(v), link, proxies.get((v.claim, profile), "")),
                      f"  - {_still_needed(v, sequential.get((v.claim, profile)))}"]
        lines.append("")
    skipped = [v for v in verdicts if v.status == "SKIPPED" and level(v).group != "analytic"]
    if skipped:
        lines += ["Not tested at this scale:", "", *_skipped_lines(skipped, data_problems), ""]
    return lines
