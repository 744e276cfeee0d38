"""What every command shares: the two consoles, the settings from the options, the option groups."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from harness.pipeline import DEFAULT_PROFILE
from harness.running.store import ResultStore
from harness.settings import Settings, find_project_root


def _redirected(stream) -> bool:
    return stream is None or not stream.isatty()


stdout = Console(soft_wrap=_redirected(sys.stdout))
"""What a command answers (tables, listings, results): stdout, so that `fedclaims verify > file` keeps it;
where stdout is not a terminal, no line is wrapped (a log keeps one line a result)."""
stderr = Console(stderr=True, soft_wrap=_redirected(sys.stderr))
"""What happens on the way (progress, warnings, the files written): stderr, likewise unwrapped off a terminal."""


def refuse_empty(args: argparse.Namespace, *options: str) -> None:
    """An option given an empty value (an unset shell variable, `--store "$STORE"`) is refused, not read as
    the current folder or as the option left out."""
    for option in options:
        value = getattr(args, option, None)
        values = value if isinstance(value, list) else [value]
        if any(v is not None and not str(v).strip() for v in values):
            raise ValueError(f"--{option.replace('_', '-')} is empty (an unset shell variable?): give a value or "
                             "leave the option out")


def settings_of(args: argparse.Namespace) -> Settings:
    refuse_empty(args, "root", "store", "data", "against", "baseline", "address", "output", "profile", "paper",
                  "claim")
    root = Path(args.root).resolve() if args.root else find_project_root()
    workers = getattr(args, "workers", None)
    executor = getattr(args, "executor", None)
    address = getattr(args, "address", None)
    if address and executor not in (None, "ray"):
        raise ValueError(f"--address is the Ray cluster's address; it does not go with --executor {executor}")
    settings = Settings.from_env(root, store_dir=Path(args.store) if getattr(args, "store", None) else None,
                                 data_dir=Path(args.data) if getattr(args, "data", None) else None,
                                 device=getattr(args, "device", None), workers=workers, executor=executor,
                                 threads=getattr(args, "threads", None), ray_address=address,
                                 committed_records=False if getattr(args, "no_records", False) else None,
                                 allowed_code_paths=[Path(p) for p in args.allow_code_path])
    store = ResultStore(settings.store_dir)
    if hasattr(args, "store") and not store.read_only():  # a command that may run: a store that cannot
        store.check()  # hold records fails first; a read-only one is read, and fails only where a run is missing
    return settings


def add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--paper", action="append", default=[], help="only claims of this paper (repeatable)")
    parser.add_argument("--claim", help="only claims whose id matches this glob or regular expression")
    parser.add_argument("--profile", action="append", default=[], help=f"profile to verify (default {DEFAULT_PROFILE})")


def add_execution(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", help="results store folder (default: $FEDCLAIMS_STORE or ~/.cache/fedclaims/store)")
    parser.add_argument("--no-records", action="store_true",
                        help="read only the store's own records, not the project's committed ones "
                             "(also $FEDCLAIMS_RECORDS=0)")
    parser.add_argument("--data", help="folder of local data set copies (default: $FEDCLAIMS_DATA)")
    parser.add_argument("--device", help="torch device for training, e.g. cuda (default cpu)")
    parser.add_argument("--workers", type=int, help="parallel worker processes (default: one per CPU core, "
                                                    "one on a GPU)")
    parser.add_argument("--threads", type=int,
                        help="torch threads inside each run (default 1; part of every record's key)")
    parser.add_argument("--executor", choices=("local", "processes", "ray"),
                        help="how runs execute (default: ray with an address, else processes with --workers > 1, "
                             "else local)")
    parser.add_argument("--address", help="Ray cluster to run on, e.g. HEAD:6379 or auto (default: "
                                          "$FEDCLAIMS_RAY_ADDRESS, else $RAY_ADDRESS, else a local Ray instance "
                                          "of --workers CPUs)")


def add_until_decided(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--until-decided", action="store_true",
                        help="after the profile's seeds, add seeds to the claims still INCONCLUSIVE, cheapest "
                             "decision first, under a sequential rule that keeps each claim's α (an O'Brien-Fleming-"
                             "type boundary over the planned looks); writes <store>/sequential/<profile>.json, "
                             "and a later run continues the plan recorded there")
    parser.add_argument("--max-seeds", type=int, help="with --until-decided: at most this many seeds per experiment "
                                                      "(default twice the profile's)")
    parser.add_argument("--budget", type=float, help="with --until-decided: minutes of wall time the runs this "
                                                     "invocation adds may take (default no limit); seeds whose runs "
                                                     "are already in the store cost nothing")


def point_values(texts: list[str]) -> list:
    """Axis values as typed on the command line ('320', '0.5') read as YAML scalars."""
    import yaml
    return [yaml.safe_load(text) for text in texts]


def runs_selected(catalog, claims: list, args, variants_for):
    """(claims, profiles, variants_for) a planning command selects: the `--profile`s, or with `--study` that
    study's claims at its points (`--point`), with the variants its points run."""
    if not getattr(args, "study", None):
        return claims, args.profile or [DEFAULT_PROFILE], variants_for
    chosen = catalog.study(args.study).select(point_values(args.point))
    return [c for c in claims if c.id in chosen.claim_ids], chosen.profiles, chosen.variants_for


def add_study_options(parser: argparse.ArgumentParser, required: bool) -> None:
    if required:
        parser.add_argument("study", help="a study declared in a spec's `studies`")
    else:
        parser.add_argument("--study",
                            help="the runs of this scale study's claims at its points (instead of --profile)")
    parser.add_argument("--point", action="append", default=[], help="only this point of the study's axis (repeatable)")
