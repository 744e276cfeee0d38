"""`--claim` patterns: a shell glob, or a regular expression whose matching time is bounded.

Python's `re` backtracks: a regex with nested quantifiers (`([a-z.-]+)+!`) takes time exponential in
the length of a claim id that does not match, and k unbounded repeats side by side (`.*.*.*.*.*!`)
take time of order length^k. A glob (`*`, `?`, `[34]`, none of a regex's `^$()|+\\`) is translated
by `fnmatch`, whose translation does not backtrack across stars; a regex is refused, before it
runs, where it is longer than MAX_LENGTH characters, repeats a group that holds a repeat or an
alternation with `*`, `+` or `{m,n}`, or has more than MAX_REPEATS repeats of unbounded or ranged
count (or more than MAX_OPTIONAL `?`), each with a message saying why.
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

MAX_LENGTH = 1000
MAX_REPEATS = 3
"""Repeats (`*`, `+`, `{m,}`, `{m,n}`) a regex may hold: three keep a search of a claim id within milliseconds."""
MAX_OPTIONAL = 8
_COUNTED = re.compile(r"\{(\d*)(,?)(\d*)\}")
_QUANTIFIERS = "*+?"


def claim_matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a claim id matches `pattern` (a glob, anchored; else a regex, searched); ValueError
    naming the pattern where it is neither, or is a regex whose matching time is not bounded."""
    if len(pattern) > MAX_LENGTH:
        raise ValueError(f"--claim {pattern[:40]!r}…: {len(pattern)} characters, more than the {MAX_LENGTH} a "
                         "pattern may have")
    glob = is_glob(pattern)
    if not glob:
        check_regex_cost(pattern)
    try:
        regex = re.compile("^" + fnmatch.translate(pattern) if glob else pattern)
    except re.error as error:
        raise ValueError(f"--claim {pattern!r} is neither a glob nor a regular expression: {error}") from None
    return lambda claim_id: regex.search(claim_id) is not None


def is_glob(pattern: str) -> bool:
    """A shell glob (`*`, `?`, `[34]`) holds none of a regex's `^$()|+\\`."""
    return any(ch in pattern for ch in "*?[") and not any(ch in pattern for ch in "^$()|+\\")


def check_regex_cost(pattern: str) -> None:
    """ValueError where the regex could backtrack for exponential or high-polynomial time: a repeated
    group holding a repeat or an alternation, or more repeats than MAX_REPEATS (`?` than MAX_OPTIONAL)."""
    groups = [False]  # per open group: whether it holds a repeat or an alternation
    closed_risky = False  # the atom just before is a group holding a repeat or an alternation
    repeats = optional = 0
    i = 0
    while i < len(pattern):
        ch, atom_risky = pattern[i], False
        step, quantifier = 1, _quantifier(pattern, i)
        if quantifier is not None:
            step, many, variable = quantifier
            if many and closed_risky:
                raise ValueError(f"--claim {pattern!r}: the group before {pattern[i:i + step]!r} (at character {i}) "
                                 "holds a repeat or an alternation and is itself repeated: nested quantifiers "
                                 "backtrack for time exponential in a claim id's length; repeat the inner part "
                                 "or the group, not both (or give a glob)")
            groups[-1] = True
            repeats += many and variable
            optional += not many
            if pattern.startswith("?", i + step):  # lazy
                step += 1
        elif ch == "\\":
            step = 2
        elif ch == "[":
            step = _class_end(pattern, i) - i
        elif ch == "(":
            groups.append(False)
            step = 2 if pattern.startswith("?", i + 1) else 1  # (?:, (?P<…>, (?=: not a quantifier
        elif ch == ")" and len(groups) > 1:
            atom_risky = groups.pop()
            groups[-1] = groups[-1] or atom_risky
        elif ch == "|":
            groups[-1] = True
        closed_risky = atom_risky
        i += step
    if repeats > MAX_REPEATS or optional > MAX_OPTIONAL:
        raise ValueError(f"--claim {pattern!r}: {repeats} repeats (*, +, {{m,n}}) and {optional} optional parts (?), "
                         f"more than the {MAX_REPEATS} and {MAX_OPTIONAL} whose backtracking stays fast; "
                         "give a glob or a shorter regex")


def _quantifier(pattern: str, i: int) -> tuple[int, bool, bool] | None:
    """(its length, whether it may repeat more than once, whether its count varies) of a quantifier at i."""
    ch = pattern[i]
    if ch in _QUANTIFIERS:
        return 1, ch != "?", ch != "?"
    counted = _COUNTED.match(pattern, i) if ch == "{" else None
    if counted is None or not (counted[1] or counted[3]):
        return None
    low = int(counted[1] or 0)
    high = None if counted[2] and not counted[3] else int(counted[3] or low)
    return counted.end() - i, high is None or high > 1, high != low


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at i (`[]a]`, `[^]a]`, escapes inside)."""
    j = i + 1
    if pattern.startswith("^", j):
        j += 1
    if pattern.startswith("]", j):
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1
