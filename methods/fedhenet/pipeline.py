"""Each method's whole pipeline from decoded images, timed, as the FedHENet repository runs it.

FedHENet: every client pushes its images through the frozen backbone once, the test set is
embedded once for the evaluation, then the one-round protocol runs. The last-layer
FedAvg/FedProx baselines: the backbone runs on every batch of every local epoch of every
round, and on the test set at every round's evaluation. Loading the backbone is outside
the clock (the authors' runner loads models before it starts its timer).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from .backbones import Backbone
from .baselines import Embed, LinearFLConfig, LinearFLResult, run_linear_fl
from .features import extract_features, preprocess
from .protocol import run_fedhenet


def backbone_embedder(backbone: Backbone, model: nn.Module, device: str = "cpu") -> Embed:
    """uint8 images [n,H,W,3] -> float32 CPU features [n, D] through the frozen `model`."""
    def embed(images: np.ndarray) -> torch.Tensor:
        with torch.no_grad():
            return model(preprocess(images, backbone).to(device)).float().cpu()
    return embed


def fedhenet_from_images(backbone: Backbone, model: nn.Module, client_images: Sequence[np.ndarray],
                         client_labels: Sequence[np.ndarray], test_images: np.ndarray,
                         test_labels: np.ndarray, num_classes: int, *, batch_size: int,
                         device: str = "cpu", **protocol: Any) -> dict[str, Any]:
    """run_fedhenet's result plus `extraction_seconds` and `pipeline_seconds` (extraction + protocol)."""
    start = time.perf_counter()
    client_features = [extract_features(backbone, images, batch_size, model=model, device=device)
                       for images in client_images]
    test_features = extract_features(backbone, test_images, batch_size, model=model, device=device)
    extraction = time.perf_counter() - start
    out = run_fedhenet(client_features, client_labels, test_features, test_labels, num_classes, **protocol)
    out["extraction_seconds"] = extraction
    out["pipeline_seconds"] = time.perf_counter() - start
    return out


def linear_fl_from_images(backbone: Backbone, model: nn.Module, client_images: Sequence[np.ndarray],
                          client_labels: Sequence[np.ndarray], test_images: np.ndarray,
                          test_labels: np.ndarray, num_classes: int, config: LinearFLConfig,
                          device: str = "cpu") -> LinearFLResult:
    """The last-layer baseline with the backbone in the loop; its wall_seconds is the pipeline's."""
    return run_linear_fl(client_images, client_labels, test_images, test_labels, num_classes, config,
                         embed=backbone_embedder(backbone, model, device), feature_dim=backbone.feature_dim)
