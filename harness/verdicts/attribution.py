"""Whose a FAIL is, derived by one rule over evidence rather than taken from prose (issue 54):

- the implementation is *ruled out* where conformance fixtures cover every part of the runs the claim reads
  (the server's and the clients', each at every setting its variants run: the project's methods reproduce
  the authors' code there), or where a scale study's point at which they do (its axis the setting they leave
  out) FAILs too; a claimed `the implementation` is then contradicted, and an unexplained FAIL says which part
  is not covered where one is not;
- `the implementation` where the verdict flips along such a study: FAIL where the fixtures leave a part out,
  PASS at the study's point where they cover every part;
- `the paper` only where the claim quotes the contradiction and names its source;
- `the paper's setting` only where the verdict flips between the setting the paper states and the one the authors'
  code ran: FAIL as stated, PASS as run (the claim that is `as_run_of` this one, testing its relation in that
  setting, or the one its own attribution names as `as_run`; read at its last word there, a confirmatory test's
  where one was read);
- `the scale` only where the verdict's learning level is below `LEARNED` and no claim stating the same
  relation FAILs at a profile where the models learn (level ≥ `LEARNED`), or where a scale study shows the
  tested statistic moving toward the claim (every tested series heading toward the paper's range or inside it);
- otherwise `UNEXPLAINED`.

A claim's hand-written `attribution:` is an input the rule checks: a `whose` the rule does not derive is
reported as contradicted, with why. The evidence is plain data, so the same rule runs on a report being
written and on a committed REPORT.json.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.verdicts.levels import LEARNED

PAPER, SETTING, IMPLEMENTATION, SCALE = "the paper", "the paper's setting", "the implementation", "the scale"
WHOSE = (PAPER, SETTING, IMPLEMENTATION, SCALE)
UNEXPLAINED = "unexplained"
"""Whose a FAIL is where the evidence derives none of WHOSE."""
TOWARD_THE_CLAIM = ("toward", "inside")
"""A study's headings (`harness.statistics.trend.heading`) that show a statistic moving toward the claim."""


@dataclass(frozen=True)
class VerdictAt:
    """One verdict as the rule reads it."""

    claim: str
    profile: str
    status: str
    fraction: float | None
    """Its learning level (None where none applies or none could be read)."""
    note: str = ""
    """What kind of verdict it is where not the profile's own (a confirmatory test's), as the rule names it."""


@dataclass(frozen=True)
class Claimed:
    """A claim's hand-written attribution at a profile: the input the rule checks."""

    whose: str
    evidence: str
    quote: str = ""
    quote_source: str = ""
    as_run: str = ""


@dataclass(frozen=True)
class StudyHeading:
    """Where a scale study of a claim sees its tested statistic heading, series by series."""

    study: str
    headings: tuple[str, ...]

    def toward(self) -> bool:
        return bool(self.headings) and all(h in TOWARD_THE_CLAIM for h in self.headings)

    def text(self) -> str:
        return f"study `{self.study}` reads its tested statistic {', '.join(self.headings) or 'without a trend'}"


@dataclass(frozen=True)
class CoveredPoint:
    """A scale study's point where the conformance fixtures cover every part of a claim's runs, with the claim's
    verdict there."""

    study: str
    profile: str
    """The point's generated profile (`learning@model.batchnorm_eps_exponent=2`)."""
    status: str
    covered_by: str

    def text(self) -> str:
        return f"at study `{self.study}`'s point `{self.profile}`, where the fixtures cover every part"


@dataclass(frozen=True)
class Evidence:
    verdicts: Mapping[tuple[str, str], VerdictAt]
    relations: Mapping[str, frozenset[str]]
    """Per claim, the claims stating the same relation (itself included)."""
    studies: Mapping[str, tuple[StudyHeading, ...]] = field(default_factory=dict)
    conformance: Mapping[tuple[str, str], str] = field(default_factory=dict)
    """Per (claim, profile) whose every part the conformance fixtures cover at that profile: which fixtures."""
    claimed: Mapping[tuple[str, str], Claimed] = field(default_factory=dict)
    as_run: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per claim as the paper states it, the claims that test its relation in the setting the authors' code ran
    (`as_run_of`, the link checked: `harness.report.attributions.as_run_links`)."""
    confirmed: Mapping[tuple[str, str], VerdictAt] = field(default_factory=dict)
    """Per (claim, profile) the verdict of its confirmatory test where one was read (PASS, FAIL or INCONCLUSIVE):
    the claim's last word there."""
    conformance_gaps: Mapping[tuple[str, str], str] = field(default_factory=dict)
    """Per (claim, profile) the conformance fixtures cover in some part but not in every one: the parts not
    covered, and why."""
    covered_points: Mapping[tuple[str, str], tuple[CoveredPoint, ...]] = field(default_factory=dict)
    """Per (claim, a study's base profile), the study's points where the fixtures cover every part of its runs."""


@dataclass(frozen=True)
class Attribution:
    whose: str
    """One of WHOSE, or UNEXPLAINED."""
    why: str
    contradicted: str = ""
    """The claim's own `whose` where the rule does not derive it, and why not ('' where none is contradicted)."""

    def text(self) -> str:
        shown = f"{self.whose}, because {self.why}" if self.why else self.whose
        if self.contradicted:
            shown += f" (contradicted: {self.contradicted})"
        return shown


def attribute(claim: str, profile: str, evidence: Evidence) -> Attribution:
    """Whose the FAIL of `claim` at `profile` is, by the rule, with the claim's own attribution checked."""
    claimed = evidence.claimed.get((claim, profile))
    by_claim = None if claimed is None else _claimed_holds(claimed, claim, profile, evidence)
    if claimed is not None and by_claim is not None and by_claim.whose == claimed.whose:
        return by_claim
    derived = _derived(claim, profile, evidence)
    if claimed is None:
        return derived
    if claimed.whose == derived.whose:
        return Attribution(derived.whose, claimed.evidence)
    if by_claim is None:  # a claimed `the scale`: the derived reason says why not
        return Attribution(derived.whose, derived.why, f"the claim says {SCALE}")
    return Attribution(derived.whose, derived.why, f"the claim says {claimed.whose}, but {by_claim.why}")


def _claimed_holds(claimed: Claimed, claim: str, profile: str, evidence: Evidence) -> Attribution | None:
    """The claim's own attribution where the rule derives it; else an Attribution whose `why` says why
    not (with `whose` UNEXPLAINED); None for `the scale`, which the rule derives from the levels."""
    if claimed.whose == PAPER:
        if claimed.quote.strip() and claimed.quote_source.strip():
            return Attribution(PAPER, f"{claimed.evidence} (quoted from {claimed.quote_source}: \"{claimed.quote}\")")
        return Attribution(UNEXPLAINED, "it quotes no contradiction with its source (`quote` and `quote_source`)")
    if claimed.whose == SETTING:
        stated = evidence.verdicts.get((claim, profile))
        as_run = last_word(claimed.as_run, profile, evidence) if claimed.as_run else None
        if stated is not None and stated.status == "FAIL" and as_run is not None and as_run.status == "PASS":
            return Attribution(SETTING, f"{claimed.evidence} (`{claimed.as_run}`, as the authors' code ran it, PASSes"
                                        f"{_confirmatory(claimed.as_run, profile, evidence)})")
        ran = "names no claim run as the authors' code ran it (`as_run`)" if not claimed.as_run else (
            f"`{claimed.as_run}` does not PASS at {profile}" + (f" ({as_run.status})" if as_run else ""))
        return Attribution(UNEXPLAINED, f"the verdict does not flip: it {ran}")
    if claimed.whose == IMPLEMENTATION:
        ruled_out = _ruled_out(claim, profile, evidence)
        if ruled_out:
            return Attribution(UNEXPLAINED, f"the implementation is ruled out: {ruled_out}")
        return Attribution(IMPLEMENTATION, claimed.evidence)
    return None


def _ruled_out(claim: str, profile: str, evidence: Evidence) -> str:
    """Why the implementation does not explain the FAIL, in words: the fixtures cover every part of its runs, or
    a study's point where they do FAILs too ('' where neither)."""
    covered = evidence.conformance.get((claim, profile), "")
    if covered:
        return covered
    return "; ".join(f"{p.text()}, it FAILs too ({p.covered_by})" for p in _covered_points(claim, profile, evidence)
                     if p.status == "FAIL")


def _covered_points(claim: str, profile: str, evidence: Evidence) -> tuple[CoveredPoint, ...]:
    """The covered study points that speak for a FAIL the fixtures do not cover themselves."""
    return () if evidence.conformance.get((claim, profile)) else evidence.covered_points.get((claim, profile), ())


def last_word(claim: str, profile: str, evidence: Evidence) -> VerdictAt | None:
    """The claim's verdict at the profile: its confirmatory test's where one was read, else the profile's."""
    return evidence.confirmed.get((claim, profile)) or evidence.verdicts.get((claim, profile))


def _confirmatory(claim: str, profile: str, evidence: Evidence) -> str:
    said = evidence.confirmed.get((claim, profile))
    return f" in {said.note}" if said is not None and said.note else ""


def _derived(claim: str, profile: str, evidence: Evidence) -> Attribution:
    """The rule's own reading where the claim's attribution does not hold: the paper's setting where the verdict
    flips as the authors' code ran it, else the scale where the levels or a study show it, else unexplained."""
    for other in evidence.as_run.get(claim, ()):
        said = last_word(other, profile, evidence)
        if said is not None and said.status == "PASS":
            level = f" (level {said.fraction:.2f})" if said.fraction is not None else ""
            return Attribution(SETTING, f"`{other}`, the same relation in the setting the authors' code ran, PASSes "
                                        f"at {profile}{_confirmatory(other, profile, evidence)}{level}")
    for point in _covered_points(claim, profile, evidence):
        if point.status == "PASS":
            return Attribution(IMPLEMENTATION, f"the verdict flips where the project's methods are the authors': "
                                               f"{point.text()}, it PASSes ({point.covered_by})")
    return _scale_or_unexplained(claim, profile, evidence)


def _scale_or_unexplained(claim: str, profile: str, evidence: Evidence) -> Attribution:
    tested = evidence.verdicts[(claim, profile)]
    toward = [s for s in evidence.studies.get(claim, ()) if s.toward()]
    if toward:
        return Attribution(SCALE, "; ".join(s.text() for s in toward) + " (toward the claim)")
    if tested.fraction is not None and tested.fraction < LEARNED and not _fails_where_learned(claim, evidence):
        return Attribution(SCALE, f"the models reach {tested.fraction:.2f} of the paper's gain over chance here, "
                                  f"below {LEARNED}, and no claim of the same relation FAILs where they learn")
    ruled_out, gap = _ruled_out(claim, profile, evidence), evidence.conformance_gaps.get((claim, profile), "")
    undecided = ", ".join(f"{p.text()}, it {_said_status(p.status)}" for p in _covered_points(claim, profile, evidence)
                          if p.status not in ("PASS", "FAIL"))
    why = [f"not {SCALE}: {_why_not_scale(claim, profile, evidence)}", _why_not_setting(claim, profile, evidence),
           f"the implementation is ruled out: {ruled_out}" if ruled_out else "",
           f"the implementation is not ruled out: {gap}{f' ({undecided})' if undecided else ''}"
           if gap and not ruled_out else ""]
    return Attribution(UNEXPLAINED, "; ".join(w for w in why if w))


def _why_not_setting(claim: str, profile: str, evidence: Evidence) -> str:
    """Where the claim has a setting as run, why that does not explain the FAIL ('' where it has none)."""
    said = [(other, last_word(other, profile, evidence)) for other in evidence.as_run.get(claim, ())]
    if not said:
        return ""
    return f"not {SETTING}: " + ", ".join(f"`{other}` (as the authors' code ran it) {_said(verdict)} at {profile}"
                                          f"{_confirmatory(other, profile, evidence)}" for other, verdict in said)


def _said(verdict: VerdictAt | None) -> str:
    return _said_status("SKIPPED" if verdict is None else verdict.status)


def _said_status(status: str) -> str:
    if status == "SKIPPED":
        return "is not tested"
    return {"FAIL": "FAILs", "PASS": "PASSes"}.get(status, f"is {status}")


def _fails_where_learned(claim: str, evidence: Evidence) -> list[VerdictAt]:
    """The FAILs at a learned profile (level ≥ LEARNED) of the claims stating the same relation, a confirmatory
    test's among them."""
    related = evidence.relations.get(claim, frozenset({claim}))
    return [t for t in (*evidence.verdicts.values(), *evidence.confirmed.values()) if t.claim in related
            and t.status == "FAIL" and t.fraction is not None and t.fraction >= LEARNED]


def _why_not_scale(claim: str, profile: str, evidence: Evidence) -> str:
    """Why the rule does not derive `the scale` for this FAIL."""
    tested = evidence.verdicts[(claim, profile)]
    studies = [s.text() for s in evidence.studies.get(claim, ())]
    moving = f"; {'; '.join(studies)}, not toward the claim" if studies else ""
    if tested.fraction is None:
        return f"no learning level applies here and no study shows it moving toward the claim{moving}"
    if tested.fraction >= LEARNED:
        return f"the models reach {tested.fraction:.2f} of the paper's gain over chance here (≥ {LEARNED}){moving}"
    learned = _fails_where_learned(claim, evidence)
    named = ", ".join(f"`{t.claim}` FAILs at {t.profile}{f' in {t.note}' if t.note else ''} (level {t.fraction:.2f})"
                      for t in learned)
    return f"the same relation FAILs where the models learn: {named}{moving}"
