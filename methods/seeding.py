"""Named random streams: every draw of a run comes from a generator keyed by (seed, stream[, round, client]).

Two encodings of a stream's name into its seed exist, each the one its draws have always used, so
that records keep their bits: `derive_seed` for the round loop's streams (initial weights, client
sampling, mini-batch order, extraction, policies' draws) and `setup_seed` for the draws that set a
run up (the partition, the caps, the test and calibration subsets, trial orders, payload values).
A new stream uses `derive_seed`.
"""
from __future__ import annotations

import hashlib

import numpy as np
import torch

Key = str | int


def derive_seed(seed: int, *keys: Key) -> int:
    """A 63-bit seed that depends only on ``seed`` and the stream ``keys`` (not on call order)."""
    parts = tuple(int(k) if isinstance(k, (int, np.integer)) else str(k) for k in keys)
    digest = hashlib.sha256(repr((int(seed), *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def setup_seed(seed: int, *stream: object) -> int:
    """A 63-bit seed for one of the draws that set a run up, e.g. (seed, 'partition')."""
    text = "/".join([str(seed), *map(str, stream)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def torch_generator(seed: int, *keys: Key) -> torch.Generator:
    """A CPU ``torch.Generator`` for the stream; draw on CPU and move the results to the device."""
    generator = torch.Generator()
    generator.manual_seed(derive_seed(seed, *keys))
    return generator


def numpy_rng(seed: int, *keys: Key) -> np.random.Generator:
    """A numpy ``Generator`` for the stream."""
    return np.random.default_rng(derive_seed(seed, *keys))
