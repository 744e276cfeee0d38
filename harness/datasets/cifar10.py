"""CIFAR-10's loader: decodes its fetched files into arrays (`cifar10_source` finds and fetches them).

Two forms: a JPEG ImageFolder archive (`cifar10-jpeg/{train,test}/<class>/<NNNN>.jpg`, decoded once
and cached as .npy in a folder the caller keys) and torchvision's extracted `cifar-10-batches-py/`.
This module is part of the code identity of every run that reads CIFAR-10 (harness.running.planning.run_code),
so it imports nothing that finds, fetches or downloads files.
"""
from __future__ import annotations

import io
import tarfile
from pathlib import Path, PurePosixPath

import numpy as np
from PIL import Image

from .archives import read_tar_member
from .arraycache import load_arrays, save_arrays
from .arrays import ImageData
from .errors import DataCheckFailed

# fedclaims behaviour version: 1

TORCHVISION_FOLDER = "cifar-10-batches-py"
TORCHVISION_FILES = ("data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4",
                     "data_batch_5", "test_batch", "batches.meta")
IMAGE_SIZE = (32, 32)
MAX_IMAGE_BYTES = 256 << 10  # one 32x32 image file; CIFAR's JPEGs are 1-2 KB
# The libraries whose decoding shapes the cached arrays; with this module's code they key the cache.
DECODING_LIBRARIES = ("Pillow", "numpy")
_SPLITS = ("train", "test")


def load_jpeg_archive(archive: Path, fingerprint: str, cache_folder: Path) -> ImageData:
    """The archive's images, decoded once into ``cache_folder`` and read from there afterwards.

    The caller keys ``cache_folder`` by the archive's bytes and by this module's code and
    DECODING_LIBRARIES (`cifar10_source.decoded_cache_folder`), so an edit of the decoder or a new
    Pillow decodes again."""
    cached = load_arrays(cache_folder)
    if cached is not None:
        arrays, meta = cached
        return ImageData(**arrays, classes=tuple(meta["classes"]), fingerprint=fingerprint)
    arrays, classes = decode_jpeg_archive(archive)
    save_arrays(cache_folder, arrays, {"classes": list(classes), "source": archive.name})
    return ImageData(**arrays, classes=classes, fingerprint=fingerprint)


def decode_jpeg_archive(archive: Path) -> tuple[dict[str, np.ndarray], tuple[str, ...]]:
    """Stream a ``<root>/{train,test}/<class>/<file>.jpg`` tar and decode every image.

    Classes are the sorted folder names; within a class, files are sorted by name. A member
    above MAX_IMAGE_BYTES, an image whose header is not 32x32 and a decompression bomb are
    refused before decoding, as DataCheckFailed naming the member.
    """
    images: dict[tuple[str, str, str], np.ndarray] = {}
    with tarfile.open(archive, mode="r|*") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or len(parts) < 3 or parts[-3] not in _SPLITS:
                continue
            if not parts[-1].lower().endswith((".jpg", ".jpeg", ".png")):
                continue
            data = read_tar_member(tar, member, MAX_IMAGE_BYTES, archive)
            if data is not None:
                images[(parts[-3], parts[-2], parts[-1])] = decode_image(data, f"{archive}: member {member.name}")
    return _stack_splits(images)


def decode_image(data: bytes, what: str) -> np.ndarray:
    """One 32x32 image as uint8 RGB; its header size is checked before any pixel is decoded."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.size != IMAGE_SIZE:
                raise DataCheckFailed(f"{what} is {image.size[0]}x{image.size[1]} pixels, "
                                      f"not CIFAR-10's {IMAGE_SIZE[0]}x{IMAGE_SIZE[1]}")
            return np.asarray(image.convert("RGB"))
    except Image.DecompressionBombError as error:
        raise DataCheckFailed(f"{what} is a decompression bomb: {error}") from error


def _stack_splits(images: dict[tuple[str, str, str], np.ndarray]
                  ) -> tuple[dict[str, np.ndarray], tuple[str, ...]]:
    classes = {split: sorted({c for s, c, _ in images if s == split}) for split in _SPLITS}
    if not classes["train"] or classes["train"] != classes["test"]:
        raise ValueError(f"train classes {classes['train']} and test classes "
                         f"{classes['test']} must be the same non-empty set")
    index = {name: i for i, name in enumerate(classes["train"])}
    arrays: dict[str, np.ndarray] = {}
    for split in _SPLITS:
        keys = sorted((index[c], f, c) for s, c, f in images if s == split)
        shapes = {images[(split, c, f)].shape for _, f, c in keys}
        if len(shapes) != 1:
            raise ValueError(f"{split} images have differing shapes {sorted(shapes)}")
        arrays[f"{split}_x"] = np.stack([images[(split, c, f)] for _, f, c in keys])
        arrays[f"{split}_y"] = np.array([label for label, _, _ in keys], dtype=np.int64)
    return arrays, tuple(classes["train"])


def load_torchvision(root: Path, fingerprint: str) -> ImageData:
    """Read an extracted ``root``/cifar-10-batches-py/; torchvision checks each batch's md5 before it
    unpickles it."""
    from torchvision.datasets import CIFAR10

    train = CIFAR10(root=str(root), train=True, download=False)
    test = CIFAR10(root=str(root), train=False, download=False)
    return ImageData(
        train_x=np.asarray(train.data, dtype=np.uint8),
        train_y=np.asarray(train.targets, dtype=np.int64),
        test_x=np.asarray(test.data, dtype=np.uint8),
        test_y=np.asarray(test.targets, dtype=np.int64),
        classes=tuple(train.classes),
        fingerprint=fingerprint,
    )
