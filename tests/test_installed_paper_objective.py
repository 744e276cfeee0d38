"""A paper package outside the project, with its own local objective (the docs' template, overriding only
`train`), runs under `pytest -m <paper>` with the default client execution, and its objective trains every
sampled client of every round (issue 40: the batched engine once trained such clients with plain SGD)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_installed_paper_pytest import _pytest, installed_package

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
ROUNDS, CLIENTS_PER_ROUND = 2, 2


def _docs_objective() -> str:
    """The local-objective block of docs/adding-a-paper.md, as a user would copy it."""
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "adding-a-paper.md").read_text(), re.S)
    (block,) = [b for b in blocks if "class Damped(LocalObjective)" in b]
    return block


COUNTED = """
import os


class Counted(Damped):
    def train(self, client, *arguments):
        with open(os.environ["DAMPED_CALLS"], "a") as calls:
            calls.write(f"{client}\\n")
        return super().train(client, *arguments)
"""

SPEC = f"""\
experiment: dampedpaper-cifar10
paper: dampedpaper
title: a federation trained with the package's own objective
kind: federated_training
config:
  data: {{name: cifar10, partition: {{scheme: iid}}, max_train_per_client: 16, test_samples: 64,
         calibration_samples: 16}}
  model: {{arch: conv, hidden: [4, 8], in_channels: 3, num_classes: 10, image_size: 32}}
  federation: {{num_clients: 4, clients_per_round: {CLIENTS_PER_ROUND}, rounds: {ROUNDS}, local_epochs: 1,
               batch_size: 8, eval_every: 1, objective: damped}}
variants:
  damped: {{label: "the docs' damped objective"}}
profiles:
  smoke: {{seeds: [0]}}
"""

CLAIMS = """\
paper: dampedpaper
title: A paper installed as a package, with its own local objective
reference: "a throwaway package of the test suite"
claims:
  - id: dampedpaper.ten-classes
    statement: "Chance on CIFAR-10 is one in ten."
    source: "§1"
    experiment: dampedpaper-cifar10
    observe: {metric: chance_accuracy, of: damped}
    expect:
      smoke: {approx: 10.0, tolerance: 1.0e-9}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return installed_package(tmp_path_factory.mktemp("site"), "dampedpaper",
                             {"objective.py": _docs_objective() + COUNTED, "claims/dampedpaper.yaml": CLAIMS,
                              "specs/dampedpaper-cifar10.yaml": SPEC},
                             "[fedclaims.papers]\ndampedpaper = dampedpaper\n\n"
                             "[fedclaims.objectives]\ndamped = dampedpaper.objective:Counted\n")


@pytest.mark.slow
def test_an_installed_papers_objective_overriding_only_train_trains_every_client(site, tmp_path,
                                                                                monkeypatch) -> None:
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("DAMPED_CALLS", str(calls))
    run = _pytest(site, tmp_path, "claims", "-m", "dampedpaper")
    if "unavailable" in run.stdout + run.stderr and "cifar10" in run.stdout + run.stderr:
        pytest.skip("CIFAR-10 is not available here (FEDCLAIMS_DATA)")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 passed" in run.stdout, run.stdout[-2000:]
    trained = calls.read_text().split()
    assert len(trained) == ROUNDS * CLIENTS_PER_ROUND, trained
