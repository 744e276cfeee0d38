"""The verdict table on the terminal (rich)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from harness.verdicts.verify import STATUSES, Verdict

COLOURS = {"PASS": "green", "FAIL": "red", "INCONCLUSIVE": "yellow", "SKIPPED": "cyan", "ERROR": "magenta"}


def print_verdicts(verdicts: list[Verdict], console: Console) -> None:
    table = Table(title="fedclaims verdicts", show_lines=False)
    for column in ("claim", "profile", "verdict", "reason"):
        table.add_column(column, overflow="fold")
    for v in verdicts:
        table.add_row(v.claim, v.profile, f"[{COLOURS[v.status]}]{v.status}[/]", v.reason)
    console.print(table)
    counts = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    console.print("  ".join(f"[{COLOURS[s]}]{s}[/] {n}" for s, n in counts.items()))


def print_power(verdicts: list[Verdict], console: Console) -> None:
    """The undecided claims with what would decide them, most data-hungry last."""
    undecided = [v for v in verdicts if v.status == "INCONCLUSIVE"]
    table = Table(title="undecided claims: what would decide them", show_lines=False)
    for column in ("claim", "profile", "needed", "unit", "detectable now", "why undecided"):
        table.add_column(column, overflow="fold")

    def needed(v: Verdict) -> float:
        return float("inf") if not v.power or v.power["needed"] is None else v.power["needed"]

    for v in sorted(undecided, key=needed):
        power = v.power or {}
        detectable = power.get("detectable")
        table.add_row(v.claim, v.profile, "—" if power.get("needed") is None else str(power["needed"]),
                      power.get("unit", "—"), "—" if detectable is None else f"{detectable:.3g}",
                      v.reason.split(" — power:")[0])
    console.print(table)
    console.print(f"{len(undecided)} of {len(verdicts)} claims undecided")


def print_sequential(data: dict, console: Console) -> None:
    """The sequential verdicts of `verify --until-decided` (from its JSON file) beside the fixed-n ones."""
    from harness.sequential.results import added_seeds, summary_text
    table = Table(title=f"sequential verdicts ({data['profile']}): {data['rule']['name']}", show_lines=False)
    for column in ("claim", "fixed n", "seeds (added)", "looks", "α at the look (spent)", "sequential",
                   "why the looks ended"):
        table.add_column(column, overflow="fold")
    for claim in data["claims"]:
        if claim["status"] == "SKIPPED":
            continue
        status, fixed = claim["status"], claim["fixed_n"]["status"]
        table.add_row(claim["claim"], f"[{COLOURS[fixed]}]{fixed}[/]",
                      f"{len(claim['seeds'])} (+{added_seeds(claim, data)})",
                      f"{claim['looks']} of {claim['planned_looks']}",
                      f"{claim['alpha_at_look']:.3g} ({claim['alpha_spent']:.3g})",
                      f"[{COLOURS[status]}]{status}[/]", claim["stopped"])
    console.print(table)
    console.print(summary_text(data))
    console.print(f"added compute {data['compute_seconds'] / 60:.1f} min; stopped: {data['stop']}")
