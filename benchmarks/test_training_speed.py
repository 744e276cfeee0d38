"""Speed of one federated round: fedclaims' round loop against a plain per-client PyTorch loop.

Each group is one model at one width; its rows train the same clients on the same data with the
same batches and optimizer (benchmarks/plain_training.py), so pytest-benchmark's ratio columns
are fedclaims' speed-up. ``extra_info`` holds images (or sequences) per second, achieved
training GFLOP/s, that figure as a fraction of the fp32 matrix-product peak measured first in the
same session (``test_matmul_peak``), and, on the paired rows, the speed-up over the plain loop
measured in interleaved pairs (benchmarks/paired.py): before each of its rounds (warm-up
included), a paired row runs the plain loop's round, untimed by pytest-benchmark and timed by
hand, so that the machine's slow swings of speed fall on both alike. The paired rows are
fedclaims and a control, the plain loop paired with itself, which shows how far apart this
session measures identical code (``speedup_vs_plain``: the plain rounds' minimum time over the
row's; ``paired_speedup_median`` and ``paired_speedup_interval``: the median of the pairs'
ratios and its 95% interval; ``verdict``: faster or slower only beyond both 1 and the control).
Everything runs on one thread.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

from benchmarks.paired import PairedSpeedup, speed_verdict
from benchmarks.plain_training import (
    PlainCharLSTM,
    PlainConvNet,
    PlainSettings,
    plain_accuracy,
    plain_round,
    prefix_selection,
)
from methods.costs import training_flops
from methods.federated import ClientData, FederatedDataset, FederationConfig, initial_params, run_federation
from methods.federated.parts import Choice
from methods.federated.policies import CapPolicy
from methods.models.conv import ConvFamily
from methods.models.lstm import CharLSTMFamily
from methods.models.slicing import SliceableFamily

pytestmark = pytest.mark.benchmarks

SEED = 0
WIDTHS = (1.0, 0.5, 0.25)
MATMUL_SIZE = 1024
EVAL_BATCH_SIZE = 64
PAIRED_ROUNDS = 15
"""Timed pairs of a paired row in the full form: 15 puts the median's 95% interval between the
4th and 12th of the sorted ratios (96.5% coverage)."""
IMPLEMENTATIONS = ("plain", "control", "fedclaims")


@dataclass(frozen=True)
class Case:
    """One model family with its federation of synthetic clients, quick and full."""

    name: str
    family: Callable[[], SliceableFamily]
    plain: Callable[[dict[str, int]], torch.nn.Module]
    settings: PlainSettings
    clients: tuple[int, int]            # quick, full
    samples: tuple[int, int]            # per client: quick, full
    sample: Callable[[int, torch.Generator], tuple[torch.Tensor, torch.Tensor]]


def _images(n: int, g: torch.Generator):
    return torch.randn(n, 3, 32, 32, generator=g), torch.randint(0, 10, (n,), generator=g)


def _windows(n: int, g: torch.Generator):
    return torch.randint(0, 95, (n, 80), generator=g), torch.randint(0, 95, (n,), generator=g)


def _conv(hidden):
    return lambda sizes: PlainConvNet(3, 10, [sizes[f"block{i}"] for i in range(len(hidden))])


def _lstm(sizes):
    return PlainCharLSTM(95, 8, sizes["layer0"], 2)


CONV = PlainSettings(epochs=2, batch_size=32, lr=0.01, momentum=0.9, weight_decay=1e-4,
                     clip_norm=10.0)
TEXT = PlainSettings(epochs=1, batch_size=32, lr=0.1, momentum=0.9, weight_decay=1e-4,
                     clip_norm=5.0)
CASES = {
    "smoke CNN 16-32-64": Case("smoke CNN 16-32-64", lambda: ConvFamily(3, 10, [16, 32, 64]),
                               _conv([16, 32, 64]), CONV, (2, 10), (32, 120), _images),
    "paper CNN 64-128-256-512": Case(
        "paper CNN 64-128-256-512", lambda: ConvFamily(3, 10, [64, 128, 256, 512]),
        _conv([64, 128, 256, 512]), PlainSettings(1, 32, 0.01, 0.9, 1e-4, 10.0), (2, 10),
        (8, 32), _images),
    "char-LSTM 64": Case("char-LSTM 64", lambda: CharLSTMFamily(95, 8, 64, 2), _lstm, TEXT,
                         (2, 10), (16, 160), _windows),
    "char-LSTM 256": Case("char-LSTM 256", lambda: CharLSTMFamily(95, 8, 256, 2), _lstm, TEXT,
                          (2, 10), (16, 96), _windows),
}


@pytest.fixture(autouse=True)
def one_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(limits=1):
        yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def measured() -> dict:
    """The matmul peak measured first in this session, and each group's control."""
    return {}


def _federation(case: Case, full: bool) -> FederatedDataset:
    g = torch.Generator().manual_seed(SEED)
    clients = [ClientData(*case.sample(case.samples[full], g)) for _ in range(case.clients[full])]
    return FederatedDataset(clients, ClientData(*case.sample(8, g)), None, 10 if
                            case.sample is _images else 95)


def _config(case: Case, clients: int) -> FederationConfig:
    s = case.settings
    return FederationConfig(num_clients=clients, clients_per_round=clients, rounds=1,
                            local_epochs=s.epochs, batch_size=s.batch_size, lr=s.lr,
                            momentum=s.momentum, weight_decay=s.weight_decay,
                            clip_norm=s.clip_norm, policy=Choice.of(CapPolicy), extraction="prefix",
                            weighting="samples", eval_batch_size=EVAL_BATCH_SIZE)


def _fedclaims_round(case, family, data, width):
    caps = np.full(len(data.clients), width)
    return run_federation(family, data, _config(case, len(data.clients)), caps, SEED).final_params


def _plain_round(case, family, data, width):
    params = plain_round(family, case.plain, initial_params(family, SEED), data.clients, width,
                         case.settings, SEED)
    plain_accuracy(case.plain, family, params, data.test, EVAL_BATCH_SIZE)
    return params


@cache
def _flops_per_sample(case: str, width: float) -> float:
    """Training FLOPs per sample of the width-``width`` sub-model (counted on two samples)."""
    spec = CASES[case]
    family = spec.family()
    sizes = {g: len(u) for g, u in prefix_selection(family, width).items()}
    x, y = spec.sample(2, torch.Generator().manual_seed(1))
    return training_flops(family.build(sizes), x, y) / 2


def test_matmul_peak(benchmark, bench_scale, measured) -> None:
    """The machine's fp32 matrix-product rate on one thread: the denominator of every
    GFLOP/s fraction in this session."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(MATMUL_SIZE, MATMUL_SIZE, generator=g)
    b = torch.randn(MATMUL_SIZE, MATMUL_SIZE, generator=g)
    repeats = bench_scale.pick(3, 20)
    benchmark.group = "fp32 matmul peak, 1 thread"
    bench_scale.run(benchmark, lambda: [torch.mm(a, b) for _ in range(repeats)])
    peak = 2 * MATMUL_SIZE ** 3 * repeats / benchmark.stats.stats.min / 1e9
    measured["peak"] = peak
    benchmark.extra_info["gflops"] = round(peak, 2)
    assert peak > 0


class TimedCalls:
    """A function timed by hand at every call: the plain rounds interleaved with fedclaims'."""

    def __init__(self, function: Callable[[], object]) -> None:
        self.function = function
        self.seconds: list[float] = []

    def __call__(self) -> None:
        start = time.perf_counter()
        self.function()
        self.seconds.append(time.perf_counter() - start)


@pytest.mark.parametrize("case, width, implementation", [
    (case, width, implementation) for case in CASES for width in WIDTHS
    for implementation in IMPLEMENTATIONS])
def test_round(benchmark, bench_scale, measured, case: str, width: float,
               implementation: str) -> None:
    spec = CASES[case]
    family = spec.family()
    data = _federation(spec, bench_scale.full)
    run = _fedclaims_round if implementation == "fedclaims" else _plain_round
    paired = implementation != "plain"
    interleaved = TimedCalls(lambda: _plain_round(spec, family, data, width)) if paired else None
    benchmark.group = f"one round: {case}, width {width}"
    params = bench_scale.run(benchmark, lambda: run(spec, family, data, width), interleaved,
                             full_rounds=PAIRED_ROUNDS if paired else None)
    assert all(bool(torch.isfinite(t).all()) for t in params.values())

    seconds = benchmark.stats.stats.min
    samples = spec.settings.epochs * sum(len(c) for c in data.clients)
    info = benchmark.extra_info
    info["samples_per_s"] = round(samples / seconds, 1)
    if bench_scale.full:  # counting FLOPs takes seconds; the quick form only checks that it runs
        gflops = _flops_per_sample(case, width) * samples / seconds / 1e9
        info["gflops"] = round(gflops, 2)
        if "peak" in measured:
            info["fraction_of_peak"] = round(gflops / measured["peak"], 4)
    if interleaved is not None:
        plain = interleaved.seconds[bench_scale.warmup_rounds:]
        speedup = PairedSpeedup.of(plain, benchmark.stats.stats.data)
        info["speedup_vs_plain"] = round(min(plain) / seconds, 3)
        info["paired_speedup_median"] = round(speedup.median, 3)
        info["paired_speedup_interval"] = speedup.interval_text()
        if implementation == "control":
            info["role"] = "control"
            measured[("control", case, width)] = speedup
        else:
            info["verdict"] = speed_verdict(speedup, measured.get(("control", case, width)))


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("width", WIDTHS)
def test_fedclaims_round_equals_plain_loop(case: str, width: float) -> None:
    """Both rows of a group compute the same round (quick sizes, whatever the form)."""
    spec = CASES[case]
    family = spec.family()
    data = _federation(spec, full=False)
    ours = _fedclaims_round(spec, family, data, width)
    theirs = _plain_round(spec, family, data, width)
    for name, value in theirs.items():
        torch.testing.assert_close(ours[name], value, rtol=1e-4, atol=1e-5)
    moved = sum(int((ours[n] != v).sum()) for n, v in initial_params(family, SEED).items())
    assert moved > 0
