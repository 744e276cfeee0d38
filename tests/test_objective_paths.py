"""A local objective runs on the execution path a spec chooses, or `validate` refuses it.

The batched path trains same-shape clients through `train_cohort`; the sequential path (and
models too large to stack) through `train`. An objective overriding only `train` (the documented
minimum) trains one client at a time on both; one overriding only `train_cohort` would train some
clients with an ancestor's method, so `validate` refuses it.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.runners.parts import OBJECTIVES
from harness.settings import scoped_code
from methods.federated import run_federation
from methods.federated.parts import Choice
from tests.test_extension_files import _own_scope as _own_scope  # the autouse fixture: no code scope leaks in
from tests.test_extension_files import _problems as catalog_problems
from tests.test_federated_engine import tiny_cfg, tiny_conv, tiny_data

# The template of docs/adding-a-paper.md: `train` only, counting its calls.
TRAIN_ONLY = """\
from methods.federated.objectives import LocalObjective, ObjectiveContext, train_local
from methods.federated.parts import Settings

CALLS = []

class Damped(LocalObjective):
    class Settings(Settings):
        weight: float = 0.1

    @classmethod
    def from_context(cls, context: ObjectiveContext) -> "Damped":
        return cls(context.settings.weight)

    def __init__(self, weight: float) -> None:
        self.weight = weight

    def train(self, client, model, view, start, data, settings, generator):
        CALLS.append(client)
        def correction(params):
            for name, p in params.items():
                p.grad.add_(self.weight * (p.detach() - start[name]))
        return train_local(model, start, data, settings, generator, correction)
"""

COHORT_ONLY = """\
from methods.federated.objectives import FedProxObjective, LocalObjective

class CohortOnly(LocalObjective):
    train_cohort = FedProxObjective.train_cohort
"""

SPEC = """\
experiment: objective-file
paper: test
title: a spec naming an objective file
kind: federated_training
config:
  data:
    name: cifar10
    partition: {scheme: iid}
  model: {arch: conv, hidden: [4, 8, 8], in_channels: 3, num_classes: 10, image_size: 32}
  federation:
    num_clients: 4
    clients_per_round: 2
    rounds: 1
    objective: OBJECTIVE
variants:
  a: {label: A, config: {federation: {local_epochs: 1}}}
profiles:
  tiny:
    seeds: [0]
"""
OBJECTIVE_LINE = 14


def _problems(root: Path, objective: str, source: str, execution: str | None = None) -> list:
    (root / "claims").mkdir(parents=True)
    (root / "specs").mkdir()
    (root / "objectives").mkdir()
    (root / "objectives" / "mine.py").write_text(source)
    spec = SPEC.replace("OBJECTIVE", f"objectives/mine.py:{objective}")
    if execution:
        spec = spec.replace("    rounds: 1\n", f"    rounds: 1\n    client_execution: {execution}\n")
    (root / "specs" / "objective-file.yaml").write_text(spec)
    return catalog_problems(root)


def test_an_objective_overriding_only_train_cohort_is_refused_on_every_path(tmp_path):
    (problem,) = _problems(tmp_path, "CohortOnly", COHORT_ONLY, execution="batched")
    assert "overrides `train_cohort` but not `train`" in problem.message


@pytest.mark.parametrize("execution", [None, "batched", "sequential"])
def test_an_objective_overriding_only_train_is_called_on_every_path(tmp_path, execution):
    assert _problems(tmp_path, "Damped", TRAIN_ONLY, execution=execution) == []
    with scoped_code(tmp_path):
        objective = OBJECTIVES.load("objectives/mine.py:Damped")
    module = sys.modules[objective.__module__]
    module.CALLS.clear()
    cfg = dataclasses.replace(tiny_cfg(rounds=2, client_execution=execution or "batched"),
                              objective=Choice.of(objective))
    run_federation(tiny_conv(), tiny_data(4), cfg, np.ones(4), seed=0)
    assert len(module.CALLS) == 2 * cfg.clients_per_round


def _config_with_objective(name: str):
    from harness.runners.federated import Config
    return Config.model_validate({
        "data": {"name": "cifar10", "partition": {"scheme": "iid"}},
        "model": {"arch": "conv", "hidden": [4], "in_channels": 3, "num_classes": 10, "image_size": 32},
        "federation": {"objective": name}})


def test_the_projects_own_objectives_run_on_both_paths(tmp_path):
    from harness.kinds import held, kind
    for name in OBJECTIVES.names():
        assert held.config_problems(kind("federated_training"), _config_with_objective(name)) == [], name


@pytest.mark.parametrize("execution, noted", [(None, True), ("batched", True), ("sequential", False)])
def test_a_train_only_objective_under_batched_execution_is_said_once(tmp_path, execution, noted):
    """The batched engine falls back to such an objective's `train`: correct, slower, and said (issue 40)."""
    from harness.loading.catalog import load_catalog
    from harness.pipeline import execution_notes
    from harness.running.planning import RunRequest
    assert _problems(tmp_path, "Damped", TRAIN_ONLY, execution=execution) == []
    with scoped_code(tmp_path):
        catalog = load_catalog(tmp_path / "claims", tmp_path / "specs", tmp_path)
        config = catalog.specs["objective-file"].resolve("a", "tiny").model_dump(mode="json")
        requests = [RunRequest("objective-file", "a", seed, "tiny", "federated_training", config, {}, {}, str(seed))
                    for seed in (0, 1)]
        notes = execution_notes(catalog, requests)
    assert notes == (["objective-file: objective 'objectives/mine.py:Damped' overrides only `train`: "
                      "under `client_execution: batched` its clients train one at a time through it (the same "
                      "method, slower)"] if noted else [])


def test_the_projects_own_objectives_need_no_note():
    from harness.kinds import held, kind
    for name in OBJECTIVES.names():
        assert held.config_notes(kind("federated_training"), _config_with_objective(name)) == [], name
