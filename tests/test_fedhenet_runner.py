"""The FedHENet runner end to end on tiny random 'images' with a stand-in feature extractor."""
from __future__ import annotations

import numpy as np
import pytest

from harness.datasets.arrays import ImageData
from harness.kinds import kind
from harness.runners import fedhenet as runner
from harness.runners import fedhenet_caches as caches
from harness.runners.context import RunContext
from methods.fedhenet.backbones import get_backbone, parameter_count

DIM = 24


def _tiny_data(_name, _locations) -> ImageData:
    rng = np.random.default_rng(0)
    train_y = np.repeat(np.arange(10), 30)
    test_y = np.repeat(np.arange(10), 10)
    # class-dependent mean so that a linear layer can learn something
    def images(labels):
        base = rng.integers(0, 120, size=(len(labels), 8, 8, 3))
        return (base + 12 * labels[:, None, None, None]).astype(np.uint8)
    return ImageData(images(train_y), train_y, images(test_y), test_y, tuple(str(c) for c in range(10)), "tiny")


def _fake_features(backbone, images, cache_dir, **_):
    projection = np.random.default_rng(1).standard_normal((images[0].size, DIM)).astype(np.float32)
    return (images.reshape(len(images), -1).astype(np.float32) / 255.0) @ projection / 8.0


@pytest.fixture
def context(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "load_dataset", _tiny_data)
    monkeypatch.setattr(caches, "cached_features", _fake_features)
    return RunContext(data_dir=None, cache_dir=tmp_path)


def _config(**overrides):
    base = {"data": {"train_samples": None, "test_samples": None}, "backbone": {"name": "efficientnet_lite0",
            "resolution": 32}, "partition": {"scheme": "one_class_per_client"}, "num_clients": 10,
            "ckks": {"poly_modulus_degree": 8192, "coeff_mod_bit_sizes": [60, 40, 40, 60]}}
    base.update(overrides)
    return runner.Config.model_validate(base)


@pytest.mark.parametrize("partition, clients", [({"scheme": "iid"}, 7), ({"scheme": "dirichlet", "alpha": 0.5}, 5),
                                                ({"scheme": "one_class_per_client"}, 10),
                                                ({"scheme": "one_class_per_client"}, 12)])
def test_federated_equals_centralised(context, partition, clients):
    record = runner.run(_config(partition=partition, num_clients=clients), 0, context)
    assert record["rounds"] == 1 and record["method"] == "fedhenet"
    assert record["max_abs_diff_to_centralised"] <= 1e-8
    assert record["prediction_agreement"] == 1.0
    assert record["accuracy"] == record["centralised_accuracy"]
    assert record["clients_used"] + record["clients_skipped"] == clients
    assert record["feature_dim"] == DIM and record["train_size"] == 300 and record["test_size"] == 100
    assert record["total_bytes"] == record["total_upload_bytes"] + record["total_download_bytes"]
    assert "weights" not in record and len(str(record)) < 5000
    fedhenet = kind("fedhenet")
    assert fedhenet.metrics["accuracy_gap_to_centralised"].compute(record, None) == 0.0


def test_encrypted_matches_plaintext(context):
    plain = runner.run(_config(), 0, context)
    enc = runner.run(_config(encrypted=True), 0, context)
    assert enc["accuracy"] == plain["accuracy"]
    assert enc["max_abs_diff_to_centralised"] < 1e-3
    assert enc["upload_bytes_per_client"] > enc["upload_bytes_per_client_plain"] == plain["upload_bytes_per_client"]
    metrics = kind("fedhenet").metrics
    assert metrics["encrypted_to_plain_payload_ratio"].compute(enc, None) > 1.0
    assert 0.0 < metrics["encryption_overhead_fraction"].compute(enc, None) < 1.0
    assert np.isnan(metrics["encryption_overhead_fraction"].compute(plain, None))


@pytest.mark.parametrize("method", ["fedavg", "fedprox"])
def test_baselines(context, method):
    record = runner.run(_config(method=method, rounds=2), 0, context)
    assert record["rounds"] == 2 and len(record["round_accuracy"]) == 2
    assert record["total_bytes"] == 2 * 4 * (DIM * 10 + 10) * 10 * 2
    lite0 = parameter_count(get_backbone("efficientnet_lite0"))
    assert record["backbone_parameters"] == lite0
    assert kind("fedhenet").metrics["total_bytes_full_network"].compute(record, None) == \
        2 * 4 * (lite0 + DIM * 10 + 10) * 10 * 2
    assert np.isnan(kind("fedhenet").metrics["max_abs_diff_to_centralised"].compute(record, None))


def test_config_rejects_encrypted_baseline():
    with pytest.raises(ValueError):
        _config(method="fedavg", encrypted=True)
    with pytest.raises(ValueError):
        _config(partition={"scheme": "dirichlet"})
