"""The digest that opens REPORT.md: per paper, its central claims (the abstract's and
conclusion's, `central:` in its claim file) with the verdict and evidence level at every profile
and one number against the paper's, then one line of counts per profile, split by evidence level
(`harness.verdicts.levels`). At most `MAX_LINES` lines including the report's header."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping

from scipy import stats

from harness.loading.catalog import Catalog
from harness.report.sequential import extended
from harness.report.tally import Sequential, counted_decision, last_word, tally
from harness.schema.expectations.base import ExpectationBase
from harness.verdicts.attribution import UNEXPLAINED
from harness.verdicts.levels import LEARNED, Level
from harness.verdicts.verify import Verdict

MAX_LINES = 90
SHORT_STATUS = {"PASS": "PASS", "FAIL": "FAIL", "INCONCLUSIVE": "INCONCLUSIVE", "SKIPPED": "—", "ERROR": "ERROR"}


def bound_text(expectation: ExpectationBase | None, labels: Mapping[str, str] | None = None) -> str:
    """A short form of what an expectation admits ('> 0', 'in [0.63, 0.77]', 'A > B > C')."""
    return expectation.brief(labels) if expectation is not None else "none"


def tested_and_paper(catalog: Catalog, claim_id: str, profile: str) -> str:
    """'tested: > 0; the paper: in [0.63, 0.77], not tested at this scale', or 'tested: X (the paper's)'."""
    loaded = catalog.claim(claim_id)
    labels = {name: v.label or name for name, v in catalog.specs[loaded.claim.experiment].spec.variants.items()}
    tested = bound_text(loaded.claim.expect.get(profile), labels)
    paper_expectation = loaded.claim.expect.get("paper")
    if loaded.claim.paper_bound is not None:
        return f"tested: {tested}; the paper: {loaded.claim.paper_bound}, not tested at this scale"
    if profile == "paper" or paper_expectation is None:
        return f"tested: {tested}"
    paper = bound_text(paper_expectation, labels)
    if paper == tested:
        return f"tested: {tested} (the paper's)"
    return f"tested: {tested}; the paper: {paper}, not tested at this scale"


def _observed_number(series: Mapping[str, Mapping], tested_alpha: float | None = None) -> str:
    """The observed mean (or pooled r) of each series (`Verdict.numbers`), as short text: '21.7 ± 1.2',
    'pooled r −0.65, 99.4% [−0.84, −0.31] as tested (95% [−0.8, −0.4])' where the test reads the pool at
    `tested_alpha` (its (1 − 2α) interval, the one a range's PASS asks to lie inside), 'pooled r −0.65,
    descriptive 95% [−0.8, −0.4]' where it does not, '16.9 / 20.9 / 16.8' for several variants in the
    observation's order."""
    parts = []
    for label, numbers in series.items():
        if label.startswith("spread reference: ") or numbers.get("mean") is None:
            continue
        pooled = numbers.get("pooled")
        several = numbers.get("n", 0) > 1
        if pooled and several:
            parts.append(pooled_text(pooled, numbers["n"], tested_alpha))
        else:
            spread = f" ± {numbers['std']:.2g}" if several and numbers.get("std") else ""
            parts.append(f"{numbers['mean']:.3g}{spread}")
    if len(parts) > 1:
        return " / ".join(part.split(" ± ")[0] for part in parts)
    return parts[0] if parts else ""


def pooled_text(pooled: Mapping[str, float], seeds: int, tested_alpha: float | None) -> str:
    """A pooled correlation with its interval, labelled with its level. The recorded interval is the
    descriptive 95% one, z ± t(0.025, seeds − 1)·se in Fisher z (`PooledCorrelation`); the tested one is
    the same estimate and se at the test's level."""
    descriptive = f"95% [{pooled['low']:+.2f}, {pooled['high']:+.2f}]"
    if tested_alpha is None:
        return f"pooled r {pooled['r']:+.2f}, descriptive {descriptive}"
    z, low, high = (math.atanh(max(-1 + 1e-12, min(1 - 1e-12, pooled[k]))) for k in ("r", "low", "high"))
    scale = stats.t.isf(tested_alpha, seeds - 1) / stats.t.isf(0.025, seeds - 1)
    below, above = (z - low) * scale, (high - z) * scale
    return (f"pooled r {pooled['r']:+.2f}, {1 - 2 * tested_alpha:.1%} [{math.tanh(z - below):+.2f}, "
            f"{math.tanh(z + above):+.2f}] as tested ({descriptive})")


def _tested_alpha(catalog: Catalog, claim_id: str, profile: str, level: float | None) -> float | None:
    """The level the claim's test reads its pooled estimate at (`level`: a later look's), None where
    it reads each seed on its own."""
    expectation = catalog.claim(claim_id).claim.expect.get(profile)
    if expectation is None or expectation.skips or expectation.every_seed:
        return None
    return level if level is not None else catalog.claim(claim_id).claim.level_at(profile)


def _number_cell(catalog: Catalog, verdict: Verdict, entry: Mapping | None) -> str:
    """The verdict's number; where seeds were added until decided, the last look's, on its seeds."""
    fixed = _observed_number(verdict.numbers or {}, _tested_alpha(catalog, verdict.claim, verdict.profile, None))
    if entry is None or not extended(entry):
        return fixed
    if entry.get("numbers"):
        level = entry.get("alpha_at_look")
        tested = None if level is None else _tested_alpha(catalog, verdict.claim, verdict.profile, level)
        return f"{_observed_number(entry['numbers'], tested)} at {len(entry['seeds'])} seeds (sequential)"
    return f"{fixed} at fixed n"


def _status_cell(verdict, level: Level | None) -> str:
    if verdict is None:
        return "—"
    if verdict.status == "SKIPPED":
        return "no data here" if verdict.data_unavailable else "—"
    grade = {"learned": "", "weak": ", weak", "unleveled": ", no level"}.get(level.group if level else "", "")
    return f"{SHORT_STATUS[verdict.status]}{grade}"


def _strongest(per_profile: Mapping[str, Verdict], profiles: list[str]) -> Verdict | None:
    """The verdict at the last profile (the largest scale) that decided the claim."""
    decided = [per_profile[p] for p in profiles if p in per_profile
               and per_profile[p].status in ("PASS", "FAIL", "INCONCLUSIVE")]
    return decided[-1] if decided else None


def _undecided_why(verdicts) -> str:
    """Why no profile decided a claim, in a few words."""
    if any(v.data_unavailable for v in verdicts):
        return "data set not available here"
    return "not tested at these scales"


def counts_line(verdicts, levels: Mapping[tuple[str, str], Level], sequential: Sequential | None = None) -> str:
    """'where the models learn: 3 PASS, 1 FAIL · weak: … · costs … · analytic: 18 of 18 hold · …', each verdict
    by its last word (`harness.report.tally`)."""
    counted = tally(verdicts, levels, sequential)

    def tallied(counts: Counter) -> str:
        parts = [f"{counts[s]} {SHORT_STATUS[s]}" for s in ("PASS", "FAIL", "INCONCLUSIVE", "ERROR") if counts[s]]
        return ", ".join(parts) or "none"

    parts = [f"where the models learn: {tallied(counted.of('learned'))}", f"weak: {tallied(counted.of('weak'))}"]
    for group, title in (("unleveled", "no learning level"), ("independent", "independent of learning"),
                         ("cost", "costs")):
        if group in counted.groups:
            parts.append(f"{title}: {tallied(counted.groups[group])}")
    for group, title in (("analytic", "analytic"), ("implementation", "implementation checks")):
        held = counted.of(group)
        if held:
            parts.append(f"{title}: {held['PASS']} of {sum(held.values())} hold")
    if "diagnostic" in counted.groups:
        parts.append(f"diagnostics: {sum(counted.groups['diagnostic'].values())}")
    if "repeat" in counted.groups:
        parts.append(f"repeats of another claim, counted under it: {sum(counted.groups['repeat'].values())}")
    if counted.unavailable:
        parts.append(f"data set not available here: {counted.unavailable}")
    if counted.not_tested:
        parts.append(f"not tested here: {counted.not_tested}")
    return " · ".join(parts)


def _sequential_cell(entry: Mapping | None) -> str:
    """What seeds added until decided found: '; PASS at 6 seeds (sequential)' where they changed the
    fixed-n verdict, '; still INCONCLUSIVE at 7 seeds (sequential)' where seeds were added in vain."""
    if entry is None or not extended(entry):
        return ""
    still = "" if entry["status"] != entry["fixed_n"]["status"] else "still "
    return f"; {still}{SHORT_STATUS[entry['status']]} at {len(entry['seeds'])} seeds (sequential)"


def digest(catalog: Catalog, verdicts, levels: Mapping[tuple[str, str], Level], profiles: list[str],
           link: Callable[[str], str], along: Mapping[str, list[str]] | None = None,
           sequential: Sequential | None = None,
           proxies: Mapping[tuple[str, str], str] | None = None,
           confirmed: Mapping[str, tuple[str, str]] | None = None) -> list[str]:
    """The digest's lines (heading included); `along`: per paper, what its scale studies found of its
    central claims (one line each); `sequential`: per (claim, profile), what `--until-decided` found
    (`harness.sequential.results`), shown beside the fixed-n verdict it changed and counted as the last word;
    `confirmed`: the confirmatory tests decided where the models learn, counted in the decided line."""
    sequential = sequential or {}
    by_claim: dict[str, dict[str, Verdict]] = {}
    for verdict in verdicts:
        by_claim.setdefault(verdict.claim, {})[verdict.profile] = verdict
    lines = ["## Digest",
             "Per paper, its central claims (abstract and conclusion) at each profile; *weak*: a variant the claim "
             f"reads barely learns (below {LEARNED} of the paper's gain over chance) or the effect is below the "
             "smallest of interest. The number is the largest scale's, against the bound tested there and the paper's.",
             "A PASS against a weaker bound than the paper's, or on a proxy, says so beside it.", ""]
    for paper, claim_file in catalog.papers.items():
        if not any(v.paper == paper for v in verdicts):
            continue
        checks = implementation_checks(paper, verdicts, levels)
        central = [claim for claim in claim_file.central if claim not in checks]
        lines += [f"### {claim_file.title}",
                  "| central claim | " + " | ".join(f"`{p}`" for p in profiles) + " | largest scale's number |",
                  "|---|" + "---|" * len(profiles) + "---|"]
        lines += [_central_row(catalog, claim_id, by_claim.get(claim_id, {}), levels, profiles, link, sequential,
                               proxies or {}) for claim_id in central]
        besides = len(claim_file.central) - len(central)
        decided = decided_where_learning(central, by_claim, levels, profiles, sequential, besides, confirmed)
        lines += ["", f"- {decided}"]
        for profile in profiles:
            at = [v for v in verdicts if v.paper == paper and v.profile == profile]
            if at and any(v.status != "SKIPPED" for v in at):
                lines.append(f"- `{profile}`: {counts_line(at, levels, sequential)}")
        lines += (along or {}).get(paper, [])
        lines += ["", *implementation_table(paper, checks, by_claim, profiles, link)]
    return lines + unexplained_line(verdicts, levels)


def _central_row(catalog: Catalog, claim_id: str, per_profile: Mapping[str, Verdict],
                 levels: Mapping[tuple[str, str], Level], profiles: list[str], link: Callable[[str], str],
                 sequential: Sequential, proxies: Mapping[tuple[str, str], str]) -> str:
    """A central claim's row: its verdict at each profile (a PASS against a weaker bound labelled so), and the
    largest scale's number."""
    statement = " ".join(catalog.claim(claim_id).claim.statement.split())
    cells = []
    for profile in profiles:
        verdict = per_profile.get(profile)
        text = _status_cell(verdict, levels.get((claim_id, profile))) + _sequential_cell(
            sequential.get((claim_id, profile)))
        if verdict is not None and last_word(verdict, sequential) == "PASS":
            text += weaker_label(catalog, claim_id, profile, (claim_id, profile) in proxies)
        cells.append(text)
    strongest = _strongest(per_profile, profiles)
    proxy = strongest is not None and (claim_id, strongest.profile) in proxies
    number = (f"`{strongest.profile}`: "
              f"{_number_cell(catalog, strongest, sequential.get((claim_id, strongest.profile)))}"
              f"{' (a proxy)' if proxy else ''} "
              f"({tested_and_paper(catalog, claim_id, strongest.profile)})" if strongest
              else _undecided_why(per_profile.values()))
    return f"| [{_short(statement, 70)}]({link(claim_id)}) | " + " | ".join(cells) + f" | {number} |"


SHORT_BOUND = 24
"""The longest tested bound a status cell names; a longer one (an ordering of long labels) reads 'a weaker bound'."""


def weaker_label(catalog: Catalog, claim_id: str, profile: str, proxy: bool) -> str:
    """' (> 0; the paper's in [0.63, 0.77]: not tested)' where the bound a PASS at `profile` met is weaker than
    the paper's: the profile's expectation is not the `paper:` one, or the claim states the paper's own bound
    (`paper_bound`) beyond every expectation; ' (a proxy, …)' where its number stands in for the paper's
    quantity; '' where the PASS met the paper's bound on the paper's quantity."""
    claim = catalog.claim(claim_id).claim
    labels = {name: v.label or name for name, v in catalog.specs[claim.experiment].spec.variants.items()}
    tested = bound_text(claim.expect.get(profile), labels)
    paper = claim.paper_bound or bound_text(claim.expect.get("paper"), labels)
    weaker = claim.paper_bound is not None or (profile != "paper" and "paper" in claim.expect and tested != paper)
    if weaker:
        tested = tested if len(tested) <= SHORT_BOUND else "a weaker bound"
        return f" ({'a proxy, ' if proxy else ''}{tested}; the paper's {paper}: not tested)"
    return " (a proxy of the paper's quantity)" if proxy else ""


def implementation_checks(paper: str, verdicts, levels: Mapping[tuple[str, str], Level]) -> list[str]:
    """The paper's claims that are implementation checks at some profile, in the verdicts' order."""
    return list(dict.fromkeys(v.claim for v in verdicts if v.paper == paper and v.status != "SKIPPED"
                              and levels[(v.claim, v.profile)].group == "implementation"))


def implementation_table(paper: str, checks: list[str], by_claim: Mapping[str, Mapping[str, Verdict]],
                         profiles: list[str], link: Callable[[str], str]) -> list[str]:
    """The paper's implementation checks in their own short table: fixed by the code path, never reproductions."""
    if not checks:
        return []
    lines = ["Implementation checks (fixed by the code path, not reproductions):", "",
             "| implementation check | " + " | ".join(f"`{p}`" for p in profiles) + " |",
             "|---|" + "---|" * len(profiles)]
    for claim in checks:
        per_profile = by_claim.get(claim, {})
        cells = [SHORT_STATUS[per_profile[p].status] if p in per_profile else "—" for p in profiles]
        lines.append(f"| [`{claim.removeprefix(paper + '.')}`]({link(claim)}) | " + " | ".join(cells) + " |")
    return lines + [""]


def unexplained_line(verdicts, levels: Mapping[tuple[str, str], Level]) -> list[str]:
    """The FAILs the attribution rule (`harness.verdicts.attribution`) leaves UNEXPLAINED, named, or counted per
    profile where naming them would run past `DECIDED_LINE` characters."""
    by_profile: dict[str, list[str]] = {}
    for v in verdicts:
        if v.status == "FAIL" and levels[(v.claim, v.profile)].whose == UNEXPLAINED:
            by_profile.setdefault(v.profile, []).append(f"`{v.claim}`")
    head = ("**FAILs unexplained** (whose they are, the paper's, its setting's, the implementation's or the "
            "scale's, the evidence does not say): ")
    named = "; ".join(f"at `{profile}` {', '.join(claims)}" for profile, claims in by_profile.items())
    if len(head) + len(named) > DECIDED_LINE:
        named = "; ".join(f"{len(claims)} at `{profile}`" for profile, claims in by_profile.items()) + \
            " (each claim's evidence level in its detail says why)"
    return [f"{head}{named or 'none'}.", ""]


DECIDED_LINE = 290
"""The longest a paper's 'central claims decided' line may be before it counts instead of naming."""


def decided_where_learning(central: list[str], by_claim: Mapping[str, Mapping[str, Verdict]],
                           levels: Mapping[tuple[str, str], Level], profiles: list[str],
                           sequential: Sequential | None = None, checks: int = 0,
                           confirmed: Mapping[str, tuple[str, str]] | None = None) -> str:
    """'Central claims decided where the models learn: k of n (…)': a central claim counts when some profile's
    last word on it (`harness.report.tally`: on the profile's seeds, or on the seeds added until decided) is PASS
    or FAIL with its models at level LEARNED or above, or when its confirmatory test decided it there
    (`confirmed`: claim -> (verdict, profile), `harness.report.confirmatory.decided`), which is then its last word;
    `central` holds no implementation check (`checks` more are, shown in their own table)."""
    decided: dict[str, list[str]] = {}
    confirmed = confirmed or {}
    for claim_id in central:
        if claim_id in confirmed:
            said, profile = confirmed[claim_id]
            decided.setdefault(f"{said} at `{profile}` (confirmatory)", []).append(f"`{claim_id.split('.', 1)[-1]}`")
            continue
        found = counted_decision(claim_id, by_claim.get(claim_id, {}), levels, profiles, sequential)
        if found is not None:
            said, profile = found
            entry = (sequential or {}).get((claim_id, profile))
            where = f"{said} at `{profile}`" + (" (sequential)" if entry is not None and extended(entry) else "")
            decided.setdefault(where, []).append(f"`{claim_id.split('.', 1)[-1]}`")
    besides = f" ({checks} more are implementation checks)" if checks else ""
    head = (f"**Central claims decided where the models learn: {sum(map(len, decided.values()))} of {len(central)}**"
            f"{besides}")
    named = "; ".join(f"{where}: {', '.join(ids)}" for where, ids in decided.items())
    if len(head) + len(named) > DECIDED_LINE:  # the table above names each claim's verdict
        named = "; ".join(f"{len(ids)} {where}" for where, ids in decided.items())
    return head + (f": {named}." if decided else ".")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
