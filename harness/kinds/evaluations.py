"""A run's evaluations as metrics read them, and what a metric does where one is missing.

**Not evaluated by design vs evaluated but missing.** A federated run evaluates its global model
after round t when t + 1 is a multiple of `eval_every`, after its last round, and at the round its
training diverged (`methods.federated.loop`). Every round has a history row; a row off that
schedule holds `test_accuracy: null` because nothing was evaluated, and no metric counts it. A
row on the schedule whose value is null was evaluated and its number is missing: the store writes
a non-finite float as null (the NaN loss of a diverged run), or the record was altered or broken.
(Evaluation computes accuracy as a count over the test set, so a null accuracy is never a
diverged run: it is a broken record.)

**Missing values are never silent.** A metric that reads evaluations declares its treatment of
missing ones. The default is to refuse: `evaluations` raises `MissingValue`, naming the field and
the round; `harness.verdicts.observe` adds the record's key, experiment, variant and seed, and
`harness.verdicts.verify` makes the claim ERROR with that in its reason. ERROR, not INCONCLUSIVE:
INCONCLUSIVE says the data could not decide and that more seeds would (it carries power figures
saying how many), while no number of seeds decides a claim on a run whose metric is undefined; the
record is broken, or the run diverged and the metric is not defined for it, and either needs a
person to look (re-run it, or claim on `diverged`). Averaging what is left instead moved a verdict
(a smoothing window then ends at the last evaluation that has a value, not at the run's end).

A metric whose definition says how to treat missing values declares a `Tolerance` (the field, and
a sentence saying what it does with them); the verdict's reason then names every value so treated
(`harness.verdicts.observe.Series.notes`). Figures draw a missing evaluation as a gap.

Rounds are named as the runner's progress names them: `round 64/64` is history round index 63.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Result = Mapping[str, Any]


@dataclass(frozen=True)
class RecordId:
    """Which record a value came from: its store key, experiment, variant and seed."""

    key: str
    experiment: str
    variant: str
    seed: int

    def text(self) -> str:
        return f"record {self.key[:12]} ({self.experiment}, variant {self.variant}, seed {self.seed})"


@dataclass(frozen=True)
class Missing:
    """One evaluated value that a record lacks."""

    field: str
    round: int | None
    """History round index (from 0); None for a run with a single evaluation (FedHENet)."""
    rounds: int | None
    cause: str

    def where(self) -> str:
        if self.round is None:
            return self.field
        of = f"/{self.rounds}" if self.rounds else ""
        return f"{self.field} at round {self.round + 1}{of}"


class MissingValue(ValueError):
    """A metric refused a record: values it reads were evaluated but are missing (null)."""

    SHOWN = 3

    def __init__(self, missing: list[Missing], metric: str = "", record: RecordId | None = None):
        self.missing, self.metric, self.record = missing, metric, record
        super().__init__(self.text())

    def __reduce__(self):
        return MissingValue, (self.missing, self.metric, self.record)

    def in_record(self, metric: str, record: RecordId) -> MissingValue:
        return MissingValue(self.missing, metric, record)

    def text(self) -> str:
        where = f"{self.record.text()}: " if self.record is not None else ""
        listed = ", ".join(m.where() for m in self.missing[:self.SHOWN])
        more = f" and {len(self.missing) - self.SHOWN} more" if len(self.missing) > self.SHOWN else ""
        metric = f"; {self.metric} refuses a record with a missing evaluation" if self.metric else ""
        verb = "is" if len(self.missing) == 1 else "are"
        return f"{where}{listed}{more} {verb} null ({self.missing[0].cause}){metric}"


@dataclass(frozen=True)
class Tolerance:
    """A metric's own treatment of missing evaluations of `field` (instead of refusing the record)."""

    field: str
    treatment: str
    """What the metric does with one, as the verdict's reason repeats it after the metric's name
    (e.g. 'skips it: ...')."""

    def missing(self, result: Result) -> list[Missing]:
        return missing_values(result, self.field)


def _federation(result: Result) -> Mapping[str, Any]:
    return result.get("config") or {}


def is_scheduled(result: Result, round_index: int) -> bool:
    """Whether the run evaluated after this round (its schedule, or the round it diverged at)."""
    config = _federation(result)
    every, rounds = config.get("eval_every", 1), config.get("rounds")
    return ((round_index + 1) % every == 0 or round_index == (rounds or 0) - 1
            or round_index == result.get("diverged_round"))


def evaluated_rows(result: Result) -> list[Mapping[str, Any]]:
    """History rows of the rounds the run evaluated (on its schedule, or holding a value)."""
    return [row for row in result["history"]
            if row.get("test_accuracy") is not None or is_scheduled(result, row["round"])]


def _cause(result: Result, round_index: int) -> str:
    if round_index == result.get("diverged_round"):
        return "evaluated at the round the run diverged: a non-finite value stored as null"
    every = _federation(result).get("eval_every", 1)
    return f"evaluated on the schedule, eval_every = {every}: a non-finite value stored as null, or a broken record"


def missing_values(result: Result, field: str) -> list[Missing]:
    """The evaluations of `field` the run made whose value is null."""
    rounds = _federation(result).get("rounds")
    return [Missing(field, row["round"], rounds, _cause(result, row["round"]))
            for row in evaluated_rows(result) if row.get(field) is None]


def evaluations(result: Result, field: str) -> list[tuple[int, float]]:
    """(round, value) of every evaluation of `field`; MissingValue where one is null."""
    missing = missing_values(result, field)
    if missing:
        raise MissingValue(missing)
    return present_evaluations(result, field)


def present_evaluations(result: Result, field: str) -> list[tuple[int, float]]:
    """(round, value) of the evaluations of `field` that have a value: for a metric whose `Tolerance`
    says it skips the others."""
    return [(row["round"], float(row[field])) for row in evaluated_rows(result) if row.get(field) is not None]


def by_round(result: Result, field: str) -> dict[int, float]:
    """Every evaluation of `field` by round, NaN where missing (a figure draws it as a gap)."""
    return {row["round"]: math.nan if row.get(field) is None else float(row[field]) for row in evaluated_rows(result)}


def required(result: Result, field: str) -> float:
    """The single evaluation of a one-evaluation run (FedHENet's accuracy); MissingValue if null."""
    value = result.get(field)
    if value is None:
        raise MissingValue([Missing(field, None, None, "the run's one evaluation: a non-finite value stored as null, "
                                                       "or a broken record")])
    return float(value)


def record_id(record: Mapping[str, Any], variant: str, seed: int) -> RecordId:
    """The name of a stored record (its key and experiment as it holds them)."""
    return RecordId(str(record.get("key", "?")), str(record.get("experiment", "?")), variant, seed)
