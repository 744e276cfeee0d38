"""ROLANN: the federated merge reproduces the centralised closed-form solution exactly."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from methods.fedhenet import rolann

D, C, N = 20, 5, 600


def _data(seed: int = 0, n: int = N, d: int = D) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    x = rng.normal(size=(C, d))[y] + rng.normal(size=(n, d))
    return x, y


def _split(kind: str, y: np.ndarray, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    if kind == "iid":
        return np.array_split(rng.permutation(len(y)), k)
    if kind == "dirichlet":
        parts: list[list[int]] = [[] for _ in range(k)]
        for c in range(C):
            idx = rng.permutation(np.flatnonzero(y == c))
            cuts = (np.cumsum(rng.dirichlet(np.full(k, 0.3)))[:-1] * len(idx)).astype(int)
            for client, chunk in enumerate(np.split(idx, cuts)):
                parts[client].extend(chunk.tolist())
        return [np.array(p, dtype=int) for p in parts]
    # one class per client: client j holds only class j % C (classes beyond k go unused)
    owners = [np.flatnonzero(np.arange(k) % C == c) for c in range(C)]
    parts = [np.array([], dtype=int) for _ in range(k)]
    for c in range(C):
        if len(owners[c]):
            for j, chunk in zip(owners[c], np.array_split(np.flatnonzero(y == c), len(owners[c]))):
                parts[j] = chunk
    return parts


def _reference(x: np.ndarray, y: np.ndarray, weighting: str, lam: float = 0.0) -> np.ndarray:
    """Independent weighted least squares / ridge, class by class."""
    xa = rolann.augment(x)
    t, d = rolann.targets(y, C)
    f2 = rolann.weights_f(t, d, weighting) ** 2
    cols = []
    for c in range(C):
        a = xa * np.sqrt(f2[:, c])
        b = np.sqrt(f2[:, c]) * d[:, c]
        if lam == 0.0:
            cols.append(np.linalg.lstsq(a.T, b, rcond=None)[0])
        else:
            cols.append(np.linalg.solve(a @ a.T + lam * np.eye(len(a)), a @ b))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("weighting", rolann.WEIGHTINGS)
@pytest.mark.parametrize("num_clients", [2, 10, 50])
@pytest.mark.parametrize("kind", ["iid", "dirichlet", "one_class"])
def test_federated_equals_centralised(kind: str, num_clients: int, weighting: str) -> None:
    x, y = _data()
    parts = _split(kind, y, num_clients, np.random.default_rng(1))
    used = np.concatenate(parts)
    stats = [rolann.client_statistics(x[p], y[p], C, weighting) for p in parts]
    if num_clients == 50:
        assert min(s.n for s in stats) < D + 1  # some clients hold fewer samples than features
    w_fed = rolann.solve(*rolann.merge(stats))
    w_central = rolann.centralised_solution(x[used], y[used], C, weighting)
    assert np.abs(w_fed - w_central).max() <= 1e-8
    assert np.abs(w_fed - _reference(x[used], y[used], weighting)).max() <= 1e-8


def test_logistic_weighting_is_constant_and_code_variant_weights_negatives_4x() -> None:
    t, d = rolann.targets(np.array([0, 1, 2]), C)
    f = rolann.weights_f(t, d, "logistic")
    assert np.allclose(f, 0.0475)
    g2 = rolann.weights_f(t, d, "fedhenet_code") ** 2
    assert g2[0, 1] / g2[0, 0] == pytest.approx(4.11, abs=0.01)
    x, y = _data(n=50)
    assert rolann.client_statistics(x, y, C, "logistic").US.shape == (D + 1, D + 1)
    assert rolann.client_statistics(x, y, C, "fedhenet_code").US.shape == (C, D + 1, D + 1)


@pytest.mark.parametrize("weighting", rolann.WEIGHTINGS)
def test_no_n_by_n_matrix(weighting: str) -> None:
    x, y = _data(n=20_000)
    tracemalloc.start()
    stats = rolann.client_statistics(x, y, C, weighting)
    w = rolann.solve(*rolann.merge([stats]))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 64 * 2**20  # a dense 20000 x 20000 float64 matrix alone is 3.2 GB
    assert np.isfinite(w).all()


def test_ridge_path_matches_reference_and_shrinks() -> None:
    x, y = _data()
    parts = np.array_split(np.arange(N), 7)
    stats = [rolann.client_statistics(x[p], y[p], C) for p in parts]
    u, s, m = rolann.merge(stats)
    w0 = rolann.solve(u, s, m)
    for lam in (1e-3, 1.0, 100.0):
        w = rolann.solve(u, s, m, lam=lam)
        assert np.abs(w - _reference(x, y, "logistic", lam)).max() <= 1e-8
        assert np.abs(w - rolann.centralised_solution(x, y, C, lam=lam)).max() <= 1e-8
        assert np.linalg.norm(w) < np.linalg.norm(w0)


def test_rank_cutoff_keeps_lambda_zero_finite_with_fewer_samples_than_features() -> None:
    x, y = _data(seed=3, n=12)
    x, y = np.vstack([x, x[:3]]), np.concatenate([y, y[:3]])  # duplicates: exactly rank-deficient
    parts = [np.arange(0, 6), np.arange(6, 12), np.arange(12, 15)]
    stats = [rolann.client_statistics(x[p], y[p], C) for p in parts]
    u, s, m = rolann.merge(stats)
    w = rolann.solve(u, s, m)
    assert np.isfinite(w).all()
    assert np.abs(w - _reference(x, y, "logistic")).max() <= 1e-8  # minimum-norm solution
    _, d = rolann.targets(y, C)
    assert np.abs(rolann.predict_scores(w, x) - d).max() <= 1e-8  # interpolates the targets
    w_uncut = rolann.solve(u, s, m, rcond=0.0)
    assert not np.isfinite(w_uncut).all() or np.abs(w_uncut).max() > 1e6 * np.abs(w).max()


def test_empty_clients_are_ignored_and_predict_separates_classes() -> None:
    x, y = _data()
    empty = rolann.client_statistics(x[:0], y[:0], C)
    assert empty.n == 0
    stats = [empty, rolann.client_statistics(x, y, C)]
    w = rolann.solve(*rolann.merge(stats))
    assert np.abs(w - rolann.centralised_solution(x, y, C)).max() <= 1e-10
    assert np.mean(rolann.predict(w, x) == y) > 0.9
    with pytest.raises(ValueError):
        rolann.merge([empty])
