"""Checks and notes come with what a config holds, not with a kind's name: a kind built from
docs/adding-a-paper.md's width-sweep template (the `federated_training` config, trained by
`train_federation`) has its `train_cohort`-only objective refused at `validate` and its train-only
objective under batched execution said once, as `federated_training` has (issue 60)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.loading.catalog import load_catalog
from harness.pipeline import execution_notes
from harness.running.planning import RunRequest
from harness.settings import scoped_code
from tests.test_extension_files import _own_scope as _own_scope  # the autouse fixture: no code scope leaks in
from tests.test_extension_files import _problems as catalog_problems

REPO = Path(__file__).resolve().parents[1]


def _docs_block(marker: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "adding-a-paper.md").read_text(), re.S)
    (block,) = [b for b in blocks if marker in b]
    return block


COHORT_ONLY = """\
from fedclaims import LocalObjective


class CohortOnly(LocalObjective):
    def train_cohort(self, *arguments):
        raise AssertionError("validate refuses this objective before any run")
"""

SPEC = """\
experiment: sweep
paper: test
title: a width sweep built from the docs' template
kind: kinds/sweep.py:KIND
config:
  data: {name: cifar10, partition: {scheme: iid}}
  model: {arch: conv, hidden: [4, 8], in_channels: 3, num_classes: 10, image_size: 32}
  federation:
    num_clients: 4
    clients_per_round: 2
    rounds: 1
    objective: OBJECTIVE
variants:
  a: {label: A}
profiles:
  tiny: {seeds: [0]}
"""


def _project(root: Path, objective: str, source: str, execution: str | None = None) -> Path:
    for folder, name, text in (("kinds", "sweep.py", _docs_block('name="width_sweep"')),
                               ("objectives", "mine.py", source)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / name).write_text(text)
    (root / "claims").mkdir(exist_ok=True)
    (root / "specs").mkdir(exist_ok=True)
    spec = SPEC.replace("OBJECTIVE", f"objectives/mine.py:{objective}")
    if execution:
        spec = spec.replace("    rounds: 1\n", f"    rounds: 1\n    client_execution: {execution}\n")
    (root / "specs" / "sweep.yaml").write_text(spec)
    return root


@pytest.mark.parametrize("execution", ["batched", "sequential"])
def test_a_template_kinds_train_cohort_only_objective_is_refused_at_its_line(tmp_path, execution):
    root = _project(tmp_path, "CohortOnly", COHORT_ONLY, execution)
    line = 1 + (root / "specs" / "sweep.yaml").read_text().splitlines().index(
        "    objective: objectives/mine.py:CohortOnly")
    (problem,) = catalog_problems(root)
    assert (str(problem.file), problem.line, problem.field) == ("specs/sweep.yaml", line,
                                                                 "config.federation.objective")
    assert "overrides `train_cohort` but not `train`" in problem.message


@pytest.mark.parametrize("execution, noted", [(None, True), ("sequential", False)])
def test_a_template_kinds_train_only_objective_under_batched_execution_is_said_once(tmp_path, execution, noted):
    root = _project(tmp_path, "Damped", _docs_block("class Damped(LocalObjective)"), execution)
    assert catalog_problems(root) == []
    with scoped_code(root):
        catalog = load_catalog(root / "claims", root / "specs", root)
        config = catalog.specs["sweep"].resolve("a", "tiny").model_dump(mode="json")
        requests = [RunRequest("sweep", "a", seed, "tiny", "width_sweep", config, {}, {}, str(seed))
                    for seed in (0, 1)]
        notes = execution_notes(catalog, requests)
    assert notes == (["sweep: objective 'objectives/mine.py:Damped' overrides only `train`: under "
                      "`client_execution: batched` its clients train one at a time through it (the same method, "
                      "slower)"] if noted else [])
