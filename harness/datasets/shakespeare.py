"""Shakespeare's loader: parses the fetched text into LEAF-style role federations (`shakespeare_source`
finds and fetches it). One client per speaking role, next-character prediction.

Construction (after LEAF, Caldas et al. 2018): a role's speech lines are joined
with spaces; characters outside printable ASCII become spaces and runs of spaces
collapse to one (LEAF's normalisation); the ``num_roles`` roles with the most
characters form the federation; every window of ``seq_len`` characters predicts
the next one (stride 1).

Departure from LEAF: LEAF splits a role's samples into train and test at random,
so test windows overlap training windows almost entirely. Here the split is
temporal and contiguous: the first 80% of a role's samples train, the last 20%
test, minus the ``seq_len`` samples at the boundary, so no character of a test
window (or its target) appears in any training window.

Two text forms: the ROLE: format of karpathy/char-rnn's tinyshakespeare corpus, and Project
Gutenberg's complete works as a zip (LEAF's source). This module is part of the code identity of
every run that reads Shakespeare (harness.running.planning.run_code), so it imports nothing that finds,
fetches or downloads files.
"""
from __future__ import annotations

import re
import zipfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from .archives import read_zip_member
from .arrays import RoleSamples, TextData

# fedclaims behaviour version: 1

MAX_TEXT_BYTES = 64 << 20  # the complete works are about 5.5 MB of text
VOCAB = "".join(chr(code) for code in range(32, 127))
TRAIN_FRACTION = 0.8

_NON_PRINTABLE = re.compile(r"[^\x20-\x7e]")
_SPACES = re.compile(r"  +")
# LEAF's preprocess_shakespeare.py: "  NAME. speech" opens a speech, "    more" continues it;
# The Comedy of Errors is printed without indentation.
_CHARACTER_RE = re.compile(r"^  ([a-zA-Z][a-zA-Z ]*)\. (.*)")
_CONTINUATION_RE = re.compile(r"^    (.*)")
_COE_CHARACTER_RE = re.compile(r"^([a-zA-Z][a-zA-Z ]*)\. (.*)")
_COE_CONTINUATION_RE = re.compile(r"^(.*)")
_AUTHOR_MARK = "by William Shakespeare"


def load(path: Path, fingerprint: str, num_roles: int = 20, seq_len: int = 80) -> TextData:
    """The federation of the ``num_roles`` longest roles of the text at ``path`` (a ROLE: text, or
    a Gutenberg zip), every window of ``seq_len`` characters a sample."""
    return build_text_data(_read_roles(path), num_roles, seq_len, fingerprint)


def _read_roles(path: Path) -> dict[str, str]:
    if path.suffix == ".zip":
        return parse_gutenberg(read_gutenberg_zip(path))
    return parse_role_text(path.read_text(encoding="utf-8", errors="replace"))


def normalise(text: str) -> str:
    """Non-printable characters (newline, tab, non-ASCII) become spaces; runs of spaces collapse."""
    return _SPACES.sub(" ", _NON_PRINTABLE.sub(" ", text))


def parse_role_text(text: str) -> dict[str, str]:
    """Parse ``NAME:`` header format into role -> all its speech lines joined by spaces.

    A speech is a block between blank lines whose first line is ``NAME:``; a block
    without a header continues the previous speaker. Roles keep first-appearance order.
    """
    lines_by_role: dict[str, list[str]] = defaultdict(list)
    current: str | None = None
    for block in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")):
        lines = [line.strip() for line in block.strip("\n").split("\n")]
        lines = [line for line in lines if line]
        if not lines:
            continue
        if lines[0].endswith(":") and len(lines[0]) > 1:
            current, lines = lines[0][:-1].strip(), lines[1:]
        if current is not None:
            lines_by_role[current].extend(lines)
    return {role: normalise(" ".join(lines)) for role, lines in lines_by_role.items()}


def parse_gutenberg(text: str) -> dict[str, str]:
    """Parse Project Gutenberg's complete works as LEAF does, simplified.

    Plays start at a line containing "by William Shakespeare" (the first such line
    heads the collection and the sonnets, which are skipped); the title is the first
    non-blank line 2-7 lines above. Roles are keyed ``PLAY_CHARACTER`` with spaces
    as underscores, character names upper-cased; "plays" with fewer than two
    characters (the poems) are dropped.
    """
    lines = text.splitlines()
    plays: list[tuple[str, dict[str, list[str]]]] = []
    characters: dict[str, list[str]] | None = None
    current: str | None = None
    comedy_of_errors = False
    seen_author_marks = 0
    for i, line in enumerate(lines):
        if _AUTHOR_MARK in line:
            seen_author_marks += 1
            current, characters = None, None
            if seen_author_marks >= 2:
                title = _title_above(lines, i)
                comedy_of_errors = title == "THE COMEDY OF ERRORS"
                characters = defaultdict(list)
                plays.append((title, characters))
            continue
        if characters is None:
            continue
        opener = (_COE_CHARACTER_RE if comedy_of_errors else _CHARACTER_RE).match(line)
        if opener:
            name = opener.group(1).upper()
            if comedy_of_errors and name.startswith("ACT "):
                current = None
            else:
                characters[name].append(opener.group(2))
                current = name
            continue
        if current is not None:
            more = (_COE_CONTINUATION_RE if comedy_of_errors else _CONTINUATION_RE).match(line)
            if more and comedy_of_errors and more.group(1).startswith("<"):
                current = None
            elif more:
                characters[current].append(more.group(1))
    roles: dict[str, str] = {}
    for title, speeches in plays:
        if len(speeches) < 2:
            continue
        for name, speech_lines in speeches.items():
            key = f"{title}_{name}".replace(" ", "_")
            joined = normalise(" ".join(part.strip() for part in speech_lines)).strip()
            roles[key] = f"{roles[key]} {joined}" if key in roles else joined
    return roles


def build_text_data(role_texts: dict[str, str], num_roles: int, seq_len: int,
                    fingerprint: str, train_fraction: float = TRAIN_FRACTION) -> TextData:
    """Keep the ``num_roles`` longest roles (ties by name) and cut each into windows."""
    if num_roles < 1 or seq_len < 1:
        raise ValueError(f"num_roles ({num_roles}) and seq_len ({seq_len}) must be positive")
    texts = {name: normalise(text) for name, text in role_texts.items()}
    if len(texts) < num_roles:
        raise ValueError(f"{num_roles} roles requested but the text has only {len(texts)}")
    chosen = sorted(texts, key=lambda name: (-len(texts[name]), name))[:num_roles]
    roles = tuple(role_samples(name, texts[name], seq_len, train_fraction) for name in chosen)
    return TextData(roles=roles, vocab=VOCAB, seq_len=seq_len, fingerprint=fingerprint)


def encode(text: str) -> np.ndarray:
    """Indices into VOCAB (chr(32)..chr(126)) as int64; other characters map to space."""
    codes = np.frombuffer(_NON_PRINTABLE.sub(" ", text).encode("ascii"), dtype=np.uint8)
    return codes.astype(np.int64) - 32


def role_samples(name: str, text: str, seq_len: int,
                 train_fraction: float = TRAIN_FRACTION) -> RoleSamples:
    """Stride-1 windows; temporal split with a ``seq_len`` gap so train and test share no character."""
    codes = encode(text)
    n = max(len(codes) - seq_len, 0)
    n_train = int(np.floor(train_fraction * n))
    if n > 0:
        inputs = np.lib.stride_tricks.sliding_window_view(codes[:-1], seq_len)
        targets = codes[seq_len:]
    else:
        inputs, targets = np.empty((0, seq_len), dtype=np.int64), np.empty(0, dtype=np.int64)
    test_start = min(n_train + seq_len, n)
    return RoleSamples(name=name, train_x=inputs[:n_train], train_y=targets[:n_train],
                       test_x=inputs[test_start:n], test_y=targets[test_start:n])


def read_gutenberg_zip(path: Path) -> str:
    """The text of the largest .txt member of the zip (``100.txt`` in LEAF's download).

    A member that declares or expands to more than MAX_TEXT_BYTES is refused unread.
    """
    with zipfile.ZipFile(path) as archive:
        members = [info for info in archive.infolist() if info.filename.lower().endswith(".txt")]
        if not members:
            raise ValueError(f"{path} holds no .txt file")
        largest = max(members, key=lambda info: info.file_size)
        return read_zip_member(archive, largest, MAX_TEXT_BYTES, path).decode("latin-1")


def _title_above(lines: list[str], index: int) -> str:
    for offset in range(2, 8):
        if index - offset >= 0 and lines[index - offset].strip():
            return lines[index - offset].strip()
    return f"PLAY AT LINE {index}"
