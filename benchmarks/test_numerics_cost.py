"""What a portable-numerics mode would cost: one federated round of the smoke CNN and of the
char-LSTM with the kernels this machine selects, against the same round with the kernels pinned to
a common older code path (`harness.numerics.simulated_machine`: on an AVX-512 machine, AVX2 for
ATen, oneDNN, MKL and OpenBLAS).

Pins take effect when the libraries load, so each row trains in its own worker process, started
with or without them before the benchmark; the benchmark times one round trip (a round) and both
rows of a group run in one session, so their ratio is the cost. The worker returns a digest of the
round's parameters: the two rows compute the same round in different bits.
"""
from __future__ import annotations

import hashlib
import multiprocessing
import os
from contextlib import contextmanager

import pytest

from harness.numerics import PIN_VARIABLES, numerics, simulated_machine

pytestmark = pytest.mark.benchmarks

CASES = ("smoke CNN 16-32-64", "char-LSTM 64")


def _serve(connection, case: str, full: bool) -> None:
    """A worker: on each request, one round of `case` on one thread; replies with a parameter digest."""
    import torch

    from benchmarks.test_training_speed import CASES as MODELS
    from benchmarks.test_training_speed import _fedclaims_round, _federation
    torch.set_num_threads(1)
    spec = MODELS[case]
    family, data = spec.family(), _federation(spec, full)
    connection.send(torch.backends.cpu.get_cpu_capability())
    while connection.recv() == "round":
        params = _fedclaims_round(spec, family, data, 1.0)
        digest = hashlib.sha256(b"".join(p.numpy().tobytes() for p in params.values())).hexdigest()
        connection.send(digest)


@contextmanager
def _environment(pins: dict[str, str]):
    saved = {name: os.environ.get(name) for name in PIN_VARIABLES}
    for name in PIN_VARIABLES:
        os.environ.pop(name, None)
    os.environ.update(pins)
    try:
        yield
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value


@contextmanager
def _worker(case: str, full: bool, pins: dict[str, str]):
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    with _environment(pins):
        process = context.Process(target=_serve, args=(theirs, case, full), daemon=True)
        process.start()
    try:
        yield ours, ours.recv()
    finally:
        ours.send("stop")
        process.join(timeout=30)


PINS = simulated_machine(numerics())


@pytest.fixture(scope="module")
def digests() -> dict:
    return {}


@pytest.mark.skipif(PINS is None, reason="no kernel pins known to simulate another machine here")
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kernels", ["this machine's", "pinned (portable)"])
def test_round_with_pinned_kernels(benchmark, bench_scale, digests, case: str, kernels: str) -> None:
    pins = PINS if kernels.startswith("pinned") else {}
    with _worker(case, bench_scale.full, pins) as (connection, capability):
        benchmark.group = f"numerics: one round of {case}, kernels of this machine vs pinned"
        benchmark.extra_info["aten_capability"] = capability
        digest = bench_scale.run(benchmark, lambda: (connection.send("round"), connection.recv())[1])
    digests[(case, kernels)] = digest
    assert len(digest) == 64
