"""A paper installed as a package, whose kind is docs/adding-a-paper.md's width-sweep template and whose
pieces import nothing but `fedclaims` (issue 60): `fedclaims validate` refuses its `train_cohort`-only
objective at the spec line and answers its misspelt metric argument with one did-you-mean line, and
`fedclaims plan` says once that its train-only objective trains clients one at a time under batched
execution, as for `federated_training`."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_docs_templates import INTERNAL, _imported_packages
from tests.test_installed_paper_pytest import installed_package

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]


def _docs_block(marker: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "adding-a-paper.md").read_text(), re.S)
    (block,) = [b for b in blocks if marker in b]
    return block


OBJECTIVES = _docs_block("class Damped(LocalObjective)") + """

class CohortOnly(LocalObjective):
    def train_cohort(self, *arguments):
        raise AssertionError("validate refuses this objective before any run")
"""

METRIC = """\
from pydantic import BaseModel, ConfigDict

from fedclaims import ExtensionMetric, Metric


class WidthArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    width: float


METRIC = ExtensionMetric(name="accuracy_at", kinds=("sweeppaper_width_sweep",), metric=Metric(
    "test accuracy at a width", lambda result, args: 100.0 * result["accuracy_at_width"][str(args.width)],
    unit="%", args=WidthArgs))
"""

SPEC = """\
experiment: sweeppaper-NAME
paper: sweeppaper
title: the docs' width sweep with the package's objective
kind: sweeppaper_width_sweep
config:
  data: {name: cifar10, partition: {scheme: iid}, max_train_per_client: 8, test_samples: 32,
         calibration_samples: 8}
  model: {arch: conv, hidden: [4, 8], in_channels: 3, num_classes: 10, image_size: 32}
  federation:
    num_clients: 2
    clients_per_round: 2
    rounds: 1
    objective: OBJECTIVE
variants:
  a: {label: A}
profiles:
  smoke: {seeds: [0, 1, 2, 3, 4, 5]}
"""

CLAIMS = """\
paper: sweeppaper
title: A paper installed as a package, with a kind built from the docs' template
reference: "a throwaway package of the test suite"
claims:
  - id: sweeppaper.half-width-learns
    statement: "The half-width sub-model ends above chance."
    source: "§1"
    experiment: sweeppaper-damped
    observe: {metric: accuracy_at, of: a, args: {ARGUMENT: 0.5}}
    expect:
      smoke: {above: 10.0}
"""


def _site(root: Path, misspelt: bool) -> Path:
    files = {"kind.py": _docs_block('name="width_sweep"').replace('name="width_sweep"',
                                                                  'name="sweeppaper_width_sweep"'),
             "objectives.py": OBJECTIVES, "metric.py": METRIC,
             "claims/sweeppaper.yaml": CLAIMS.replace("ARGUMENT", "widht" if misspelt else "width"),
             "specs/sweeppaper-damped.yaml": SPEC.replace("NAME", "damped").replace("OBJECTIVE", "damped")}
    if misspelt:
        files["specs/sweeppaper-cohort.yaml"] = SPEC.replace("NAME", "cohort").replace("OBJECTIVE", "cohort_only")
    for name, source in files.items():
        if name.endswith(".py"):
            assert not _imported_packages(source) & INTERNAL, name  # a new user's package: fedclaims only
    root.mkdir()
    return installed_package(root, "sweeppaper", files,
                             "[fedclaims.papers]\nsweeppaper = sweeppaper\n\n"
                             "[fedclaims.kinds]\nsweeppaper_width_sweep = sweeppaper.kind:KIND\n\n"
                             "[fedclaims.metrics]\naccuracy_at = sweeppaper.metric:METRIC\n\n"
                             "[fedclaims.objectives]\ndamped = sweeppaper.objectives:Damped\n"
                             "cohort_only = sweeppaper.objectives:CohortOnly\n")


def _fedclaims(site: Path, tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]),
                   "FEDCLAIMS_CACHE": str(tmp_path / "cache"), "FEDCLAIMS_RECORDS": "0", "FEDCLAIMS_DOWNLOAD": "0"}
    return subprocess.run([sys.executable, "-m", "harness.cli", "--root", str(REPO), *argv], cwd=REPO,
                          env=environment, capture_output=True, text=True, timeout=300, check=False)


def test_validate_refuses_the_cohort_only_objective_and_answers_the_misspelt_argument(tmp_path) -> None:
    site = _site(tmp_path / "site", misspelt=True)
    done = _fedclaims(site, tmp_path, "validate")
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    problems = [line for line in done.stderr.splitlines() if "sweeppaper" in line]
    spec = site / "sweeppaper" / "specs" / "sweeppaper-cohort.yaml"
    line = 1 + spec.read_text().splitlines().index("    objective: cohort_only")
    (refused,) = [p for p in problems if "overrides `train_cohort` but not `train`" in p]
    assert f"sweeppaper-cohort.yaml:{line}" in refused and "config.federation.objective" in refused
    (misspelt,) = [p for p in problems if "widht" in p]
    assert "observe.args.widht" in misspelt and "unknown field 'widht'; did you mean 'width'?" in misspelt
    assert "required field" not in done.stderr
    assert len(problems) == 2, problems


def test_validate_warns_that_the_template_kinds_accuracy_claims_get_no_learning_level(tmp_path) -> None:
    """The template declares no `learning`: its claims on accuracy are unleveled, and validate says so."""
    done = _fedclaims(_site(tmp_path / "site", misspelt=False), tmp_path, "validate")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (warning,) = [line for line in done.stdout.splitlines() if line.startswith("warning:")]
    assert ("experiment 'sweeppaper-damped' is of kind 'sweeppaper_width_sweep', which declares no `learning`"
            in warning and "its 1 accuracy-dependent claim (sweeppaper.half-width-learns) gets no learning level"
            in warning)


@pytest.mark.parametrize("execution, noted", [(None, True), ("sequential", False)])
def test_plan_says_once_that_the_train_only_objective_trains_one_client_at_a_time(tmp_path, execution,
                                                                                  noted) -> None:
    site = _site(tmp_path / "site", misspelt=False)
    if execution:
        spec = site / "sweeppaper" / "specs" / "sweeppaper-damped.yaml"
        text = spec.read_text().replace("    rounds: 1\n", f"    rounds: 1\n    client_execution: {execution}\n")
        spec.write_text(text)
    done = _fedclaims(site, tmp_path, "plan", "--paper", "sweeppaper", "--store", str(tmp_path / "store"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert notes == (["note: sweeppaper-damped: objective 'damped' overrides only `train`: under "
                      "`client_execution: batched` its clients train one at a time through it (the same method, "
                      "slower)"] if noted else [])
