"""plan, verify, report, trial, study: the runs and their verdicts."""
from __future__ import annotations

from pathlib import Path

from harness.cli.common import (
    add_execution,
    add_selection,
    add_study_options,
    add_until_decided,
    point_values,
    runs_selected,
    settings_of,
    stderr,
    stdout,
)
from harness.pipeline import DEFAULT_PROFILE, execution_notes, select, verify
from harness.running.bundle import store_for
from harness.running.store import ResultStore
from harness.settings import Settings


def cmd_plan(args) -> int:
    """A dry listing with each run's estimated cost (`harness.running.run_costs`), how to get one where an
    experiment has no stored run, and how runs execute other than their configs read (`execution_notes`):
    nothing is downloaded; data sets not here yet are named."""
    from harness.running.fetching import survey_data
    from harness.running.planning import datasets_needed, plan, variants_needed
    from harness.running.run_costs import MeasuredCosts, duration, total_text
    settings = settings_of(args)
    catalog, claims = select(settings, args.paper, args.claim, check_design=True)
    claims, profiles, variants_for = runs_selected(catalog, claims, args, variants_needed)
    catalog.check_profiles(profiles)
    store = store_for(settings)
    data = survey_data(datasets_needed(catalog, claims, profiles, variants_for), settings)
    requests, waiting = plan(catalog, claims, profiles, settings, store, data.fingerprints, variants_for)
    records = {request.key: store.reusable(request.key) for request in requests}
    measured = MeasuredCosts(requests, records)
    to_run: list = []
    unmeasured: dict[tuple[str, str], None] = {}  # (experiment, profile) with no stored run, in plan order
    for request in requests:
        if records[request.key] is not None:
            print(f"{request.key[:16]}  stored  {'':>8}  {request.label}")
            continue
        cost = measured.of(request)
        to_run.append(cost)
        each = "?" if cost.seconds is None else f"~{duration(cost.seconds)}"
        print(f"{request.key[:16]}  to run  {each:>8}  {request.label}: {cost.basis}")
        if cost.seconds is None:
            unmeasured.setdefault((request.experiment, request.profile), None)
    for name, problem in sorted(data.problems.items()):
        print(f"data set {name}: {problem}")
    for experiment, profile in unmeasured:
        print(_how_to_cost(experiment, profile, [c.id for c in claims if c.claim.experiment == experiment]))
    for note in execution_notes(catalog, requests):
        print(f"note: {note}")
    for event in store.events:
        stderr.print(f"[yellow]store:[/yellow] {event}")
    print(f"{len(requests)} runs: {len(requests) - len(to_run)} stored, {len(to_run)} to run"
          + (f", and {waiting} that wait for their records (not costed)" if waiting else "")
          + (" (keys of runs on data not fetched yet change once it is)" if data.problems else ""))
    print(f"cost: {total_text(to_run, settings.workers)}")
    return 0


def _how_to_cost(experiment: str, profile: str, claim_ids: list[str]) -> str:
    """How to get a cost for an experiment with no stored run at a profile (runs are costed from their own
    experiment's stored runs at the same profile)."""
    first = f"fedclaims verify --profile {profile} --claim {claim_ids[0]}" if claim_ids else "fedclaims verify"
    return (f"no cost for {experiment} at {profile}: no run of it is stored there. `fedclaims trial --profile "
            f"{profile} --experiment {experiment}` trains each of its runs for one round on a handful of samples "
            f"(minutes: it builds and trains); for a cost, run one claim's runs first (`{first}`), and `plan` "
            "then costs the rest from their times")


def cmd_trial(args) -> int:
    """Every run of a profile shrunk to one round on a handful of samples (`harness.running.trial`), in a
    store of its own; writes report/trial-<profile>.{md,json}. Exit 1 if a run failed other than for
    lack of data."""
    from harness.loading.catalog import load_project
    from harness.provenance import git_commit
    from harness.report.cells import DETAIL_DIR
    from harness.running.trial import run_trials, summary_line, trial_summary, write_trial
    settings = settings_of(args)
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


def cmd_study(args) -> int:
    """Run (or, with --from-store, read) one scale study and write its reading."""
    import json

    from harness.report.studies import read_outcome
    from harness.report.terminal import print_verdicts
    from methods.plain import json_safe
    settings = settings_of(args)
    if args.from_store:
        ResultStore(settings.store_dir).check_readable()
    outcome = verify(settings, args.paper, args.claim, run=not args.from_store, console=stderr,
                     study=args.study, points=point_values(args.point))
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
    settings = settings_of(args)
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
    settings = settings_of(args)
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


def add_commands(sub) -> None:
    """verify, report, plan, trial, study: the runs and their verdicts."""
    for name, func, text in (("plan", cmd_plan, "list the runs the selected claims need"),
                             ("verify", cmd_verify, "run what is missing and print verdicts"),
                             ("report", cmd_report, "verify and write REPORT.md, REPORT.json and figures; without "
                                                    "--profile it runs smoke and shows beside it every other profile "
                                                    "whose records are in the store")):
        command = sub.add_parser(name, help=text)
        add_selection(command)
        add_execution(command)
        if name == "report":
            command.add_argument("--output", default="REPORT.md", help="report path (default REPORT.md)")
            command.add_argument("--archive", help="an earlier REPORT.json: every profile it holds of which the "
                                                   "store has no record is re-verified from the observations it "
                                                   "recorded, under today's rules and expectations")
            command.add_argument("--allow-dirty", action="store_true",
                                 help="write the project's own REPORT.md although the tree has uncommitted changes "
                                      "(refused otherwise: the committed report names the commit it was made at)")
        if name == "verify":
            add_until_decided(command)
        if name == "plan":
            add_study_options(command, required=False)
        command.set_defaults(func=func)
    trial = sub.add_parser("trial", help="train every run of a profile for one round on a handful of samples (its "
                                         "models, methods and federation as they are): proof that a profile meant "
                                         "for a GPU builds and trains, in minutes on any machine")
    trial.add_argument("--profile", default="paper", help="profile to try (default paper)")
    trial.add_argument("--experiment", action="append", default=[],
                       help="only this experiment (repeatable; then nothing is written)")
    trial.add_argument("--trial-store", help="store of trial records (default: <cache>/trials)")
    add_execution(trial)
    trial.set_defaults(func=cmd_trial)
    study = sub.add_parser("study", help="run a scale study (its claims at every point of its axis) and write its "
                                         "reading: figures against the axis, verdicts per point, trends")
    add_study_options(study, required=True)
    study.add_argument("--paper", action="append", default=[], help="only the study's claims of this paper")
    study.add_argument("--claim", help="only the study's claims whose id matches this glob or regular expression")
    study.add_argument("--from-store", action="store_true", help="read stored records only; run nothing")
    study.add_argument("--output", help="folder for STUDY.md, study.json and figures (default studies/STUDY)")
    add_execution(study)
    study.set_defaults(func=cmd_study)
