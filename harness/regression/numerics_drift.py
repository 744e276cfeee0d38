"""How far training outcomes drift between two stores that ran the same runs under other numerics.

Records with one key in both stores ran the same code, config, seed and data; where their numerics
differ, every difference between them is numerics drift. For federated runs the test accuracy is
compared at every evaluation, which shows how training grows the last-bit differences with the
length of the run.

Evaluations are paired by round index, never by position: an evaluation one store's record holds
and the other's lacks (null, or not made) is listed as missing and compared with nothing, so every
other round is compared with its own counterpart and swapping the two stores changes no figure.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.kinds.evaluations import evaluated_rows
from harness.numerics import fingerprint
from harness.running.store import ResultStore


@dataclass(frozen=True)
class Pair:
    key: str
    experiment: str
    variant: str
    seed: int
    first: dict
    second: dict


def pairs(first: ResultStore, second: ResultStore) -> Iterator[Pair]:
    """Finished records present in both stores under different numerics."""
    for path in sorted(Path(first.root).glob("*/*.json")):
        key = path.stem
        a, b = first.get(key), second.get(key)
        if not a or not b or a.get("status") != "ok" or b.get("status") != "ok":
            continue
        if fingerprint(a) == fingerprint(b) and fingerprint(a) != "unrecorded":
            continue
        yield Pair(key, a["experiment"], a["variant"], a["seed"], a, b)


def _accuracies(record: dict) -> dict[int, float | None]:
    """Test accuracy (points) by round of every evaluation the run made; None where it is null."""
    return {row["round"]: None if row["test_accuracy"] is None else 100.0 * row["test_accuracy"]
            for row in evaluated_rows(record["result"])}


NOT_EVALUATED, NULL = "not evaluated", "null"


@dataclass(frozen=True)
class MissingRound:
    """An evaluation that a run's record lacks in one store or both: compared with nothing."""

    key: str
    variant: str
    seed: int
    round: int
    first: str | None
    """Why the first store's record has no value there (None: it has one)."""
    second: str | None

    def text(self) -> str:
        return f"round {self.round + 1} of {self.key[:12]} ({self.variant}, seed {self.seed}): {self._lacking()}"

    def _lacking(self) -> str:
        if self.first == self.second:
            return f"{self.first} in both stores"
        stores = (("first", self.first), ("second", self.second))
        return "; ".join(f"{why} in the {store} store" for store, why in stores if why)


def _lacks(accuracies: dict[int, float | None], round_index: int) -> str | None:
    if round_index not in accuracies:
        return NOT_EVALUATED
    return NULL if accuracies[round_index] is None else None


@dataclass
class Growth:
    """Root mean square accuracy difference (points) at each evaluated round, over runs."""

    experiment: str
    runs: int
    rounds: list[int]
    rms: list[float]
    identical_runs: int
    missing: list[MissingRound] = field(default_factory=list)

    LISTED = 5

    def text(self, columns: int = 8) -> str:
        step = max(1, len(self.rounds) // columns)
        shown = list(range(0, len(self.rounds), step))
        if shown and shown[-1] != len(self.rounds) - 1:
            shown.append(len(self.rounds) - 1)
        cells = ", ".join(f"round {self.rounds[i] + 1}: {self.rms[i]:.3g}" for i in shown)
        return (f"{self.experiment}: {self.runs} runs ({self.identical_runs} bit-identical to the end); "
                f"rms accuracy drift (points) {cells}{self._missing_text()}")

    def _missing_text(self) -> str:
        if not self.missing:
            return ""
        count = len(self.missing)
        listed = "; ".join(m.text() for m in self.missing[:self.LISTED])
        more = f"; and {count - self.LISTED} more" if count > self.LISTED else ""
        return f"; {count} evaluation{'s' if count != 1 else ''} missing, not compared: {listed}{more}"


def accuracy_growth(found: list[Pair]) -> list[Growth]:
    by_experiment: dict[str, list[Pair]] = defaultdict(list)
    for pair in found:
        if pair.first.get("kind") == "federated_training":
            by_experiment[pair.experiment].append(pair)
    growth = []
    for experiment, runs in sorted(by_experiment.items()):
        squares: dict[int, list[float]] = defaultdict(list)
        missing: list[MissingRound] = []
        identical = 0
        for pair in runs:
            a, b = _accuracies(pair.first), _accuracies(pair.second)
            identical += a == b
            for round_index in sorted(a.keys() | b.keys()):
                first, second = a.get(round_index), b.get(round_index)
                if first is None or second is None:
                    missing.append(MissingRound(pair.key, pair.variant, pair.seed, round_index,
                                                _lacks(a, round_index), _lacks(b, round_index)))
                else:
                    squares[round_index].append((second - first) ** 2)
        rounds = sorted(squares)
        growth.append(Growth(experiment, len(runs), rounds,
                             [math.sqrt(sum(squares[r]) / len(squares[r])) for r in rounds], identical, missing))
    return growth
