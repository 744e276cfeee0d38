"""Errors that point at the file, line and field of the input that caused them."""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The valid name closest to a misspelt one, if any is close enough."""
    matches = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    choices = sorted(set(choices))
    match = closest(word, choices)
    if match:
        return f"; did you mean {match!r}?"
    return f" (valid: {', '.join(choices)})" if choices else ""


def unknown(what: str, word: object, valid: Iterable[object]) -> str:
    """"unknown objective 'fedprx'; did you mean 'fedprox'? valid: sgd, fedprox, scaffold"."""
    names = [str(v) for v in dict.fromkeys(valid)]
    match = closest(str(word), names)
    text = f"unknown {what} {str(word)!r}" + (f"; did you mean {match!r}?" if match else "")
    return text + (f"{' ' if match else '; '}valid: {', '.join(names)}" if names else "")


def format_field(path: Iterable[str | int]) -> str:
    """('claims', 3, 'expect', 'smoke') -> 'claims[3].expect.smoke'."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "<document>"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input file."""

    file: Path
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else f"{self.file}"
        return f"{where}: {self.field}: {self.message}"


class SpecError(Exception):
    """One or more problems in claim or spec files; str() lists them all."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class RunFailure(Exception):
    """A run could not produce a record (raised inside a runner)."""


class WorkerMismatch(RunFailure):
    """A worker's code or libraries differ from those the driver hashed into the run's key."""
