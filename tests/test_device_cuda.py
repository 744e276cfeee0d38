"""The GPU path (`--device cuda`): a short federated run of the real runner on CUDA, where CUDA exists."""
from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import pytest
import torch

from harness.loading.catalog import load_catalog
from harness.running.execution import _settings_dict, run_request
from harness.running.planning import request_for
from harness.settings import Settings

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _short(request) -> dict:
    """The smoke FedAvg run of hasfl-cifar10 cut to two rounds of one epoch over 32 images a client."""
    config = request.config
    return {**asdict(request), "config": {
        **config,
        "data": {**config["data"], "max_train_per_client": 32, "test_samples": 200, "calibration_samples": 64},
        "federation": {**config["federation"], "rounds": 2, "local_epochs": 1, "eval_every": 1}}}


def _without_timing(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "wall_time_s"}


def test_short_federated_run_on_cuda_is_deterministic_and_keyed_by_device(tmp_path) -> None:
    catalog = load_catalog(REPO / "claims", REPO / "specs", REPO)
    cpu = Settings.from_env(REPO, store_dir=tmp_path / "store", device="cpu", workers=1)
    cuda = replace(cpu, device="cuda")
    on_cpu = request_for(catalog, "hasfl-cifar10", "fedavg", 0, "smoke", cpu)
    on_cuda = request_for(catalog, "hasfl-cifar10", "fedavg", 0, "smoke", cuda)
    assert on_cuda.key != on_cpu.key and on_cuda.config == on_cpu.config

    options = _settings_dict(cuda)
    first = run_request(_short(on_cuda), options)
    if first["status"] == "unavailable":
        pytest.skip(f"CIFAR-10 is not available here: {first['error']['message']}")
    assert first["status"] == "ok", first["error"]
    assert first["provenance"]["device"] == "cuda"
    result = first["result"]
    assert result["rounds_completed"] == 2 and not result["diverged"]
    assert 0.0 <= result["final_accuracy"] <= 1.0
    second = run_request(_short(on_cuda), options)
    assert _without_timing(second["result"]) == _without_timing(result)
