"""Sub-model extraction: shapes, round trips, and sliced sub-models equal masked full models."""
from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn

from methods.extraction import ExtractionMode, select_units
from methods.models.batchnorm import calibrate_batchnorm
from methods.models.conv import ConvFamily
from methods.models.lstm import CharLSTMFamily
from methods.models.registry import build_family
from methods.models.slicing import Axis, SliceableFamily, axis_indices, coverage_masks, embed, extract, full_selection
from tests.model_helpers import load, params_of


@pytest.fixture(autouse=True)
def float64_default():
    """Exactness checks below run in float64; the default is restored after each test."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def conv_family() -> ConvFamily:
    return ConvFamily(3, 5, [6, 8, 10])


def lstm_family() -> CharLSTMFamily:
    return CharLSTMFamily(vocab_size=11, embed_dim=4, hidden=9, num_layers=2)


def selections(family: SliceableFamily) -> dict[str, dict[str, Tensor]]:
    """Prefix, a wrapped rolling window, a random subset, and a shuffled order."""
    gen = torch.Generator().manual_seed(3)
    shuffled = {g: torch.randperm(n, generator=gen)[: n - 2] for g, n in family.groups.items()}
    return {
        "prefix": select_units(family.groups, 0.5, ExtractionMode.PREFIX, 0, None),
        "rolling_wrapped": select_units(family.groups, 0.5, ExtractionMode.ROLLING, 7, None),
        "random": select_units(family.groups, 0.6, ExtractionMode.RANDOM, 0, gen),
        "shuffled": shuffled,
    }


FAMILIES = {"conv": conv_family, "lstm": lstm_family}


def test_rolling_selection_really_wraps() -> None:
    idx = selections(lstm_family())["rolling_wrapped"]["layer0"]
    assert idx.tolist() == [7, 8, 0, 1, 2]


@pytest.mark.parametrize("make", FAMILIES.values(), ids=FAMILIES.keys())
def test_param_axes_name_every_parameter(make) -> None:
    family = make()
    assert set(family.param_axes()) == set(params_of(family.build()))


def test_axis_indices_repeat_per_block() -> None:
    idx = torch.tensor([2, 0])
    assert axis_indices(idx, Axis("g"), 3).tolist() == [2, 0]
    assert axis_indices(idx, Axis("g", blocks=4), 3).tolist() == [2, 0, 5, 3, 8, 6, 11, 9]


@pytest.mark.parametrize("make", FAMILIES.values(), ids=FAMILIES.keys())
def test_extract_matches_sub_model_shapes(make) -> None:
    family = make()
    global_params = params_of(family.build(generator=torch.Generator().manual_seed(0)))
    for sel in selections(family).values():
        sub = extract(global_params, family, sel)
        expected = {k: v.shape for k, v in params_of(family.build_for(sel)).items()}
        assert {k: v.shape for k, v in sub.items()} == expected


@pytest.mark.parametrize("make", FAMILIES.values(), ids=FAMILIES.keys())
def test_embed_extract_round_trip_and_masks(make) -> None:
    family = make()
    global_params = params_of(family.build(generator=torch.Generator().manual_seed(0)))
    for sel in selections(family).values():
        sub = extract(global_params, family, sel)
        masks = coverage_masks(global_params, family, sel)
        back = embed(sub, family, sel, global_params)
        for name, tensor in global_params.items():
            assert int(masks[name].sum()) == sub[name].numel()
            assert torch.equal(back[name], torch.where(masks[name], tensor, 0.0))
        assert all(torch.equal(a, sub[k]) for k, a in extract(back, family, sel).items())


def test_extract_returns_copies() -> None:
    family = conv_family()
    global_params = params_of(family.build())
    sub = extract(global_params, family, full_selection(family))
    sub["classifier.bias"].add_(1.0)
    assert not torch.equal(sub["classifier.bias"], global_params["classifier.bias"])


def test_extract_orders_units_as_selected() -> None:
    family = conv_family()
    global_params = params_of(family.build())
    sel = full_selection(family) | {"block1": torch.tensor([5, 1])}
    sub = extract(global_params, family, sel)
    w = global_params["blocks.1.conv.weight"]
    assert torch.equal(sub["blocks.1.conv.weight"], w[[5, 1]])
    assert torch.equal(sub["blocks.2.conv.weight"], global_params["blocks.2.conv.weight"][:, [5, 1]])


def test_invalid_selection_rejected() -> None:
    family = conv_family()
    global_params = params_of(family.build())
    bad = full_selection(family) | {"block0": torch.tensor([0, 0])}
    with pytest.raises(ValueError):
        extract(global_params, family, bad)
    with pytest.raises(ValueError):
        extract(global_params, family, {"block0": torch.tensor([0])})


def masked_full_model(family: SliceableFamily, global_params: dict[str, Tensor],
                      sel: dict[str, Tensor]) -> nn.Module:
    masks = coverage_masks(global_params, family, sel)
    return load(family.build(), {k: v * masks[k] for k, v in global_params.items()})


@pytest.mark.parametrize("name", ["prefix", "rolling_wrapped", "random", "shuffled"])
def test_conv_sub_model_equals_masked_full_model(name: str) -> None:
    # A masked channel is exactly 0 before BN; batch mean and variance 0, with zero gain and
    # bias, give exactly 0 after BN too, in train mode and after calibration alike.
    family = conv_family()
    gen = torch.Generator().manual_seed(1)
    global_params = params_of(family.build(generator=gen))
    for p in global_params.values():  # non-trivial BN gains and biases
        p.add_(0.1 * torch.randn(p.shape, generator=gen))
    sel = selections(family)[name]
    x = torch.randn(4, 3, 12, 12, generator=gen)
    sub = load(family.build_for(sel), extract(global_params, family, sel))
    full = masked_full_model(family, global_params, sel)
    sub.train(), full.train()
    torch.testing.assert_close(sub(x), full(x), rtol=1e-10, atol=1e-10)
    calibrate_batchnorm(sub, [x, x[:2]])
    calibrate_batchnorm(full, [x, x[:2]])
    assert not sub.training
    torch.testing.assert_close(sub(x), full(x), rtol=1e-10, atol=1e-10)
    unmasked = load(family.build(), global_params)
    calibrate_batchnorm(unmasked, [x])
    assert not torch.allclose(unmasked(x), full(x))  # the test can tell widths apart


@pytest.mark.parametrize("name", ["prefix", "rolling_wrapped", "random", "shuffled"])
def test_lstm_sub_model_equals_masked_full_model(name: str) -> None:
    # A unit with all weights and biases into it zero has i=f=o=1/2, g=0, so c and h stay 0.
    family = lstm_family()
    gen = torch.Generator().manual_seed(2)
    global_params = params_of(family.build(generator=gen))
    sel = selections(family)[name]
    x = torch.randint(0, family.vocab_size, (3, 7), generator=gen)
    sub = load(family.build_for(sel), extract(global_params, family, sel))
    full = masked_full_model(family, global_params, sel)
    torch.testing.assert_close(sub(x), full(x), rtol=1e-10, atol=1e-10)
    unmasked = load(family.build(), global_params)
    assert not torch.allclose(unmasked(x), full(x))


def test_lstm_stepwise_equals_fused() -> None:
    family = lstm_family()
    model = family.build(generator=torch.Generator().manual_seed(4))
    x = torch.randint(0, family.vocab_size, (3, 6), generator=torch.Generator().manual_seed(5))
    torch.testing.assert_close(model.stepwise_forward(x), model(x), rtol=1e-10, atol=1e-10)
    model.float()
    torch.testing.assert_close(model.stepwise_forward(x), model(x), rtol=1e-5, atol=1e-5)


def test_lstm_layers_must_share_width() -> None:
    with pytest.raises(ValueError):
        lstm_family().build({"layer0": 3, "layer1": 4})


def test_generator_init_is_deterministic() -> None:
    for make in FAMILIES.values():
        a = params_of(make().build(generator=torch.Generator().manual_seed(9)))
        b = params_of(make().build(generator=torch.Generator().manual_seed(9)))
        c = params_of(make().build(generator=torch.Generator().manual_seed(10)))
        assert all(torch.equal(a[k], b[k]) for k in a)
        assert not all(torch.equal(a[k], c[k]) for k in a)


def test_calibration_leaves_statistics_out_of_federated_state() -> None:
    model = conv_family().build()
    calibrate_batchnorm(model, [torch.randn(2, 3, 8, 8)])
    assert not any("running" in name for name, _ in model.named_parameters())
    assert int(model.blocks[0].bn.num_batches_tracked) == 1


def test_conv_layout_follows_heterofl() -> None:
    model = ConvFamily(3, 10, [4, 6]).build()
    assert model(torch.randn(2, 3, 8, 8)).shape == (2, 10)
    assert hasattr(model.blocks[0], "pool") and not hasattr(model.blocks[1], "pool")
    assert model.blocks[0].bn.momentum is None and model.blocks[0].bn.track_running_stats


def test_registry() -> None:
    assert isinstance(build_family("conv", in_channels=1, num_classes=62, hidden=[8]), ConvFamily)
    lstm = build_family("char_lstm", in_channels=None, num_classes=95)
    assert isinstance(lstm, CharLSTMFamily) and lstm.groups == {"layer0": 256, "layer1": 256}
    with pytest.raises(ValueError, match="conv, char_lstm"):
        build_family("resnet", in_channels=3, num_classes=10)
