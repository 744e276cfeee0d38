"""The checks and notes a config earns by what it holds, whatever its kind: every `Federation` (the round
loop's settings and the method's parts) anywhere in a kind's validated config brings its own, beside the
kind's own `config_problems` and `config_notes`. A kind built from the docs' template that trains
`train_federation` on the `federated_training` config is checked as `federated_training` is.

(Declarations, not the runner: `harness/runners/federated.py` is in the key of every record it makes.)"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from harness.kinds.base import ExperimentKind
from harness.runners.federated import Federation
from harness.runners.parts import OBJECTIVES
from methods.federated.config import ClientExecution
from methods.federated.objectives import defining_class

Location = tuple[str, ...]


def _federations(config: Any, path: Location = ()) -> Iterator[tuple[Location, Federation]]:
    """Every `Federation` in a validated config, with its path (its fields, and those of nested models)."""
    if isinstance(config, Federation):
        yield path, config
    elif isinstance(config, BaseModel):
        for name in type(config).model_fields:
            yield from _federations(getattr(config, name), (*path, name))


def _objective_problems(federation: Federation) -> list[tuple[Location, str]]:
    """An objective that overrides only `train` trains one client at a time on every path (the batched
    engine falls back to it). One that overrides only `train_cohort` would leave sequential execution,
    and models too large to stack, training as an ancestor does: silently another method."""
    name = federation.objective["name"]
    objective = OBJECTIVES.load(name)
    single = defining_class(objective, "train")
    if objective.trains_cohorts() and defining_class(objective, "train_cohort") is not single:
        return [(("objective",),
                 f"objective {name!r} ({objective.__module__}.{objective.__qualname__}) overrides `train_cohort` but "
                 "not `train`, which sequential execution and models too large to stack call instead: those "
                 f"clients would train as {single.__qualname__} does; implement `train` too")]
    return []


def _objective_notes(federation: Federation) -> list[str]:
    """An objective overriding only `train` under batched execution: its clients train one at a time."""
    name = federation.objective["name"]
    if federation.client_execution is ClientExecution.BATCHED and not OBJECTIVES.load(name).trains_cohorts():
        return [f"objective {name!r} overrides only `train`: under `client_execution: batched` its clients train "
                "one at a time through it (the same method, slower)"]
    return []


def config_problems(kind: ExperimentKind, config: Any) -> list[tuple[Location, str]]:
    """What a valid config cannot run as written: (the setting's path, the message) pairs, each once."""
    held = [((*path, *where), message) for path, federation in _federations(config)
            for where, message in _objective_problems(federation)]
    return list(dict.fromkeys(held + kind.config_problems(config)))


def config_notes(kind: ExperimentKind, config: Any) -> list[str]:
    """How a valid config runs other than it reads, each note once."""
    held = [note for _, federation in _federations(config) for note in _objective_notes(federation)]
    return list(dict.fromkeys(held + kind.config_notes(config)))
