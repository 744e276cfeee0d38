"""FedAvg end to end: fedclaims' round loop against Flower's simulation engine, same federation.

Both train the smoke CNN (16-32-64) from the same initial weights on the same clients' images,
every client in every round, with the same local SGD (momentum, weight decay, clipping, decayed
learning rate) and mini-batch order, and average updates weighted by sample counts. Both get
one core: fedclaims one single-thread process (as a run of a sweep, whose cores go to parallel
runs), Flower one single-thread client actor. Flower's time includes its Ray start and
shut-down, as a user's does. Flower is the group's reference: fedclaims' speed-up is Flower's
time over its own. The Flower half needs the `bench` extra (`flwr[simulation]`) and is skipped
without it.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from fedavg_federation import FedAvgSetup, build_federation
from threadpoolctl import threadpool_limits

from methods.federated import FederationResult, initial_params, run_federation

pytestmark = pytest.mark.benchmarks

GROUP = "FedAvg end to end: fedclaims vs Flower simulation"
CORES = 1


@pytest.fixture(scope="module")
def setup(bench_scale) -> FedAvgSetup:
    return bench_scale.pick(FedAvgSetup(clients=10, per_client=40, rounds=2, local_epochs=1),
                            FedAvgSetup(clients=10, per_client=250, rounds=10))


@pytest.fixture(scope="module")
def federation(setup):
    return build_federation(setup)


def _fedclaims(setup: FedAvgSetup, data) -> FederationResult:
    previous = torch.get_num_threads()
    torch.set_num_threads(CORES)
    try:
        with threadpool_limits(CORES):
            return run_federation(setup.family(), data, setup.federation_config(), np.ones(setup.clients), setup.seed)
    finally:
        torch.set_num_threads(previous)


def _distance(params: dict[str, torch.Tensor], reference: dict[str, torch.Tensor]) -> float:
    """L2 distance of two parameter sets over all coordinates, relative to the reference's norm."""
    squared = sum(float(((params[n] - reference[n]).double() ** 2).sum()) for n in reference)
    return (squared / sum(float((reference[n].double() ** 2).sum()) for n in reference)) ** 0.5


def _describe(benchmark, setup: FedAvgSetup, source: str) -> None:
    benchmark.extra_info.update(images=source, clients=setup.clients, images_per_client=setup.per_client,
                                rounds=setup.rounds, local_epochs=setup.local_epochs, cores=CORES)


@pytest.mark.benchmark(group=GROUP)
def test_fedavg_fedclaims(benchmark, bench_scale, setup, federation) -> None:
    data, source = federation
    result = bench_scale.run(benchmark, lambda: _fedclaims(setup, data))
    _describe(benchmark, setup, source)
    assert result.rounds_completed == setup.rounds and not result.diverged
    assert all(r.clients == list(range(setup.clients)) and r.widths == [1.0] * setup.clients for r in result.history)


@pytest.mark.benchmark(group=GROUP)
def test_fedavg_flower(benchmark, bench_scale, setup, federation, tmp_path) -> None:
    pytest.importorskip("flwr")
    pytest.importorskip("ray")
    from flower_fedavg import run_flower_fedavg

    data, source = federation
    initial = initial_params(setup.family(), setup.seed)
    params, accuracy = bench_scale.run(
        benchmark, lambda: run_flower_fedavg(setup, data, initial, tmp_path, CORES))
    _describe(benchmark, setup, source)
    benchmark.extra_info["role"] = "reference"

    # Float sums in another order (numpy averaging, another process) drift apart over the
    # rounds; the same computation stays within 1% of the distance training moved the weights.
    reference = _fedclaims(setup, data)
    assert set(params) == set(reference.final_params)
    assert _distance(params, reference.final_params) < 0.01 * _distance(initial, reference.final_params)
    assert abs(accuracy - reference.final_accuracy) <= 0.01
