"""Parameter and MAC counts against hand formulas."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from methods.costs import cost_fractions, mac_count, parameter_count, training_flops, width_cost_table
from methods.models.conv import ConvFamily
from methods.models.lstm import CharLSTMFamily


def test_conv2d_macs_hand_formula() -> None:
    conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
    # batch x out_channels x H x W x in_channels x kernel area
    assert mac_count(conv, torch.zeros(2, 3, 10, 10)) == 2 * 8 * 10 * 10 * 3 * 9


def test_linear_macs_and_params() -> None:
    linear = nn.Linear(7, 5)
    assert mac_count(linear, torch.zeros(4, 7)) == 4 * 7 * 5
    assert parameter_count(linear) == 7 * 5 + 5


def test_conv_family_full_counts() -> None:
    model = ConvFamily(3, 10, [64, 128, 256, 512]).build()
    assert parameter_count(model) == (
        (64 * 3 * 9 + 64) + 2 * 64
        + (128 * 64 * 9 + 128) + 2 * 128
        + (256 * 128 * 9 + 256) + 2 * 256
        + (512 * 256 * 9 + 512) + 2 * 512
        + (512 * 10 + 10))
    # 32x32, then 16x16, 8x8, 4x4 after each max-pool; no pool after the last block
    assert mac_count(model, torch.zeros(1, 3, 32, 32)) == (
        64 * 3 * 9 * 32 * 32 + 128 * 64 * 9 * 16 * 16 + 256 * 128 * 9 * 8 * 8
        + 512 * 256 * 9 * 4 * 4 + 512 * 10)


def test_conv_family_quarter_width_param_fraction() -> None:
    family = ConvFamily(3, 10, [64, 128, 256, 512])
    # conv weight + conv bias + BN gain and bias per block, then the classifier
    full = ((64 * 3 * 9 + 64 + 2 * 64) + (128 * 64 * 9 + 128 + 2 * 128)
            + (256 * 128 * 9 + 256 + 2 * 256) + (512 * 256 * 9 + 512 + 2 * 512)
            + (512 * 10 + 10))
    quarter = ((16 * 3 * 9 + 16 + 2 * 16) + (32 * 16 * 9 + 32 + 2 * 32)
               + (64 * 32 * 9 + 64 + 2 * 64) + (128 * 64 * 9 + 128 + 2 * 128)
               + (128 * 10 + 10))
    params, macs = cost_fractions(family, 0.25, torch.zeros(1, 3, 32, 32))
    assert params == pytest.approx(quarter / full, rel=1e-12)
    assert 0.06 < macs < 0.07


def test_lstm_macs_hand_formula() -> None:
    family = CharLSTMFamily(vocab_size=95, embed_dim=8, hidden=16, num_layers=2)
    steps = 5
    expected = steps * (4 * 16 * (8 + 16) + 4 * 16 * (16 + 16)) + 16 * 95
    assert mac_count(family.build(), torch.zeros(1, steps, dtype=torch.int64)) == expected


def test_mac_count_leaves_mode_and_buffers_alone() -> None:
    model = ConvFamily(3, 10, [4]).build().train()
    mac_count(model, torch.randn(2, 3, 8, 8))
    assert model.training and int(model.blocks[0].bn.num_batches_tracked) == 0


def test_training_flops_count_forward_and_backward_products() -> None:
    """A linear layer: forward 2·B·in·out, backward the weight gradient and the input gradient
    only where the input needs one."""
    layer = nn.Linear(6, 4)
    x, y = torch.randn(5, 6), torch.tensor([0, 1, 2, 3, 0])
    assert training_flops(layer, x, y) == 2 * (2 * 5 * 6 * 4)
    assert training_flops(layer, x.requires_grad_(True), y) == 3 * (2 * 5 * 6 * 4)
    assert layer.weight.grad is None


def test_width_cost_table_counts_each_distinct_sub_model_once() -> None:
    family = ConvFamily(3, 10, [16, 32, 64])
    sample = torch.zeros(1, 3, 32, 32)
    table = width_cost_table(family, [0.25, 0.5, 0.25, 1.0, 0.49], sample)
    assert sorted(table) == [0.25, 0.49, 0.5, 1.0]
    assert table[1.0] == (1.0, 1.0)
    assert table[0.5] == cost_fractions(family, 0.5, sample)
    assert table[0.49] == table[0.5]  # ceil(0.49 n) = ceil(0.5 n) units for n = 16, 32, 64
    sub = family.build({g: -(-n // 4) for g, n in family.groups.items()})
    assert table[0.25] == (parameter_count(sub) / parameter_count(family.build()),
                           mac_count(sub, sample) / mac_count(family.build(), sample))
