"""baseline, numerics, power, audit, store, records: regression checks and the records' upkeep."""
from __future__ import annotations

from pathlib import Path

from harness.cli.common import (
    add_execution,
    add_selection,
    add_study_options,
    runs_selected,
    settings_of,
    stderr,
    stdout,
)
from harness.pipeline import DEFAULT_PROFILE, numerics_of, select, varying_claims, verify
from harness.regression import baseline as baseline_io
from harness.regression import baseline_update
from harness.running.store import ResultStore
from harness.settings import Settings


def cmd_baseline(args) -> int:
    settings = settings_of(args)
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
        data = baseline_update.updated(outcome.verdicts, profile, previous, varying_claims(outcome),
                                       complete=complete, numerics=numerics_of(outcome))
        baseline_update.write(path, data)
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
    baseline_update.write(path, data)
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
    data, moved = baseline_update.redecided(catalog, baseline_io.load(path), path)
    baseline_update.write(path, data)
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
    settings = settings_of(args)
    ResultStore(settings.store_dir).check_readable()
    outcome = verify(settings, args.paper, args.claim, args.profile or [DEFAULT_PROFILE], run=False)
    print_power(outcome.verdicts, stdout)
    return 0


def cmd_audit(args) -> int:
    """The HAS-FL paper's recommended practices for an allocation policy; exit 1 on findings."""
    from harness.audit.audit import DEFAULT_FEDERATIONS, DEFAULT_MARGIN, run_audit
    from harness.audit.report import print_audit, write_audit
    settings = settings_of(args)
    federations = args.federation or list(DEFAULT_FEDERATIONS)
    audit = run_audit(settings, args.policy, args.profile or DEFAULT_PROFILE, federations,
                      DEFAULT_MARGIN if args.margin is None else args.margin, stderr)
    out = Path(args.output).resolve()
    markdown, verdicts = write_audit(audit, out)
    print_audit(audit, stdout)
    stderr.print(f"wrote {markdown} and {verdicts}")
    return 1 if audit.findings else 0


def cmd_store(args) -> int:
    """Carry the store's records of format 2 to the keys this code gives them (harness.running.migration)."""
    from harness.running.golden import vouched_code
    from harness.running.migration import migrate_store
    settings = settings_of(args)
    migration = migrate_store(ResultStore(settings.store_dir), vouched_code(settings.root))
    for line in migration.lines():
        stdout.print(line, soft_wrap=True, markup=False)
    return 0


def cmd_golden(args) -> int:
    """The golden guard (harness.running.golden): exit 1 where a number moved without a version bump."""
    from harness.running import golden
    from harness.running.bundle import store_for
    settings = settings_of(args)
    catalog, _ = select(settings)
    store = store_for(settings)
    if args.action == "record":
        outcomes = golden.record(catalog, settings, store, stderr)
    else:
        outcomes = golden.check(catalog, settings, store, stderr, args.experiment or None)
    for outcome in outcomes:
        if outcome.state != "unchanged":
            stdout.print(outcome.text(), soft_wrap=True, markup=False)
    failed = [o for o in outcomes if o.failed]
    stdout.print(f"golden runs: {len(outcomes)} checked, {len(failed)} failed", markup=False)
    return 1 if failed else 0


def _verify_records(settings: Settings) -> int:
    """Every committed record and sequential plan checked against REPORT.json; exit 2 on any problem."""
    from harness.sequential.committed import verify_committed
    from harness.verdicts.archive import load_archive
    catalog, _ = select(settings)
    report = settings.root / "REPORT.json"
    check = verify_committed(catalog, settings, load_archive(report) if report.is_file() else None)
    for problem in check.problems:
        stdout.print(problem, soft_wrap=True, markup=False, highlight=False)
    stdout.print(check.text(), soft_wrap=True, markup=False, highlight=False)
    return 2 if check.problems else 0


def cmd_records(args) -> int:
    """Add the store's records of a selection's runs to the project's committed records, or import another
    bundle's; nothing bundled is ever replaced (`harness.running.bundle`)."""
    from harness.running.bundle import RecordBundle
    settings = settings_of(args)
    bundle = RecordBundle(settings.records_dir)
    if args.action == "verify":
        return _verify_records(settings)
    if args.action == "migrate":
        from harness.running.golden import vouched_code
        from harness.running.migration import migrate_bundle
        migration = migrate_bundle(bundle, vouched_code(settings.root))
        for line in migration.lines():
            stdout.print(line, soft_wrap=True, markup=False)
        return 1 if migration.refused else 0
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
        claims, profiles, variants_for = runs_selected(catalog, claims, args, variants_needed)
        catalog.check_profiles(profiles)
        store = ResultStore(settings.store_dir, bundle=bundle)  # its records key the runs that refer to them
        data = survey_data(datasets_needed(catalog, claims, profiles, variants_for), settings)
        requests, _ = plan(catalog, claims, profiles, settings, store, data.fingerprints, variants_for)
        for profile in [] if args.study else profiles:
            requests += _added_seed_requests(catalog, profile, requests, settings, store, data.fingerprints)
        records = {r.key: store.reusable(r.key) for r in requests}
        missing = [r for r in requests if records[r.key] is None]
        for r in missing:
            stderr.print(f"not in the store: {r.experiment}/{r.variant}/seed {r.seed} ({r.profile}) {r.key[:16]}")
        merge = bundle.add(record for record in records.values() if record is not None)
        for profile in [] if args.study else profiles:
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
    store's replaces a committed one), for the report of a clone that has not run it; a damaged plan
    is refused by name, never committed."""
    from harness.sequential.recorded import path_for
    from harness.sequential.results import load
    source = path_for(settings.store_dir, profile)
    if load(settings.store_dir, profile) is not None:
        target = path_for(settings.records_dir, profile)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
        stdout.print(f"{target}: the plan and looks of the seeds added until decided at `{profile}`")


def add_commands(sub) -> None:
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
    add_execution(base)
    base.set_defaults(func=cmd_baseline)
    numerics_parser = sub.add_parser("numerics", help="this machine's numerics fingerprint (and pins that simulate "
                                                      "another machine); with two results stores, how far the "
                                                      "accuracy of their common runs drifted apart, round by round")
    numerics_parser.add_argument("stores", nargs="*", help="two results stores holding the same runs")
    numerics_parser.set_defaults(func=cmd_numerics)
    power = sub.add_parser("power", help="list the INCONCLUSIVE claims of a profile with the seeds (or clients) "
                                         "each would need, from the records already in the store")
    add_selection(power)
    add_execution(power)
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
    add_execution(audit)
    audit.set_defaults(func=cmd_audit)
    store = sub.add_parser("store", help="migrate: carry the store's records of format 2 to the keys this code "
                                         "gives them, where they were made by the code this checkout runs (or "
                                         "code the golden guard vouched for); nothing is re-run, the rest is "
                                         "refused by name (harness.running.migration)")
    store.add_argument("action", choices=("migrate",))
    add_execution(store)
    store.set_defaults(func=cmd_store)
    golden = sub.add_parser("golden", help="check: re-run the golden runs (one smoke seed of every experiment and "
                                           "variant) whose code changed since their records and fail where a number "
                                           "moved without a behaviour version bump; record: check, then vouch for the "
                                           "changed code that moved nothing and re-record runs whose key changed "
                                           "(harness.running.golden)")
    golden.add_argument("action", choices=("check", "record"))
    golden.add_argument("--experiment", action="append", help="check: only this experiment's golden runs (repeatable)")
    add_execution(golden)
    golden.set_defaults(func=cmd_golden)
    records = sub.add_parser("records", help="the records committed with the report (records/, read by every "
                                             "command where the store has none): add the store's records of a "
                                             "selection's runs, or import another bundle; a bundled record is never "
                                             "replaced, a conflict is reported (harness.running.bundle); migrate: "
                                             "carry its records of format 2 to their new keys, as `store migrate` "
                                             "does (exit 1 if any is refused); verify: check every committed record "
                                             "and sequential plan, as git fsck does (exit 2 on any problem)")
    records.add_argument("action", choices=("add", "import", "migrate", "verify"))
    records.add_argument("source", nargs="?", help="import: the folder of the bundle to import")
    add_selection(records)
    add_study_options(records, required=False)
    add_execution(records)
    records.set_defaults(func=cmd_records)
