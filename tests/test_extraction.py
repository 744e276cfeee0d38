"""Prefix, rolling and random unit selection."""
from __future__ import annotations

import pytest
import torch

from methods.extraction import ExtractionMode, kept_units, prefix_indices, random_indices, rolling_indices, select_units


def test_kept_units_is_robust_ceil() -> None:
    assert kept_units(64, 0.25) == 16
    assert kept_units(10, 0.3) == 3
    assert kept_units(25, 0.28) == 7  # 0.28 * 25 == 7.000000000000001 in floats
    assert kept_units(100, 0.07) == 7
    assert kept_units(10, 0.7) == 7
    assert kept_units(10, 0.31) == 4
    assert kept_units(256, 1 / 16) == 16
    assert kept_units(3, 0.01) == 1
    assert kept_units(5, 1.0) == 5
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            kept_units(5, bad)


def test_prefix() -> None:
    assert prefix_indices(8, 0.5).tolist() == [0, 1, 2, 3]


def test_rolling_round_zero_is_prefix_and_window_wraps() -> None:
    assert torch.equal(rolling_indices(8, 0.5, 0), prefix_indices(8, 0.5))
    assert rolling_indices(8, 0.5, 6).tolist() == [6, 7, 0, 1]
    assert rolling_indices(8, 0.5, 14).tolist() == [6, 7, 0, 1]


@pytest.mark.parametrize("round_index", [0, 3, 9, 10, 17])
def test_smaller_rolling_windows_nest_in_larger(round_index: int) -> None:
    n = 10
    widths = [0.1, 0.25, 0.5, 0.75, 1.0]
    sets = [set(rolling_indices(n, w, round_index).tolist()) for w in widths]
    assert all(small <= large for small, large in zip(sets, sets[1:]))


@pytest.mark.parametrize("n,width", [(10, 0.3), (16, 0.25), (7, 0.5)])
def test_rolling_covers_every_unit_k_times_in_n_rounds(n: int, width: float) -> None:
    k = kept_units(n, width)
    for start in (0, 5):
        counts = torch.zeros(n, dtype=torch.int64)
        for t in range(start, start + n):
            counts[rolling_indices(n, width, t)] += 1
        assert counts.tolist() == [k] * n


def test_random_indices_valid_and_vary() -> None:
    gen = torch.Generator().manual_seed(0)
    draws = [random_indices(20, 0.25, gen) for _ in range(5)]
    for idx in draws:
        assert idx.dtype == torch.int64 and idx.numel() == 5
        assert idx.unique().numel() == 5 and torch.equal(idx, idx.sort().values)
        assert 0 <= int(idx.min()) and int(idx.max()) < 20
    assert len({tuple(d.tolist()) for d in draws}) > 1  # rounds differ
    other = random_indices(20, 0.25, torch.Generator().manual_seed(1))
    again = random_indices(20, 0.25, torch.Generator().manual_seed(0))
    assert torch.equal(again, draws[0]) and not torch.equal(other, draws[0])


def test_select_units_per_mode() -> None:
    groups = {"a": 8, "b": 8}
    assert select_units(groups, 0.5, ExtractionMode.PREFIX, 3, None)["b"].tolist() == [0, 1, 2, 3]
    assert select_units(groups, 0.5, "rolling", 6, None)["a"].tolist() == [6, 7, 0, 1]
    sel = select_units(groups, 0.5, ExtractionMode.RANDOM, 0, torch.Generator().manual_seed(2))
    assert set(sel) == {"a", "b"} and not torch.equal(sel["a"], sel["b"])  # independent draws
    with pytest.raises(ValueError):
        select_units(groups, 0.5, ExtractionMode.RANDOM, 0, None)
    with pytest.raises(ValueError):
        select_units(groups, 0.5, "dropout", 0, None)
