"""The sequential verdicts of a profile as a JSON file in the results store, and what they changed.

They are a different test from the profile's fixed-n verdicts (more seeds, a lower level per
look), so they live beside the store's records, in `<store>/sequential/<profile>.json`, and never
replace the fixed-n verdicts or the baselines. The file records the plan as well: the rule, every
experiment's max seeds and seeds so far, and per claim its planned looks (each look's seeds, its
level α_j and the α spent by it), the look it stands at and the α spent so far; a later
`--until-decided` invocation reads it back and continues it (`harness.sequential.recorded`).
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from harness.sequential import boundary, rule
from harness.sequential.driver import NOT_EXTENDED, Sequential, Track
from harness.sequential.recorded import path_for
from harness.store import json_safe


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
        "stop": result.stop,
        "experiments": {e: {"profile_seeds": result.profile_seeds[e], "seeds": result.seeds[e],
                            "max_seeds": result.limits[e]} for e in result.seeds},
        "claims": [_claim(track) for track in result.tracks],
    })


def _claim(track: Track) -> dict[str, Any]:
    verdict = track.verdict
    return {
        "claim": track.claim, "paper": track.loaded.paper, "experiment": track.experiment,
        "fixed_n": {"status": track.fixed.status, "reason": track.fixed.reason, "alpha": track.looks.alpha},
        "status": verdict.status, "reason": verdict.reason, "expectation": verdict.expectation,
        "seeds": track.seeds, "looks": track.look, "planned_looks": track.looks.planned,
        "alpha": track.looks.alpha, "alpha_at_look": track.level, "alpha_spent": track.spent,
        "stopped": track.stopped, "power": verdict.power,
        "plan": {"alpha": track.looks.alpha,
                 "looks": [{"look": j, "seeds": n, "level": level, "spent": spent} for j, (n, level, spent)
                           in enumerate(zip(track.looks.seeds, track.looks.levels, track.looks.spent), start=1)]},
    }


def write(result: Sequential, store_dir: Path, selection: dict[str, Any] | None = None) -> Path:
    path = path_for(store_dir, result.profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_dict(result, selection), indent=1) + "\n", encoding="utf-8")
    return path


def load(store_dir: Path, profile: str) -> dict[str, Any] | None:
    path = path_for(store_dir, profile)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def added_seeds(claim: dict[str, Any], data: dict[str, Any]) -> int:
    return len(claim["seeds"]) - len(data["experiments"].get(claim["experiment"], {}).get("profile_seeds", []))


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
