"""PreResNet18 family: slicing axes, size, sub-model exactness, and costs."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from methods.costs import cost_fractions, mac_count, parameter_count
from methods.extraction import ExtractionMode, kept_units, select_units
from methods.models.batchnorm import calibrate_batchnorm
from methods.models.registry import build_family
from methods.models.resnet import PreResNet18Family
from methods.models.slicing import coverage_masks, embed, extract, full_selection
from tests.model_helpers import load, params_of

SMALL = (8, 16, 32, 64)
FULL = (64, 128, 256, 512)
ROUND_WRAPS_ALL = 63  # 63 % n = n - 1 for n in 8, 16, 32, 64: every rolling window wraps


@pytest.fixture(autouse=True)
def float64_one_thread():
    previous_dtype, previous_threads = torch.get_default_dtype(), torch.get_num_threads()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    yield
    torch.set_default_dtype(previous_dtype)
    torch.set_num_threads(previous_threads)


def expected_counts(in_channels: int, num_classes: int, hidden, image: int) -> tuple[int, int]:
    """(parameters, conv/linear MACs) of PreResNet18 by formula, for square ``image`` inputs."""
    params = 9 * in_channels * hidden[0]
    side = image
    macs = side * side * 9 * in_channels * hidden[0]
    c_in = hidden[0]
    for i, c in enumerate(hidden):
        for j in range(2):
            stride = 2 if (i > 0 and j == 0) else 1
            side = (side - 1) // stride + 1
            params += 2 * c_in + 9 * c_in * c + 2 * c + 9 * c * c  # bn1, conv1, bn2, conv2
            macs += side * side * (9 * c_in * c + 9 * c * c)
            if stride == 2:  # 1x1 projection shortcut
                params += c_in * c
                macs += side * side * c_in * c
            c_in = c
    params += 2 * hidden[-1] + hidden[-1] * num_classes + num_classes  # final bn, classifier
    macs += hidden[-1] * num_classes
    return params, macs


def selections(family: PreResNet18Family) -> dict[str, dict[str, Tensor]]:
    gen = torch.Generator().manual_seed(3)
    out = {}
    for width in (0.5, 0.25):
        out[f"prefix{width}"] = select_units(family.groups, width, ExtractionMode.PREFIX, 0, None)
        out[f"rolling_wrapped{width}"] = select_units(family.groups, width, ExtractionMode.ROLLING,
                                                      ROUND_WRAPS_ALL, None)
        out[f"random_consistent{width}"] = select_units(family.groups, width, ExtractionMode.RANDOM_CONSISTENT, 0,
                                                        gen, family.ties)
    return out


def test_groups_and_param_axes_cover_every_parameter() -> None:
    family = PreResNet18Family(3, 10, SMALL)
    assert list(family.groups)[:5] == ["stage0.stem", "stage0.block0.out", "stage0.block1.out",
                                       "stage0.block0.inner", "stage0.block1.inner"]
    assert len(family.groups) == 17
    assert family.ties == (("stage0.stem", "stage0.block0.out", "stage0.block1.out"),
                           ("stage1.block0.out", "stage1.block1.out"), ("stage2.block0.out", "stage2.block1.out"),
                           ("stage3.block0.out", "stage3.block1.out"))
    params = params_of(family.build())
    assert set(family.param_axes()) == set(params)
    for name, axes in family.param_axes().items():
        assert len(axes) == params[name].dim()
        if name != "classifier.bias":
            assert any(axis is not None for axis in axes), name
    # full selection: shapes consistent with the axes, extraction is the identity
    full = extract(params, family, full_selection(family))
    assert all(torch.equal(full[k], params[k]) for k in params)


def test_layout_follows_heterofl_preresnet() -> None:
    model = PreResNet18Family(3, 10, SMALL).build()
    shortcuts = [(i, j) for i, stage in enumerate(model.stages) for j, block in enumerate(stage)
                 if block.shortcut is not None]
    assert shortcuts == [(1, 0), (2, 0), (3, 0)]
    assert all(len(stage) == 2 for stage in model.stages)
    assert [stage[0].conv1.stride for stage in model.stages] == [(1, 1), (2, 2), (2, 2), (2, 2)]
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    assert len(norms) == 17 and all(n.momentum is None and n.track_running_stats and n.affine
                                    for n in norms)
    assert model(torch.randn(2, 3, 16, 16)).shape == (2, 10)


def test_projection_shortcut_is_the_strided_1x1_conv() -> None:
    block = PreResNet18Family(3, 10, SMALL).build().stages[1][0]
    x = torch.randn(2, SMALL[0], 16, 16)
    expected = F.conv2d(F.relu(block.bn1(x)), block.shortcut.weight, stride=2)
    out = F.relu(block.bn1(x))
    assert torch.equal(block.shortcut(out[:, :, ::2, ::2]), expected)
    assert block.shortcut.stride == (1, 1) and block.stride == 2


def test_narrowest_paper_client_trains_in_float32_with_float64_gradients() -> None:
    """The paper profile's width-1/16 FedRolex client (4-8-16-32 channels) on channels-last float32 input,
    the case where oneDNN's strided 1x1 weight gradient crashes or is wrong on AVX2 (oneDNN#6035): every
    gradient of one training step matches the same step in float64 (which oneDNN does not compute)."""
    family = PreResNet18Family(3, 10, tuple(kept_units(n, 1 / 16) for n in FULL))
    assert family.hidden == (4, 8, 16, 32)
    model64 = family.build(generator=torch.Generator().manual_seed(0))
    model32 = copy.deepcopy(model64).float()
    inputs = torch.randn(10, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    labels = torch.arange(10)
    F.cross_entropy(model64(inputs), labels).backward()
    F.cross_entropy(model32(inputs.float()), labels).backward()
    for (name, p64), p32 in zip(model64.named_parameters(), model32.parameters(), strict=True):
        torch.testing.assert_close(p32.grad, p64.grad.float(), rtol=1e-3, atol=1e-5, msg=name)

def test_full_parameter_count_matches_formula() -> None:
    family = PreResNet18Family(3, 10, FULL)
    expected, _ = expected_counts(3, 10, FULL, 32)
    assert parameter_count(family.build()) == expected == 11_172_170


def test_sub_model_counts_match_formula() -> None:
    family = PreResNet18Family(3, 10, SMALL)
    sub = family.build({g: kept_units(n, 0.25) for g, n in family.groups.items()})
    params, macs = expected_counts(3, 10, [kept_units(n, 0.25) for n in SMALL], 16)
    assert parameter_count(sub) == params
    assert mac_count(sub, torch.randn(1, 3, 16, 16)) == macs


def test_extract_embed_match_sub_model_shapes() -> None:
    family = PreResNet18Family(3, 10, SMALL)
    global_params = params_of(family.build(generator=torch.Generator().manual_seed(0)))
    for sel in selections(family).values():
        sub = extract(global_params, family, sel)
        assert {k: v.shape for k, v in sub.items()} == \
            {k: v.shape for k, v in params_of(family.build_for(sel)).items()}
        masks = coverage_masks(global_params, family, sel)
        back = embed(sub, family, sel, global_params)
        for name, tensor in global_params.items():
            assert torch.equal(back[name], torch.where(masks[name], tensor, 0.0))


def test_rolling_selection_really_wraps() -> None:
    family = PreResNet18Family(3, 10, SMALL)
    for width in (0.5, 0.25):
        sel = selections(family)[f"rolling_wrapped{width}"]
        for group, idx in sel.items():
            assert idx[0] == family.groups[group] - 1 and idx[1] == 0


@pytest.mark.parametrize("name", [f"{mode}{w}" for w in (0.5, 0.25)
                                  for mode in ("prefix", "rolling_wrapped", "random_consistent")])
def test_sub_model_equals_masked_full_model(name: str) -> None:
    # Masked channels are exactly 0 into every BN (bias-free convs, masked inputs); zero batch
    # mean and variance with zero gain and bias keep them 0, in train mode and after calibration.
    family = PreResNet18Family(3, 10, SMALL)
    gen = torch.Generator().manual_seed(1)
    global_params = params_of(family.build(generator=gen))
    for p in global_params.values():  # non-trivial BN gains and biases
        p.add_(0.1 * torch.randn(p.shape, generator=gen))
    sel = selections(family)[name]
    x = torch.randn(4, 3, 16, 16, generator=gen)
    sub = load(family.build_for(sel), extract(global_params, family, sel))
    masks = coverage_masks(global_params, family, sel)
    full = load(family.build(), {k: v * masks[k] for k, v in global_params.items()})
    sub.train(), full.train()
    torch.testing.assert_close(sub(x), full(x), rtol=1e-10, atol=1e-10)
    calibrate_batchnorm(sub, [x, x[:2]])
    calibrate_batchnorm(full, [x, x[:2]])
    assert not sub.training
    torch.testing.assert_close(sub(x), full(x), rtol=1e-10, atol=1e-10)
    unmasked = calibrate_batchnorm(load(family.build(), global_params), [x])
    assert not torch.allclose(unmasked(x), full(x))  # the test can tell widths apart


def test_generator_init_is_deterministic() -> None:
    family = PreResNet18Family(3, 10, SMALL)
    a = params_of(family.build(generator=torch.Generator().manual_seed(9)))
    b = params_of(family.build(generator=torch.Generator().manual_seed(9)))
    c = params_of(family.build(generator=torch.Generator().manual_seed(10)))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_cost_fractions_full_size() -> None:
    torch.set_default_dtype(torch.float32)
    family = PreResNet18Family(3, 10, FULL)
    x = torch.randn(1, 3, 32, 32)
    full_params, full_macs = expected_counts(3, 10, FULL, 32)
    for width, (want_params, want_macs) in {0.25: (0.06275, 0.06310),
                                            0.5: (0.25033, 0.25080)}.items():
        params, macs = cost_fractions(family, width, x)
        sub_params, sub_macs = expected_counts(3, 10, [kept_units(n, width) for n in FULL], 32)
        assert params == pytest.approx(sub_params / full_params, rel=1e-12)
        assert macs == pytest.approx(sub_macs / full_macs, rel=1e-12)
        assert (params, macs) == pytest.approx((want_params, want_macs), abs=1e-5)


def test_registry_builds_preresnet18() -> None:
    family = build_family("preresnet18", in_channels=3, num_classes=100, hidden=SMALL)
    assert isinstance(family, PreResNet18Family) and family.hidden == SMALL
    assert family.build().classifier.out_features == 100
    assert build_family("preresnet18", in_channels=3, num_classes=10).hidden == FULL
    with pytest.raises(ValueError):
        build_family("preresnet18", in_channels=None, num_classes=10)
    with pytest.raises(ValueError):
        PreResNet18Family(3, 10, (8, 16, 32))
