"""The committed evidence checked as a whole (`fedclaims records verify`), as `git fsck` checks a repository.

`records/` may hold only record files (`<key[:2]>/<key>.json.gz`, regular files, no link on the way),
the sequential plans (`sequential/<profile>.json`) and the confirmatory plans (`confirmatory/<claim>.json`,
`harness.sequential.confirmatory`: read whole, with their git history). Every record is read as every command reads it
(harness.running.bundle: its key recomputed from its own fields, its checksum, its fields, a size cap,
finished, and the very record REPORT.json lists for its run where it lists one); every sequential plan is
read by the reader `--until-decided` continues it with, at the α each claim's spec states, and every seed
it says was run has a committed record of every run its claims read there. Each problem is one line
naming the file; nothing is repaired.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from harness.datasets.registry import UNAVAILABLE
from harness.loading.catalog import Catalog
from harness.running.bundle import SUFFIX, BundleError, RecordBundle
from harness.running.planning import PendingDependency, request_for, variants_needed
from harness.sequential import confirmatory
from harness.sequential.recorded import FOLDER, read_json, validated
from harness.settings import Settings
from harness.verdicts.archive import Archive


@dataclass
class Check:
    records: int = 0
    plans: int = 0
    runs: int = 0
    """Runs of the plans' seeds found committed."""
    confirmatory: int = 0
    unchecked: int = 0
    """Runs of the plans' seeds whose key cannot be computed here (their data set is not on this machine)."""
    problems: list[str] = field(default_factory=list)

    def text(self) -> str:
        unchecked = f", {self.unchecked} not checked (their data is not here)" if self.unchecked else ""
        return (f"records/: {self.records} record(s), {self.plans} sequential and {self.confirmatory} confirmatory "
                f"plan(s) verified, the sequential plans' "
                f"{self.runs} run(s) committed{unchecked}; {len(self.problems)} problem(s)")


def _stray(root: Path) -> list[str]:
    """Every entry of the folder that is neither a record file nor a sequential plan, nor a folder of them."""
    problems = []
    for folder, folders, files in os.walk(root, followlinks=False):
        here = Path(folder)
        for name in [*folders, *files]:
            path = here / name
            relative = path.relative_to(root)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"{path}: a symbolic link (to {os.readlink(path)}); records/ holds files only")
            elif stat.S_ISDIR(mode):
                if not (len(relative.parts) == 1 and (name in (FOLDER, confirmatory.FOLDER) or _is_prefix(name))):
                    problems.append(f"{path}: a folder records/ does not hold")
            elif not stat.S_ISREG(mode):
                problems.append(f"{path}: not a regular file")
            elif not _expected_file(relative):
                problems.append(f"{path}: neither a record (<key[:2]>/<key>{SUFFIX}) nor a sequential plan")
    return problems


def _is_prefix(name: str) -> bool:
    return len(name) == 2 and all(c in "0123456789abcdef" for c in name)


def _expected_file(relative: Path) -> bool:
    if len(relative.parts) != 2:
        return False
    folder, name = relative.parts
    if folder in (FOLDER, confirmatory.FOLDER):
        return name.endswith(".json")
    return name.endswith(SUFFIX) and name.startswith(folder) and len(name) == 64 + len(SUFFIX)


def verify_committed(catalog: Catalog, settings: Settings, archive: Archive | None) -> Check:
    """Every committed record and sequential plan of the project checked (see the module)."""
    check = Check()
    root = settings.records_dir
    if not root.is_dir():
        return check
    check.problems += _stray(root)
    listed = archive.record_digests if archive is not None else {}
    bundle = RecordBundle(root, listed, archive.path.name if archive is not None else "")
    for key in bundle.keys():
        try:
            bundle.read(key)
            check.records += 1
        except BundleError as refused:
            check.problems.append(str(refused))
    for path in sorted((root / FOLDER).glob("*.json")) if (root / FOLDER).is_dir() else []:
        check.plans += 1
        check.problems += _plan_problems(catalog, settings, bundle, path, check)
    check.problems += _confirmatory_problems(catalog, settings, check)
    return check


def _confirmatory_problems(catalog: Catalog, settings: Settings, check: Check) -> list[str]:
    """Each confirmatory plan read whole (its digest, its claim's expectation unchanged) with its history:
    committed before the records of its seeds, unchanged after the first of them."""
    from harness.sequential.confirmatory_runs import read
    readings, refused = read(settings, catalog)
    check.confirmatory = len(readings) + len(refused)
    return refused + [problem for reading in readings for problem in reading.problems]


def _plan_problems(catalog: Catalog, settings: Settings, bundle: RecordBundle, path: Path, check: Check) -> list[str]:
    profile = path.stem
    alphas = {loaded.id: loaded.claim.alpha_at(profile) for loaded in catalog.claims
              if profile in loaded.claim.expect}
    try:
        plan = validated(path, read_json(path), profile, alphas)
    except ValueError as problem:
        return [str(problem)]
    problems = []
    known = {loaded.id: loaded for loaded in catalog.claims}
    checked: set[tuple[str, str, int]] = set()  # claims of one experiment share its runs
    for name, recorded in sorted(plan.claims.items()):
        loaded = known.get(name)
        if loaded is None:
            problems.append(f"{path}: claims.{name}: no such claim in claims/")
            continue
        for variant in variants_needed(loaded, profile):
            for seed in recorded.seeds:
                if (recorded.experiment, variant, seed) in checked:
                    continue
                checked.add((recorded.experiment, variant, seed))
                try:
                    request = request_for(catalog, recorded.experiment, variant, seed, profile, settings)
                except PendingDependency:
                    continue
                if UNAVAILABLE in request.datasets.values():
                    check.unchecked += 1
                    continue
                if bundle.has(request.key):
                    check.runs += 1
                else:
                    problems.append(f"{path}: claims.{name}: seed {seed} of {variant} has no committed record "
                                    f"({request.key[:16]}): its looks rest on a run that is not here")
    return problems
