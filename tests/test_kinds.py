"""Every registered experiment kind, and a new one written in one file, through the same checks:
its example config validates, runs, and every metric, per-client quantity and plot it declares
reads the record. A new kind needs no edit here nor anywhere else in the harness."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from harness import cli
from harness.datasets.errors import DatasetUnavailable
from harness.kinds import kind, registered_kinds
from harness.kinds.base import ExperimentKind, NotApplicable
from harness.runners.context import RunContext
from harness.settings import default_cache_dir, scoped_code
from methods.plain import json_safe


def example_record(experiment_kind: ExperimentKind) -> dict:
    """The result of the kind's example run, as the results store keeps it (plain JSON); the data it
    reads come from the session's cache of decoded data, as every run's do."""
    assert experiment_kind.example is not None, f"kind {experiment_kind.name!r} declares no example"
    config = experiment_kind.config_model.model_validate(dict(experiment_kind.example.config))
    data = os.environ.get("FEDCLAIMS_DATA")
    context = RunContext(Path(data) if data else None, default_cache_dir() / "data", download=False)
    try:
        result = experiment_kind.module.run(config, 0, context)
    except DatasetUnavailable as missing:
        pytest.skip(f"the example of {experiment_kind.name!r} reads data not here: {str(missing).splitlines()[0]}")
    return json.loads(json.dumps(json_safe(result), allow_nan=False))


def read_everything(experiment_kind: ExperimentKind, record: dict) -> dict[str, float | str]:
    """Every metric of the record (a float, NaN allowed, or the reason it does not apply) after every
    per-client quantity and plot read it without error."""
    example = experiment_kind.example
    for name, quantity in experiment_kind.client_quantities.items():
        try:
            values = quantity.compute(record)
        except NotApplicable:
            continue
        assert all(isinstance(v, float) for v in values), f"client quantity {name} is not a list of floats"
    for plot in experiment_kind.plots.values():
        figure, axes = plt.subplots()
        try:
            plot.draw(axes, {"example": [record]}, {"example": "example"})
        except NotApplicable:
            pass
        finally:
            plt.close(figure)
    values: dict[str, float | str] = {}
    for name, metric in experiment_kind.metrics.items():
        given = example.args.get(name, metric.example_args or {})
        try:
            value = metric.compute(record, metric.args.model_validate(dict(given)))
        except NotApplicable as reason:
            values[name] = str(reason)
            continue
        assert isinstance(value, float), f"metric {name} gave {value!r}, not a float"
        values[name] = value
    return values


@pytest.mark.parametrize("name", sorted(registered_kinds()))
def test_every_registered_kind_validates_runs_and_reads_its_example(name: str) -> None:
    experiment_kind = kind(name)
    values = read_everything(experiment_kind, example_record(experiment_kind))
    numbers = [v for v in values.values() if isinstance(v, float)]
    assert numbers and any(math.isfinite(v) for v in numbers), f"no metric of {name} reads its example"


COIN_KIND = '''\
"""Coin flips: the share of heads in n flips of a coin whose bias the config sets."""
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from harness.kinds.base import ExperimentKind, KindExample, Metric
from methods.seeding import numpy_rng


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    bias: float = Field(ge=0.0, le=1.0)
    flips: int = Field(ge=1)


def run(config, seed, context):
    return {"heads": int((numpy_rng(seed, "flips").random(config.flips) < config.bias).sum()),
            "flips": config.flips}


COINS = ExperimentKind(
    name="coin_flips",
    description="The share of heads in a run of coin flips.",
    runner=__name__,
    evidence="analytic",
    metrics={"heads_share": Metric("heads / flips", lambda result, args: result["heads"] / result["flips"])},
    example=KindExample({"bias": 0.5, "flips": 100}),
)
'''

COIN_SPEC = """\
experiment: coins
paper: coins
title: a fair coin
kind: kinds/coins.py:COINS
config: {flips: 2000}
variants:
  fair: {label: fair coin, config: {bias: 0.5}}
profiles:
  smoke: {seeds: [0, 1, 2, 3, 4]}
"""

COIN_CLAIMS = """\
paper: coins
title: Coins
reference: a test
claims:
  - id: coins.fair-is-about-half
    statement: "A fair coin comes up heads about half the time."
    source: "§1"
    experiment: coins
    observe: {metric: heads_share, of: fair}
    expect: {smoke: {between: [0.45, 0.55]}}
"""


def test_a_new_kind_in_one_file_is_validated_run_and_reported(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "project"
    for folder, name, text in (("kinds", "coins.py", COIN_KIND), ("specs", "coins.yaml", COIN_SPEC),
                               ("claims", "coins.yaml", COIN_CLAIMS)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / name).write_text(text)
    with scoped_code(root):
        coins = kind("kinds/coins.py:COINS")
        values = read_everything(coins, example_record(coins))
    assert 0.3 < values["heads_share"] < 0.7
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FEDCLAIMS_WORKERS", "1")
    monkeypatch.chdir(root)
    assert cli.main(["--root", str(root), "report"]) == 0
    report = (root / "REPORT.md").read_text(encoding="utf-8")
    verdicts = json.loads((root / "REPORT.json").read_text(encoding="utf-8"))["verdicts"]
    (verdict,) = [v for v in verdicts if v["claim"] == "coins.fair-is-about-half"]
    assert verdict["status"] == "PASS" and "Coins" in report
