"""The REPORT.md section of `fedclaims verify --until-decided`: the stopping rule, what the added
seeds decided, and per claim the seeds it took (from `<store>/sequential/<profile>.json`, else the
one committed in `records/sequential/`)."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.report.cells import cell
from harness.sequential.results import added_seeds, load, not_extended, shown, summary_text

Alphas = Callable[[str], Mapping[str, float]]
"""Per profile, the α each claim tests at there (the α a recorded plan must be at)."""


def _recorded(folders: Sequence[Path], profile: str, alphas: Alphas | None) -> dict[str, Any] | None:
    """The first of `folders` (a store, then the committed records) holding a plan of the profile,
    validated as `--until-decided` reads it (ValueError naming the file and field otherwise)."""
    return next((data for folder in folders
                 if (data := load(folder, profile, None if alphas is None else alphas(profile))) is not None), None)


Stale = Callable[[Mapping[str, Any]], "str | None"]
"""Why a recorded entry is no verdict of its claim now (its looks do not record a change of its expectation),
None where it is one."""


def sequential_section(folders: Sequence[Path], profile: str, alphas: Alphas | None = None,
                       stale: Stale | None = None) -> list[str]:
    """The section's lines, or none where `--until-decided` has not run at the profile."""
    data = _recorded(folders, profile, alphas)
    return [] if data is None else render(data, stale)


def sequential_entries(folders: Sequence[Path], profiles: list[str],
                       alphas: Alphas | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (claim, profile), the sequential result `--until-decided` recorded in the store (or committed)."""
    entries = {}
    for profile in profiles:
        data = _recorded(folders, profile, alphas)
        entries.update({(claim["claim"], profile): claim for claim in (data or {}).get("claims", [])})
    return entries


def anchor(profile: str) -> str:
    """The id of the profile's section in REPORT.md."""
    return f"seeds-added-until-decided-{profile}"


def extended(entry: Mapping[str, Any]) -> bool:
    """The claim's test went on past the profile's seeds, or its verdict differs from the fixed-n one
    (a claim not tested at the profile has no test to extend)."""
    return entry["status"] != "SKIPPED" and (entry.get("looks", 1) > 1
                                             or entry["status"] != entry["fixed_n"]["status"])


def claim_line(entry: dict[str, Any], profile: str, report: str) -> str:
    """A claim's sequential verdict under its fixed-n table, linked to the section in `report` that
    states the rule: 'Seeds added until decided at `learning`: INCONCLUSIVE at 6 seeds, look 3 of 7 at
    α 0.0039 (budget spent): mean … (n = 6) …'."""
    return (f"Seeds added until decided at `{profile}` ([the rule]({report}#{anchor(profile)})): "
            f"**{entry['status']}** at {len(entry['seeds'])} seeds, look {entry['looks']} of {entry['planned_looks']} "
            f"at α {entry['alpha_at_look']:.3g} ({entry['stopped']}): {cell(entry['reason'].split(' — power:')[0])}."
            + change_text(entry))


def change_text(entry: Mapping[str, Any]) -> str:
    """' Its expectation changed on 2026-12-04 (commit 8507a06): …' for a claim whose looks are those of an
    expectation changed after seeds were run (`changed` in its entry), else ''."""
    changed = entry.get("changed")
    if not changed:
        return ""
    before = changed.get("before") or {}
    earlier = (f"; before it, {before['expectation']}: {before['status']} on seeds "
               f"{', '.join(map(str, before['seeds']))}" if before.get("seeds") else "")
    return (f" Its expectation changed on {changed['date'][:10]} (commit {changed['commit'][:7]}): these looks read "
            f"only the seeds run after it, not seeds {', '.join(map(str, changed['seen']))}{earlier}.")


def render(data: dict[str, Any], stale: Stale | None = None) -> list[str]:
    budget = data["budget_minutes"]
    runs = data["runs"]
    lines = [f'<a id="{anchor(data["profile"])}"></a>', f"## Seeds added until decided (`{data['profile']}`)", "",
             f"**Rule: {data['rule']['name']}.** {data['rule']['text']}", "",
             f"Added compute: {data['compute_seconds'] / 60:.1f} min of wall time "
             f"({runs['ran']} runs, {runs['reused']} reused"
             + ("" if budget is None else f"; budget {budget:g} min") + f"); it stopped: {data['stop']}.", "",
             _plan_text(data), "", summary_text(data), ""]
    rows = shown(data)
    if rows:
        lines += ["| claim | fixed n | seeds (added) | looks | α at the look (spent) | sequential "
                  "| why the looks ended | reason |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [_row(claim, data, stale) for claim in rows]
        lines.append("")
    kept = not_extended(data)
    if kept:
        names = ", ".join(f"`{c['claim']}` ({c['fixed_n']['status']})" for c in kept)
        lines += [f"{len(kept)} fixed-n {'verdict is' if len(kept) == 1 else 'verdicts are'} not decided at look 1 "
                  f"at its level α_1 and, since seeds go only to the profile's INCONCLUSIVE claims, "
                  f"{'stands' if len(kept) == 1 else 'stand'}: {names}.", ""]
    same = len(data["claims"]) - len(rows) - len(kept)
    lines += [f"The other {same} claims have the same verdict at look 1, on the profile's seeds, as at fixed n.", ""]
    return lines


def _plan_text(data: dict[str, Any]) -> str:
    """The planned levels and power, once per distinct plan: 'Levels α_j over the planned looks: 5 → 10
    seeds at α = 0.05: 0.035, …, 0.0203 (P(PASS) at a 0.5-SD effect: 0.185 on the profile's seeds, 0.338 by
    the last look; O'Brien-Fleming spending over every look: 0.39).'"""
    plans: dict[tuple, None] = {}
    for claim in data["claims"]:
        plan = claim["plan"]
        looks = plan["looks"]
        plans[(looks[0]["seeds"], looks[-1]["seeds"], plan["alpha"], tuple(f"{look['level']:.3g}" for look in looks),
               _power_text(plan))] = None
    texts = [f"{first} → {last} seeds at α = {alpha:g}: {', '.join(levels)}{power}"
             for first, last, alpha, levels, power in plans]
    invocations = data.get("invocations", 1)
    continued = f" The plan was continued over {invocations} invocations." if invocations > 1 else ""
    return "Levels α_j over the planned looks: " + "; ".join(texts) + "." + continued


def _power_text(plan: dict[str, Any]) -> str:
    looks = plan["looks"]
    if "power" not in looks[0]:
        return ""
    return (f" (P(PASS) at a {plan['power_effect_sd']:g}-SD effect: {looks[0]['power']:.3g} on the profile's seeds, "
            f"{looks[-1]['power']:.3g} by the last look; O'Brien-Fleming spending over every look, the profile's "
            f"verdict then at a fraction of its level: {plan['boundary_alone_power']:.3g})")


def _row(claim: dict[str, Any], data: dict[str, Any], stale: Stale | None = None) -> str:
    seeds = claim["seeds"]
    why = stale(claim) if stale is not None else None
    added = added_seeds(claim, data)
    cells = [f"`{claim['claim']}`", claim["fixed_n"]["status"], f"{len(seeds)} (+{added})",
             f"{claim['looks']} of {claim['planned_looks']}",
             f"{claim['alpha_at_look']:.3g} ({claim['alpha_spent']:.3g})",
             f"**{claim['status']}**", claim["stopped"],
             (f"{why} " if why else "") + claim["reason"].split(" — power:")[0] + change_text(claim)]
    return "| " + " | ".join(cell(c) for c in cells) + " |"
