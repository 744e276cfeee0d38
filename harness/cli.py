"""The `fedclaims` command line."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from harness.errors import SpecError
from harness.pipeline import DEFAULT_PROFILE, numerics_of, select, varying_claims, verify
from harness.regression import baseline as baseline_io
from harness.running.bundle import store_for
from harness.running.store import ResultStore
from harness.settings import Settings, find_project_root

stdout = Console()
"""What a command answers (tables, listings, results): stdout, so that `fedclaims verify > file` keeps it."""
stderr = Console(stderr=True)
"""What happens on the way (progress, warnings, the files written): stderr."""


def _refuse_empty(args: argparse.Namespace, *options: str) -> None:
    """An option given an empty value (an unset shell variable, `--store "$STORE"`) is refused, not read as
    the current folder or as the option left out."""
    for option in options:
        value = getattr(args, option, None)
        values = value if isinstance(value, list) else [value]
        if any(v is not None and not str(v).strip() for v in values):
            raise ValueError(f"--{option.replace('_', '-')} is empty (an unset shell variable?): give a value or "
                             "leave the option out")


def _settings(args: argparse.Namespace) -> Settings:
    _refuse_empty(args, "root", "store", "data", "against", "baseline", "address", "output", "profile", "paper",
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


def _selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--paper", action="append", default=[], help="only claims of this paper (repeatable)")
    parser.add_argument("--claim", help="only claims whose id matches this glob or regular expression")
    parser.add_argument("--profile", action="append", default=[], help=f"profile to verify (default {DEFAULT_PROFILE})")


def _execution(parser: argparse.ArgumentParser) -> None:
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


def _until_decided(parser: argparse.ArgumentParser) -> None:
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


def cmd_validate(args) -> int:
    """Every file valid and every claim decidable by design (else exit 2); lists, without failing,
    the claims whose profile has fewer seeds than they need."""
    from harness.loading.design import designs, short_of_seeds
    from harness.loading.planning_spread import baseline_spreads
    settings = _settings(args)
    catalog, claims = select(settings)
    print(f"ok: {len(catalog.specs)} experiment specs and {len(claims)} claims of "
          f"{len(catalog.papers)} papers are valid")
    short = short_of_seeds(designs(catalog, baseline_spreads(settings.root / "baselines", catalog)))
    if short:
        print(f"{len(short)} claim expectations need more seeds than their profile has (more seeds would decide "
              "them):")
        for design in short:
            print(f"  {design.text()}")
    return 0


def cmd_design(args) -> int:
    """What each selected claim's test can decide at each profile, before any run."""
    from harness.loading.design import designs
    from harness.loading.planning_spread import baseline_spreads
    settings = _settings(args)
    catalog, claims = select(settings, args.paper, args.claim)
    catalog.check_profiles(args.profile)
    wanted = {c.id for c in claims}
    for design in designs(catalog, baseline_spreads(settings.root / "baselines", catalog)):
        if design.claim not in wanted or (args.profile and design.profile not in args.profile):
            continue
        needed = design.seeds_needed if design.seeds_needed is not None else "-"
        mark = "short" if design.short_of_seeds else "ok"
        print(f"{design.claim}  {design.profile}  PASS {'reachable' if design.pass_reachable else 'unreachable'} "
              f"(seeds {design.pass_seeds or '-'}), FAIL {'reachable' if design.fail_reachable else 'unreachable'} "
              f"(seeds {design.fail_seeds or '-'}); both possible from {needed}, has {design.seeds}: {mark} — "
              f"{design.reason}" + (f"; {design.power}" if design.power else "")
              + (f"; planning spread: {design.spread}" if design.spread else ""))
    return 0


def cmd_schema(args) -> int:
    from harness.loading.jsonschema import write_schemas
    out = Path(args.out)
    for path in write_schemas(out):
        print(path)
    return 0


def cmd_vocabulary(args) -> int:
    from harness.loading.vocabulary import render
    print(render(), end="")
    return 0


def cmd_plan(args) -> int:
    """A dry listing with each run's estimated cost (`harness.running.run_costs`): nothing is downloaded;
    data sets not here yet are named."""
    from harness.running.fetching import survey_data
    from harness.running.planning import datasets_needed, plan, variants_needed
    from harness.running.run_costs import MeasuredCosts, duration, total_text
    settings = _settings(args)
    catalog, claims = select(settings, args.paper, args.claim)
    profiles, variants_for = args.profile or [DEFAULT_PROFILE], variants_needed
    if args.study:
        chosen = catalog.study(args.study).select(_point_values(args.point))
        claims = [c for c in claims if c.id in chosen.claim_ids]
        profiles, variants_for = chosen.profiles, chosen.variants_for
    catalog.check_profiles(profiles)
    store = store_for(settings)
    data = survey_data(datasets_needed(catalog, claims, profiles, variants_for), settings)
    requests, waiting = plan(catalog, claims, profiles, settings, store, data.fingerprints, variants_for)
    records = {request.key: store.reusable(request.key) for request in requests}
    measured = MeasuredCosts(requests, records)
    to_run = []
    for request in requests:
        if records[request.key] is not None:
            print(f"{request.key[:16]}  stored  {'':>8}  {request.label}")
            continue
        cost = measured.of(request)
        to_run.append(cost)
        each = "?" if cost.seconds is None else f"~{duration(cost.seconds)}"
        print(f"{request.key[:16]}  to run  {each:>8}  {request.label}: {cost.basis}")
    for name, problem in sorted(data.problems.items()):
        print(f"data set {name}: {problem}")
    for event in store.events:
        stderr.print(f"[yellow]store:[/yellow] {event}")
    print(f"{len(requests)} runs: {len(requests) - len(to_run)} stored, {len(to_run)} to run"
          + (f", and {waiting} that wait for their records (not costed)" if waiting else "")
          + (" (keys of runs on data not fetched yet change once it is)" if data.problems else ""))
    print(f"cost: {total_text(to_run, settings.workers)}")
    return 0


def cmd_trial(args) -> int:
    """Every run of a profile shrunk to one round on a handful of samples (`harness.running.trial`), in a
    store of its own; writes report/trial-<profile>.{md,json}. Exit 1 if a run failed other than for
    lack of data."""
    from harness.loading.catalog import load_project
    from harness.provenance import git_commit
    from harness.report.cells import DETAIL_DIR
    from harness.running.trial import run_trials, summary_line, trial_summary, write_trial
    settings = _settings(args)
    catalog = load_project(settings)
    catalog.check_profiles([args.profile])
    store = ResultStore(Path(args.trial_store) if args.trial_store else settings.cache_dir / "trials")
    outcomes = run_trials(catalog, args.profile, settings, store, args.experiment or None, stderr)
    for outcome in outcomes:
        seconds = "" if outcome.seconds is None else f"{outcome.seconds:7.1f} s"
        print(f"{outcome.status:<11} {seconds:>9}  {outcome.label}" + (f": {outcome.detail}" if outcome.detail else ""))
    print(summary_line(outcomes))
    if not args.experiment:  # only a trial of the whole profile describes it
        path = write_trial(trial_summary(outcomes, args.profile, settings, git_commit(settings.root)),
                           settings.root / DETAIL_DIR)
        stderr.print(f"wrote {path} and its .md")
    return int(any(o.status not in ("ok", "unavailable") for o in outcomes))


def _point_values(texts: list[str]) -> list:
    """Axis values as typed on the command line ('320', '0.5') read as YAML scalars."""
    import yaml
    return [yaml.safe_load(text) for text in texts]


def _study_options(parser: argparse.ArgumentParser, required: bool) -> None:
    if required:
        parser.add_argument("study", help="a study declared in a spec's `studies`")
    else:
        parser.add_argument("--study",
                            help="the runs of this scale study's claims at its points (instead of --profile)")
    parser.add_argument("--point", action="append", default=[], help="only this point of the study's axis (repeatable)")


def cmd_study(args) -> int:
    """Run (or, with --from-store, read) one scale study and write its reading."""
    import json

    from harness.report.studies import read_outcome
    from harness.report.terminal import print_verdicts
    from methods.plain import json_safe
    settings = _settings(args)
    if args.from_store:
        ResultStore(settings.store_dir).check_readable()
    outcome = verify(settings, args.paper, args.claim, run=not args.from_store, console=stderr,
                     study=args.study, points=_point_values(args.point))
    print_verdicts(outcome.verdicts, stdout)
    stderr.print(outcome.execution.text())
    out = Path(args.output or f"studies/{args.study}").resolve()
    reading = read_outcome(outcome, args.study, out / "figures")
    markdown, data = out / "STUDY.md", out / "study.json"
    markdown.write_text("\n".join(reading.markdown(out, heading="#")) + "\n", encoding="utf-8")
    data.write_text(json.dumps(json_safe(reading.to_dict(out)), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for claim in reading.claims:
        for trend in claim.trends:
            stdout.print(f"{claim.claim}: {trend.label}: {trend.text}")
    stderr.print(f"wrote {markdown}, {data} and {len(reading.figures)} figure(s)")
    return 1 if not args.from_store and any(v.status == "ERROR" for v in outcome.verdicts) else 0


def _refuse_dirty_report(args, settings: Settings) -> None:
    """The project's own REPORT.md is written from a clean tree only, unless --allow-dirty says otherwise."""
    from harness.provenance import git_commit
    if Path(args.output).resolve() != (settings.root / "REPORT.md").resolve() or args.allow_dirty:
        return
    if git_commit(settings.root).endswith("+uncommitted changes"):
        raise ValueError(f"the tree at {settings.root} has uncommitted changes: commit them before writing the "
                         "project's REPORT.md (it names the commit it was made at), or pass --allow-dirty")


def _verify(args, write: bool) -> int:
    from harness.pipeline import lacking_trained_runs, stored_profiles
    from harness.report.terminal import print_verdicts
    from harness.verdicts.archive import load_archive
    settings = _settings(args)
    if write:
        _refuse_dirty_report(args, settings)
    profiles = args.profile or [DEFAULT_PROFILE]
    archive = load_archive(Path(args.archive)) if getattr(args, "archive", None) else None
    held = [p for p in archive.profiles() if p not in profiles and archive.holds(p)] if archive else []
    archived = tuple(lacking_trained_runs(settings, held, args.paper, args.claim)) if held else ()
    stored = stored_profiles(settings, args.paper, args.claim) if write and not args.profile else []
    render_only = tuple(p for p in stored if p not in profiles and p not in archived)
    outcome = verify(settings, args.paper, args.claim, profiles, console=stderr, render_only=render_only,
                     archive=archive, archived=archived)
    print_verdicts(outcome.verdicts, stdout)
    for event in outcome.execution.events:
        stderr.print(f"[yellow]store:[/yellow] {event}")
    stderr.print(outcome.execution.text())
    if render_only:
        stdout.print(f"also shown, from stored records only: profile(s) {', '.join(render_only)}")
    for profile, provenance in outcome.archived.items():
        stdout.print(f"also shown: profile {profile}, {provenance}")
    if write:
        from harness.pipeline import study_outcomes
        from harness.report.markdown import write_report
        report, verdicts = write_report(outcome, settings, Path(args.output).resolve(),
                                        study_outcomes(settings, outcome.catalog))
        stderr.print(f"wrote {report} and {verdicts}")
    errors = sum(v.status == "ERROR" for v in outcome.verdicts if v.profile in profiles)
    fails = sum(v.status == "FAIL" for v in outcome.verdicts if v.profile in profiles)
    return 1 if errors or (fails and not write) else 0


def cmd_verify(args) -> int:
    if args.until_decided:
        return _verify_until_decided(args)
    if args.max_seeds is not None or args.budget is not None:
        raise ValueError("--max-seeds and --budget go with --until-decided")
    return _verify(args, write=False)


def _verify_until_decided(args) -> int:
    """Verify one profile, then add seeds to its undecided claims under the sequential rule."""
    from harness.report.terminal import print_sequential, print_verdicts
    from harness.sequential import results
    from harness.sequential.driver import until_decided
    from harness.sequential.recorded import path_for
    profiles = args.profile or [DEFAULT_PROFILE]
    if len(profiles) != 1:
        raise ValueError("--until-decided verifies one profile at a time")
    if args.max_seeds is not None and args.max_seeds < 1:
        raise ValueError("--max-seeds must be at least 1")
    if args.budget is not None and args.budget < 0:
        raise ValueError("--budget is a number of minutes, at least 0")
    settings = _settings(args)
    result = until_decided(settings, profiles[0], args.paper, args.claim, args.max_seeds, args.budget, stderr)
    print_verdicts(result.outcome.verdicts, stdout)
    path = path_for(settings.store_dir, profiles[0])  # the driver wrote it after every look and at the end
    written = results.load(settings.store_dir, profiles[0])
    if written is None:
        raise ValueError(f"{path} was not written")
    print_sequential(written, stdout)
    stderr.print(f"wrote {path}")
    statuses = ({track.verdict.status for track in result.tracks if track.verdict is not None}
                | {track.fixed.status for track in result.tracks})
    return 1 if {"ERROR", "FAIL"} & statuses else 0


def cmd_report(args) -> int:
    return _verify(args, write=True)


def cmd_baseline(args) -> int:
    settings = _settings(args)
    profile = args.profile or DEFAULT_PROFILE
    path = Path(args.baseline or settings.root / "baselines" / f"{profile}.json")
    complete = not (args.paper or args.claim)
    if args.action == "drift":
        return _measure_drift(path, profile, args.recording)
    if args.action == "redecide":
        return _redecide(path, settings)
    if args.against is not None:
        if args.action != "check":
            raise ValueError("--against goes with `baseline check` only")
        return _check_against(settings, args.against, profile, args.paper, args.claim)
    if args.action == "check":
        recorded = baseline_io.load(path)  # a missing or broken baseline fails before any run
    outcome = verify(settings, args.paper, args.claim, profiles=[profile], console=stderr)
    stderr.print(outcome.execution.text())
    if args.action == "update":
        previous = baseline_io.load(path) if path.exists() else None
        baseline_io.write(path, baseline_io.updated(outcome.verdicts, profile, previous, varying_claims(outcome),
                                                    complete=complete, numerics=numerics_of(outcome)))
        stderr.print(f"wrote {path} with {len(outcome.verdicts)} claims" + ("" if complete else " updated"))
        return 0
    result = baseline_io.check(outcome.verdicts, recorded, complete=complete)
    for claim in result.claims.values():
        if claim.detects:
            stdout.print(f"reach {claim.claim} ({claim.path}): detects {claim.detects}")
    for difference in result.differences:
        stdout.print(f"[red]regression[/red] {difference}")
    for note in result.fragile:
        stdout.print(f"[yellow]fragile[/yellow] {note}")
    stdout.print(f"{len(outcome.verdicts)} claims compared with {path.name}: {len(result.differing_claims)} differ "
                  f"({result.summary()})")
    return 1 if result.differences else 0


def _check_against(settings, revision: str, profile: str, papers: list[str], pattern: str | None) -> int:
    """The selection verified at `revision` and in the working tree, here, compared bit for bit."""
    from harness.regression import against
    commit, recorded, ran = against.revision_numbers(settings, revision, profile, papers, pattern)
    stderr.print(f"at {revision} ({commit[:12]}): {ran}")
    outcome = verify(settings, papers, pattern, profiles=[profile], console=stderr)
    stderr.print(f"working tree: {outcome.execution.text()}")
    result = against.compare(outcome.verdicts, recorded, commit)
    for change in result.moved:
        stdout.print(f"[red]moved[/red] {change.claim}: {change.text()}")
    for claim in result.only_here:
        stdout.print(f"new {claim}: not verified at {revision}")
    for claim in result.only_there:
        stdout.print(f"gone {claim}: verified at {revision}, not in the working tree")
    stdout.print(result.summary())
    return 1 if result.moved else 0


def _measure_drift(path: Path, profile: str, extra: list[str]) -> int:
    """Measure the drift across numerics from the baseline and the recordings beside it, and store it."""
    import json

    from harness.regression import drift
    data = baseline_io.load(path)
    folder = path.parent / "numerics"
    files = sorted(folder.glob(f"{profile}-*.json")) + [Path(f) for f in extra]
    recordings = {path.name: drift.recording(data, profile, path.name)}
    for file in files:
        recordings[file.name] = drift.recording(json.loads(file.read_text(encoding="utf-8")), profile, file.name)
    data["drift"] = drift.measure(recordings)
    baseline_io.write(path, data)
    for experiment, fingerprints in data["drift"]["numerics"].items():
        stdout.print(f"{experiment}: {len(fingerprints)} distinct numerics ({', '.join(fingerprints)})")
    for group, entry in data["drift"]["groups"].items():
        stdout.print(f"{group}: rms {entry['rms']:.4g}, {entry['count']} df, its series drift alike: Bartlett "
                      f"p = {entry['heterogeneity_p']:.3g}")
    stderr.print(f"wrote the drift of {len(data['drift']['groups'])} groups into {path}")
    return 0


def _redecide(path: Path, settings) -> int:
    from harness.loading.catalog import load_project
    catalog = load_project(settings)
    data, moved = baseline_io.redecided(catalog, baseline_io.load(path), path)
    baseline_io.write(path, data)
    for line in moved:
        stdout.print(f"moved: {line}")
    stderr.print(f"wrote {path}: {len(data['claims'])} claims decided again from their recorded numbers, "
                  f"{len(moved)} verdicts moved")
    return 0


def cmd_numerics(args) -> int:
    """This machine's numerics; with two stores, how far their common runs drifted apart."""
    from harness.numerics import numerics, simulated_machine, summary
    from harness.regression.numerics_drift import accuracy_growth, pairs
    if not args.stores:
        here = numerics(threads=1)
        print(summary(here))
        pins = simulated_machine(here)
        if pins:
            print("to compute like another machine here: " + " ".join(f"{k}={v}" for k, v in pins.items()))
        return 0
    if len(args.stores) != 2:
        raise ValueError("give two results stores to compare, or none")
    stores = [ResultStore(Path(folder)) for folder in args.stores]
    for store in stores:
        store.check_readable()
    found = list(pairs(*stores))
    print(f"{len(found)} runs stored in both under different numerics")
    for growth in accuracy_growth(found):
        print(growth.text())
    return 0


def cmd_power(args) -> int:
    """The undecided claims of a profile and what would decide them (from stored records only)."""
    from harness.report.terminal import print_power
    settings = _settings(args)
    ResultStore(settings.store_dir).check_readable()
    outcome = verify(settings, args.paper, args.claim, args.profile or [DEFAULT_PROFILE], run=False)
    print_power(outcome.verdicts, stdout)
    return 0


def cmd_audit(args) -> int:
    """The HAS-FL paper's recommended practices for an allocation policy; exit 1 on findings."""
    from harness.audit.audit import DEFAULT_FEDERATIONS, DEFAULT_MARGIN, run_audit
    from harness.audit.report import print_audit, write_audit
    settings = _settings(args)
    federations = args.federation or list(DEFAULT_FEDERATIONS)
    audit = run_audit(settings, args.policy, args.profile or DEFAULT_PROFILE, federations,
                      DEFAULT_MARGIN if args.margin is None else args.margin, stderr)
    out = Path(args.output).resolve()
    markdown, verdicts = write_audit(audit, out)
    print_audit(audit, stdout)
    stderr.print(f"wrote {markdown} and {verdicts}")
    return 1 if audit.findings else 0


def cmd_store(args) -> int:
    from harness.running.migration import migrate, print_migration
    settings = _settings(args)
    catalog, claims = select(settings, args.paper, args.claim)
    print_migration(migrate(settings, catalog, claims, args.profile, args.sample, stderr), stdout)
    return 0


def cmd_records(args) -> int:
    """Add the store's records of a selection's runs to the project's committed records, or import another
    bundle's; nothing bundled is ever replaced (`harness.running.bundle`)."""
    from harness.running.bundle import RecordBundle
    settings = _settings(args)
    bundle = RecordBundle(settings.records_dir)
    if args.action == "import":
        if not args.source:
            raise ValueError("records import needs the folder of the bundle to import")
        source = RecordBundle(Path(args.source))
        if not source.root.is_dir():
            raise ValueError(f"no bundle at {source.root}")
        merge = bundle.add(source.records())
    else:
        from harness.running.fetching import survey_data
        from harness.running.planning import datasets_needed, plan, variants_needed
        catalog, claims = select(settings, args.paper, args.claim)
        profiles = args.profile or [DEFAULT_PROFILE]
        catalog.check_profiles(profiles)
        store = ResultStore(settings.store_dir)
        data = survey_data(datasets_needed(catalog, claims, profiles, variants_needed), settings)
        requests, _ = plan(catalog, claims, profiles, settings, store, data.fingerprints)
        for profile in profiles:
            requests += _added_seed_requests(catalog, profile, requests, settings, store, data.fingerprints)
        records = {r.key: store.reusable(r.key) for r in requests}
        missing = [r for r in requests if records[r.key] is None]
        for r in missing:
            stderr.print(f"not in the store: {r.experiment}/{r.variant}/seed {r.seed} ({r.profile}) {r.key[:16]}")
        merge = bundle.add(record for record in records.values() if record is not None)
        for profile in profiles:
            _bundle_sequential_plan(settings, profile)
    for key in merge.conflicts:
        stderr.print(f"[yellow]conflict:[/yellow] {bundle.path(key)} holds other content for this run; kept")
    stdout.print(f"{bundle.root}: {merge.text()}")
    return 0


def _added_seed_requests(catalog, profile: str, requests, settings, store, fingerprints) -> list:
    """The runs of the seeds `--until-decided` added at `profile` (its plan in the store) to the
    experiments of `requests`, for the same variants."""
    from harness.running.planning import plan_variants
    from harness.sequential import results
    recorded = results.load(settings.store_dir, profile)
    added = []
    for experiment, entry in ((recorded or {}).get("experiments") or {}).items():
        variants = sorted({r.variant for r in requests if r.experiment == experiment and r.profile == profile})
        extra = [seed for seed in entry["seeds"] if seed not in entry["profile_seeds"]]
        if variants and extra:
            added += plan_variants(catalog, experiment, variants, profile, settings, store, fingerprints,
                                   seeds=extra)[0]
    return added


def _bundle_sequential_plan(settings: Settings, profile: str) -> None:
    """Commit the store's `--until-decided` plan of `profile` beside the records (it only grows, so the
    store's replaces a committed one), for the report of a clone that has not run it."""
    from harness.sequential.recorded import path_for
    source = path_for(settings.store_dir, profile)
    if source.is_file():
        target = path_for(settings.records_dir, profile)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
        stdout.print(f"{target}: the plan and looks of the seeds added until decided at `{profile}`")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fedclaims", description=__doc__)
    parser.add_argument("--root", help="project folder holding claims/ and specs/ (default: found from here)")
    parser.add_argument("--allow-code-path", "--allow-policy-path", action="append", default=[], metavar="DIR",
                        dest="allow_code_path",
                        help="a folder (or file) outside the project whose Python files specs may run as kinds, "
                             "policies, objectives, round hooks or metrics (repeatable; adds to "
                             "$FEDCLAIMS_ALLOW_CODE_PATHS); files inside the project always may")
    sub = parser.add_subparsers(dest="command", required=True)
    _inspection_commands(sub)
    _run_commands(sub)
    _maintenance_commands(sub)
    return parser


def _inspection_commands(sub) -> None:
    """validate, design, schema, vocabulary: reading the files, running nothing."""
    sub.add_parser("validate", help="check every claim and spec file, and that every claim can PASS and FAIL at "
                                    "some number of seeds (listing those whose profile has too few)"
                   ).set_defaults(func=cmd_validate)
    design = sub.add_parser("design", help="per claim and profile, from the design alone: whether PASS and FAIL "
                                           "are reachable and the seeds each needs (harness.loading.design)")
    _selection(design)
    design.set_defaults(func=cmd_design)
    schema = sub.add_parser("schema", help="write JSON Schema for claim and spec files")
    schema.add_argument("--out", default="schema", help="output folder (default: schema)")
    schema.set_defaults(func=cmd_schema)
    sub.add_parser("vocabulary", help="print the claim vocabulary and every kind's metrics (docs/claims.md)"
                   ).set_defaults(func=cmd_vocabulary)


def _run_commands(sub) -> None:
    """verify, report, plan, trial, study: the runs and their verdicts."""
    for name, func, text in (("plan", cmd_plan, "list the runs the selected claims need"),
                             ("verify", cmd_verify, "run what is missing and print verdicts"),
                             ("report", cmd_report, "verify and write REPORT.md, REPORT.json and figures; without "
                                                    "--profile it runs smoke and shows beside it every other profile "
                                                    "whose records are in the store")):
        command = sub.add_parser(name, help=text)
        _selection(command)
        _execution(command)
        if name == "report":
            command.add_argument("--output", default="REPORT.md", help="report path (default REPORT.md)")
            command.add_argument("--archive", help="an earlier REPORT.json: every profile it holds of which the "
                                                   "store has no record is re-verified from the observations it "
                                                   "recorded, under today's rules and expectations")
            command.add_argument("--allow-dirty", action="store_true",
                                 help="write the project's own REPORT.md although the tree has uncommitted changes "
                                      "(refused otherwise: the committed report names the commit it was made at)")
        if name == "verify":
            _until_decided(command)
        if name == "plan":
            _study_options(command, required=False)
        command.set_defaults(func=func)
    trial = sub.add_parser("trial", help="train every run of a profile for one round on a handful of samples (its "
                                         "models, methods and federation as they are): proof that a profile meant "
                                         "for a GPU builds and trains, in minutes on any machine")
    trial.add_argument("--profile", default="paper", help="profile to try (default paper)")
    trial.add_argument("--experiment", action="append", default=[],
                       help="only this experiment (repeatable; then nothing is written)")
    trial.add_argument("--trial-store", help="store of trial records (default: <cache>/trials)")
    _execution(trial)
    trial.set_defaults(func=cmd_trial)
    study = sub.add_parser("study", help="run a scale study (its claims at every point of its axis) and write its "
                                         "reading: figures against the axis, verdicts per point, trends")
    _study_options(study, required=True)
    study.add_argument("--paper", action="append", default=[], help="only the study's claims of this paper")
    study.add_argument("--claim", help="only the study's claims whose id matches this glob or regular expression")
    study.add_argument("--from-store", action="store_true", help="read stored records only; run nothing")
    study.add_argument("--output", help="folder for STUDY.md, study.json and figures (default studies/STUDY)")
    _execution(study)
    study.set_defaults(func=cmd_study)


def _maintenance_commands(sub) -> None:
    """baseline, numerics, power, audit, store, records: regression checks and the records' upkeep."""
    base = sub.add_parser("baseline", help="compare with (check) or rewrite (update) the regression baseline; "
                                           "--paper/--claim check or update only those claims, running only their runs")
    base.add_argument("action", choices=("check", "update", "drift", "redecide"),
                      help="redecide: decide the baseline's recorded observations again under the current rules and "
                           "expectations, numbers unchanged (after a change of the verification rules, not of "
                           "methods); drift: measure how far each observed quantity moves across numerics, from the "
                           "baseline and the recordings in baselines/numerics/<profile>-*.json (and --recording "
                           "files), and store it in the baseline")
    base.add_argument("--recording", action="append", default=[],
                      help="a further recording (a baseline file or a REPORT.json) of the same code under other "
                           "numerics (repeatable; with drift)")
    base.add_argument("--against", metavar="REV",
                      help="with check: verify the selection at git revision REV and in the working tree on this "
                           "machine (one store: only runs whose keys differ are run) and compare them bit for bit, "
                           "instead of with the committed baseline")
    base.add_argument("--profile", help=f"profile of the baseline (default {DEFAULT_PROFILE})")
    base.add_argument("--baseline", help="baseline file (default baselines/<profile>.json)")
    base.add_argument("--paper", action="append", default=[], help="only claims of this paper (repeatable)")
    base.add_argument("--claim", help="only claims whose id matches this glob or regular expression")
    _execution(base)
    base.set_defaults(func=cmd_baseline)
    numerics_parser = sub.add_parser("numerics", help="this machine's numerics fingerprint (and pins that simulate "
                                                      "another machine); with two results stores, how far the "
                                                      "accuracy of their common runs drifted apart, round by round")
    numerics_parser.add_argument("stores", nargs="*", help="two results stores holding the same runs")
    numerics_parser.set_defaults(func=cmd_numerics)
    power = sub.add_parser("power", help="list the INCONCLUSIVE claims of a profile with the seeds (or clients) "
                                         "each would need, from the records already in the store")
    _selection(power)
    _execution(power)
    power.set_defaults(func=cmd_power)
    audit = sub.add_parser("audit", help="audit an allocation policy as the HAS-FL paper recommends: capacity-"
                                         "stratified validation of its statistics, a matched-budget random "
                                         "control, coverage (exit code 1 when it finds something)")
    audit.add_argument("policy", help="a built-in policy, an installed fedclaims.policies entry point, "
                                      "package.module:Class or path/to/file.py:Class")
    audit.add_argument("--profile", help=f"scale of the HAS-FL federations (default {DEFAULT_PROFILE})")
    audit.add_argument("--federation", action="append", choices=("cifar10", "emnist", "shakespeare"),
                       help="federation to audit on (repeatable; default the image federations, cifar10 "
                            "and emnist, Table 4's; at the standard size the Shakespeare LSTM does not leave "
                            "the unigram plateau)")
    audit.add_argument("--margin", type=float, help="accuracy points within which parity with the random "
                                                    "control is tested (TOST; default 2)")
    audit.add_argument("--output", default="audit", help="folder for AUDIT.md, audit.json and figures "
                                                         "(default ./audit)")
    _execution(audit)
    audit.set_defaults(func=cmd_audit)
    store = sub.add_parser("store", help="migrate: carry the store's records of an earlier format, or made under "
                                         "earlier code, over to the keys this code gives them, group by group "
                                         "(experiment x profile, and change of code), where re-running a sample of "
                                         "the group with this code gives the same bits; the rest is left to be "
                                         "recomputed (harness.running.migration)")
    store.add_argument("action", choices=("migrate",))
    store.add_argument("--sample", type=int, default=1, help="runs re-run to check each group (default 1)")
    _selection(store)
    _execution(store)
    store.set_defaults(func=cmd_store)
    records = sub.add_parser("records", help="the records committed with the report (records/, read by every "
                                             "command where the store has none): add the store's records of a "
                                             "selection's runs, or import another bundle; a bundled record is never "
                                             "replaced, a conflict is reported (harness.running.bundle)")
    records.add_argument("action", choices=("add", "import"))
    records.add_argument("source", nargs="?", help="import: the folder of the bundle to import")
    _selection(records)
    _execution(records)
    records.set_defaults(func=cmd_records)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SpecError as error:
        stderr.print(f"[red]{len(error.problems)} problem(s) in claim/spec files:[/red]")
        for problem in error.problems:
            print(problem, file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)  # plain: a message is never wrapped nor read as markup
        return 2


if __name__ == "__main__":
    sys.exit(main())
