"""The clients' training augmentation held to the authors' (issue 54, item 3): the committed fixture
`conformance/fedrolex_augmentation.{json,npz}`, written by `conformance/write_fedrolex_fixtures.py` from
AIoT-MLSys-Lab/FedRolex's own CIFAR-10 training transform (`data.fetch_dataset`: `RandomCrop(32, padding=4)`,
`RandomHorizontalFlip()`, `ToTensor()`, `Normalize`), gives the cell (top offset, left offset, flip) of each of
its outputs over thousands of draws of four images, and some of its outputs. The project's `CropFlip`, built
as the runs build it (`methods.federated.loop._prepared`: its default padding, the normalised black as its
blank), called as the runs call it (a mini-batch and a seeded generator) on the same images normalised by the
authors' constants, must give the reference's outputs at their cells (to float rounding) and its cells in the
reference's distribution (chi-square test of homogeneity); padding by one pixel less, offsets short of the
far edge, no flips, only flips and padding with 0 in normalised space must not."""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats as scipy_stats

import methods.federated.augmentation as augmentation
from conformance.fedrolex_augmentation_fixtures import cell_count, cells, crops, images, shows_padding
from methods.federated.augmentation import CropFlip

ROOT = Path(__file__).resolve().parents[1]
META = json.loads((ROOT / "conformance" / "fedrolex_augmentation.json").read_text(encoding="utf-8"))
with np.load(ROOT / "conformance" / "fedrolex_augmentation.npz", allow_pickle=False) as _arrays:
    ARRAYS = {name: _arrays[name] for name in _arrays.files}
TRANSFORM = META["transform"]
CELLS = cell_count(TRANSFORM["padding"])
MEAN = torch.tensor(TRANSFORM["mean"], dtype=torch.float32)[:, None, None]
STD = torch.tensor(TRANSFORM["std"], dtype=torch.float32)[:, None, None]
ALPHA = 1e-3
"""The homogeneity test's level: with its seed fixed the test is deterministic, and a level this small makes
a seed that rejects by chance unlikely (one in a thousand), while the mutations give p far below it."""
TOLERANCE = 2.0 ** -22
"""Float rounding: one float32 ulp at the largest normalised value (|x| < 4 with the authors' constants).
Both sides copy the same float32 values, so the measured difference is 0."""
BATCH = 128
"""Images per call of `CropFlip`: the as-run recipe's batch (the draws' distribution does not depend on it)."""
PROJECT_SEED = 0


def normalised(pixels: np.ndarray) -> torch.Tensor:
    """uint8 images (n x height x width x channels) as the authors' `ToTensor` and `Normalize` make them."""
    return torch.from_numpy(pixels).permute(0, 3, 1, 2).to(torch.float32).div(255).sub(MEAN).div(STD)


BLANK = normalised(np.full((1, 1, 1, len(TRANSFORM["mean"])), TRANSFORM["fill"], dtype=np.uint8))[0, :, 0, 0]
"""The authors' padding, a black pixel, normalised: what the runs give `CropFlip` as its blank."""


@dataclass(frozen=True)
class Comparison:
    """The project's `CropFlip` against the fixture: its draws' cells per image, how many of its outputs are no
    cell's crop of their image, and the largest difference from the reference's recorded outputs at their
    cells (inf where the project never drew a recorded cell)."""

    counts: np.ndarray
    unidentified: int
    difference: float

    @property
    def p(self) -> float:
        """Pearson's chi-square test of homogeneity of the cells' counts, pooled over the images."""
        table = np.stack([ARRAYS["counts"].sum(axis=0), self.counts.sum(axis=0)])
        return float(scipy_stats.chi2_contingency(table, correction=False).pvalue)

    @property
    def every_cell(self) -> bool:
        return bool((self.counts.sum(axis=0) > 0).all())

    @property
    def agrees(self) -> bool:
        return self.unidentified == 0 and self.every_cell and self.p >= ALPHA and self.difference <= TOLERANCE


def compare() -> Comparison:
    """`CropFlip` as the runs build it, `META['draws']` draws of each fixture image in batches of `BATCH`."""
    augment, generator = CropFlip(BLANK), torch.Generator().manual_seed(PROJECT_SEED)
    recorded = {(int(k), int(c)): i for i, (k, c) in enumerate(zip(ARRAYS["samples/image"], ARRAYS["samples/cell"]))}
    counts, unidentified, difference = np.zeros((len(ARRAYS["images"]), CELLS), dtype=np.int64), 0, {}
    for k, image in enumerate(ARRAYS["images"]):
        x = normalised(image[None]).expand(BATCH, -1, -1, -1)
        for start in range(0, META["draws"], BATCH):
            outputs = augment(x[:min(BATCH, META["draws"] - start)], generator).numpy()
            found = cells(outputs, image, TRANSFORM)
            counts[k] += np.bincount(found[found >= 0], minlength=CELLS)
            unidentified += int((found < 0).sum())
            for output, cell in zip(outputs, found.tolist()):
                if (k, cell) in recorded and (k, cell) not in difference:
                    difference[(k, cell)] = float(np.abs(output - ARRAYS["samples/output"][recorded[(k, cell)]]).max())
    largest = max(difference.values()) if len(difference) == len(recorded) else float("inf")
    return Comparison(counts, unidentified, largest)


@functools.cache
def as_built() -> Comparison:
    return compare()


def test_the_fixture_is_the_authors_transform_on_the_writers_images() -> None:
    assert META["reference"]["repository"] == "AIoT-MLSys-Lab/FedRolex"
    assert META["reference"]["commit"].startswith("8135109") and META["reference"]["imported"] == "data.py"
    assert (ROOT / "conformance" / "fedrolex_augmentation.npz").stat().st_size < 200_000
    assert (TRANSFORM["size"], TRANSFORM["padding"], TRANSFORM["fill"], TRANSFORM["flip"]) == ([32, 32], 4, 0, 0.5)
    assert np.array_equal(ARRAYS["images"], images())
    for image in ARRAYS["images"]:  # every cell's output is its own
        assert len({crop.tobytes() for crop in crops(image, TRANSFORM["padding"], TRANSFORM["fill"])}) == CELLS
    assert ARRAYS["counts"].shape == (len(ARRAYS["images"]), CELLS)
    assert (ARRAYS["counts"].sum(axis=1) == META["draws"]).all() and (ARRAYS["counts"] > 0).all()
    marker = np.full(ARRAYS["images"].shape[1:], 255, dtype=np.uint8)
    border = crops(marker, TRANSFORM["padding"], 0) == 0  # per cell, where the crop shows the padding
    shown = {(int(k), int(c) % 2) for k, c in zip(ARRAYS["samples/image"], ARRAYS["samples/cell"])}
    assert shown == {(k, flip) for k in range(len(ARRAYS["images"])) for flip in (0, 1)}
    for k, cell, output in zip(ARRAYS["samples/image"], ARRAYS["samples/cell"], ARRAYS["samples/output"]):
        assert cells(output[None], ARRAYS["images"][k], TRANSFORM).tolist() == [cell]
        assert shows_padding(int(cell), TRANSFORM["padding"]) and border[cell].any()
        blank = BLANK[:, None, None].expand(output.shape).numpy()
        assert np.array_equal(output[border[cell]], blank[border[cell]])  # the authors pad with black, normalised


def test_crop_flip_reproduces_the_references_outputs_at_their_cells() -> None:
    found = as_built()
    assert found.unidentified == 0  # every output is some cell's crop, padded with the authors' black
    assert found.difference <= TOLERANCE


def test_crop_flip_draws_the_cells_as_the_reference_does() -> None:
    found = as_built()
    assert found.counts.sum() == ARRAYS["counts"].sum()
    assert found.every_cell and (ARRAYS["counts"].sum(axis=0) > 0).all()
    assert found.p >= ALPHA


def _after_init(monkeypatch, change: Callable[[CropFlip], None]) -> None:
    init = CropFlip.__init__

    def changed(self: CropFlip, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        change(self)

    monkeypatch.setattr(CropFlip, "__init__", changed)


def _padded_by_one_less(monkeypatch) -> None:
    _after_init(monkeypatch, lambda augment: setattr(augment, "padding", augment.padding - 1))


def _padded_with_zero(monkeypatch) -> None:
    _after_init(monkeypatch, lambda augment: setattr(augment, "blank", torch.zeros_like(augment.blank)))


def _offsets_short_of_the_far_edge(monkeypatch) -> None:
    randint = torch.randint
    monkeypatch.setattr(augmentation.torch, "randint",
                        lambda low, high, *args, **kwargs: randint(low, high - 1, *args, **kwargs))


def _flipped_with_probability(probability: float) -> Callable:
    def mutation(monkeypatch) -> None:
        rand = torch.rand  # `CropFlip` flips where its draw is below 1/2: here where the generator's is below p
        monkeypatch.setattr(augmentation.torch, "rand", lambda size, generator: (
            rand(size, generator=generator) >= probability).to(torch.float32))
    return mutation


MUTATIONS = {"padding 3": _padded_by_one_less, "offsets 0..2p-1": _offsets_short_of_the_far_edge,
             "no flip": _flipped_with_probability(0.0), "always flipped": _flipped_with_probability(1.0),
             "flipped with probability 0.4": _flipped_with_probability(0.4),
             "padding 0 in normalised space": _padded_with_zero}


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_mutated_crop_flip_is_caught(mutation: str, monkeypatch) -> None:
    MUTATIONS[mutation](monkeypatch)
    assert not compare().agrees
