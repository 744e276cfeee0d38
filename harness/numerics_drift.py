"""How far training outcomes drift between two stores that ran the same runs under other numerics.

Records with one key in both stores ran the same code, config, seed and data; where their numerics
differ, every difference between them is numerics drift. For federated runs the test accuracy is
compared at every evaluation, which shows how training grows the last-bit differences with the
length of the run.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.numerics import fingerprint
from harness.store import ResultStore


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


def _accuracies(record: dict) -> list[tuple[int, float]]:
    return [(r["round"], 100.0 * r["test_accuracy"]) for r in record["result"]["history"]
            if r["test_accuracy"] is not None]


@dataclass
class Growth:
    """Root mean square accuracy difference (points) at each evaluated round, over runs."""

    experiment: str
    runs: int
    rounds: list[int]
    rms: list[float]
    identical_runs: int

    def text(self, columns: int = 8) -> str:
        step = max(1, len(self.rounds) // columns)
        shown = list(range(0, len(self.rounds), step))
        if shown[-1] != len(self.rounds) - 1:
            shown.append(len(self.rounds) - 1)
        cells = ", ".join(f"round {self.rounds[i] + 1}: {self.rms[i]:.3g}" for i in shown)
        return (f"{self.experiment}: {self.runs} runs ({self.identical_runs} bit-identical to the end); "
                f"rms accuracy drift (points) {cells}")


def accuracy_growth(found: list[Pair]) -> list[Growth]:
    by_experiment: dict[str, list[Pair]] = defaultdict(list)
    for pair in found:
        if pair.first.get("kind") == "federated_training":
            by_experiment[pair.experiment].append(pair)
    growth = []
    for experiment, runs in sorted(by_experiment.items()):
        squares: dict[int, list[float]] = defaultdict(list)
        identical = 0
        for pair in runs:
            a, b = _accuracies(pair.first), _accuracies(pair.second)
            identical += a == b
            for (round_index, x), (_, y) in zip(a, b):
                squares[round_index].append((y - x) ** 2)
        rounds = sorted(squares)
        growth.append(Growth(experiment, len(runs), rounds,
                             [math.sqrt(sum(squares[r]) / len(squares[r])) for r in rounds], identical))
    return growth
