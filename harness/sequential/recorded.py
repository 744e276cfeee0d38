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
hypothesis) and claims whose expectation changed after seeds were run (`changed:` in the claim
file) where their entry does not record that change. Such a claim's entry records it (`changed`:
its date, commit and the seeds seen before it), and its looks count only the other seeds. A
`--max-seeds` other than the recorded plan's is refused (naming the file and the recorded plan), as
are a profile whose seeds changed and a file this rule did not write; to start a new plan, remove the
file, knowing its looks then start again at look 1 with a fresh α.

A file that cannot be read, is not JSON, lacks a field or holds one of the wrong type is reported
as `<file>: <field>: <problem>`, and never overwritten; so is one whose claims spend α otherwise
than the rule does at their α (or at an α other than their spec's), whose seeds are not as many as
their look is on or not among their experiment's, or whose verdict is not one the reason their
looks ended allows. Every reader of the file (this one, the report's, the terminal's) goes through
`validated`.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import format_field
from harness.sequential.stops import AT_LIMIT, CONTINUING, DECIDED, NOT_EXTENDED, NOT_TESTED, STOPS
from harness.statistics import sequential_boundary as boundary
from harness.statistics import sequential_rule as rule
from harness.statistics.outcome import ERROR, FAIL, INCONCLUSIVE, PASS, SKIPPED, STATUSES

FOLDER = "sequential"
VERDICTS_BY_STOP = {DECIDED: (PASS, FAIL), NOT_TESTED: (SKIPPED, ERROR)}
"""The verdicts a claim's looks can end with, by why they ended (any other reason: INCONCLUSIVE, the
driver stopping only undecided looks for it)."""


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
    seen: tuple[int, ...] = ()
    """Seeds run before its expectation changed, which its looks do not read (`changed.seen`; none in files
    written before changes were recorded)."""
    change_commit: str = ""
    """The commit of the expectation's change its looks test after (`changed.commit`; "" where none)."""

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


    def check_alphas(self, alphas: Mapping[str, float]) -> None:
        """Every recorded claim that `alphas` names was planned at its α (the α its spec states at the
        profile): a plan at another α spends another error rate."""
        for claim, entry in self.claims.items():
            if claim in alphas and not math.isclose(entry.looks.alpha, alphas[claim], rel_tol=1e-9):
                raise ValueError(f"{self.path}: claims.{claim}.plan.alpha: the plan is at α = {entry.looks.alpha:g}, "
                                 f"but the claim tests at α = {alphas[claim]:g} at profile {self.profile!r}")

    def claimed_seeds(self) -> dict[str, list[int]]:
        """Per experiment, the seeds the file says were run at the profile (every claim's looks are on
        some of them): the runs whose records must back its verdicts."""
        return {experiment: list(seeds) for experiment, seeds in self.seeds.items()}


def read(store_dir: Path, profile: str, alphas: Mapping[str, float] | None = None) -> Recorded | None:
    """The recorded plan of the profile (checked: see `validated`), or None where `--until-decided`
    has not run at it."""
    path = path_for(store_dir, profile)
    if not path.exists():
        return None
    return validated(path, read_json(path), profile, alphas)


def validated(path: Path, data: Any, profile: str, alphas: Mapping[str, float] | None = None) -> Recorded:
    """The plan `data` (the JSON of the file at `path`) records, every field the report and the
    driver read checked: its types, its looks the rule's at its α (and that α the claim's, where
    `alphas` gives it), each claim's seeds as many as its look's and among its experiment's, its
    verdict one the reason its looks ended allows. ValueError `<file>: <field>: <problem>` otherwise."""
    recorded = _Reader(path).recorded(data, profile)
    if alphas is not None:
        recorded.check_alphas(alphas)
    return recorded


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
        self.get(data["rule"], ("rule",), "text", str)
        max_seeds = self.get(data, (), "max_seeds", int, optional=True)
        profile_seeds, seeds, limits = self._experiments(self.get(data, (), "experiments", dict))
        claims, entries = {}, {}
        for i, entry in enumerate(self.get(data, (), "claims", list)):
            claim = self._claim(entry, ("claims", i), profile_seeds, seeds, limits)
            if claim.claim in claims:
                raise self.fail(("claims", i, "claim"), f"claim {claim.claim!r} is recorded twice")
            claims[claim.claim], entries[claim.claim] = claim, entry
        runs = self.get(data, (), "runs", dict)
        self.get(data, (), "budget_minutes", float, optional=True)
        self.get(data, (), "stop", str)
        return Recorded(self.path, profile, max_seeds, profile_seeds, seeds, limits, claims, entries,
                        self.get(data, (), "selection", dict), float(self.get(data, (), "compute_seconds", float)),
                        {k: self.get(runs, ("runs",), k, int) for k in ("ran", "reused", "failed")},
                        self.get(data, (), "invocations", int))

    def _experiments(self, experiments: dict[str, Any]
                     ) -> tuple[dict[str, list[int]], dict[str, list[int]], dict[str, int]]:
        """Each experiment's profile seeds, seeds so far and max seeds."""
        profile_seeds: dict[str, list[int]] = {}
        seeds: dict[str, list[int]] = {}
        limits: dict[str, int] = {}
        for experiment, entry in experiments.items():
            where = ("experiments", experiment)
            profile_seeds[experiment] = self.seeds(entry, where, "profile_seeds")
            seeds[experiment] = self.seeds(entry, where, "seeds")
            limits[experiment] = self.get(entry, where, "max_seeds", int)
            if seeds[experiment][:len(profile_seeds[experiment])] != profile_seeds[experiment]:
                raise self.fail(where + ("seeds",), "do not begin with the profile's seeds")
            if len(set(seeds[experiment])) != len(seeds[experiment]):
                raise self.fail(where + ("seeds",), f"a seed is listed twice: {seeds[experiment]}")
            if len(seeds[experiment]) > max(limits[experiment], len(profile_seeds[experiment])):
                raise self.fail(where + ("seeds",), f"{len(seeds[experiment])} seeds, more than the plan's max "
                                                    f"seeds {limits[experiment]}")
        return profile_seeds, seeds, limits

    def _claim(self, entry: Any, where: tuple, profile_seeds: dict[str, list[int]], seeds: dict[str, list[int]],
               limits: dict[str, int]) -> RecordedClaim:
        claim = self.get(entry, where, "claim", str)
        experiment = self.get(entry, where, "experiment", str)
        seen, commit = self._change(entry, where)
        expected = None
        if experiment in limits and not commit:
            expected = (rule.planned_looks([limits[experiment] - len(profile_seeds[experiment])]),
                        f"experiment {experiment!r}'s recorded {len(profile_seeds[experiment])} profile seeds and "
                        f"max seeds {limits[experiment]}")
        looks = self._plan(entry, where, expected)
        if experiment in limits and commit:
            fresh = limits[experiment] - len(seen) - looks.seeds[0]
            if looks.planned != rule.planned_looks([fresh]):
                raise self.fail(where + ("plan", "looks"), f"{looks.planned} looks, but a plan on the seeds run "
                                                           f"after its change, from {looks.seeds[0]} up to max seeds "
                                                           f"{limits[experiment]} less the {len(seen)} seen, plans "
                                                           f"{rule.planned_looks([fresh])}")
        look = self.get(entry, where, "looks", int)
        if not 1 <= look <= looks.planned:
            raise self.fail(where + ("looks",), f"look {look} is outside the plan's {looks.planned} looks")
        stopped = self.get(entry, where, "stopped", str)
        if stopped not in STOPS:
            raise self.fail(where + ("stopped",), f"not a reason the looks end ({'; '.join(STOPS)}): {stopped!r}")
        fixed_n = self.get(entry, where, "fixed_n", dict)
        recorded = RecordedClaim(
            claim, experiment, looks, look, self.seeds(entry, where, "seeds"), stopped,
            self.status(entry, where), self.get(entry, where, "reason", str),
            self.get(entry, where, "expectation", str),
            self.get(entry, where, "power", dict, optional=True),
            self.get(entry, where, "numbers", dict) if "numbers" in entry else {},
            self.status(fixed_n, where + ("fixed_n",)), seen, commit)
        self.get(fixed_n, where + ("fixed_n",), "reason", str)
        self._agrees(entry, where, recorded, seeds.get(experiment))
        return recorded

    def _change(self, entry: dict[str, Any], where: tuple) -> tuple[tuple[int, ...], str]:
        """The seeds run before the claim's expectation changed and the change's commit (none: ((), ""))."""
        if entry.get("changed") is None:
            return (), ""
        at = where + ("changed",)
        changed = self.get(entry, where, "changed", dict)
        self.get(changed, at, "date", str)
        self.get(changed, at, "before", dict, optional=True)
        return tuple(self.seeds(changed, at, "seen")), self.get(changed, at, "commit", str)

    def status(self, data: Any, where: tuple) -> str:
        status = self.get(data, where, "status", str)
        if status not in STATUSES:
            raise self.fail(where + ("status",), f"not a verdict ({', '.join(STATUSES)}): {status!r}")
        return status

    def _plan(self, entry: Any, where: tuple, expected: tuple[int, str] | None) -> rule.Looks:
        """The claim's planned looks, as many as `expected` says (a count and why), spending α by the rule."""
        at = where + ("plan",)
        plan = self.get(entry, where, "plan", dict)
        alpha = self.get(plan, at, "alpha", float)
        if not 0.0 < alpha < 1.0:
            raise self.fail(at + ("alpha",), f"α lies in (0, 1), not {alpha}")
        planned = self.get(plan, at, "looks", list)
        if not planned:
            raise self.fail(at + ("looks",), "a plan has at least one look")
        if expected is not None and len(planned) != expected[0]:
            raise self.fail(at + ("looks",), f"{len(planned)} looks, but {expected[1]} plan {expected[0]}")
        seeds, levels, spent = [], [], []
        for j, look in enumerate(planned):
            there = at + ("looks", j)
            if self.get(look, there, "look", int) != j + 1:
                raise self.fail(there + ("look",), f"expected look {j + 1}, found {look['look']}")
            seeds.append(self.get(look, there, "seeds", int))
            levels.append(float(self.get(look, there, "level", float)))
            spent.append(float(self.get(look, there, "spent", float)))
            if "power" in planned[0]:
                self.get(look, there, "power", float)
        if "power" in planned[0]:
            self.get(plan, at, "power_effect_sd", float)
            self.get(plan, at, "boundary_alone_power", float)
        if seeds[0] < 1 or seeds != list(range(seeds[0], seeds[0] + len(seeds))):
            raise self.fail(at + ("looks",), f"the looks' seeds rise by one from at least 1, not {seeds}")
        self._spends_by_the_rule(at, alpha, seeds, levels, spent)
        return rule.Looks(alpha, tuple(seeds), tuple(levels), tuple(spent))

    def _spends_by_the_rule(self, at: tuple, alpha: float, seeds: list[int], levels: list[float],
                            spent: list[float]) -> None:
        """Look 1 at the rule's share of α and the α spent by each look the rule's spending of α (both
        closed forms: the calibrated levels are read as recorded, never simulated again); each look's
        level at most α."""
        ruled = boundary.spent_by_look(seeds[0], seeds[-1], alpha)
        for j, (level, by, by_ruled) in enumerate(zip(levels, spent, ruled)):
            if not math.isclose(by, by_ruled, rel_tol=1e-6):
                raise self.fail(at + ("looks", j, "spent"), f"{by:.6g} is not the α the rule spends by look "
                                                           f"{j + 1} at α = {alpha:g} ({by_ruled:.6g})")
            if not 0.0 <= level <= alpha:
                raise self.fail(at + ("looks", j, "level"), f"a look's level lies in [0, α = {alpha:g}], not {level}")
        if not math.isclose(levels[0], boundary.profile_level(alpha), rel_tol=1e-9):
            raise self.fail(at + ("looks", 0, "level"), f"{levels[0]} is not the rule's level of look 1 at "
                                                        f"α = {alpha:g} ({boundary.profile_level(alpha)})")

    def _agrees(self, entry: dict[str, Any], where: tuple, claim: RecordedClaim,
                experiment_seeds: list[int] | None) -> None:
        """What the entry says of its looks, seeds and verdict is what its own plan and the rule allow."""
        looks, look = claim.looks, claim.look
        for key, value in (("alpha", looks.alpha), ("alpha_at_look", looks.level_at(look)),
                           ("alpha_spent", looks.spent_at(look)), ("planned_looks", looks.planned)):
            found = self.get(entry, where, key, float)
            if not math.isclose(found, value, rel_tol=1e-9):
                raise self.fail(where + (key,), f"{found} is not the plan's {value} (look {look} of {looks.planned})")
        fixed_alpha = self.get(entry["fixed_n"], where + ("fixed_n",), "alpha", float)
        if not math.isclose(fixed_alpha, looks.level_at(1), rel_tol=1e-9):
            raise self.fail(where + ("fixed_n", "alpha"), f"{fixed_alpha} is not the plan's look-1 level "
                                                          f"{looks.level_at(1)}")
        if set(claim.seeds) & set(claim.seen):
            raise self.fail(where + ("seeds",), f"seeds {sorted(set(claim.seeds) & set(claim.seen))} were run before "
                                                "its expectation changed (changed.seen): its looks cannot read them")
        waiting = bool(claim.seen) and look == 1 and len(claim.seeds) < looks.seeds[0]  # fresh seeds to come
        if (experiment_seeds is not None or claim.seeds) and not waiting:
            if len(set(claim.seeds)) != len(claim.seeds) or len(claim.seeds) != looks.seeds[look - 1]:
                raise self.fail(where + ("seeds",), f"{len(claim.seeds)} seeds {claim.seeds}, but look {look} of "
                                                    f"the plan is on {looks.seeds[look - 1]} distinct seeds")
            if not set(claim.seeds) <= set(experiment_seeds or ()):
                raise self.fail(where + ("seeds",), f"seeds {claim.seeds} are not all among experiment "
                                                    f"{claim.experiment!r}'s recorded seeds {experiment_seeds or []}")
        allowed = VERDICTS_BY_STOP.get(claim.stopped, (INCONCLUSIVE,))
        if claim.status not in allowed:
            raise self.fail(where + ("status",), f"{claim.status} where the looks ended as {claim.stopped!r}, "
                                                 f"which leaves {' or '.join(allowed)}")
        if claim.stopped == NOT_EXTENDED and claim.fixed_status not in (PASS, FAIL):
            raise self.fail(where + ("stopped",), f"{claim.stopped!r}, but the fixed-n verdict is "
                                                  f"{claim.fixed_status}, not PASS or FAIL")
        if claim.stopped == AT_LIMIT and look != looks.planned:
            raise self.fail(where + ("stopped",), f"{claim.stopped!r} at look {look} of {looks.planned}")
        for series, numbers in claim.numbers.items():
            n = numbers.get("n") if isinstance(numbers, dict) else None
            if n is not None and not (_is(n, int) and 0 <= n <= len(claim.seeds)):
                raise self.fail(where + ("numbers", series, "n"), f"{n!r} values, but the look is on "
                                                                  f"{len(claim.seeds)} seeds")


def _is(value: Any, kind) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, kind)


def _kind_name(kind) -> str:
    return {int: "an integer", float: "a finite number", str: "a string", list: "a list", dict: "an object"}[kind]
