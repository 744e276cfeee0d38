"""What git history says of a confirmatory plan: committed before every record of its seeds, and not changed
after the first of them. Without a history (no git, not a repository, a shallow clone) nothing is claimed:
`problems` returns no problem and `available` says why it could not look."""
from __future__ import annotations

import subprocess
from pathlib import Path


def _git(root: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *arguments], capture_output=True, text=True, check=False)


def available(root: Path) -> str:
    """'' where `root`'s full history can be read, else why not."""
    try:
        inside = _git(root, "rev-parse", "--is-inside-work-tree", "--is-shallow-repository")
    except OSError:
        return "git is not installed"
    if inside.returncode != 0:
        return f"{root} is not a git repository"
    if inside.stdout.split()[-1] == "true":
        return "a shallow clone holds only part of the history"
    return ""


def commits_touching(root: Path, path: Path) -> list[str]:
    """The commits that changed `path`, newest first (its whole history, renames not followed)."""
    result = _git(root, "log", "--format=%H", "--", str(path.resolve().relative_to(root.resolve())))
    return result.stdout.split() if result.returncode == 0 else []


def _descends(root: Path, ancestor: str, commit: str) -> bool:
    return ancestor != commit and _git(root, "merge-base", "--is-ancestor", ancestor, commit).returncode == 0


def require_committed(root: Path, plan: Path) -> None:
    """Refuse to run a plan that is not committed as it stands: its runs must come after its registration."""
    why = available(root)
    if why:
        raise ValueError(f"{plan}: a confirmatory plan is run only from a git history that shows it committed "
                         f"before its runs ({why})")
    relative = str(plan.resolve().relative_to(root.resolve()))
    if not commits_touching(root, plan) or _git(root, "diff", "--quiet", "HEAD", "--", relative).returncode != 0:
        raise ValueError(f"{plan}: commit the plan before its first run (git add {relative} && git commit); "
                         "its commit is the registration the report relies on")


def problems(root: Path, plan: Path, records: list[Path]) -> list[str]:
    """Each committed record of the plan's seeds added before, or with, the plan's first commit; and each
    change of the plan after the first of those records."""
    if available(root):
        return []
    plan_commits = commits_touching(root, plan)
    histories = {record: commits_touching(root, record) for record in records}
    added = {record: commits[-1] for record, commits in histories.items() if commits}
    if not added:
        return []
    if not plan_commits:
        return [f"{plan}: not committed, while {len(added)} record(s) of its seeds are"]
    registered = plan_commits[-1]
    found = [f"{plan}: {record.name} was committed in {commit[:12]}, not after the plan's registration "
             f"{registered[:12]}" for record, commit in added.items() if not _descends(root, registered, commit)]
    first_runs = [c for c in set(added.values()) if not any(_descends(root, o, c) for o in set(added.values()))]
    for change in plan_commits[:-1]:
        if any(_descends(root, first, change) or first == change for first in first_runs):
            found.append(f"{plan}: changed in {change[:12]}, after its first run was committed: a plan changed after "
                         "its first run is refused")
    return found
