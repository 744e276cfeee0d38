"""bf16 autocast against fp32: one federated round of a tier's CNN, in interleaved pairs.

Each row runs one round of ``run_federation`` (10 clients in the full form, every one at full
width, the one-thread worker's setting) and, untimed by pytest-benchmark and timed by hand, the
same round in fp32 right before each of its own (benchmarks/paired.py). The `fp32` row is the
control (fp32 paired with itself); the `bf16` row's ``paired_speedup_median`` is the speed-up
issue 37 asks for (goal >= 1.8x on AMX). Skipped on a CPU with neither AMX nor AVX512-BF16, where
`federation.precision: bf16` is refused. The accuracy half of the question (same seeds, TOST
within 1 point) is `benchmarks/precision_equivalence.py`.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from benchmarks.paired import PairedSpeedup, speed_verdict
from benchmarks.plain_training import PlainSettings
from benchmarks.test_training_speed import (  # noqa: F401
    SEED,
    Case,
    TimedCalls,
    _config,
    _conv,
    _federation,
    _images,
    one_thread,
)
from methods.federated import run_federation
from methods.federated.precision import bf16_hardware
from methods.models.conv import ConvFamily

pytestmark = [pytest.mark.benchmarks,
              pytest.mark.skipif(bf16_hardware(torch.device("cpu")) is None,
                                 reason="this CPU has neither AMX nor AVX512-BF16")]

STEP = PlainSettings(epochs=1, batch_size=32, lr=0.01, momentum=0.9, weight_decay=1e-4, clip_norm=10.0)


def _tier_model(name: str, hidden: list[int], samples: tuple[int, int]) -> Case:
    return Case(name, lambda: ConvFamily(3, 10, hidden), _conv(hidden), STEP, (2, 10), samples, _images)


TIER_MODELS = {case.name: case for case in (
    _tier_model("FedRolex tier CNN 32-64-128-256", [32, 64, 128, 256], (32, 64)),
    _tier_model("paper CNN 64-128-256-512", [64, 128, 256, 512], (8, 32)))}
PAIRED_ROUNDS = 9


@pytest.fixture(scope="module")
def controls() -> dict:
    """Each model's control (fp32 paired with itself), measured before its bf16 row."""
    return {}


def _round(case: Case, family, data, precision: str):
    config = dataclasses.replace(_config(case, len(data.clients)), precision=precision)
    return run_federation(family, data, config, np.ones(len(data.clients)), SEED).final_params


@pytest.mark.parametrize("case", list(TIER_MODELS))
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_precision_round(benchmark, bench_scale, controls, case: str, precision: str) -> None:
    spec = TIER_MODELS[case]
    family = spec.family()
    data = _federation(spec, bench_scale.full)
    interleaved = TimedCalls(lambda: _round(spec, family, data, "fp32"))
    benchmark.group = f"one round, precision: {case}"
    params = bench_scale.run(benchmark, lambda: _round(spec, family, data, precision), interleaved,
                             full_rounds=PAIRED_ROUNDS)
    assert all(bool(torch.isfinite(t).all()) for t in params.values())
    speedup = PairedSpeedup.of(interleaved.seconds[bench_scale.warmup_rounds:], benchmark.stats.stats.data)
    info = benchmark.extra_info
    info["bf16_hardware"] = bf16_hardware(torch.device("cpu"))
    info["paired_speedup_median"] = round(speedup.median, 3)
    info["paired_speedup_interval"] = speedup.interval_text()
    if precision == "fp32":
        info["role"] = "control"
        controls[case] = speedup
    else:
        info["verdict"] = speed_verdict(speedup, controls.get(case))
