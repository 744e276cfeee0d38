"""Extraction as the round loop applies it: per-client random draws, shared rolling windows."""
import torch

from methods.extraction import ExtractionMode
from methods.federated.submodel import SubmodelView
from methods.models.conv import ConvFamily
from methods.seeding import torch_generator

FAMILY = ConvFamily(3, 10, [32, 64, 128])
PARAMS = {name: p.detach() for name, p in FAMILY.build().named_parameters()}


def _view(width: float, mode: ExtractionMode, round_index: int, client: int) -> SubmodelView:
    generator = torch_generator(7, "extraction", round_index, client) if mode is ExtractionMode.RANDOM else None
    return SubmodelView.for_width(FAMILY, PARAMS, width, mode, round_index, generator)


def test_random_extraction_is_drawn_independently_per_client_and_layer():
    a, b = _view(0.25, ExtractionMode.RANDOM, 3, client=0), _view(0.25, ExtractionMode.RANDOM, 3, client=1)
    for group in FAMILY.groups:
        assert len(a.units(group)) == len(b.units(group))
        assert not torch.equal(a.units(group), b.units(group)), group
    # different layers of one client are separate draws, not one pattern repeated
    assert not torch.equal(a.units("block0"), a.units("block1")[: len(a.units("block0"))])
    # the same client, round and seed reproduce the draw
    assert torch.equal(a.units("block2"), _view(0.25, ExtractionMode.RANDOM, 3, client=0).units("block2"))


def test_rolling_window_is_shared_by_the_clients_of_a_round_and_nested():
    for round_index in (0, 5, 31, 127):
        small, large = (_view(w, ExtractionMode.ROLLING, round_index, client=c) for w, c in ((0.25, 0), (0.5, 4)))
        for group, n in FAMILY.groups.items():
            assert set(small.units(group).tolist()) <= set(large.units(group).tolist())
            assert int(small.units(group)[0]) == round_index % n


def test_full_width_is_never_sliced_whatever_the_mode():
    for mode in ExtractionMode:
        assert _view(1.0, mode, 9, client=2).is_full
