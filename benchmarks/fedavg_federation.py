"""The federation both FedAvg benchmarks train: the smoke CNN on CIFAR-10 images (deterministic
synthetic tensors where the data set is not available), dealt IID to clients that all take part
in every round, with the smoke profile's local SGD."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch

from methods.federated import ClientData, FederatedDataset, FederationConfig
from methods.federated.parts import Choice
from methods.federated.policies import FullPolicy
from methods.models.conv import ConvFamily
from methods.partition import iid_partition


@dataclass(frozen=True)
class FedAvgSetup:
    clients: int
    per_client: int
    rounds: int
    local_epochs: int = 2
    hidden: tuple[int, ...] = (16, 32, 64)
    test_samples: int = 500
    calibration_samples: int = 256
    seed: int = 0
    batch_size: int = 32
    lr: float = 0.01
    lr_decay: float = 0.995
    momentum: float = 0.9
    weight_decay: float = 1e-4
    clip_norm: float = 10.0

    def family(self) -> ConvFamily:
        return ConvFamily(3, 10, list(self.hidden))

    def federation_config(self) -> FederationConfig:
        """FedAvg: every client at full width every round, updates weighted by sample counts."""
        return FederationConfig(num_clients=self.clients, clients_per_round=self.clients, rounds=self.rounds,
                                local_epochs=self.local_epochs, batch_size=self.batch_size, lr=self.lr,
                                lr_decay=self.lr_decay, momentum=self.momentum, weight_decay=self.weight_decay,
                                clip_norm=self.clip_norm, policy=Choice.of(FullPolicy), weighting="samples",
                                eval_every=self.rounds)


def _images() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """CIFAR-10 from FEDCLAIMS_DATA (or the decoded cache), else seeded random uint8 images."""
    if os.environ.get("FEDCLAIMS_DATA"):
        from harness.datasets.errors import DatasetUnavailable
        from harness.datasets.locations import DataLocations
        from harness.datasets.registry import load_dataset
        try:
            data = load_dataset("cifar10", DataLocations.from_env())
            return data.train_x, data.train_y, data.test_x, data.test_y, "CIFAR-10"
        except DatasetUnavailable:
            pass
    rng = np.random.default_rng(0)
    return (rng.integers(0, 256, (5000, 32, 32, 3), dtype=np.uint8), rng.integers(0, 10, 5000),
            rng.integers(0, 256, (1000, 32, 32, 3), dtype=np.uint8), rng.integers(0, 10, 1000), "synthetic")


def _tensor(images: np.ndarray, mean: np.ndarray, std: np.ndarray) -> torch.Tensor:
    array = (images.astype(np.float32) / 255.0 - mean) / std
    return torch.from_numpy(np.ascontiguousarray(array.transpose(0, 3, 1, 2)))


def build_federation(setup: FedAvgSetup) -> tuple[FederatedDataset, str]:
    """(the federation, where its images come from)."""
    train_x, train_y, test_x, test_y, source = _images()
    rng = np.random.default_rng(setup.seed)
    pool = rng.choice(len(train_y), setup.clients * setup.per_client, replace=False)
    parts = [pool[part] for part in iid_partition(len(pool), setup.clients, rng)]
    pixels = train_x[pool].astype(np.float32) / 255.0
    mean, std = pixels.mean(axis=(0, 1, 2)), pixels.std(axis=(0, 1, 2))

    def part(x: np.ndarray, y: np.ndarray) -> ClientData:
        return ClientData(_tensor(x, mean, std), torch.from_numpy(y.astype(np.int64)))

    test = rng.choice(len(test_y), setup.test_samples, replace=False)
    calibration = _tensor(train_x[pool[:setup.calibration_samples]], mean, std)
    return FederatedDataset([part(train_x[p], train_y[p]) for p in parts], part(test_x[test], test_y[test]),
                            calibration, 10), source
