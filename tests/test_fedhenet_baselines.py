"""Last-layer FedAvg / FedProx baselines on frozen features."""
from __future__ import annotations

import numpy as np

from methods.fedhenet.baselines import LinearFLConfig, run_fedavg, run_fedprox, run_linear_fl

C, D = 4, 16


def _separable(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    centers = 4.0 * np.eye(C, D)
    return (centers[y] + 0.5 * rng.normal(size=(n, D))).astype(np.float32), y


def _clients(k: int = 5) -> tuple[list[np.ndarray], list[np.ndarray]]:
    x, y = _separable(0, 1000)
    parts = np.array_split(np.arange(len(y)), k)
    return [x[p] for p in parts], [y[p] for p in parts]


def test_fedavg_learns_separable_features() -> None:
    cf, cl = _clients()
    xt, yt = _separable(1, 500)
    result = run_fedavg(cf, cl, xt, yt, C, rounds=10, seed=0)
    assert len(result.round_accuracy) == 10
    assert result.round_accuracy[-1] >= 0.97
    assert result.bytes_sent == 10 * 5 * 2 * 4 * (D * C + C)
    assert result.wall_seconds > 0


def test_deterministic_for_a_seed() -> None:
    cf, cl = _clients()
    xt, yt = _separable(1, 200)
    a = run_fedavg(cf, cl, xt, yt, C, rounds=3, seed=7)
    b = run_fedavg(cf, cl, xt, yt, C, rounds=3, seed=7)
    c = run_fedavg(cf, cl, xt, yt, C, rounds=3, seed=8)
    assert a.round_accuracy == b.round_accuracy
    assert np.array_equal(a.weight, b.weight) and np.array_equal(a.bias, b.bias)
    assert not np.array_equal(a.weight, c.weight)


def test_fedprox_differs_from_fedavg_and_skips_empty_clients() -> None:
    cf, cl = _clients()
    cf.append(np.zeros((0, D), dtype=np.float32))
    cl.append(np.zeros(0, dtype=int))
    xt, yt = _separable(1, 200)
    avg = run_fedavg(cf, cl, xt, yt, C, rounds=2, seed=0)
    prox = run_fedprox(cf, cl, xt, yt, C, mu=1.0, rounds=2, seed=0)
    assert avg.clients_used == prox.clients_used == 5
    assert not np.allclose(avg.weight, prox.weight)
    assert prox.round_accuracy[-1] >= 0.9
    same = run_linear_fl(cf, cl, xt, yt, C, LinearFLConfig(rounds=2, mu=0.0, seed=0))
    assert np.array_equal(same.weight, avg.weight)
