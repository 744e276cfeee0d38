"""Precision as a setting: bf16 autocast runs the clients' forward passes in bf16 on both execution
paths, fp32 leaves runs (and their keys) as they were, and a device without bf16 is refused."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from harness.runners.federated import Federation
from methods.federated import precision
from methods.federated.objectives import LocalSettings, train_local
from methods.federated.precision import Precision, check_supported, forward_precision
from tests.test_batched_clients import _train_both, conv_family, federation

BF16_HERE = precision.bf16_hardware(torch.device("cpu")) is not None
needs_bf16 = pytest.mark.skipif(not BF16_HERE, reason="this CPU has neither AMX nor AVX512-BF16")

SETTINGS = LocalSettings(epochs=2, batch_size=4, lr=0.05, momentum=0.9, weight_decay=1e-2, clip_norm=0.5)


def test_fp32_is_left_out_of_a_runs_config_and_bf16_is_kept() -> None:
    assert "precision" not in Federation().model_dump(mode="json", exclude_none=False)
    assert "precision" not in Federation(precision="fp32").model_dump(mode="json", exclude_none=False)
    assert Federation(precision="bf16").model_dump(mode="json")["precision"] == "bf16"
    assert Federation(precision="bf16").method().precision == "bf16"
    with pytest.raises(ValueError, match="fp16"):
        Federation(precision="fp16")


def test_bf16_is_refused_where_the_device_has_no_bf16_hardware(monkeypatch) -> None:
    monkeypatch.setattr(precision, "bf16_hardware", lambda device: None)
    check_supported("fp32", torch.device("cpu"))
    with pytest.raises(ValueError, match="AMX or AVX512-BF16.*fp32"):
        check_supported("bf16", torch.device("cpu"))


def _logit_dtypes(mode: Precision) -> set[torch.dtype]:
    family = conv_family()
    model = family.build(generator=torch.Generator().manual_seed(0))
    seen: set[torch.dtype] = set()
    model.register_forward_hook(lambda module, inputs, output: seen.add(output.dtype))
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    data = federation(family, [8]).clients[0]
    train_local(model, start, data, dataclasses.replace(SETTINGS, precision=mode), torch.Generator().manual_seed(1))
    return seen


@needs_bf16
def test_bf16_runs_the_forward_pass_in_bf16_and_fp32_does_not() -> None:
    assert _logit_dtypes(Precision.BF16) == {torch.bfloat16}
    assert _logit_dtypes(Precision.FP32) == {torch.float32}


@needs_bf16
def test_the_cohort_trainer_follows_train_local_under_bf16() -> None:
    sizes = [5, 16, 9, 4]
    bf16 = dataclasses.replace(SETTINGS, precision=Precision.BF16)
    reference, batched = _train_both(conv_family(), 0.5, sizes, bf16)
    _, fp32 = _train_both(conv_family(), 0.5, sizes, SETTINGS)
    for ref, got, full in zip(reference, batched, fp32):
        assert got.mean_loss == pytest.approx(ref.mean_loss, rel=2e-2)
        assert got.mean_loss != full.mean_loss  # bf16 arithmetic did run
        for name, value in ref.update.items():
            torch.testing.assert_close(got.update[name], value, rtol=5e-2, atol=5e-3)
            assert got.update[name].dtype == torch.float32


def test_fp32_forward_precision_is_plain_fp32() -> None:
    with forward_precision("fp32", torch.device("cpu")):
        assert not torch.is_autocast_enabled("cpu")
