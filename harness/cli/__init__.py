"""The `fedclaims` command line."""
from __future__ import annotations

import argparse
import sys

from harness.cli import inspection, maintenance, runs
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
    sub = parser.add_subparsers(dest="command", required=True)
    inspection.add_commands(sub)
    runs.add_commands(sub)
    maintenance.add_commands(sub)
    return parser


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
