"""Claims of one file that test one relation several ways (a `family`): Holm's step-down across
them, each member decided again at the level its rank reaches, and the seeds that would decide a
member left undecided at that level."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.statistics.evidence import Evidence, combine, holm_levels, holm_rank_levels, margin_text, margins, nearest
from harness.statistics.outcome import FAIL, INCONCLUSIVE, PASS, most_needed
from harness.statistics.power import Power, one_sided_units, sign_power, spread_power

if TYPE_CHECKING:
    from harness.verdicts.verdict import Verdict

def _rejection_p(evidence: list[Evidence], alpha: float) -> float:
    """The p-value with which a claim rejects its null, on the scale of its own α: the weakest
    pass (every comparison must pass) or the strongest fail, Bonferroni-adjusted within the claim."""
    claimed = [(e, e.pass_alpha) for e in evidence if e.pass_alpha is not None and e.pass_alpha < 1.0]
    p_pass = max((e.p_claim * alpha / pass_alpha for e, pass_alpha in claimed), default=math.inf)
    against = [(e, e.fail_alpha) for e in evidence if e.fail_alpha is not None]
    p_fail = min((e.p_against * alpha / fail_alpha for e, fail_alpha in against), default=math.inf)
    status = combine(evidence)
    if status == PASS and claimed:
        return p_pass
    if status == FAIL:
        return p_fail
    return min(p_pass, p_fail)


def apply_families(verdicts: list[Verdict], alpha_of: Callable[[Verdict], float]) -> None:
    """Holm's step-down across each family of claims (per paper and profile).

    Each member's rejection p-value (what decided a PASS by significance or a FAIL) is tested
    at Holm's level for its rank; a member whose rejection does not survive is decided again
    with its comparisons at that level (a PASS or FAIL becomes INCONCLUSIVE, or a 'not above'
    FAIL a PASS). A member left INCONCLUSIVE carries the seeds that would decide it at that
    level (`power_at_levels`). `alpha_of` gives a verdict's α (its expectation's).
    """
    groups: dict[tuple[str, str, str], list[Verdict]] = {}
    for verdict in verdicts:
        if verdict.family and verdict.evidence and verdict.status in (PASS, FAIL, INCONCLUSIVE):
            groups.setdefault((verdict.paper, verdict.family, verdict.profile), []).append(verdict)
    for (_, family, _), members in groups.items():
        if len(members) < 2:
            continue
        alpha = min(alpha_of(v) for v in members)
        evidence = {v.claim: [Evidence(**e) for e in v.evidence] for v in members}
        p_values = [_rejection_p(evidence[v.claim], alpha) for v in members]
        levels = holm_levels(p_values, alpha)
        rank_levels = holm_rank_levels(p_values, alpha)
        for verdict, p_value, level, rank_level in zip(members, p_values, levels, rank_levels):
            adjusted = [e.scaled(level / alpha) for e in evidence[verdict.claim]]
            status = combine(adjusted)
            verdict.evidence = [e.to_dict() for e in adjusted]
            verdict.margins = margins(adjusted)
            verdict.margin = margin_text(adjusted)
            if level == 0:
                verdict.margins, verdict.margin = _unreached_margins(status, evidence[verdict.claim], alpha,
                                                                     rank_level)
            tested = (f"tested at α = {level:.3g}" if level > 0
                      else "not tested: a claim ranked before it was not rejected")
            note = (f" — family `{family}` ({len(members)} claims, Holm across them): p = {p_value:.3g}, {tested}")
            if status != verdict.status:
                note += f"; {verdict.status} → {status}"
                verdict.status = status
            if status == INCONCLUSIVE:
                note += _family_power(verdict, evidence[verdict.claim], alpha, level, rank_level)
            verdict.reason += note


def _unreached_margins(status: str, evidence: list[Evidence], alpha: float, rank_level: float
                       ) -> tuple[dict[str, float], str]:
    """The margins of a family member the step-down did not reach (tested at level 0, where no
    statistic moves it): read at its rank's level, the level it is tested at once the claims ranked
    before it are rejected. A verdict it would already have there is at distance 0."""
    at_rank = [e.scaled(rank_level / alpha) for e in evidence]
    there = combine(at_rank)
    reach = margins(at_rank)
    found = {there: 0.0} if there != status else {}
    found.update({other: distance for other, distance in reach.items() if other != status and other not in found})
    closest = nearest(found)
    text = ("not reached by Holm's step-down" + (f"; at its rank's level {closest[1]:.2f} SE from {closest[0]}"
                                                  if closest and math.isfinite(closest[1]) else ""))
    return found, text


def _family_power(verdict: Verdict, evidence: list[Evidence], alpha: float, level: float, rank_level: float) -> str:
    """Give a family member left INCONCLUSIVE the power figure of the level it is tested at (its rank's
    level where the step-down did not reach it), in place of the one at α; the text to append."""
    tested_at = level if level > 0 else rank_level
    power = power_at_levels([e.scaled(tested_at / alpha) for e in evidence])
    if verdict.power is not None:
        verdict.reason = verdict.reason.replace(f" — power: {Power(**verdict.power).text()}", "")
    verdict.power = power.to_dict()
    where = "" if level > 0 else " (its rank's level, once the claims ranked before it are rejected)"
    return f"; power at α = {tested_at:.3g}{where}: {power.text()}"


def power_at_levels(evidence: list[Evidence]) -> Power:
    """What would decide an INCONCLUSIVE, read from its comparisons at the levels they carry: the
    largest figure over the undecided comparisons, each a one-sided test toward the verdict it leans
    to (for a range, the larger of its two one-sided figures: a lower bound of their joint one)."""
    powers = [_comparison_power(e) for e in evidence if e.outcome == "undecided"]
    return most_needed(powers) or Power("seeds", 0, None, None, "no comparison is undecided")


def _comparison_power(e: Evidence) -> Power:
    """The units that would decide one undecided comparison at its own level, from its statistic,
    standard error and seeds."""
    toward_pass = e.fail_alpha is None or (e.pass_alpha is not None and e.statistic >= 0)
    level = e.pass_alpha if toward_pass else e.fail_alpha
    if math.isnan(e.statistic) or e.seeds < 1:
        return Power("seeds", e.seeds, None, None, "the comparison has no statistic (one seed, or no spread): at "
                                                   "least 2 seeds are needed before any number can be estimated")
    if level is None or level <= 0.0:
        return Power("seeds", e.seeds, None, None, "the comparison is not tested at this level")
    if e.sign_count:
        return sign_power(e.seeds, level)
    if e.se is None:
        return Power("seeds", e.seeds, None, None, "decided without a spread: no number of seeds moves it")
    if e.df is not None and e.seeds >= 2:
        sd = e.se * math.sqrt(e.seeds)
        return spread_power(sd, e.seeds, e.statistic * e.se, level)
    if e.fisher_z:
        weight = one_sided_units(abs(e.statistic) * e.se, level, t_based=False)
        return Power("clients per run", round(1.0 / e.se ** 2) + 3, None, None if weight is None else weight + 3,
                     "Fisher z of one seed: each client adds 1 to its weight (n − 3, one less per controlled "
                     "quantity)" if weight is not None else
                     "Fisher z of one seed: the observed effect is too small for a practical number of clients")
    return Power("seeds of each variant", e.seeds, None, None,
                 "a ratio of seed spreads: its comparison carries no figure of the seeds that would decide it")
