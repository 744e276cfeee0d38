"""The `fedclaims` command line."""
from __future__ import annotations

import argparse
import shlex
import sys
import traceback

from harness.cli import confirm, inspection, maintenance, runs
from harness.cli.common import stderr
from harness.errors import SpecError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fedclaims", description=__doc__)
    parser.add_argument("--root", help="project folder holding claims/ and specs/ (default: found from here)")
    parser.add_argument("--allow-code-path", "--allow-policy-path", action="append", default=[], metavar="DIR",
                        dest="allow_code_path",
                        help="a folder (or file) outside the project whose Python files specs may run as kinds, "
                             "policies, objectives, round hooks or metrics (repeatable; adds to "
                             "$FEDCLAIMS_ALLOW_CODE_PATHS); files inside the project always may")
    parser.add_argument("--debug", action="store_true",
                        help="on an unexpected error, print its traceback (else one line naming the command)")
    sub = parser.add_subparsers(dest="command", required=True)
    inspection.add_commands(sub)
    runs.add_commands(sub)
    maintenance.add_commands(sub)
    confirm.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except Exception as error:  # noqa: BLE001 - the last resort: one line and rc 2, never a traceback
        if args.debug:
            traceback.print_exc()
        where = f" ({error.filename})" if isinstance(error, OSError) and error.filename else ""
        message = str(error).splitlines()[0] if str(error).strip() else "(no message)"
        print(f"error: fedclaims {shlex.join(argv)}: {type(error).__name__}{where}: {message}"
              + ("" if args.debug else " (an unexpected error; --debug shows its traceback)"), file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    """The command's exit code; the errors a command reports about its input, as such."""
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
