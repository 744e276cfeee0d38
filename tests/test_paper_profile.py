"""The paper profile, tried on the CPU: every run configuration of it is built and trained for one round on
a handful of samples (`harness.running.trial`: the models, methods and federations as the paper profile
has them), and the models it builds have the sizes the papers state. Runs whose data (or pretrained
weights) are not on this machine are named, not hidden."""
from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

import pytest
import torch

from harness.kinds import kind
from harness.kinds.base import NotApplicable
from harness.loading.catalog import load_project
from harness.runners.model_config import build_model_family
from harness.running.store import ResultStore
from harness.running.trial import TrialOutcome, missing_name, run_trials
from harness.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings.from_env(ROOT, store_dir=tmp_path_factory.mktemp("store"), download=False,
                             workers=min(2, os.cpu_count() or 1), executor="processes", device="cpu", threads=1)


@pytest.fixture(scope="module")
def trials(settings, tmp_path_factory) -> list[TrialOutcome]:
    catalog = load_project(settings)
    return run_trials(catalog, "paper", settings, ResultStore(tmp_path_factory.mktemp("trials")))


@pytest.mark.integration
def test_every_paper_run_trains_one_round_or_names_what_is_missing(trials) -> None:
    failed = [f"{o.label}: {o.detail}" for o in trials if o.status not in ("ok", "unavailable")]
    assert not failed, "paper-profile runs that fail at their first round:\n" + "\n".join(failed)
    ran = {o.experiment for o in trials if o.status == "ok"}
    assert ran, "no paper-profile run had its data here"
    missing = sorted({missing_name(o.detail) for o in trials if o.status == "unavailable"})
    if missing:
        warnings.warn(f"paper profile: {sum(o.status == 'unavailable' for o in trials)} of {len(trials)} runs not "
                      f"tried here, for lack of: {'; '.join(missing)}", stacklevel=1)


@pytest.mark.integration
def test_every_paper_record_is_valid_and_its_loss_finite(trials) -> None:
    for outcome in trials:
        if outcome.status != "ok":
            continue
        record = json.loads(json.dumps(outcome.record, allow_nan=False))
        experiment_kind = kind(record["kind"])
        example = experiment_kind.example
        for name, metric in experiment_kind.metrics.items():
            given = example.args.get(name, metric.example_args or {}) if example else (metric.example_args or {})
            try:
                value = metric.compute(record["result"], metric.args.model_validate(dict(given)))
            except NotApplicable:
                continue
            assert isinstance(value, float), f"{outcome.label}: metric {name} gave {value!r}"
        for name in ("final_loss", experiment_kind.learning.metric if experiment_kind.learning else None):
            if name in experiment_kind.metrics:
                value = experiment_kind.metrics[name].compute(record["result"], experiment_kind.metrics[name].args())
                assert math.isfinite(value), f"{outcome.label}: {name} is {value} after one round"


def _paper_models(experiment: str) -> list:
    catalog = load_project(Settings.from_env(ROOT))
    spec = catalog.specs[experiment]
    models = {spec.resolve(v, "paper").model.model_dump_json(): spec.resolve(v, "paper").model
              for v in spec.spec.variants}
    return list(models.values())


def _convs(net: torch.nn.Module) -> list[torch.nn.Conv2d]:
    return [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]


@pytest.mark.parametrize("experiment, in_channels, classes", [("hasfl-cifar10", 3, 10), ("hasfl-emnist", 1, 62)])
def test_hasfl_image_model_is_the_papers_cnn(experiment: str, in_channels: int, classes: int) -> None:
    """HAS-FL §4.1: HeteroFL's CNN, 3x3 convolutions of 64-128-256-512 channels and a linear classifier,
    on CIFAR-10 (3 x 32 x 32, 10 classes) and EMNIST (1 x 28 x 28, 62 classes)."""
    (model,) = _paper_models(experiment)
    net = build_model_family(model).build()
    convs = _convs(net)
    assert [c.out_channels for c in convs] == [64, 128, 256, 512]
    assert all(c.kernel_size == (3, 3) for c in convs) and convs[0].in_channels == in_channels
    (head,) = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    assert (head.in_features, head.out_features) == (512, classes)


def test_hasfl_text_model_is_the_papers_lstm() -> None:
    """HAS-FL §4.1: a two-layer LSTM with 256 hidden units per layer, an 8-dimensional character embedding,
    95 symbols."""
    (model,) = _paper_models("hasfl-shakespeare")
    net = build_model_family(model).build()
    (lstm,) = [m for m in net.modules() if isinstance(m, torch.nn.LSTM)]
    (embedding,) = [m for m in net.modules() if isinstance(m, torch.nn.Embedding)]
    (head,) = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    assert (lstm.num_layers, lstm.hidden_size, lstm.input_size) == (2, 256, 8)
    assert (embedding.num_embeddings, embedding.embedding_dim) == (95, 8)
    assert (head.in_features, head.out_features) == (256, 95)


def test_fedrolex_model_is_preresnet18() -> None:
    """FedRolex §5 (after HeteroFL): a pre-activation ResNet-18 of stage widths 64-128-256-512 on CIFAR-10:
    a 3x3 stem, 4 stages of 2 basic blocks (16 3x3 convolutions; 1x1 projections where the width or stride
    changes) and a linear classifier, the 18 weight layers of its name; 11.2 M parameters, the size given for
    this network on CIFAR-10."""
    models = _paper_models("fedrolex-cifar10")
    full = [m for m in models if m.hidden == [64, 128, 256, 512]]
    assert len(full) == 1 and all(m.arch == "preresnet18" for m in models)
    net = build_model_family(full[0]).build()
    threes = [c for c in _convs(net) if c.kernel_size == (3, 3)]
    ones = [c for c in _convs(net) if c.kernel_size == (1, 1)]
    assert len(threes) == 17 and len(ones) == 3
    assert sorted({c.out_channels for c in threes}) == [64, 128, 256, 512]
    (head,) = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    assert (head.in_features, head.out_features) == (512, 10)
    assert round(sum(p.numel() for p in net.parameters()) / 1e6, 1) == 11.2


def test_fedhenet_paper_backbone_is_resnet18_at_224_px() -> None:
    """FedHENet §3: a frozen ImageNet ResNet-18 (torchvision's, 11,689,512 parameters with its classifier)
    whose 512-d features at 224 px feed the closed-form output layer. Built without its weights, which are
    a download."""
    from methods.fedhenet.backbones import _feature_architecture, get_backbone, parameter_count
    catalog = load_project(Settings.from_env(ROOT))
    backbones = {(e, v): catalog.specs[e].resolve(v, "paper").backbone for e in catalog.specs
                 if catalog.specs[e].spec.paper == "fedhenet" and catalog.specs[e].kind.name == "fedhenet"
                 for v in catalog.specs[e].spec.variants}
    assert backbones and {(b.name, b.resolution) for b in backbones.values()} == {("resnet18", 224)}
    backbone = get_backbone("resnet18", 224)
    net = _feature_architecture("resnet18").eval()
    with torch.no_grad():
        features = net(torch.zeros(2, 3, 224, 224))
    assert features.shape == (2, backbone.feature_dim) == (2, 512)
    assert parameter_count(backbone) + 512 * 1000 + 1000 == 11_689_512


def test_the_trial_command_tries_one_experiment_and_writes_nothing(tmp_path: Path, capsys) -> None:
    from harness import cli
    written = ROOT / "report" / "trial-paper.json"
    before = written.read_text() if written.exists() else None
    assert cli.main(["--root", str(ROOT), "trial", "--profile", "paper", "--experiment", "hasfl-allocation-rule",
                     "--trial-store", str(tmp_path / "trials"), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "8 trial runs: 8 ok" in out and "hasfl-allocation-rule/tier-0.75" in out
    assert (written.read_text() if written.exists() else None) == before
    assert cli.main(["--root", str(ROOT), "trial", "--profile", "papr", "--trial-store", str(tmp_path)]) == 2
