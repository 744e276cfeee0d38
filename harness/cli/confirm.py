"""`fedclaims confirm`: pre-registered confirmatory tests (`harness.sequential.confirmatory`)."""
from __future__ import annotations

from harness.cli.common import add_execution, settings_of, stderr, stdout


def cmd_confirm(args) -> int:
    from harness.sequential import confirmatory_runs
    settings = settings_of(args)
    if args.action == "plan":
        if not args.claim or not args.profile:
            raise ValueError("confirm plan needs --claim ID and --profile P")
        path = confirmatory_runs.write(settings, args.claim, args.profile, args.first_seed)
        stdout.print(f"{path}: written; commit it before its first run (`fedclaims confirm run` refuses it until then)",
                     soft_wrap=True, markup=False)
        return 0
    if args.action == "run":
        def said(claim: str, seed: int) -> None:
            stderr.print(f"{claim}: seed {seed} run, its records added to {settings.records_dir}", markup=False)
        count = confirmatory_runs.run(settings, [args.claim] if args.claim else None, stderr, said)
        stdout.print(f"{count} seed(s) run", markup=False)
        return 0
    readings, refused = confirmatory_runs.read(settings)
    for line in refused:
        stdout.print(line, soft_wrap=True, markup=False, highlight=False)
    for reading in readings:
        stdout.print(f"{reading.plan.claim}\t{reading.status}\t{reading.reason}", soft_wrap=True, markup=False,
                     highlight=False)
        for problem in reading.problems:
            stdout.print(problem, soft_wrap=True, markup=False, highlight=False)
    problems = sum(len(r.problems) for r in readings) + len(refused)
    stdout.print(f"{len(readings) + len(refused)} confirmatory plan(s); {problems} problem(s)", markup=False)
    return 2 if problems else 0


def add_commands(sub) -> None:
    confirm = sub.add_parser("confirm", help="pre-registered confirmatory tests on fresh seeds: plan writes one "
                                             "claim's plan (hypothesis, seeds, power calculation, α) to "
                                             "records/confirmatory/; "
                                             "run runs the missing seeds of committed plans, as many side by side "
                                             "as give each of --workers a run, adding each seed's records to "
                                             "records/ as its batch completes; verify reads every plan, its "
                                             "verdict and its history (exit 2 on any problem)")
    confirm.add_argument("action", choices=("plan", "run", "verify"))
    confirm.add_argument("--claim", help="plan: the claim's id; run: only this claim's plan")
    confirm.add_argument("--profile", help="plan: the profile whose runs the test makes (e.g. learning)")
    confirm.add_argument("--first-seed", type=int, default=100,
                         help="plan: the first of the plan's fresh seeds (default 100)")
    add_execution(confirm)
    confirm.set_defaults(func=cmd_confirm)
