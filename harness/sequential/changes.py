"""The claims whose expectation changed after their records (`fedclaims validate`): those a `changed:`
entry declares (`harness.schema.changes`), and those whose sequential looks were recorded under another
expectation than the one they state now, declared or not."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.loading.catalog import Catalog
from harness.sequential.recorded import FOLDER, read_json


def declared(catalog: Catalog) -> list[str]:
    """One line per declared change: the claim, when, and the seeds seen at each profile."""
    lines = []
    for loaded in catalog.claims:
        for change in loaded.claim.changed:
            seen = "; ".join(f"{profile} {', '.join(map(str, seeds))}" for profile, seeds in change.seen.items())
            lines.append(f"{loaded.id}: changed on {change.text()} at {', '.join(change.expect)}, after seeds "
                         f"were run ({seen or 'none'})")
    return lines


def recorded_otherwise(catalog: Catalog, folders: Sequence[Path]) -> list[str]:
    """One line per claim whose sequential looks, in a plan of `folders` (a store, the committed records),
    test another expectation than the claim's now, or were recorded before its declared change."""
    lines = []
    for folder in folders:
        for path in sorted((Path(folder) / FOLDER).glob("*.json")):
            try:
                data = read_json(path)
                entries, profile = data["claims"], data["profile"]
            except (ValueError, KeyError, TypeError):
                continue  # a file the reader refuses is `records verify`'s and `--until-decided`'s to name
            for entry in entries:
                line = _otherwise(catalog, path, profile, entry)
                if line:
                    lines.append(line)
    return list(dict.fromkeys(lines))


def _otherwise(catalog: Catalog, path: Path, profile: str, entry: dict) -> str | None:
    try:
        claim = catalog.claim(entry["claim"]).claim
    except KeyError:
        return None
    expectation = claim.expect.get(profile)
    if expectation is None or expectation.skips or "alpha_at_look" not in entry:
        return None
    change = claim.change_at(profile)
    if change is not None:
        if (entry.get("changed") or {}).get("commit") == change.commit:
            return None
        return (f"{claim.id} at {profile}: the looks recorded in {path} do not record its change of "
                f"{change.text()}, so they read seeds run before it; the next --until-decided plans it anew on the "
                "seeds run after")
    now = expectation.at_level(entry["alpha_at_look"]).describe(claim.observe)
    if now == entry.get("expectation"):
        return None
    return (f"{claim.id} at {profile}: its expectation changed after the looks recorded in {path} "
            f"({entry.get('expectation')!r} then, {now!r} now) and no `changed:` entry says so: declare the old "
            "expectation, the date and commit of the change and the seeds run by then, so that the new one is "
            "tested only on the seeds run after it")
