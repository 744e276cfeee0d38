"""The working tree against a git revision, on this machine, bit for bit
(`fedclaims baseline check --against REV`).

Both revisions verify the selected claims here, under this machine's numerics, into one results
store. A record's key names what its run computes (code, config, seed, data, libraries), so a run
whose key is the same at both revisions is computed once and read by both: only the runs whose
keys differ are run, and a second check against the same revision runs nothing. With one
numerics on both sides no drift model is needed: every number that differs was changed by the
code, so the check sees any change, however small.

Each claim whose numbers moved is reported with, per series, the per-seed change, its mean in
the revision's seed standard deviations, and a paired t test of the change (both revisions run
the same seeds, partitions and batches, so the per-seed changes are paired), and whether its
verdict moved.

The revision is extracted with `git archive` into the cache (`<cache>/revisions/<commit>`) and
verified by its own code, run as a subprocess from that tree (`fedclaims baseline update` into a
file beside it, a command every revision with a regression baseline has).
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scipy import stats

from harness.settings import Settings
from harness.verdicts.verify import Verdict
from methods.plain import json_safe

DETECTS = "any change: both revisions computed here under one numerics and compared bit for bit"


def resolve(root: Path, revision: str) -> str:
    """The commit `revision` names in the project's git repository."""
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"--against {revision}: not a commit of the git repository at {root}")
    return done.stdout.strip()


def extract(root: Path, commit: str, cache_dir: Path, revision: str | None = None) -> Path:
    """The tree of `commit` under the cache (extracted once; an interrupted extraction is redone).

    Extracted with tarfile's "data" filter: a member that would land outside the tree (a symlink
    or hard link out of it, an absolute path, `..`) or is not a plain file, folder or link refuses
    the whole revision (ValueError naming it and the member), and the partial folder is removed."""
    folder = Path(cache_dir) / "revisions" / commit
    if (folder / ".complete").exists():
        return folder
    archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", commit], capture_output=True)
    if archive.returncode != 0:
        raise ValueError(f"git archive {commit}: {archive.stderr.decode(errors='replace').strip()}")
    partial = folder.with_name(f"{commit}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(partial, filter="data")
        (partial / ".complete").write_text(commit + "\n", encoding="utf-8")
    except (tarfile.TarError, OSError) as error:
        raise ValueError(f"--against {revision or commit} ({commit[:12]}): its tree is refused, not extracted: "
                         f"{error}") from None
    finally:
        if not (partial / ".complete").exists():
            shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def record(tree: Path, settings: Settings, profile: str, papers: list[str], pattern: str | None,
           out: Path) -> subprocess.CompletedProcess:
    """Verify the selection with the code of `tree`, into this store, writing its numbers to `out`."""
    command = [sys.executable, "-m", "harness.cli", "--root", str(tree), "baseline", "update", "--profile", profile,
               "--baseline", str(out), "--store", str(settings.store_dir), "--workers", str(settings.workers),
               "--threads", str(settings.threads), "--device", settings.device]
    if settings.data_dir is not None:
        command += ["--data", str(settings.data_dir)]
    for paper in papers:
        command += ["--paper", paper]
    if pattern:
        command += ["--claim", pattern]
    env = {**os.environ, "PYTHONPATH": str(tree), "FEDCLAIMS_CACHE": str(settings.cache_dir)}
    return subprocess.run(command, capture_output=True, text=True, cwd=tree, env=env)


def revision_numbers(settings: Settings, revision: str, profile: str, papers: list[str], pattern: str | None
                     ) -> tuple[str, dict[str, Any], str]:
    """(commit, its claims' recorded entries, what its verification ran) for the selection at `revision`."""
    commit = resolve(settings.root, revision)
    has_baselines = subprocess.run(["git", "-C", str(settings.root), "cat-file", "-e", f"{commit}:baselines"],
                                   capture_output=True)
    if has_baselines.returncode != 0:
        raise ValueError(f"--against {revision} ({commit[:12]}): that revision predates the regression baselines (no "
                         "baselines/ folder there), so its code cannot record a selection to compare; name a later one")
    tree = extract(settings.root, commit, settings.cache_dir, revision)
    selection = hashlib.sha256(json.dumps([profile, sorted(papers), pattern]).encode()).hexdigest()[:12]
    out = tree.parent / f"{commit}.{profile}.{selection}.json"
    done = record(tree, settings, profile, papers, pattern, out)
    if done.returncode != 0 or not out.exists():
        raise ValueError(f"verifying the claims at {revision} ({commit[:12]}) failed (exit {done.returncode}):\n"
                         + done.stderr[-4000:])
    ran = next((line.strip() for line in done.stderr.splitlines() if " runs: " in line), "")
    return commit, json.loads(out.read_text(encoding="utf-8"))["claims"], ran


@dataclass(frozen=True)
class SeriesChange:
    """One series whose per-seed values differ between the revisions."""

    label: str
    changes: dict[str, float | None]
    """Per seed: working tree − revision (None where one side has no finite value)."""
    seed_sd: float | None
    """The revision's seed-to-seed standard deviation of the series."""

    @property
    def finite(self) -> list[float]:
        return [d for d in self.changes.values() if d is not None]

    @property
    def mean(self) -> float:
        return sum(self.finite) / len(self.finite) if self.finite else math.nan

    def paired_test(self) -> str:
        values = self.finite
        if len(values) < 2:
            return f"no paired test ({len(values)} seed{'s' if len(values) != 1 else ''} with a finite change)"
        if len(set(values)) == 1:
            return f"every seed moved by the same {values[0]:+.4g}"
        result = stats.ttest_1samp(values, 0.0)
        return f"paired t = {result.statistic:.2f} on {len(values) - 1} df, p = {result.pvalue:.3g}"

    def text(self) -> str:
        seeds = ", ".join(f"s{seed} {'n/a' if d is None else f'{d:+.4g}'}" for seed, d in self.changes.items())
        size = (f" = {self.mean / self.seed_sd:+.2f} seed SDs" if self.seed_sd and math.isfinite(self.mean)
                else "")
        return f"{self.label}: mean change {self.mean:+.4g}{size} ({seeds}); {self.paired_test()}"


@dataclass
class ClaimChange:
    claim: str
    before: str
    after: str
    series: list[SeriesChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def moved(self) -> bool:
        return self.before != self.after or bool(self.series) or bool(self.notes)

    def text(self) -> str:
        verdict = (f"verdict {self.before} → {self.after}" if self.before != self.after
                   else f"verdict unchanged ({self.after})")
        return "; ".join([verdict] + self.notes + [s.text() for s in self.series])


@dataclass
class Comparison:
    commit: str
    claims: dict[str, ClaimChange] = field(default_factory=dict)
    only_here: list[str] = field(default_factory=list)
    only_there: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)
    """Claims neither side could compute (data unavailable, nothing observed)."""

    @property
    def moved(self) -> list[ClaimChange]:
        return [c for c in self.claims.values() if c.moved]

    def summary(self) -> str:
        return (f"{len(self.claims)} claims compared with {self.commit[:12]} under this machine's numerics: "
                f"{len(self.moved)} moved, {len(self.claims) - len(self.moved)} bit-identical"
                + (f"; {len(self.only_here)} only in the working tree" if self.only_here else "")
                + (f"; {len(self.only_there)} only at the revision" if self.only_there else "")
                + (f"; {len(self.unavailable)} observed on neither side (data unavailable here, or nothing "
                   "observed), not compared" if self.unavailable else "")
                + f". Detects: {DETECTS}")


def _same(a: float | None, b: float | None) -> bool:
    return a == b or (a is None and b is None)


def _series_change(label: str, now: dict[str, Any] | None, then: dict[str, Any] | None) -> SeriesChange | None:
    now_values = (now or {}).get("values", {})
    then_values = (then or {}).get("values", {})
    seeds = sorted(set(now_values) | set(then_values), key=lambda s: (len(s), s))
    if all(_same(now_values.get(seed), then_values.get(seed)) and seed in now_values and seed in then_values
           for seed in seeds):
        return None
    changes = {}
    for seed in seeds:
        a, b = now_values.get(seed), then_values.get(seed)
        changes[seed] = a - b if a is not None and b is not None else None
    sd = (then or {}).get("std")
    return SeriesChange(label, changes, float(sd) if sd is not None and math.isfinite(sd) and sd > 0 else None)


def compare(verdicts: list[Verdict], recorded: dict[str, Any], commit: str) -> Comparison:
    """Every selected claim's numbers and verdict in the working tree against the revision's."""
    outcome = Comparison(commit)
    here = {v.claim: v for v in verdicts}
    outcome.only_here = sorted(set(here) - set(recorded))
    outcome.only_there = sorted(set(recorded) - set(here))
    for claim in sorted(set(here) & set(recorded)):
        verdict, entry = here[claim], recorded[claim]
        status = "SKIPPED" if verdict.data_unavailable else verdict.status
        before = "SKIPPED" if entry.get("status") == "unavailable here" else entry.get("status", "?")
        change = ClaimChange(claim, before, status)
        numbers, then = json_safe(verdict.numbers), entry.get("numbers", {})
        if not numbers and not then and before == status:
            outcome.unavailable.append(claim)
            continue
        if entry.get("numerics") and verdict.numerics and entry["numerics"] != verdict.numerics:
            change.notes.append(f"records of other numerics on the two sides ({entry['numerics']} at the revision, "
                                f"{verdict.numerics} here): the comparison is not exact")
        if entry.get("compare") == "verdict":  # timings: they differ between any two runs
            outcome.claims[claim] = change
            continue
        for label in sorted(set(numbers) | set(then)):
            moved = _series_change(label, numbers.get(label), then.get(label))
            if moved is not None:
                change.series.append(moved)
        outcome.claims[claim] = change
    return outcome
