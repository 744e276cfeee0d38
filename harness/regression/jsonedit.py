"""A JSON file rewritten so that its diff shows only what changed.

`edited(old, new)` is the text `new` (a JSON document) with every member of an object whose value
is the same as in `old` spelt exactly as `old` spells it, whitespace included: rewriting a
committed file after changing three of its entries changes those entries' lines and no other.
Objects are compared member by member, down to the members that changed; a changed list or
scalar is taken from `new` whole.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class _Member:
    key: str
    value: Any
    start: int
    """Where its key's opening quote is."""
    value_start: int
    end: int
    """Just after its value."""


def _skip(text: str, index: int) -> int:
    return _SPACE.match(text, index).end()  # type: ignore[union-attr]  # the pattern matches the empty string


def _object(text: str, start: int) -> tuple[list[_Member], int]:
    """The members of the object whose '{' is at `start`, and the index just after its '}'."""
    members: list[_Member] = []
    index = _skip(text, start + 1)
    if text[index] == "}":
        return members, index + 1
    while True:
        key_start = index
        key, index = json.decoder.scanstring(text, key_start + 1)  # type: ignore[attr-defined]
        value_start = _skip(text, _skip(text, index) + 1)  # past the ':'
        value, end = _DECODER.raw_decode(text, value_start)
        members.append(_Member(key, value, key_start, value_start, end))
        index = _skip(text, end)
        if text[index] == "}":
            return members, index + 1
        index = _skip(text, index + 1)  # past the ','


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: 1, 1.0 and true differ, and so does the order of an object's members."""
    return json.dumps(a, allow_nan=False) == json.dumps(b, allow_nan=False)


def _merged(old: str, old_start: int, new: str, new_start: int) -> str:
    """The text of the object at `new_start` of `new`, its members unchanged since the object at
    `old_start` of `old` spelt as there."""
    old_members, old_end = _object(old, old_start)
    new_members, new_end = _object(new, new_start)
    if not old_members or not new_members:
        return new[new_start:new_end]
    was = {member.key: index for index, member in enumerate(old_members)}
    default_separator = (old[old_members[0].end:old_members[1].start] if len(old_members) > 1 else
                         new[new_members[0].end:new_members[1].start] if len(new_members) > 1 else ",")
    pieces: list[str] = []
    previous: int | None = None
    for position, member in enumerate(new_members):
        index = was.get(member.key)
        if position:
            adjacent = index is not None and previous is not None and index == previous + 1
            pieces.append(old[old_members[previous].end:old_members[index].start]  # type: ignore[index]
                          if adjacent else default_separator)
        if index is None:
            pieces.append(new[member.start:member.end])
        else:
            before = old_members[index]
            pieces.append(old[before.start:before.value_start])
            if _same(before.value, member.value):
                pieces.append(old[before.value_start:before.end])
            elif isinstance(before.value, dict) and isinstance(member.value, dict):
                pieces.append(_merged(old, before.value_start, new, member.value_start))
            else:
                pieces.append(new[member.value_start:member.end])
        previous = index
    return old[old_start:old_members[0].start] + "".join(pieces) + old[old_members[-1].end:old_end]


def edited(old: str, new: str) -> str:
    """`new` spelt as `old` wherever their contents agree (both JSON texts; `new` as it is when
    either is not an object)."""
    try:
        before, after = json.loads(old), json.loads(new)
    except json.JSONDecodeError:
        return new
    if not isinstance(before, dict) or not isinstance(after, dict):
        return new
    old_start = _skip(old, 0)
    _, old_end = _object(old, old_start)
    return old[:old_start] + _merged(old, old_start, new, _skip(new, 0)) + old[old_end:]
