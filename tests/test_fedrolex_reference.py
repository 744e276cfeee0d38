"""The FedRolex reference code's behaviour (AIoT-MLSys-Lab/FedRolex at 8135109), each expectation written
from reading that code: its shard partition (data.py ``non_iid``), masked cross-entropy (models/resnet.py,
``masked_fill(label_mask == 0, 0)``), its server's ``combine`` (label-restricted classifier rows, update
counts that grow within a round, ``width`` / ``updates`` weighting), ``dynamic`` capacities redrawn every
round (``make_model_rate``), Federated Dropout's ``randperm`` per conv (``ResnetServerRandom.split_model``)
and the CIFAR-10 training transform (RandomCrop(32, padding=4), RandomHorizontalFlip)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import torchvision.transforms.functional as TF

from methods.extraction import ExtractionMode, select_units
from methods.federated import ClientData
from methods.federated.aggregation import ClientUpdate, aggregate_per_coordinate
from methods.federated.augmentation import CropFlip
from methods.federated.capacity import equal_share_caps
from methods.federated.coordinate_weights import CoordinateWeights
from methods.federated.labels import kept_logits
from methods.federated.objectives import LocalSettings, train_local
from methods.federated.policies import DynamicCapPolicy
from methods.federated.submodel import SubmodelView
from methods.models.conv import ConvFamily
from methods.models.resnet import PreResNet18Family
from methods.partition import label_restricted_partition, shard_partition

CLASSES = 10
LABELS = np.repeat(np.arange(CLASSES), 500)  # 20 shards of 25 per class for 100 clients at L = 2


# ---------------------------------------------------------------- the partition

def test_shards_deal_random_label_pairs_some_clients_a_single_class() -> None:
    singles, pairs = [], []
    for seed in range(20):
        parts = shard_partition(LABELS, 100, 2, np.random.default_rng(seed))
        held = [tuple(np.unique(LABELS[p])) for p in parts]
        for part, labels in zip(parts, held):
            assert len(labels) in (1, 2)
            assert len(part) == 25 * len(labels)  # one shard per distinct label: a single-class client holds one
        union = np.concatenate(parts)
        assert len(union) == len(np.unique(union))
        for cls in range(CLASSES):  # 20 shards a class were dealt; a class dealt twice to one client loses one
            assert sum(cls in labels for labels in held) <= 20
        singles.append(sum(len(labels) == 1 for labels in held))
        pairs.append(len({labels for labels in held if len(labels) == 2}))
    # a client is dealt its two labels from 200 (20 of each class) without replacement: P(same) = 19/199
    assert np.mean(singles) == pytest.approx(100 * 19 / 199, abs=2.5)
    assert min(pairs) >= 25  # of the 45 possible pairs, about 39 expected
    cycle = label_restricted_partition(LABELS, 100, 2, np.random.default_rng(0))
    assert len({tuple(np.unique(LABELS[p])) for p in cycle}) == 5  # the cycle's five disjoint pairs


def test_shards_refuse_a_deal_that_does_not_divide() -> None:
    with pytest.raises(ValueError, match="whole number of shards"):
        shard_partition(LABELS, 7, 2, np.random.default_rng(0))


# ---------------------------------------------------------------- masked cross-entropy

def test_a_clients_loss_zeroes_the_logits_of_labels_it_does_not_hold() -> None:
    logits = torch.tensor([[2.0, 1.0, -1.0, 0.5]], requires_grad=True)
    held = torch.tensor([True, False, True, False])
    loss = F.cross_entropy(kept_logits(logits, held), torch.tensor([2]))
    by_hand = 1.0 + np.log(np.exp(2.0) + np.exp(0.0) + np.exp(-1.0) + np.exp(0.0))
    assert float(loss.detach()) == pytest.approx(by_hand, rel=1e-6)
    loss.backward()
    assert logits.grad is not None
    assert torch.equal(logits.grad[0, ~held], torch.zeros(2)) and bool((logits.grad[0, held] != 0).all())


def test_local_training_leaves_the_rows_of_labels_a_client_does_not_hold() -> None:
    family = ConvFamily(3, 4, [4, 6])
    model = family.build(generator=torch.Generator().manual_seed(0))
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    g = torch.Generator().manual_seed(1)
    data = ClientData(torch.randn(12, 3, 8, 8, generator=g), torch.tensor([0, 2] * 6)).holding_own_labels(4)
    result = train_local(model, start, data, LocalSettings(1, 4, 0.1, 0.0, 0.0, None), g)
    assert torch.equal(data.classes, torch.tensor([True, False, True, False]))
    for name in ("classifier.weight", "classifier.bias"):
        assert torch.equal(result.update[name][[1, 3]], torch.zeros_like(result.update[name][[1, 3]]))
        assert bool((result.update[name][[0, 2]] != 0).any())


# ---------------------------------------------------------------- the server's combine

def _full_update(client: int, value: float, params) -> ClientUpdate:
    return ClientUpdate(client, 1.0, {n: torch.full_like(t, value) for n, t in params.items()}, None, 10)


def test_three_clients_combine_with_counts_and_their_own_label_rows() -> None:
    family = ConvFamily(3, 4, [2, 2])
    params = {n: torch.zeros_like(p) for n, p in family.build().named_parameters()}
    weights = CoordinateWeights(family, params, "equal", count_weighted=True, label_split=True)
    held = {0: torch.tensor([True, True, False, False]), 1: torch.tensor([False, True, True, False]),
            2: torch.tensor([False, False, True, False])}
    updates = [_full_update(k, k + 1.0, params) for k in range(3)]  # deltas 1, 2, 3
    new, mean = aggregate_per_coordinate(params, updates, weights.round_weights(updates, held))
    # conv weights, equal weights: (1 + 2 + 3) / 3
    assert torch.allclose(mean["blocks.0.conv.weight"], torch.full_like(params["blocks.0.conv.weight"], 2.0))
    # one-dimensional tensors weigh by counts that grow within the round: 1, 2, 3
    assert torch.allclose(mean["blocks.1.bn.weight"], torch.full((2,), 14 / 6))
    # classifier row c: only the clients holding label c, weighted by that row's counts
    expected_rows = torch.tensor([1.0, (1 * 1 + 2 * 2) / 3, (1 * 2 + 2 * 3) / 3, 0.0])
    assert torch.allclose(mean["classifier.bias"], expected_rows)
    assert torch.allclose(mean["classifier.weight"], expected_rows[:, None].expand(4, 2))
    assert torch.equal(new["classifier.bias"][3], params["classifier.bias"][3])  # held by no one: kept
    # next round, both clients hold every batch-norm unit, whose counts stand at 4
    updates = [_full_update(0, 1.0, params), _full_update(1, 2.0, params)]
    _, mean = aggregate_per_coordinate(params, updates, weights.round_weights(updates, held))
    assert torch.allclose(mean["blocks.1.bn.bias"], torch.full((2,), (4 * 1 + 5 * 2) / 9))


def test_without_the_reference_rules_every_coordinate_is_a_plain_mean() -> None:
    family = ConvFamily(3, 4, [2, 2])
    params = {n: torch.zeros_like(p) for n, p in family.build().named_parameters()}
    weights = CoordinateWeights(family, params, "equal", count_weighted=False, label_split=False)
    updates = [_full_update(k, k + 1.0, params) for k in range(3)]
    _, mean = aggregate_per_coordinate(params, updates, weights.round_weights(updates, {}))
    assert all(torch.allclose(m, torch.full_like(m, 2.0)) for m in mean.values())


@pytest.mark.parametrize("weighting, expected", [("size", (1 * 4 + 2 * 8) / 12), ("update", (1 * 1 + 2 * 2) / 3),
                                                 ("hybrid", (1 * 4 * 1 + 2 * 8 * 2) / (4 + 16))])
def test_weighting_by_layer_width_and_by_update_counts(weighting: str, expected: float) -> None:
    """The reference's ``width`` (K = the client's output channels of the layer), ``updates`` (K = the
    coordinate's count) and ``updates_width`` for conv weights, on a coordinate both clients hold."""
    family = ConvFamily(3, 4, [8, 8])
    params = {n: torch.zeros_like(p) for n, p in family.build().named_parameters()}
    half = select_units(family.groups, 0.5, "prefix", 0, None)
    view = SubmodelView(family, params, half)
    narrow = ClientUpdate(0, 0.5, None, None, 10, compact={n: torch.full_like(t, 1.0)
                                                           for n, t in view.extract(params).items()},
                          placement=view)
    updates = [narrow, _full_update(1, 2.0, params)]
    weights = CoordinateWeights(family, params, weighting, count_weighted=True, label_split=False)
    _, mean = aggregate_per_coordinate(params, updates, weights.round_weights(updates, {}))
    assert float(mean["blocks.1.conv.weight"][0, 0, 0, 0]) == pytest.approx(expected)
    assert float(mean["blocks.1.conv.weight"][7, 7, 0, 0]) == pytest.approx(2.0)  # the full client's alone


# ---------------------------------------------------------------- dynamic capacities

def test_dynamic_capacities_are_drawn_anew_every_round_uniformly_over_the_tiers() -> None:
    tiers = [1.0, 0.5, 0.25, 0.125, 0.0625]
    caps = equal_share_caps(100, tiers, rng=np.random.default_rng(0))
    policy = DynamicCapPolicy(caps, seed=4)
    per_client: dict[int, set[float]] = {}
    draws = []
    for t in range(200):
        sampled = sorted(np.random.default_rng(t).choice(100, 10, replace=False).tolist())
        widths = policy.widths(t, sampled)
        for i, w in widths.items():
            per_client.setdefault(i, set()).add(w)
        draws.extend(widths.values())
    assert np.mean([len(v) for v in per_client.values()]) > 3  # a client's width changes from round to round
    smallest = [i for i in range(100) if caps[i] == 0.0625]
    assert any(1.0 in per_client.get(i, set()) for i in smallest)  # its own cap plays no part
    shares = [draws.count(w) / len(draws) for w in tiers]
    assert max(abs(s - 0.2) for s in shares) < 0.04  # 2,000 draws: a share's SD is 0.009
    assert policy.widths(7, [1, 5]) == DynamicCapPolicy(caps, seed=4).widths(7, [1, 5])


# ---------------------------------------------------------------- Federated Dropout on the ResNet

def _shortcut_pairs(family: PreResNet18Family, selection) -> tuple[int, int]:
    """(mismatched, total) channel pairs an identity shortcut adds: the block's input unit against its
    output unit at each position of the sub-model."""
    mismatched = total = 0
    for tie in family.ties:
        for before, after in zip(tie, tie[1:]):
            mismatched += int((selection[before] != selection[after]).sum())
            total += len(selection[after])
    return mismatched, total


def test_per_layer_random_extraction_adds_different_units_across_identity_shortcuts() -> None:
    family = PreResNet18Family(3, 10, (64, 128, 256, 512))
    g = torch.Generator().manual_seed(0)
    mismatched, total = _shortcut_pairs(family, select_units(family.groups, 0.5, "random", 0, g, family.ties))
    assert total == 32 + 32 + 64 + 128 + 256
    assert mismatched / total > 0.9
    for mode in (ExtractionMode.RANDOM_CONSISTENT, ExtractionMode.PREFIX, ExtractionMode.ROLLING):
        selection = select_units(family.groups, 0.5, mode, 5, g, family.ties)
        assert _shortcut_pairs(family, selection)[0] == 0, mode


# ---------------------------------------------------------------- augmentation

def test_crop_and_flip_are_torchvisions_on_the_padded_image() -> None:
    g = torch.Generator().manual_seed(2)
    images = torch.rand(6, 3, 32, 32, generator=g)
    augment = CropFlip(blank=torch.zeros(3), padding=4)
    drawn = torch.Generator().manual_seed(9)
    replay = torch.Generator().manual_seed(9)
    out = augment(images, drawn)
    top = torch.randint(0, 9, (6,), generator=replay)
    left = torch.randint(0, 9, (6,), generator=replay)
    flip = torch.rand(6, generator=replay) < 0.5
    for k in range(6):
        expected = TF.crop(TF.pad(images[k], [4], fill=0), int(top[k]), int(left[k]), 32, 32)
        if flip[k]:
            expected = TF.hflip(expected)
        assert torch.equal(out[k], expected), k
    assert 0 < int(flip.sum()) < 6 and len(set(top.tolist())) > 1


def test_padding_is_a_black_pixel_after_normalisation() -> None:
    blank = torch.tensor([-1.5, 0.25, 2.0])
    out = CropFlip(blank, padding=4)(torch.zeros(64, 3, 8, 8), torch.Generator().manual_seed(0))
    padded = out[(out != 0).any(dim=1, keepdim=True).expand_as(out)].view(-1)
    assert len(padded) > 0 and set(padded.tolist()) <= set(blank.tolist())
