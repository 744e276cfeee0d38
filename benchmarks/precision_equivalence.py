"""bf16 against fp32 on an experiment's reference, seed by seed: is the accuracy the same, and how much faster?

    python benchmarks/precision_equivalence.py EXPERIMENT [--profile learning] [--seeds 0 1 2 3 4]
        [--margin 1.0] [--workers 2] [--output benchmarks/latest-precision-EXPERIMENT.json]

Runs the spec's reference variant (its `reference:`) at the profile twice per seed, as it is
(fp32, or read from the store and the committed records) and with `federation.precision: bf16`
(a run with a key of its own, kept in the store), through the same planning and execution as
`fedclaims verify`. It writes each seed's final accuracy under both, the paired difference, a TOST
that the mean difference lies within ±margin points (α = 0.05: `harness.statistics.stats.equivalence`),
and each run's wall seconds (the runs of a seed go side by side on a loaded machine, so their ratio
is a rough speed-up; `benchmarks/test_precision_speed.py` measures it). Issue 37: bf16 is used for a
tier only where this equivalence holds and the speed-up reaches its goal.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from rich.console import Console

from harness.loading.catalog import load_project
from harness.numerics import numerics
from harness.running.bundle import store_for
from harness.running.execution import execute
from harness.running.fetching import fetch_data
from harness.running.planning import request_for
from harness.settings import Settings, find_project_root
from harness.statistics.stats import equivalence
from methods.federated.precision import bf16_hardware

ALPHA = 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment")
    parser.add_argument("--profile", default="learning")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--margin", type=float, default=1.0, help="equivalence margin, accuracy points")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()

    import torch
    console = Console(stderr=True)
    settings = Settings.from_env(find_project_root(), workers=args.workers)
    catalog = load_project(settings)
    loaded = catalog.specs[args.experiment]
    if loaded.spec.reference is None or loaded.kind.learning is None:
        raise SystemExit(f"{args.experiment}: its spec declares no reference, or its kind no learning metric")
    variant = loaded.spec.reference.variant
    store = store_for(settings)
    config = loaded.resolve(variant, args.profile)
    data = fetch_data(loaded.kind.datasets(config), settings, console).fingerprints
    overrides = {"fp32": None, "bf16": {"federation": {"precision": "bf16"}}}  # fp32: the profile's own runs
    plans = {precision: [request_for(catalog, args.experiment, variant, seed, args.profile, settings, store, data,
                                     overrides=change) for seed in args.seeds]
             for precision, change in overrides.items()}
    execute([r for requests in plans.values() for r in requests], store, settings, console)

    metric = loaded.kind.metrics[loaded.kind.learning.metric]
    rows = []
    for fp32, bf16 in zip(plans["fp32"], plans["bf16"]):
        records = {name: store.get(request.key) for name, request in (("fp32", fp32), ("bf16", bf16))}
        values = {name: metric.compute(record["result"], metric.args()) for name, record in records.items()}
        seconds = {name: record["provenance"]["wall_seconds"] for name, record in records.items()}
        rows.append({"seed": fp32.seed, "fp32": values["fp32"], "bf16": values["bf16"],
                     "difference": values["bf16"] - values["fp32"], "seconds": seconds,
                     "keys": {"fp32": fp32.key, "bf16": bf16.key}})
    differences = [row["difference"] for row in rows]
    outcome, p_value, interval = equivalence(differences, args.margin, ALPHA)
    summary = {
        "experiment": args.experiment, "variant": variant, "profile": args.profile, "metric": metric.description,
        "margin_points": args.margin, "alpha": ALPHA, "seeds": rows,
        "mean_difference": statistics.fmean(differences),
        "tost": {"outcome": outcome, "p": p_value, "interval": list(interval)},
        "wall_seconds_ratio_median": statistics.median(r["seconds"]["fp32"] / r["seconds"]["bf16"] for r in rows),
        "bf16_hardware": bf16_hardware(torch.device(settings.device)),
        "numerics": numerics(settings.device, settings.threads)["fingerprint"],
    }
    output = args.output or Path("benchmarks") / f"latest-precision-{args.experiment}.json"
    output.write_text(json.dumps(summary, indent=2) + "\n")
    console.print(f"{args.experiment} {variant} at {args.profile}: bf16 − fp32 = {summary['mean_difference']:+.2f} "
                  f"points over {len(rows)} seeds, TOST ±{args.margin}: {outcome} (p = {p_value:.3g}); "
                  f"wall-seconds ratio {summary['wall_seconds_ratio_median']:.2f} → {output}")


if __name__ == "__main__":
    main()
