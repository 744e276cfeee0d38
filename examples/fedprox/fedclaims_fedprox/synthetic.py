"""Federated training on FedProx's Synthetic(α, β) data with multinomial logistic regression (§5.1).

The data follow the authors' generator (data/synthetic_1_1/generate_synthetic.py): 30 devices,
x ∈ R^60, 10 classes; device k has lognormal(4, 2) + 50 samples, W_k ~ N(u_k, 1), b_k ~ N(u_k, 1),
u_k ~ N(0, α); x ~ N(v_k, Σ) with Σ_jj = j^-1.2 and v_k's elements ~ N(B_k, 1), B_k ~ N(0, β)
(α and β as standard deviations, as the code draws them); y = argmax(softmax(W_k x + b_k)). Each
device keeps 90% of its samples for training and 10% for the pooled test set (the code's split).
`iid` draws one W, b for all devices and v = 0 (generate_iid.py). Every seed draws its own data.
The round loop, its parts and its record are fedclaims' own (`methods.federated`).
"""
from __future__ import annotations

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator
from torch import nn

from fedclaims import (
    FEDERATED_TRAINING,
    ClientData,
    ExperimentKind,
    FederatedDataset,
    Federation,
    KindExample,
    Learning,
    RunContext,
    SliceableFamily,
    default_init_,
    run_federation,
    setup_seed,
)


class SyntheticData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    alpha: float = Field(ge=0.0)
    beta: float = Field(ge=0.0)
    iid: bool = False
    devices: int = Field(30, ge=2)
    features: int = Field(60, ge=1)
    classes: int = Field(10, ge=2)
    max_samples_per_device: int | None = Field(None, ge=2)
    """Keep at most this many of a device's samples (drawn before the train/test split)."""


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: SyntheticData
    federation: Federation

    @model_validator(mode="after")
    def _one_client_per_device(self):
        if self.federation.num_clients != self.data.devices:
            raise ValueError(f"num_clients ({self.federation.num_clients}) must equal the devices "
                             f"({self.data.devices})")
        return self


def synthetic_devices(data: SyntheticData, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each device's (x, y), drawn as the authors' generator draws them."""
    sizes = rng.lognormal(4, 2, data.devices).astype(int) + 50
    if data.max_samples_per_device is not None:
        sizes = np.minimum(sizes, data.max_samples_per_device)
    mean_w = rng.normal(0, data.alpha, data.devices)
    shift = rng.normal(0, data.beta, data.devices)
    covariance = np.diag(np.power(np.arange(1, data.features + 1), -1.2))
    means = np.zeros((data.devices, data.features)) if data.iid else np.stack(
        [rng.normal(shift[k], 1, data.features) for k in range(data.devices)])
    shared = (rng.normal(0, 1, (data.features, data.classes)), rng.normal(0, 1, data.classes))
    devices = []
    for k in range(data.devices):
        weights, bias = shared if data.iid else (rng.normal(mean_w[k], 1, (data.features, data.classes)),
                                                 rng.normal(mean_w[k], 1, data.classes))
        x = rng.multivariate_normal(means[k], covariance, sizes[k])
        devices.append((x.astype(np.float32), np.argmax(x @ weights + bias, axis=1).astype(np.int64)))
    return devices


def federation(data: SyntheticData, seed: int) -> FederatedDataset:
    """90% of every device's samples train it, the other 10% join the pooled test set."""
    rng = np.random.default_rng(setup_seed(seed, "synthetic"))
    clients, test_x, test_y = [], [], []
    for x, y in synthetic_devices(data, rng):
        order = rng.permutation(len(y))
        train = int(0.9 * len(y))
        clients.append(ClientData(torch.from_numpy(x[order[:train]]), torch.from_numpy(y[order[:train]])))
        test_x.append(x[order[train:]])
        test_y.append(y[order[train:]])
    test = ClientData(torch.from_numpy(np.concatenate(test_x)), torch.from_numpy(np.concatenate(test_y)))
    return FederatedDataset(clients, test, None, data.classes)


class LogisticRegression(SliceableFamily):
    """Multinomial logistic regression: one linear layer, nothing sliced (every client trains it whole)."""

    def __init__(self, features: int, classes: int) -> None:
        self.features, self.classes = features, classes
        self.groups = {}

    def build(self, sizes=None, *, generator=None) -> nn.Module:
        self.check_sizes(sizes)
        model = nn.Linear(self.features, self.classes)
        if generator is not None:
            default_init_(model, generator)
        return model

    def param_axes(self):
        return {"weight": (None, None), "bias": (None,)}


def run(config: Config, seed: int, context: RunContext) -> dict:
    data = federation(config.data, seed)
    rounds = config.federation.rounds
    result = run_federation(LogisticRegression(config.data.features, config.data.classes), data.to(context.device),
                            config.federation.method(), np.ones(config.data.devices), seed, device=context.device,
                            on_round=lambda r: context.progress((r.round + 1) / rounds,
                                                                f"round {r.round + 1}/{rounds}"))
    record = result.to_dict()
    record["config"] = config.federation.model_dump(mode="json")
    record["client_sizes"] = [len(c) for c in data.clients]
    record["test_size"] = len(data.test)
    record["num_classes"] = config.data.classes
    return record


READ_AS_FEDERATED = ("final_accuracy", "best_accuracy", "end_accuracy", "final_loss", "min_loss", "end_loss",
                     "diverged", "chance_accuracy")

SYNTHETIC_FEDERATION = ExperimentKind(
    name="fedprox_synthetic",
    evidence="empirical",
    description="Federated multinomial logistic regression on FedProx's Synthetic(α, β) data.",
    runner=__name__,
    learning=Learning("end_accuracy", lambda config: 100.0 / config["data"]["classes"]),
    metrics={name: FEDERATED_TRAINING.metrics[name] for name in READ_AS_FEDERATED},
    plots={"accuracy_curves": FEDERATED_TRAINING.plots["accuracy_curves"]},
    example=KindExample({"data": {"alpha": 1.0, "beta": 1.0, "devices": 4, "max_samples_per_device": 60},
                         "federation": {"num_clients": 4, "clients_per_round": 3, "rounds": 3, "local_epochs": 2,
                                        "batch_size": 10, "policy": "full",
                                        "round_hook": {"name": "stragglers", "fraction": 0.5, "drop": False}}}),
)
