"""The confirmatory tests in the report: one line each under the digest, and a section with their plans. They are
shown apart from the profiles' verdicts and the `--until-decided` looks, whose seeds they never read."""
from __future__ import annotations

from collections.abc import Mapping

from harness.sequential.confirmatory_runs import Reading

SECTION = "confirmatory-tests"


def _status(reading: Reading) -> str:
    if reading.status == "UNDECIDABLE":
        return "not run"
    if reading.status == "PENDING":
        return f"pending ({reading.reason})"
    return f"**{reading.status}**{_level(reading)}"


def _level(reading: Reading) -> str:
    """Where its models stand, as a profile verdict's cell says it: ' (where the models learn, level 0.62)'."""
    level = reading.level
    if level is None or level.fraction is None or level.group not in ("learned", "weak"):
        return ""
    where = "where the models learn" if level.group == "learned" else "weak"
    return f" ({where}, level {level.fraction:.2f})"


def decided(readings: list[Reading]) -> dict[str, tuple[str, str]]:
    """Claim -> (PASS or FAIL, profile) of each confirmatory test decided where its models learn: what the digest's
    count of decided central claims takes as the claim's last word."""
    return {r.plan.claim: (r.status, r.plan.profile) for r in readings if r.decided_where_learning}


def _effect(reading: Reading, brief: bool = False) -> str:
    power = reading.plan.power
    if power.test.startswith("paired"):
        return (f"a difference of {power.effect:.3g} (SD {power.sd:.3g})" if brief else
                f"a mean difference of {power.effect:.3g} (SD {power.sd:.3g} over seeds)")
    return (f"r = {power.effect:.3g} (τ {power.sd:.3g})" if brief else
            f"a pooled r of {power.effect:.3g} (τ {power.sd:.3g} in Fisher z between seeds)")


def _plan_text(reading: Reading, brief: bool = False) -> str:
    """What the plan tests, on how many seeds and why; `brief`: the digest's one line."""
    plan = reading.plan
    head = f"{plan.hypothesis} at `{plan.profile}`, α = {plan.alpha:g}"
    needed = plan.power.seeds_needed
    if not plan.seeds and brief:
        return (f"{head}: {needed or 'over 200'} seeds needed for {plan.power.target:.0%} power at "
                f"{_effect(reading, brief)}, {plan.budget.affordable_seeds} affordable")
    if not plan.seeds:
        return f"{head}: {plan.undecidable} (stated effect: {_effect(reading)})"
    seeds = f"{len(plan.seeds)} fresh seeds ({plan.seeds[0]}–{plan.seeds[-1]}) for {plan.power.target:.0%} power at"
    if brief:
        return f"{head}: {seeds} {_effect(reading, brief)}"
    hours = len(plan.seeds) * plan.budget.seconds_per_seed / 3600
    return (f"{head}: {seeds} {_effect(reading)}; about {hours:.1f} hours of one thread "
            f"({plan.budget.affordable_seeds} seeds affordable in {plan.budget.thread_hours:g} hours)")


def _look_spent(reading: Reading, brief: bool = False) -> str:
    """An INCONCLUSIVE plan has spent its one look: what a new test at the effect and spread its seeds showed would
    need (the verdict's power figure), against the plan's budget."""
    power = reading.verdict.power if reading.status == "INCONCLUSIVE" and reading.verdict is not None else None
    if not power:
        return ""
    needed, affordable = power.get("needed"), reading.plan.budget.affordable_seeds
    if needed is None:
        return "; no number of seeds decides a new test at the effect its seeds showed"
    if brief:
        return f"; a new test: about {needed} {power['unit']} needed, {affordable} affordable"
    within = "decidable" if needed <= affordable else "undecidable"
    return (f"; its one look is spent: a new test at the effect and spread its seeds showed needs about {needed} "
            f"{power['unit']}, {affordable} affordable in {reading.plan.budget.thread_hours:g} hours of one thread "
            f"({within} at this budget)")


def _whose(reading: Reading, whose: Mapping[str, str]) -> str:
    said = whose.get(reading.plan.claim, "") if reading.status == "FAIL" else ""
    return f"; whose FAIL: {said}" if said else ""


def digest_lines(readings: list[Reading], refused: list[str], whose: Mapping[str, str] | None = None) -> list[str]:
    """Under the digest: each confirmatory test's verdict on a line of its own (`whose`: per claim whose
    confirmatory test FAILed, whose that FAIL is by the rule, `harness.report.attributions.with_attributions`)."""
    if not readings and not refused:
        return []
    lines = [f"**Confirmatory tests** (pre-registered, on fresh seeds, one look each; apart from the verdicts above, "
             f"[plans](#{SECTION})):", ""]
    for reading in readings:
        problems = f" — its evidence has {len(reading.problems)} problem(s)" if reading.problems else ""
        whose_said = _whose(reading, whose or {}).split(", because")[0]
        lines.append(f"- `{reading.plan.claim}`: {_status(reading)}{whose_said}{_look_spent(reading, brief=True)}; "
                     f"{_plan_text(reading, brief=True)}{problems}")
    lines += [f"- refused: {line}" for line in refused]
    return lines + [""]


def section(readings: list[Reading], refused: list[str], whose: Mapping[str, str] | None = None) -> list[str]:
    """The plans in full: hypothesis, seeds, power calculation and its source, budget, analysis, verdict."""
    if not readings and not refused:
        return []
    lines = [f'<a id="{SECTION}"></a>', "## Confirmatory tests", "",
             "Each plan is committed in `records/confirmatory/` before its first run (`fedclaims confirm plan`, then "
             "`fedclaims confirm run`; `fedclaims confirm verify` checks it against git history); its verdict is one "
             "look at its own fresh seeds at its α, by the same test as the claim's profile verdict. A plan whose "
             "power needs more seeds than its budget buys is not run.", ""]
    for reading in readings:
        plan = reading.plan
        lines += [f"### `{plan.claim}`", "",
                  f"- verdict: {_status(reading)}" + (f" — {reading.reason}" if reading.verdict else "")
                  + _whose(reading, whose or {}) + _look_spent(reading),
                  *([f"- evidence level: {reading.level.text}"] if reading.level is not None else []),
                  f"- hypothesis: {plan.hypothesis} (registered {plan.registered}, plan digest `{plan.digest[:12]}`)",
                  f"- seeds: {_plan_text(reading)}",
                  f"- effect stated: {plan.power.source}",
                  f"- cost: {plan.budget.seconds_per_seed:.0f} s of one thread per seed ({plan.budget.measured_on})",
                  f"- analysis: {plan.analysis}"]
        lines += [f"- problem: {problem}" for problem in reading.problems]
        lines.append("")
    lines += [f"- refused: {line}" for line in refused]
    return lines + ([""] if refused else [])
