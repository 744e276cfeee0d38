"""Each method's whole pipeline from images: the baselines embed every batch, FedHENet embeds once."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from harness.kinds import kind
from harness.runners import fedhenet as runner
from methods.fedhenet import backbones
from methods.fedhenet.backbones import Backbone
from methods.fedhenet.baselines import LinearFLConfig, exchanged_bytes, run_linear_fl
from methods.fedhenet.features import extract_features
from methods.fedhenet.pipeline import fedhenet_from_images, linear_fl_from_images
from methods.fedhenet.protocol import run_fedhenet
from tests.test_fedhenet_runner import DIM, _config
from tests.test_fedhenet_runner import context as context  # the fixture, re-exported for pytest

FAKE = Backbone(name="fake", resolution=8, mean=(0.5,) * 3, std=(0.25,) * 3, feature_dim=DIM, weights_id="fake")


class CountingProjection(nn.Module):
    """A fixed random projection of the pixels that counts the images it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(3 * 8 * 8, DIM)
        with torch.no_grad():
            self.proj.weight.copy_(torch.from_numpy(np.random.default_rng(1).normal(size=(DIM, 192)) / 8.0))
            self.proj.bias.zero_()
        self.images = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.images += len(x)
        return self.proj(x.flatten(1))


def _images(seed: int, n: int, classes: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(classes), n // classes)
    x = (rng.integers(0, 100, size=(len(y), 8, 8, 3)) + 30 * y[:, None, None, None]).astype(np.uint8)
    return x, y


def _clients(k: int = 3):
    x, y = _images(0, 96)
    parts = np.array_split(np.arange(len(y)), k)
    return [x[p] for p in parts], [y[p] for p in parts]


def test_baseline_from_images_embeds_every_batch_and_trains_as_on_features():
    cx, cy = _clients()
    tx, ty = _images(1, 40)
    config = LinearFLConfig(rounds=3, local_epochs=2, batch_size=10, seed=5)
    model = CountingProjection()
    from_images = linear_fl_from_images(FAKE, model, cx, cy, tx, ty, 4, config)
    assert model.images == config.rounds * (config.local_epochs * sum(map(len, cy)) + len(ty))

    features = [extract_features(FAKE, x, model=model) for x in cx]
    on_features = run_linear_fl(features, cy, extract_features(FAKE, tx, model=model), ty, 4, config)
    assert np.allclose(from_images.weight, on_features.weight, atol=1e-5)
    assert from_images.round_accuracy == on_features.round_accuracy
    assert from_images.bytes_sent == on_features.bytes_sent == exchanged_bytes(DIM * 4 + 4, 3, 3)


def test_fedhenet_from_images_embeds_once_and_times_the_extraction():
    cx, cy = _clients()
    tx, ty = _images(1, 40)
    model = CountingProjection()
    out = fedhenet_from_images(FAKE, model, cx, cy, tx, ty, 4, batch_size=10, encrypted=False)
    assert model.images == sum(map(len, cy)) + len(ty)
    assert out["pipeline_seconds"] >= out["extraction_seconds"] > 0
    assert out["pipeline_seconds"] >= out["extraction_seconds"] + out["seconds"]["total"]
    reference = run_fedhenet([extract_features(FAKE, x, model=model) for x in cx], cy,
                             extract_features(FAKE, tx, model=model), ty, 4, encrypted=False)
    assert out["accuracy"] == reference["accuracy"]


@pytest.fixture
def fake_backbone(monkeypatch):
    monkeypatch.setattr(runner, "get_backbone", lambda name, resolution: FAKE)
    monkeypatch.setattr(runner, "load_model", lambda backbone: CountingProjection())
    monkeypatch.setattr(runner, "parameter_count", lambda backbone: 1000)


def test_runner_from_images_records_pipeline_seconds_and_full_network_bytes(context, fake_backbone):
    metrics = kind("fedhenet").metrics
    avg = runner.run(_config(method="fedavg", rounds=2, pipeline="from_images"), 0, context)
    assert avg["pipeline_seconds"] > 0 and avg["pipeline"] == "from_images"
    assert math.isnan(metrics["wall_seconds"].compute(avg, None))
    assert metrics["pipeline_seconds"].compute(avg, None) == avg["pipeline_seconds"]
    assert avg["total_bytes_full_network"] == exchanged_bytes(1000 + DIM * 10 + 10, 10, 2)
    assert metrics["total_bytes_full_network"].compute(avg, None) > metrics["total_bytes"].compute(avg, None)

    enc = runner.run(_config(encrypted=True, pipeline="from_images"), 0, context)
    assert 0 < metrics["pipeline_encryption_overhead_fraction"].compute(enc, None) < \
        metrics["pipeline_encryption_overhead_fraction_with_context"].compute(enc, None) < 1
    assert math.isnan(metrics["encryption_overhead_fraction"].compute(enc, None))
    assert math.isnan(metrics["max_abs_diff_to_centralised"].compute(enc, None))
    assert enc["coordinator"]["decrypted"] is False
    assert metrics["total_bytes_full_network"].compute(enc, None) == enc["total_bytes"]


def test_cached_runs_have_no_pipeline_seconds(context):
    record = runner.run(_config(method="fedavg", rounds=1), 0, context)
    assert math.isnan(kind("fedhenet").metrics["pipeline_seconds"].compute(record, None))
    assert record["wall_seconds"] > 0


def test_parameter_counts_are_the_extractors_without_classifier():
    lite = backbones.get_backbone("efficientnet_lite0")
    assert backbones.parameter_count(lite) == sum(p.numel() for p in backbones.load_model(lite).parameters())
    assert backbones.parameter_count(backbones.get_backbone("resnet18")) == 11_689_512 - (512 * 1000 + 1000)


def test_runner_from_images_meters_energy_and_the_fraction_saved_against_a_reference(context, fake_backbone):
    metrics = kind("fedhenet").metrics
    avg = runner.run(_config(method="fedavg", rounds=2, pipeline="from_images"), 0, context)
    assert avg["pipeline_energy_joules"] > 0 and avg["energy_source"] in ("rapl", "cpu-time-proxy")
    assert avg["pipeline_cpu_seconds"] > 0
    assert math.isnan(metrics["energy_saved_fraction"].compute(avg, None))

    reference = {"pipeline_seconds": avg["pipeline_seconds"], "pipeline_energy_joules": avg["pipeline_energy_joules"]}
    enc = runner.run(_config(encrypted=True, pipeline="from_images", reference=reference), 0, context)
    assert metrics["energy_saved_fraction"].compute(enc, None) == \
        1.0 - enc["pipeline_energy_joules"] / avg["pipeline_energy_joules"]
    assert metrics["pipeline_seconds_saved_fraction"].compute(enc, None) == \
        1.0 - enc["pipeline_seconds"] / avg["pipeline_seconds"]
    with pytest.raises(ValueError, match="from images"):
        _config(encrypted=True, reference=reference)
    with pytest.raises(ValueError, match="not resolved"):
        runner.run(_config(pipeline="from_images", reference={"pipeline_seconds": 1.0, "pipeline_energy_joules": {
            "match": "fedavg", "metric": "pipeline_energy_joules"}}), 0, context)


def test_a_loaded_backbone_is_frozen(monkeypatch):
    monkeypatch.setitem(backbones._LOADERS, "resnet18", lambda: nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)))
    model = backbones.load_model(backbones.get_backbone("resnet18", 32))
    assert not model.training
    assert not any(p.requires_grad for p in model.parameters())
