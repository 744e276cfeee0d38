"""The verdict table on the terminal (rich)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from harness.verify import STATUSES, Verdict

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
