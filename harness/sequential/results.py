"""The sequential verdicts of a profile as a JSON file in the results store, and what they changed.

They are a different test from the profile's fixed-n verdicts (more seeds, a lower level per
look), so they live beside the store's records, in `<store>/sequential/<profile>.json`, and never
replace the fixed-n verdicts or the baselines. The file records the plan as well: the rule, every
experiment's max seeds and seeds so far, and per claim its planned looks (each look's seeds, its
level α_j and the α spent by it), the look it stands at and the α spent so far; a later
`--until-decided` invocation reads it back and continues it (`harness.sequential.recorded`).

The file only grows: a write keeps the entries of the recorded claims and experiments the
invocation did not select, and refuses to lower any recorded claim's seeds, look or α spent. It
is written whole to a temporary file that then replaces it, so an interrupted write leaves the
file as it was.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.sequential.recorded import Recorded, RecordedClaim, path_for, read_json, validated
from harness.sequential.stops import INTERRUPTED, NOT_EXTENDED
from harness.statistics import sequential_boundary as boundary
from harness.statistics import sequential_rule as rule
from methods.plain import json_safe

if TYPE_CHECKING:
    from harness.sequential.tracks import Sequential, Track


def to_dict(result: Sequential, selection: dict[str, Any] | None = None) -> dict[str, Any]:
    """The file's content; compute, runs and invocations add up those of the invocations that
    continued the plan."""
    earlier = result.recorded
    execution = result.execution
    runs = {"ran": execution.ran, "reused": execution.reused, "failed": execution.failed}
    if earlier is not None:
        runs = {k: n + earlier.runs[k] for k, n in runs.items()}
    return json_safe({
        "profile": result.profile,
        "rule": {"name": rule.NAME, "text": rule.TEXT,
                 "calibration": {"simulations": boundary.SIMULATIONS, "rng_seed": boundary.RNG_SEED}},
        "selection": selection or {},
        "max_seeds": result.max_seeds,
        "invocations": 1 + (0 if earlier is None else earlier.invocations),
        "budget_minutes": None if result.budget_seconds is None else result.budget_seconds / 60.0,
        "compute_seconds": result.compute_seconds + (0.0 if earlier is None else earlier.compute_seconds),
        "runs": runs,
        "stop": result.stop or INTERRUPTED,
        "experiments": {**_earlier_experiments(earlier), **_experiments(result)},
        "claims": _claims(result.tracks, earlier),
    })


def _experiments(result: Sequential) -> dict[str, Any]:
    return {e: {"profile_seeds": result.profile_seeds[e], "seeds": result.seeds[e], "max_seeds": result.limits[e]}
            for e in result.seeds}


def _earlier_experiments(earlier: Recorded | None) -> dict[str, Any]:
    if earlier is None:
        return {}
    return {e: {"profile_seeds": earlier.profile_seeds[e], "seeds": earlier.seeds[e], "max_seeds": earlier.limits[e]}
            for e in earlier.seeds}


def _claims(tracks: list[Track], earlier: Recorded | None) -> list[dict[str, Any]]:
    """The recorded claims in their recorded order (those not selected now unchanged), then the
    claims new to the plan."""
    now = {track.claim: _claim(track) for track in tracks}
    recorded = {} if earlier is None else earlier.entries
    return [now.get(claim, entry) for claim, entry in recorded.items()] + \
        [entry for claim, entry in now.items() if claim not in recorded]


def _claim(track: Track) -> dict[str, Any]:
    verdict = track.verdict
    assert verdict is not None  # every track has one from its first look on
    entry: dict[str, Any] = {
        "claim": track.claim, "paper": track.loaded.paper, "experiment": track.experiment,
        "fixed_n": {"status": track.fixed.status, "reason": track.fixed.reason, "alpha": track.looks.level_at(1)},
        "status": verdict.status, "reason": verdict.reason, "expectation": verdict.expectation,
        "seeds": track.seeds, "looks": track.look, "planned_looks": track.looks.planned,
        "alpha": track.looks.alpha, "alpha_at_look": track.level, "alpha_spent": track.spent,
        "stopped": track.stopped or INTERRUPTED, "power": verdict.power, "numbers": verdict.numbers,
        "plan": {"alpha": track.looks.alpha,
                 "looks": [{"look": j, "seeds": n, "level": level, "spent": spent, "power": power}
                           for j, (n, level, spent, power) in enumerate(zip(
                               track.looks.seeds, track.looks.levels, track.looks.spent, track.looks.power()),
                               start=1)],
                 "power_effect_sd": rule.POWER_EFFECT_SD,
                 "boundary_alone_power": track.looks.boundary_alone_power(rule.POWER_EFFECT_SD)},
    }
    if track.change is not None:
        entry["changed"] = track.change
    return entry


def write(result: Sequential, store_dir: Path, selection: dict[str, Any] | None = None) -> Path:
    """Write the file (it only grows: ValueError where it would lower what the recorded plan holds)."""
    path = path_for(store_dir, result.profile)
    data = to_dict(result, selection)
    if result.recorded is not None:
        check_grows(result.recorded, data)
    replace_atomically(path, json.dumps(data, indent=1) + "\n")
    return path


def check_grows(earlier: Recorded, data: dict[str, Any]) -> None:
    """Every recorded claim is still there with no fewer seeds, no earlier look and no less α
    spent, on the same plan; every experiment keeps its seeds."""
    claims = {c["claim"]: c for c in data["claims"]}
    for claim, before in earlier.claims.items():
        after = claims.get(claim)
        problem = "dropped" if after is None else _lowered(before, after)
        if problem:
            raise ValueError(f"{earlier.path}: claims: {claim}: not written, it would be {problem}; "
                             "the file only grows")
    for experiment, seeds in earlier.seeds.items():
        if not set(seeds) <= set(data["experiments"].get(experiment, {}).get("seeds", [])):
            raise ValueError(f"{earlier.path}: experiments.{experiment}.seeds: not written, seeds {seeds} would be "
                             "dropped; the file only grows")


def _lowered(before: RecordedClaim, after: dict[str, Any]) -> str:
    if (after.get("changed") or {}).get("commit", "") != before.change_commit:
        return ""  # its expectation changed since: a new hypothesis, whose looks start anew on fresh seeds
    if not set(before.seeds) <= set(after["seeds"]):
        return f"dropping seeds ({before.seeds} recorded, {after['seeds']} now)"
    if after["looks"] < before.look:
        return f"set back to look {after['looks']} from look {before.look}"
    if after["alpha_spent"] < before.spent:
        return f"spending less α ({after['alpha_spent']:.4g}) than recorded ({before.spent:.4g})"
    if [look["level"] for look in after["plan"]["looks"]] != list(before.looks.levels):
        return "given another plan"
    return ""


def replace_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path` (this process's own), then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def load(store_dir: Path, profile: str, alphas: Mapping[str, float] | None = None) -> dict[str, Any] | None:
    """The file's content (None where there is none), checked by the reader `--until-decided`
    continues it with (`harness.sequential.recorded.validated`); one that cannot be read, is not
    JSON or fails a check is an error naming it and the field."""
    path = path_for(store_dir, profile)
    if not path.exists():
        return None
    data = read_json(path)
    validated(path, data, profile, alphas)
    return data


def added_seeds(claim: dict[str, Any], data: dict[str, Any]) -> int:
    """The claim's seeds that are not its profile's (all of them added until decided)."""
    profile = set(data["experiments"].get(claim["experiment"], {}).get("profile_seeds", []))
    return sum(seed not in profile for seed in claim["seeds"])


def resolved(data: dict[str, Any]) -> tuple[int, Counter]:
    """How many claims the fixed-n test left INCONCLUSIVE, and their sequential verdicts."""
    undecided = [c for c in data["claims"] if c["fixed_n"]["status"] == "INCONCLUSIVE"]
    return len(undecided), Counter(c["status"] for c in undecided)


def summary_text(data: dict[str, Any]) -> str:
    """'Of the 12 claims INCONCLUSIVE at the profile's seeds (fixed n), the sequential test decided 5:
    4 PASS, 1 FAIL; 7 stay INCONCLUSIVE.'"""
    total, outcomes = resolved(data)
    others = ", ".join(f"{n} {status}" for status, n in sorted(outcomes.items())
                       if status not in ("PASS", "FAIL", "INCONCLUSIVE"))
    staying = outcomes["INCONCLUSIVE"]
    return (f"Of the {total} {'claim' if total == 1 else 'claims'} INCONCLUSIVE at the profile's seeds (fixed n), "
            f"the sequential test decided {outcomes['PASS'] + outcomes['FAIL']}: {outcomes['PASS']} PASS, "
            f"{outcomes['FAIL']} FAIL; {staying} {'stays' if staying == 1 else 'stay'} INCONCLUSIVE"
            + (f" ({others})" if others else "") + ".")


def shown(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The claims the profile left INCONCLUSIVE, those that took added seeds, and those whose
    sequential verdict differs from the fixed-n one (except the fixed-n decisions not extended)."""
    return [c for c in data["claims"] if c["stopped"] != NOT_EXTENDED and (
        c["fixed_n"]["status"] == "INCONCLUSIVE" or added_seeds(c, data) > 0 or c["status"] != c["fixed_n"]["status"])]


def not_extended(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Fixed-n PASS or FAIL verdicts that look 1 cannot decide at its level α_1: seeds go only to the
    profile's INCONCLUSIVE claims, so their fixed-n verdicts stand."""
    return [c for c in data["claims"] if c["stopped"] == NOT_EXTENDED]
