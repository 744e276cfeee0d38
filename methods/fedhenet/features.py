"""Feature extraction with a frozen backbone, and a content-addressed .npy cache."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .backbones import Backbone, load_model

Progress = Callable[[int, int], None]


def preprocess(images_uint8_nhwc: np.ndarray, backbone: Backbone) -> torch.Tensor:
    """uint8 [N,H,W,3] -> float32 [N,3,R,R]: bilinear antialiased resize, then normalise."""
    x = torch.from_numpy(np.ascontiguousarray(images_uint8_nhwc)).permute(0, 3, 1, 2).float() / 255.0
    size = (backbone.resolution, backbone.resolution)
    if tuple(x.shape[-2:]) != size:
        x = F.interpolate(x, size=size, mode="bilinear", align_corners=False, antialias=True)
    mean = torch.tensor(backbone.mean, dtype=torch.float32).view(1, 3, 1, 1)
    std = torch.tensor(backbone.std, dtype=torch.float32).view(1, 3, 1, 1)
    return (x - mean) / std


def _check_images(images: np.ndarray) -> None:
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"expected uint8 images [N,H,W,3], got {images.dtype} {images.shape}")


def extract_features(backbone: Backbone, images_uint8_nhwc: np.ndarray, batch_size: int = 64,
                     progress: Progress | None = None, model: nn.Module | None = None,
                     device: str = "cpu") -> np.ndarray:
    """float32 [N, feature_dim] features; `model` reuses an already loaded extractor (on `device`)."""
    _check_images(images_uint8_nhwc)
    model = load_model(backbone).to(device) if model is None else model
    n = len(images_uint8_nhwc)
    out = np.empty((n, backbone.feature_dim), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, n, batch_size):
            stop = min(start + batch_size, n)
            batch = preprocess(images_uint8_nhwc[start:stop], backbone).to(device)
            out[start:stop] = model(batch).float().cpu().numpy()
            if progress is not None:
                progress(stop, n)
    return out


def cache_key(backbone: Backbone, images_uint8_nhwc: np.ndarray, producer: str) -> str:
    """sha256 over the backbone identity, resolution, normalisation, the image content and
    `producer`: the identity of the code and libraries that compute the features (the caller's
    digest of this module's import closure and of the torch/torchvision/weights versions)."""
    image_digest = hashlib.sha256(np.ascontiguousarray(images_uint8_nhwc).tobytes()).hexdigest()
    identity = {
        "backbone": backbone.name, "weights": backbone.weights_id, "resolution": backbone.resolution,
        "mean": list(backbone.mean), "std": list(backbone.std),
        "images_shape": list(images_uint8_nhwc.shape), "images_sha256": image_digest, "producer": producer,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def _load_valid(path: Path, expected_shape: tuple[int, int]) -> np.ndarray | None:
    """The cached array, or None (after deleting the file) when it is unreadable or malformed."""
    try:
        arr = np.load(path, allow_pickle=False)
        if arr.shape == expected_shape and arr.dtype == np.float32 and np.isfinite(arr).all():
            return arr
    except (OSError, ValueError, EOFError):
        pass
    path.unlink(missing_ok=True)
    return None


def _atomic_save(path: Path, arr: np.ndarray) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy.tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, arr, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cached_features(backbone: Backbone, images_uint8_nhwc: np.ndarray, cache_dir: str | Path, *,
                    producer: str, batch_size: int = 64, progress: Progress | None = None,
                    model: nn.Module | None = None) -> np.ndarray:
    """extract_features, memoised as <cache_dir>/<cache_key>.npy; corrupt entries are recomputed."""
    _check_images(images_uint8_nhwc)
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / f"{cache_key(backbone, images_uint8_nhwc, producer)}.npy"
    expected = (len(images_uint8_nhwc), backbone.feature_dim)
    if path.exists():
        cached = _load_valid(path, expected)
        if cached is not None:
            return cached
    feats = extract_features(backbone, images_uint8_nhwc, batch_size, progress, model)
    _atomic_save(path, feats)
    return feats
