"""FedHENet's client statistics and server merge against the number of clients N.

Synthetic features of the smoke shape (D = 1280, C = 10, the smoke profile's 4,000 training
samples in all, split evenly over N clients; the quick form: D = 320, 1,000 samples), one
thread as in a run. "client statistics" is
every client's (U S, M) one after another; "server merge" is the TSQR merge of all U S and
the solve for W. N = 10 is each group's reference (the report's speed-up of N is N = 10's
time over N's), and every N's W must equal the centralised solution.
"""
from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from methods.fedhenet.rolann import centralised_solution, client_statistics, merge, solve

pytestmark = pytest.mark.benchmarks

CLASSES = 10
CLIENT_COUNTS = (10, 100, 500)


@pytest.fixture(scope="module")
def features(bench_scale) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    dimensions, total = bench_scale.pick((320, 1000), (1280, 4000))
    return rng.standard_normal((total, dimensions)).astype(np.float32), rng.integers(0, CLASSES, total)


@pytest.fixture(scope="module")
def centralised(features) -> np.ndarray:
    with threadpool_limits(1):
        return centralised_solution(*features, CLASSES)


def _split(features, clients: int) -> list[tuple[np.ndarray, np.ndarray]]:
    x, y = features
    return [(x[part], y[part]) for part in np.array_split(np.arange(len(y)), clients)]


def _all_statistics(parts):
    return [client_statistics(x, y, CLASSES) for x, y in parts]


def _merge_and_solve(stats) -> np.ndarray:
    return solve(*merge(stats))


def _describe(benchmark, clients: int, features) -> None:
    benchmark.extra_info.update(clients=clients, samples_per_client=len(features[1]) // clients)
    if clients == CLIENT_COUNTS[0]:
        benchmark.extra_info["role"] = "reference"


@pytest.mark.benchmark(group="FedHENet client statistics vs N (samples fixed)")
@pytest.mark.parametrize("clients", CLIENT_COUNTS)
def test_client_statistics(benchmark, bench_scale, features, clients) -> None:
    parts = _split(features, clients)
    with threadpool_limits(1):
        stats = bench_scale.run(benchmark, lambda: _all_statistics(parts))
    _describe(benchmark, clients, features)
    assert len(stats) == clients and sum(s.n for s in stats) == len(features[1])
    assert all(s.US.shape[0] == features[0].shape[1] + 1 for s in stats)


@pytest.mark.benchmark(group="FedHENet server merge and solve vs N (samples fixed)")
@pytest.mark.parametrize("clients", CLIENT_COUNTS)
def test_server_merge(benchmark, bench_scale, features, centralised, clients) -> None:
    with threadpool_limits(1):
        stats = _all_statistics(_split(features, clients))
        w = bench_scale.run(benchmark, lambda: _merge_and_solve(stats))
    _describe(benchmark, clients, features)
    np.testing.assert_allclose(w, centralised, rtol=1e-6, atol=1e-9)
