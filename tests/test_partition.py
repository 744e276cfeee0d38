"""Partitions: disjoint, covering, seeded, and skewed as their parameters say."""
from __future__ import annotations

import numpy as np
import pytest

from methods.partition import (
    client_tv_distances,
    dirichlet_partition,
    iid_partition,
    label_distribution,
    label_restricted_partition,
    one_class_per_client,
    subsample_per_client,
    tv_distance,
)

NUM_CLASSES = 10


@pytest.fixture
def labels() -> np.ndarray:
    return np.repeat(np.arange(NUM_CLASSES), 200)  # 2000 balanced labels


def assert_disjoint(parts: list[np.ndarray]) -> np.ndarray:
    union = np.concatenate(parts)
    assert len(union) == len(np.unique(union)), "a sample is held by two clients"
    for part in parts:
        assert part.dtype == np.int64 and np.all(np.diff(part) > 0)
    return union


def test_iid_covers_everything_once() -> None:
    parts = iid_partition(103, 10, np.random.default_rng(0))
    union = assert_disjoint(parts)
    assert sorted(union.tolist()) == list(range(103))
    assert {len(p) for p in parts} == {10, 11}


def test_dirichlet_covers_everything_and_respects_min_size(labels: np.ndarray) -> None:
    parts = dirichlet_partition(labels, 20, 0.3, np.random.default_rng(1), min_size=10)
    union = assert_disjoint(parts)
    assert len(union) == len(labels)
    assert min(len(p) for p in parts) >= 10


def test_same_seed_same_partition(labels: np.ndarray) -> None:
    def draw(seed: int) -> list[np.ndarray]:
        return dirichlet_partition(labels, 20, 0.3, np.random.default_rng(seed))
    first, again, other = draw(5), draw(5), draw(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))
    restricted = [label_restricted_partition(labels, 20, 2, np.random.default_rng(5)) for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(*restricted))


def test_small_alpha_is_more_skewed(labels: np.ndarray) -> None:
    def mean_tv(alpha: float) -> float:
        tvs = [client_tv_distances(dirichlet_partition(labels, 20, alpha, np.random.default_rng(s)),
                                   labels, NUM_CLASSES).mean() for s in range(3)]
        return float(np.mean(tvs))
    assert mean_tv(0.1) > mean_tv(1.0) > mean_tv(100.0)
    assert mean_tv(100.0) < 0.15


def test_dirichlet_rejects_impossible_min_size(labels: np.ndarray) -> None:
    with pytest.raises(ValueError, match="exceeds"):
        dirichlet_partition(labels, 300, 0.3, np.random.default_rng(0), min_size=10)


@pytest.mark.parametrize("num_clients, per_client", [(20, 2), (7, 3), (3, 2), (10, 10)])
def test_label_restricted_clients_hold_exactly_l_labels(labels: np.ndarray, num_clients: int,
                                                         per_client: int) -> None:
    parts = label_restricted_partition(labels, num_clients, per_client, np.random.default_rng(2))
    union = assert_disjoint(parts)
    for part in parts:
        assert len(np.unique(labels[part])) == per_client
    used = np.unique(labels[union])
    if num_clients * per_client >= NUM_CLASSES:
        assert len(used) == NUM_CLASSES and len(union) == len(labels)
    holders = {int(c): sum(c in np.unique(labels[p]) for p in parts) for c in used}
    assert max(holders.values()) - min(holders.values()) <= 1
    for cls in used:  # a label's samples are split evenly among its holders
        sizes = [int(np.sum(labels[p] == cls)) for p in parts if np.any(labels[p] == cls)]
        assert max(sizes) - min(sizes) <= 1


def test_label_restricted_rejects_too_many_labels(labels: np.ndarray) -> None:
    with pytest.raises(ValueError):
        label_restricted_partition(labels, 5, NUM_CLASSES + 1, np.random.default_rng(0))


def test_one_class_per_client(labels: np.ndarray) -> None:
    parts = one_class_per_client(labels, 25, np.random.default_rng(3))
    union = assert_disjoint(parts)
    assert len(union) == len(labels)
    for k, part in enumerate(parts):
        assert set(labels[part].tolist()) == {k % NUM_CLASSES}
    assert sorted(len(p) for p in parts if labels[p[0]] == 0) == [66, 67, 67]
    assert sum(len(p) for p in one_class_per_client(labels, 4, np.random.default_rng(0))) == 800


def test_subsample_per_client(labels: np.ndarray) -> None:
    parts = iid_partition(len(labels), 4, np.random.default_rng(0))
    small = subsample_per_client(parts, 30, np.random.default_rng(1))
    assert [len(p) for p in small] == [30] * 4
    assert all(np.isin(s, p).all() and np.all(np.diff(s) > 0) for s, p in zip(small, parts))
    assert [len(p) for p in subsample_per_client(parts, 10_000, np.random.default_rng(1))] == [500] * 4


def test_tv_hand_computed() -> None:
    assert tv_distance([1, 0], [0, 1]) == 1.0
    assert tv_distance([0.5, 0.5], [0.5, 0.5]) == 0.0
    assert tv_distance([0.7, 0.2, 0.1], [0.2, 0.3, 0.5]) == pytest.approx(0.5)
    np.testing.assert_allclose(label_distribution(np.array([0, 0, 2, 1]), 4), [0.5, 0.25, 0.25, 0])
    assert np.isnan(label_distribution(np.array([], dtype=np.int64), 3)).all()


def test_client_tv_distances_hand_computed() -> None:
    labels = np.array([0, 0, 1, 1])  # global distribution (0.5, 0.5)
    parts = [np.array([0, 1]), np.array([2]), np.array([0, 2]), np.array([], dtype=np.int64)]
    tvs = client_tv_distances(parts, labels, 2)
    np.testing.assert_allclose(tvs[:3], [0.5, 0.5, 0.0])
    assert np.isnan(tvs[3])
