"""The verdict tables: a rich table on a terminal; one tab-separated line a row anywhere else (a log, a pipe,
`fedclaims verify > log`), with the full claim ids, never wrapped, so that the output can be grepped."""
from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from harness.verdicts.verify import STATUSES, Verdict

COLOURS = {"PASS": "green", "FAIL": "red", "INCONCLUSIVE": "yellow", "SKIPPED": "cyan", "ERROR": "magenta"}


def _status(status: str, console: Console) -> str:
    return f"[{COLOURS[status]}]{status}[/]" if console.is_terminal else status


def _cell(text: str) -> str:
    """One field of a line: what would break the line or the columns becomes a space."""
    return " ".join(str(text).replace("\t", " ").splitlines())


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], console: Console) -> None:
    """A rich table on a terminal; elsewhere the title, then `# column<TAB>...`, then one line a row."""
    if console.is_terminal:
        table = Table(title=title, show_lines=False)
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    lines = [title, "# " + "\t".join(columns), *("\t".join(_cell(cell) for cell in row) for row in rows)]
    console.file.write("".join(f"{line}\n" for line in lines))  # as is: rich would expand the tabs


def print_line(text: str, console: Console) -> None:
    """A line of rich markup, not wrapped where the console is not a terminal."""
    console.print(text, soft_wrap=not console.is_terminal, highlight=False)


def print_verdicts(verdicts: list[Verdict], console: Console) -> None:
    print_table("fedclaims verdicts", ("claim", "profile", "verdict", "reason"),
                [(v.claim, v.profile, _status(v.status, console), v.reason) for v in verdicts], console)
    counts = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    print_line("  ".join(f"[{COLOURS[s]}]{s}[/] {n}" for s, n in counts.items()), console)


def print_power(verdicts: list[Verdict], console: Console) -> None:
    """The undecided claims with what would decide them, most data-hungry last."""
    undecided = [v for v in verdicts if v.status == "INCONCLUSIVE"]

    def needed(v: Verdict) -> float:
        return float("inf") if not v.power or v.power["needed"] is None else v.power["needed"]

    rows = []
    for v in sorted(undecided, key=needed):
        power = v.power or {}
        detectable = power.get("detectable")
        rows.append((v.claim, v.profile, "—" if power.get("needed") is None else str(power["needed"]),
                     power.get("unit", "—"), "—" if detectable is None else f"{detectable:.3g}",
                     v.reason.split(" — power:")[0]))
    print_table("undecided claims: what would decide them",
                ("claim", "profile", "needed", "unit", "detectable now", "why undecided"), rows, console)
    print_line(f"{len(undecided)} of {len(verdicts)} claims undecided", console)


def print_sequential(data: dict, console: Console) -> None:
    """The sequential verdicts of `verify --until-decided` (from its JSON file) beside the fixed-n ones."""
    from harness.sequential.results import added_seeds, summary_text
    rows = []
    for claim in data["claims"]:
        if claim["status"] == "SKIPPED":
            continue
        rows.append((claim["claim"], _status(claim["fixed_n"]["status"], console),
                     f"{len(claim['seeds'])} (+{added_seeds(claim, data)})",
                     f"{claim['looks']} of {claim['planned_looks']}",
                     f"{claim['alpha_at_look']:.3g} ({claim['alpha_spent']:.3g})",
                     _status(claim["status"], console), claim["stopped"]))
    print_table(f"sequential verdicts ({data['profile']}): {data['rule']['name']}",
                ("claim", "fixed n", "seeds (added)", "looks", "α at the look (spent)", "sequential",
                 "why the looks ended"), rows, console)
    print_line(summary_text(data), console)
    print_line(f"added compute {data['compute_seconds'] / 60:.1f} min; stopped: {data['stop']}", console)
