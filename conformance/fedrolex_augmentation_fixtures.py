"""The FedRolex augmentation fixture: the authors' own CIFAR-10 training transform on fixed images (issue 54,
item 3).

`write_fedrolex_fixtures.py` calls `augmentation_fixture` (and `augmentation_metadata`) after the client's
fixture. It runs AIoT-MLSys-Lab/FedRolex's `data.fetch_dataset('CIFAR10', 'label')` unchanged, so that the
training transform is the one the authors' code builds (their `datasets.Compose` of torchvision's
`RandomCrop(32, padding=4)`, `RandomHorizontalFlip()`, `ToTensor()` and `Normalize` with their constants), and
applies it through their `datasets/cifar.py` `CIFAR10.__getitem__`, unchanged (the uint8 image made a PIL
image, the input `{'img': ..., 'label': ...}`, the transform applied to its `img`).

Stood in, and nothing else:
- the `datasets` package's `__init__` (it imports every reader, language-model and ImageNet ones included): a
  package over the checkout's `datasets/` folder whose `Compose` is the authors' (`datasets/utils.py`,
  imported unchanged) and whose `CIFAR10` is `CapturedCIFAR10`: the authors' `CIFAR10` with its `__init__`
  (which reads, or downloads, the data set) replaced by one that only keeps the arguments it is given, the
  transform among them; its images are then set to the fixture's;
- `anytree` and `tqdm`, where they are not installed, while `datasets/utils.py` and `datasets/cifar.py` are
  imported: empty modules (the authors' class trees and download progress, which nothing here calls).

Inputs (seeded, the same bytes on every run): `IMAGES` images of 32 x 32 x 3 uint8 pixels drawn from 1..255
(none is the padding's black), so that the (2p + 1)^2 x 2 cells (top, left, flip) give pairwise distinct
outputs (checked). Each image is transformed `DRAWS` times after the torch stream is seeded `SEED`
(torchvision draws the crop's offsets and the flip from it). Each output is identified by exact match
(`cells`): its pixels, read back through the authors' normalisation, are those of exactly one cell's crop of
the image padded with the transform's fill. Recorded: each image's cell counts, and per image the
reference's first outputs at two cells that show the padding, one flipped and one not.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from torchvision import transforms

IMAGES = 4
IMAGE_SHAPE = (32, 32, 3)
"""Height, width, channels: a CIFAR-10 image as the authors' `CIFAR10` stores it (`Image.fromarray` reads it)."""
DRAWS = 4000
"""Per image: 16,000 draws over 162 cells, about 99 a cell."""
SEED = 0
DATA_NAME, SUBSET = "CIFAR10", "label"
"""`main_resnet.py`'s `fetch_dataset(cfg['data_name'], cfg['subset'])` for the README's CIFAR-10 runs."""
PIXEL_ROUNDING = 1e-3
"""How far (in units of 1/255) an output's value may lie from a whole pixel after the normalisation is
undone, for the output to be read as pixels: float32 rounding leaves about 3e-5."""


def images() -> np.ndarray:
    """The fixture's images (IMAGES x 32 x 32 x 3 uint8), every pixel in 1..255."""
    return np.random.default_rng([SEED, IMAGES]).integers(1, 256, size=(IMAGES, *IMAGE_SHAPE), dtype=np.uint8)


def cell_count(padding: int) -> int:
    return (2 * padding + 1) ** 2 * 2


def cell_of(top: int, left: int, flip: bool, padding: int) -> int:
    """A cell's index: (top offset, left offset into the padded image, flipped), top first, not flipped first."""
    return (top * (2 * padding + 1) + left) * 2 + int(flip)


def crops(image: np.ndarray, padding: int, fill: int) -> np.ndarray:
    """Every cell's output of ``image`` (H x W x C uint8) before `ToTensor`, as C x H x W uint8, in the order of
    `cell_of`: the image padded by ``padding`` pixels of ``fill``, cropped back to its size at (top, left),
    mirrored left-right where flipped."""
    height, width, _ = image.shape
    padded = np.pad(image, ((padding, padding), (padding, padding), (0, 0)), constant_values=fill)
    found = []
    for top in range(2 * padding + 1):
        for left in range(2 * padding + 1):
            crop = padded[top:top + height, left:left + width].transpose(2, 0, 1)
            found.extend([crop, crop[:, :, ::-1]])
    return np.ascontiguousarray(np.stack(found))


def cells(outputs: np.ndarray, image: np.ndarray, transform: dict) -> np.ndarray:
    """The cell of each output (n x C x H x W, normalised by ``transform``'s mean and std) of ``image``: the cell
    whose crop its pixels are, read back through the normalisation; -1 where its values are not whole pixels
    (within `PIXEL_ROUNDING`) or the pixels no cell's crop."""
    mean = np.asarray(transform["mean"], dtype=np.float64)[:, None, None]
    std = np.asarray(transform["std"], dtype=np.float64)[:, None, None]
    values = (np.asarray(outputs, dtype=np.float64) * std + mean) * 255
    rounded = np.rint(values)
    whole = np.abs(values - rounded).reshape(len(values), -1).max(axis=1) <= PIXEL_ROUNDING
    pixels = np.clip(rounded, 0, 255).astype(np.uint8)
    by_bytes = {crop.tobytes(): i for i, crop in enumerate(crops(image, transform["padding"], transform["fill"]))}
    return np.asarray([by_bytes.get(p.tobytes(), -1) if ok else -1 for p, ok in zip(pixels, whole)], dtype=np.int64)


def shows_padding(cell: int, padding: int) -> bool:
    top, left = divmod(cell // 2, 2 * padding + 1)
    return top != padding or left != padding


@contextlib.contextmanager
def stood_in_datasets(root: Path, data: types.ModuleType) -> Iterator[None]:
    """While the block runs: the checkout's `datasets` package, its `__init__` stood in (a package whose
    `Compose` is the authors' and whose `CIFAR10` is `CapturedCIFAR10`), bound as `data.datasets`; `anytree`
    and `tqdm` empty modules where missing. Everything restored after."""
    names = ("datasets", "datasets.utils", "datasets.transforms", "datasets.cifar", "anytree", "tqdm")
    saved, bound = {name: sys.modules.get(name) for name in names}, data.datasets
    package = types.ModuleType("datasets")
    package.__path__ = [str(root / "datasets")]
    sys.modules["datasets"] = package
    for missing, attributes in (("anytree", {}), ("tqdm", {"tqdm": None})):
        if saved[missing] is None and importlib.util.find_spec(missing) is None:
            stand_in = types.ModuleType(missing)
            stand_in.__dict__.update(attributes)
            sys.modules[missing] = stand_in
    try:
        readers, cifar = importlib.import_module("datasets.utils"), importlib.import_module("datasets.cifar")
        for module in (readers, cifar):
            if not Path(str(module.__file__)).resolve().is_relative_to(root):
                raise SystemExit(f"imported {module.__name__} from {module.__file__}, not from {root}")

        class CapturedCIFAR10(cifar.CIFAR10):
            """The authors' CIFAR10 with an `__init__` that only keeps its arguments (it reads no file)."""

            def __init__(self, root: str, split: str, subset: str, transform=None) -> None:
                self.root, self.split, self.subset, self.transform = root, split, subset, transform

        package.Compose, package.CIFAR10 = readers.Compose, CapturedCIFAR10  # type: ignore[attr-defined]
        data.datasets = package  # type: ignore[attr-defined]
        yield
    finally:
        data.datasets = bound  # type: ignore[attr-defined]
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def transform_described(transform) -> dict:
    """The captured training transform's crop, flip and normalisation, read from its own objects."""
    steps = transform.transforms
    crop = next((t for t in steps if isinstance(t, transforms.RandomCrop)), None)
    flip = next((t for t in steps if isinstance(t, transforms.RandomHorizontalFlip)), None)
    normalize = next((t for t in steps if isinstance(t, transforms.Normalize)), None)
    if crop is None or flip is None or normalize is None:
        raise SystemExit(f"the reference's CIFAR-10 training transform is not a crop, flip and normalisation: "
                         f"{transform!r}")
    return {"pipeline": [repr(t) for t in steps], "size": list(crop.size), "padding": int(crop.padding),
            "fill": int(crop.fill), "padding_mode": crop.padding_mode, "flip": float(flip.p),
            "mean": [float(v) for v in normalize.mean], "std": [float(v) for v in normalize.std]}


def augmentation_fixture(root: Path, data: types.ModuleType, arrays: dict[str, np.ndarray]) -> dict:
    """The reference's training transform applied `DRAWS` times to each of `images()`, its cells' counts and
    sample outputs into ``arrays``; the fixture's description."""
    with stood_in_datasets(root, data), contextlib.redirect_stdout(io.StringIO()):
        train = data.fetch_dataset(DATA_NAME, SUBSET)["train"]
    transform = transform_described(train.transform)
    fixed = images()
    train.img, train.target = fixed, np.zeros(IMAGES, dtype=np.int64)
    padding, counts = transform["padding"], []
    samples: dict[tuple[int, bool], tuple[int, np.ndarray]] = {}
    torch.manual_seed(SEED)
    for k, image in enumerate(fixed):
        if len({crop.tobytes() for crop in crops(image, padding, transform["fill"])}) != cell_count(padding):
            raise SystemExit(f"image {k}: two cells give the same output")
        outputs = np.stack([train[k]["img"].numpy() for _ in range(DRAWS)])
        found = cells(outputs, image, transform)
        if (found < 0).any():
            raise SystemExit(f"image {k}: {int((found < 0).sum())} outputs of the reference are no cell's crop")
        counts.append(np.bincount(found, minlength=cell_count(padding)))
        for flip in (False, True):
            first = next(i for i, cell in enumerate(found) if cell % 2 == flip and shows_padding(cell, padding))
            samples[(k, flip)] = (int(found[first]), outputs[first])
    arrays.update({"images": fixed, "counts": np.stack(counts),
                   "samples/image": np.asarray([k for k, _ in samples], dtype=np.int64),
                   "samples/cell": np.asarray([cell for cell, _ in samples.values()], dtype=np.int64),
                   "samples/output": np.stack([output for _, output in samples.values()]).astype(np.float32)})
    return {"transform": transform, "images": {"count": IMAGES, "shape": list(IMAGE_SHAPE), "pixels": [1, 255]},
            "draws": DRAWS, "seed": SEED, "pixel_rounding": PIXEL_ROUNDING}


def augmentation_metadata(commit: str, repository: str, description: dict) -> dict:
    """`fedrolex_augmentation.json`: the reference, what the fixture covers (the attribution rule's input), the
    inputs and the transform described, and where the arrays are."""
    return {
        "reference": {"repository": repository, "commit": commit, "imported": "data.py",
                      "written_by": ("conformance/write_fedrolex_fixtures.py "
                                     "(conformance/fedrolex_augmentation_fixtures.py)")},
        "covers": {
            "kind": "federated_training",
            "parts": ["augmentation"],
            "text": ("the authors' CIFAR-10 training augmentation (FedRolex data.py `fetch_dataset` at "
                     f"{commit[:7]}: torchvision's RandomCrop(32, padding=4) with black padding, then "
                     "RandomHorizontalFlip(), per image, before ToTensor and Normalize) reproduced by the clients' "
                     "`crop_flip` (methods/federated/augmentation.py `CropFlip`, padding with the normalised black): "
                     "every output, its padded border included, to float rounding at its crop offsets and flip, "
                     "and the 162 offset-and-flip cells' frequencies in distribution; on normalised images, which "
                     "makes it any per-channel normalisation's (crop and flip commute with it); `none` needs no "
                     "fixture: it runs no augmentation, and federated training declares the part idle there "
                     "(`ExperimentKind.conformance_idle`); not covered: draw for draw (the authors draw from the "
                     "global torch stream image by image, the project from the client's generator batch by batch), "
                     "nor the normalisation's constants (the runs normalise by the federation's own mean and std: "
                     "the client fixture's inputs as given)"),
            "settings": {"federation.augmentation": ["crop_flip"]}},
        **description,
        "cells": "cell = (top * (2 * padding + 1) + left) * 2 + flip: top and left the crop's offsets into the "
                 "padded image, flip 1 where mirrored",
        "arrays": ("fedrolex_augmentation.npz: images (uint8, images x height x width x channels, as the "
                   "authors' CIFAR10 stores them), counts (images x cells: the reference's outputs per cell), "
                   "samples/image, samples/cell, samples/output (float32 channels x height x width: the "
                   "reference's output of that image, at that cell)"),
    }
