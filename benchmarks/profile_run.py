"""Where one federated run's time goes, and what a run at a scale point costs.

    python benchmarks/profile_run.py --set data.max_train_per_client=2500 --set federation.rounds=15
    python benchmarks/profile_run.py --set data.max_train_per_client=2500 --set federation.rounds=25 --time-only

resolves a variant of a spec at a profile (HAS-FL CIFAR-10 at `standard` by default), applies the
`--set` overrides (dotted paths), and runs it on one thread as a worker process does: the data
preparation once on its own, then the run. By default the run goes under cProfile and the
phases (local training, evaluation with its batch-norm rebuild, aggregation, the estimator,
extraction, ...) are printed with their share, then the functions with the largest cumulative
and own time. `--time-only` runs without the profiler and records the wall and process-CPU time
of every round, for cost estimates (on a loaded machine the CPU time is the steadier figure).
Both print the run's record digest, which tells whether two code versions compute the same.
"""
from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import resource
import time
from pathlib import Path

import torch
import yaml
from threadpoolctl import threadpool_limits

from harness.loading.catalog import load_catalog
from harness.runners import federated
from harness.settings import Settings, find_project_root

PHASES = {
    "local training": ("round_training.py", "train_round"),
    "evaluation (BN rebuild + test pass)": ("evaluation.py", "evaluate"),
    "  BN rebuild pass": ("batchnorm.py", "calibrate_batchnorm"),
    "aggregation": ("aggregation.py", "aggregate"),
    "policy observe (estimator)": ("hasfl.py", "observe"),
    "extraction (views, extract)": ("submodel.py", "extract"),
    "embedding of updates": ("submodel.py", "embed"),
    "coverage tracking": ("coverage.py", "record"),
    "data preparation (arrays -> tensors, partition)": ("federated.py", "_image_federation"),
}


def _set(config: dict, dotted: str) -> None:
    path, _, value = dotted.partition("=")
    *parents, leaf = path.split(".")
    node = config
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = yaml.safe_load(value)


def _digest(record: dict) -> str:
    kept = {k: v for k, v in record.items() if k not in ("wall_time_s", "final_params", "covered")}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _config(args: argparse.Namespace, settings: Settings) -> federated.Config:
    loaded = load_catalog(settings.claims_dir, settings.specs_dir, settings.root).specs[args.experiment]
    config = loaded.resolve(args.variant, args.profile).model_dump(mode="json")
    for dotted in args.set:
        _set(config, dotted)
    return federated.Config.model_validate(config)


def _run(config: federated.Config, seed: int, settings: Settings, profiler: cProfile.Profile | None) -> dict:
    """The run's record with its timings: wall and CPU of the whole run and of every round."""
    ends: list[tuple[float, float]] = []
    context = federated.RunContext(settings.data_dir, settings.cache_dir / "data", download=False,
                                   progress=lambda *_: ends.append((time.perf_counter(), time.process_time())))
    with threadpool_limits(1):
        started = time.perf_counter()
        federated.build_federation(config, seed, context)
        preparation = time.perf_counter() - started
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        ends.append((time.perf_counter(), time.process_time()))
        record = (profiler.runcall if profiler else lambda f, *a: f(*a))(federated.run, config, seed, context)
        ends.append((time.perf_counter(), time.process_time()))
    total_wall, total_cpu = (b - a for a, b in zip(ends[0], ends[-1]))
    rounds = ends[1:-1]
    return {"record": record, "seconds_total": total_wall, "cpu_seconds_total": total_cpu,
            "seconds_preparation_alone": preparation,
            "round_seconds": [b[0] - a[0] for a, b in zip(ends, rounds)],
            "round_cpu_seconds": [b[1] - a[1] for a, b in zip(ends, rounds)],
            "minor_page_faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults}


def _figures(config: federated.Config, timed: dict) -> dict:
    record = timed.pop("record")
    return {**timed, "rounds": config.federation.rounds, "client_sizes": record["client_sizes"],
            "mean_width": [r["mean_width"] for r in record["history"]], "digest": _digest(record),
            "final_accuracy": record["final_accuracy"], "load": os.getloadavg()}


def _print_profile(profiler: cProfile.Profile, figures: dict, top: int, dump: Path | None) -> None:
    stats = pstats.Stats(profiler)
    if dump:
        stats.dump_stats(dump)
    total = figures["seconds_total"]
    figures["phases"] = {name: sum(entry[3] for (file, _, function), entry in stats.stats.items()
                                   if file.endswith(suffix) and function == wanted)
                         for name, (suffix, wanted) in PHASES.items()}
    print(f"run: {total:.1f} s under cProfile ({figures['rounds']} rounds; {sum(figures['client_sizes'])} training "
          f"images over {len(figures['client_sizes'])} clients); data preparation alone "
          f"{figures['seconds_preparation_alone']:.1f} s; {figures['minor_page_faults']} minor page faults; "
          f"digest {figures['digest']}")
    for name, seconds in figures["phases"].items():
        print(f"  {name:52} {seconds:8.2f} s  {seconds / total:6.1%}")
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiment", default="hasfl-cifar10")
    parser.add_argument("--variant", default="hasfl")
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], help="dotted.path=value over the resolved config")
    parser.add_argument("--time-only", action="store_true", help="no cProfile; wall and CPU time of every round")
    parser.add_argument("--top", type=int, default=25, help="functions listed from the profile")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--pstats", type=Path, help="write the raw cProfile statistics here")
    args = parser.parse_args()

    settings = Settings.from_env(find_project_root())
    config = _config(args, settings)
    torch.set_num_threads(1)
    profiler = None if args.time_only else cProfile.Profile()
    figures = _figures(config, _run(config, args.seed, settings, profiler))
    if profiler is None:
        print(json.dumps({k: v for k, v in figures.items() if k not in ("client_sizes", "mean_width")}))
    else:
        _print_profile(profiler, figures, args.top, args.pstats)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
