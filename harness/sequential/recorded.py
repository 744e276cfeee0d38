"""The plan a profile's sequential file records, read back so that a later `--until-decided`
invocation continues it (`<store>/sequential/<profile>.json`).

A sequential test's error control holds for the plan it started with: its looks, their seeds and
their levels α_j, α spent by each. A later invocation that recomputed the plan from look 1 would
spend a fresh α on seeds whose looks have already spent part of it. So a later invocation of the
same profile reads the recorded plan (the experiments' max seeds, every claim's looks and
levels, the seeds added so far, where each claim's looks stopped) and goes on from there: claims
whose looks ended for a budget, were interrupted or were not tested continue with the next look;
decided claims, claims at their max seeds, claims with no finite figure of the seeds that would
decide them and fixed-n verdicts not extended keep their recorded verdicts.

The file only grows: claims the invocation does not select keep their recorded entries unchanged
(as do experiments none of its claims read), and claims new to the plan join it, as do recorded
claims whose verdict on the profile's seeds changed since (their recorded looks tested another
hypothesis). A `--max-seeds` other than the recorded plan's is refused (naming the file and the
recorded plan), as are a profile whose seeds changed and a file this rule did not write; to start a
new plan, remove the file, knowing its looks then start again at look 1 with a fresh α.

A file that cannot be read, is not JSON, lacks a field or holds one of the wrong type is reported
as `<file>: <field>: <problem>`, and never overwritten.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import format_field
from harness.sequential.stops import CONTINUING, STOPS
from harness.statistics import sequential_rule as rule

FOLDER = "sequential"


def path_for(store_dir: Path, profile: str) -> Path:
    return Path(store_dir) / FOLDER / f"{profile}.json"


@dataclass(frozen=True)
class RecordedClaim:
    claim: str
    experiment: str
    looks: rule.Looks
    look: int
    seeds: list[int]
    stopped: str
    status: str
    reason: str
    expectation: str
    power: dict[str, Any] | None
    numbers: dict[str, Any]
    """The statistics of its last look per series, as `Verdict.numbers` (empty in files written before
    they were recorded)."""
    fixed_status: str
    """The profile's own verdict (look 1) when the plan was recorded."""

    @property
    def continues(self) -> bool:
        """Its looks go on in a later invocation (they ended for a budget, an interruption, or a
        look that could not be tested)."""
        return self.stopped in CONTINUING

    @property
    def spent(self) -> float:
        """α(t_j) at the look it stands at."""
        return self.looks.spent_at(self.look)


@dataclass(frozen=True)
class Recorded:
    """A profile's recorded sequential plan and where its looks stand."""

    path: Path
    profile: str
    max_seeds: int | None
    profile_seeds: dict[str, list[int]]
    seeds: dict[str, list[int]]
    limits: dict[str, int]
    claims: dict[str, RecordedClaim]
    entries: dict[str, dict[str, Any]]
    """Each claim's entry as the file holds it (written back unchanged where it is not selected)."""
    selection: dict[str, Any]
    compute_seconds: float
    runs: dict[str, int]
    invocations: int

    def plan_text(self) -> str:
        limits = ", ".join(f"{e} {len(self.profile_seeds[e])} → {k} seeds" for e, k in sorted(self.limits.items()))
        return f"max seeds {'default' if self.max_seeds is None else self.max_seeds} ({limits})"

    def check_max_seeds(self, max_seeds: int | None) -> None:
        """A `--max-seeds` other than the plan's would change its looks and levels: refused."""
        if max_seeds is None or all(limit == max_seeds for limit in self.limits.values()):
            return
        raise ValueError(f"{self.path}: max_seeds: --max-seeds {max_seeds} differs from the recorded sequential "
                         f"plan, {self.plan_text()}; a later --until-decided continues that plan, whose looks "
                         "have spent part of α (omit --max-seeds, or give the recorded one); to start a new plan "
                         "remove the file: its looks then start again at look 1 with a fresh α")

    def check_profile_seeds(self, profile_seeds: dict[str, list[int]]) -> None:
        """The experiments of the plan that the selection reads still have the recorded profile seeds."""
        for experiment in sorted(set(profile_seeds) & set(self.profile_seeds)):
            if profile_seeds[experiment] != self.profile_seeds[experiment]:
                raise ValueError(f"{self.path}: experiments.{experiment}.profile_seeds: the recorded plan's profile "
                                 f"seeds {self.profile_seeds[experiment]} are not the profile's now, "
                                 f"{profile_seeds[experiment]}; remove the file to start a new plan")


def read(store_dir: Path, profile: str) -> Recorded | None:
    """The recorded plan of the profile, or None where `--until-decided` has not run at it."""
    path = path_for(store_dir, profile)
    if not path.exists():
        return None
    return _Reader(path).recorded(read_json(path), profile)


def read_json(path: Path) -> Any:
    """The file's JSON; a file that cannot be read or is not JSON is an error naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"{path}: <document>: cannot be read ({error.strerror or error}); it is left as it "
                         "is: restore it, or move it aside to start a new plan") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: <document>: not a sequential file (not JSON: {error})") from None


class _Reader:
    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: tuple, message: str) -> ValueError:
        return ValueError(f"{self.path}: {format_field(where)}: {message}")

    def get(self, data: Any, where: tuple, key: str, kind, optional: bool = False) -> Any:
        if not isinstance(data, dict):
            raise self.fail(where, f"expected an object, found {type(data).__name__}")
        if key not in data:
            raise self.fail(where + (key,), "missing")
        value = data[key]
        if value is None and optional:
            return None
        if not _is(value, kind):
            raise self.fail(where + (key,), f"expected {_kind_name(kind)}, found {value!r:.60}")
        return value

    def seeds(self, data: Any, where: tuple, key: str) -> list[int]:
        values = self.get(data, where, key, list)
        for i, value in enumerate(values):
            if not _is(value, int):
                raise self.fail(where + (key, i), f"expected a seed (an integer), found {value!r:.60}")
        return list(values)

    def recorded(self, data: Any, profile: str) -> Recorded:
        found = self.get(data, (), "profile", str)
        if found != profile:
            raise self.fail(("profile",), f"the file records profile {found!r}, not {profile!r}")
        name = self.get(self.get(data, (), "rule", dict), ("rule",), "name", str)
        if name != rule.NAME:
            raise self.fail(("rule", "name"), f"recorded under another rule ({name!r}); this verifier continues "
                                              f"only plans of {rule.NAME!r}: remove the file to start a new plan")
        max_seeds = self.get(data, (), "max_seeds", int, optional=True)
        experiments = self.get(data, (), "experiments", dict)
        profile_seeds, seeds, limits = {}, {}, {}
        for experiment, entry in experiments.items():
            where = ("experiments", experiment)
            profile_seeds[experiment] = self.seeds(entry, where, "profile_seeds")
            seeds[experiment] = self.seeds(entry, where, "seeds")
            limits[experiment] = self.get(entry, where, "max_seeds", int)
            if seeds[experiment][:len(profile_seeds[experiment])] != profile_seeds[experiment]:
                raise self.fail(where + ("seeds",), "do not begin with the profile's seeds")
        claims, entries = {}, {}
        for i, entry in enumerate(self.get(data, (), "claims", list)):
            claim = self._claim(entry, ("claims", i), profile_seeds, limits)
            if claim.claim in claims:
                raise self.fail(("claims", i, "claim"), f"claim {claim.claim!r} is recorded twice")
            claims[claim.claim], entries[claim.claim] = claim, entry
        runs = self.get(data, (), "runs", dict)
        return Recorded(self.path, profile, max_seeds, profile_seeds, seeds, limits, claims, entries,
                        self.get(data, (), "selection", dict), float(self.get(data, (), "compute_seconds", float)),
                        {k: self.get(runs, ("runs",), k, int) for k in ("ran", "reused", "failed")},
                        self.get(data, (), "invocations", int))

    def _claim(self, entry: Any, where: tuple, profile_seeds: dict[str, list[int]],
               limits: dict[str, int]) -> RecordedClaim:
        claim = self.get(entry, where, "claim", str)
        experiment = self.get(entry, where, "experiment", str)
        plan = self.get(entry, where, "plan", dict)
        alpha = self.get(plan, where + ("plan",), "alpha", float)
        if not 0.0 < alpha < 1.0:
            raise self.fail(where + ("plan", "alpha"), f"α lies in (0, 1), not {alpha}")
        looks_at = where + ("plan", "looks")
        planned = self.get(plan, where + ("plan",), "looks", list)
        seeds, levels, spent = [], [], []
        for j, look in enumerate(planned):
            at = looks_at + (j,)
            if self.get(look, at, "look", int) != j + 1:
                raise self.fail(at + ("look",), f"expected look {j + 1}, found {look['look']}")
            seeds.append(self.get(look, at, "seeds", int))
            levels.append(float(self.get(look, at, "level", float)))
            spent.append(float(self.get(look, at, "spent", float)))
            if not 0.0 <= levels[-1] <= alpha:
                raise self.fail(at + ("level",), f"a look's level lies in [0, α = {alpha}], not {levels[-1]}")
            if not 0.0 <= spent[-1] <= alpha * (1 + 1e-9) or (j > 0 and spent[-1] < spent[-2]):
                raise self.fail(at + ("spent",), f"the α spent rises to at most α = {alpha} over the looks, "
                                                 f"not {spent[-1]} here")
        if not planned:
            raise self.fail(looks_at, "a plan has at least one look")
        if experiment in limits:
            expected = rule.planned_looks([limits[experiment] - len(profile_seeds[experiment])])
            if len(planned) != expected:
                raise self.fail(looks_at, f"{len(planned)} looks, but experiment {experiment!r}'s recorded "
                                          f"{len(profile_seeds[experiment])} profile seeds and max seeds "
                                          f"{limits[experiment]} plan {expected}")
        look = self.get(entry, where, "looks", int)
        if not 1 <= look <= len(planned):
            raise self.fail(where + ("looks",), f"look {look} is outside the plan's {len(planned)} looks")
        stopped = self.get(entry, where, "stopped", str)
        if stopped not in STOPS:
            raise self.fail(where + ("stopped",), f"not a reason the looks end ({'; '.join(STOPS)}): {stopped!r}")
        return RecordedClaim(claim, experiment, rule.Looks(alpha, tuple(seeds), tuple(levels), tuple(spent)), look,
                             self.seeds(entry, where, "seeds"), stopped, self.get(entry, where, "status", str),
                             self.get(entry, where, "reason", str), self.get(entry, where, "expectation", str),
                             self.get(entry, where, "power", dict, optional=True),
                             self.get(entry, where, "numbers", dict) if "numbers" in entry else {},
                             self.get(self.get(entry, where, "fixed_n", dict), where + ("fixed_n",), "status", str))


def _is(value: Any, kind) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, kind)


def _kind_name(kind) -> str:
    return {int: "an integer", float: "a finite number", str: "a string", list: "a list", dict: "an object"}[kind]
