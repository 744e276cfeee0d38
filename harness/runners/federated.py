"""Federated sub-model training on a real data set: one run of the composed round loop."""
from __future__ import annotations

import typing
from dataclasses import fields
from typing import Annotated, Literal

import numpy as np
import torch
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model, model_validator

from harness.datasets.registry import load_dataset
from harness.runners.context import RunContext, derive_seed
from harness.runners.model_config import (CharLSTMModel, ImageModel, ModelConfig, build_model_family,
                                          example_input)
from harness.runners.references import MetricOf
from methods.costs import width_cost_table
from methods.federated import (ClientData, FederatedDataset, FederationConfig, draw_capacity_caps,
                               equal_share_caps, run_federation)
from methods.federated.registry import resolve_policy
from methods.partition import (client_tv_distances, dirichlet_partition, iid_partition,
                               label_restricted_partition, subsample_per_client)


class PartitionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scheme: Literal["dirichlet", "label_restricted", "iid", "roles"]
    alpha: float | None = Field(None, gt=0.0)
    labels_per_client: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _parameters(self):
        if self.scheme == "dirichlet" and self.alpha is None:
            raise ValueError("a dirichlet partition needs alpha")
        if self.scheme == "label_restricted" and self.labels_per_client is None:
            raise ValueError("a label_restricted partition needs labels_per_client")
        return self


class DataConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Literal["cifar10", "emnist", "shakespeare"]
    partition: PartitionConfig
    max_train_per_client: int | None = Field(None, ge=1)
    test_samples: int | None = Field(None, ge=1)
    calibration_samples: int = Field(500, ge=1)


class CapsConfig(BaseModel):
    """Device caps: i.i.d. draws with `probabilities`, or the tiers in equal shares."""

    model_config = ConfigDict(extra="forbid")
    assignment: Literal["iid", "equal_shares"] = "iid"
    tiers: list[float] = Field(default=[0.25, 0.5, 0.75, 1.0], min_length=1)
    probabilities: list[float] | None = Field(default=[0.35, 0.25, 0.2, 0.2], min_length=1)


def _known_policy(name: str) -> str:
    resolve_policy(name)
    return name


def _federation_model() -> type[BaseModel]:
    """A strict pydantic mirror of methods' FederationConfig, for located validation errors (the
    policy checked on its own, so that its problem is placed at `federation.policy`)."""
    hints = typing.get_type_hints(FederationConfig)
    definitions = {f.name: (hints[f.name], f.default) for f in fields(FederationConfig)}
    definitions["policy"] = (Annotated[str, AfterValidator(_known_policy)], FederationConfig.policy)
    definitions["budget"] = (float | MetricOf | None, None)
    definitions["tiers"] = (list[float], list(FederationConfig.tiers))
    return create_model("Federation", __config__=ConfigDict(extra="forbid"), **definitions)


Federation = _federation_model()


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: DataConfig
    model: ModelConfig
    caps: CapsConfig = CapsConfig()
    federation: Federation

    @model_validator(mode="after")
    def _consistent(self):
        values = self.federation.model_dump()
        values["budget"] = 0.5 if isinstance(self.federation.budget, MetricOf) else values["budget"]
        FederationConfig(**values)
        text = self.data.name == "shakespeare"
        if text != isinstance(self.model, CharLSTMModel):
            raise ValueError(f"data set {self.data.name!r} does not fit model arch {self.model.arch!r}")
        return self


def _channel_statistics(images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and std in [0, 1] units, exactly, from a histogram of the uint8 pixels."""
    levels = np.arange(256, dtype=np.float64) / 255.0
    means, stds = [], []
    for channel in range(images.shape[-1]):
        counts = np.bincount(images[..., channel].ravel(), minlength=256).astype(np.float64)
        mean = counts @ levels / counts.sum()
        means.append(mean)
        stds.append(np.sqrt(counts @ (levels - mean) ** 2 / counts.sum()))
    return np.asarray(means, dtype=np.float32), np.asarray(stds, dtype=np.float32)


def _images(images: np.ndarray, mean: np.ndarray, std: np.ndarray) -> torch.Tensor:
    array = ((images.astype(np.float32) / 255.0 - mean) / std).astype(np.float32)
    return torch.from_numpy(np.ascontiguousarray(array.transpose(0, 3, 1, 2)))


def _image_federation(config: Config, seed: int, context: RunContext):
    data = load_dataset(config.data.name, context)
    model = config.model
    assert isinstance(model, ImageModel)
    if data.num_classes != model.num_classes or data.train_x.shape[-1] != model.in_channels:
        raise ValueError(f"{config.data.name} has {data.num_classes} classes and {data.train_x.shape[-1]} channels; "
                         f"the model expects {model.num_classes} and {model.in_channels}")
    rng = np.random.default_rng(derive_seed(seed, "partition"))
    clients = config.federation.num_clients
    scheme = config.data.partition
    if scheme.scheme == "dirichlet":
        parts = dirichlet_partition(data.train_y, clients, scheme.alpha, rng)
    elif scheme.scheme == "label_restricted":
        parts = label_restricted_partition(data.train_y, clients, scheme.labels_per_client, rng)
    elif scheme.scheme == "iid":
        parts = iid_partition(len(data.train_y), clients, rng)
    else:
        raise ValueError("the 'roles' partition is for the Shakespeare data set")
    if config.data.max_train_per_client:
        parts = subsample_per_client(parts, config.data.max_train_per_client, rng)
    mean, std = _channel_statistics(data.train_x)
    client_data = [ClientData(_images(data.train_x[p], mean, std), torch.from_numpy(data.train_y[p].astype(np.int64)))
                   for p in parts]
    test_index = np.arange(len(data.test_y))
    if config.data.test_samples and config.data.test_samples < len(test_index):
        test_index = np.sort(np.random.default_rng(derive_seed(seed, "test")).choice(
            test_index, config.data.test_samples, replace=False))
    test = ClientData(_images(data.test_x[test_index], mean, std),
                      torch.from_numpy(data.test_y[test_index].astype(np.int64)))
    pool = np.concatenate(parts)
    calibration_index = np.random.default_rng(derive_seed(seed, "calibration")).choice(
        pool, min(config.data.calibration_samples, len(pool)), replace=False)
    calibration = _images(data.train_x[np.sort(calibration_index)], mean, std)
    tv = client_tv_distances(parts, data.train_y, data.num_classes)
    federated = FederatedDataset(client_data, test, calibration, data.num_classes)
    return federated, tv, data.fingerprint


def _text_federation(config: Config, seed: int, context: RunContext):
    data = load_dataset("shakespeare", context)
    if config.federation.num_clients != len(data.roles):
        raise ValueError(f"Shakespeare has {len(data.roles)} role-clients; num_clients is {config.federation.num_clients}")
    rng = np.random.default_rng(derive_seed(seed, "partition"))
    clients, labels = [], []
    for role in data.roles:
        index = np.arange(len(role.train_y))
        if config.data.max_train_per_client and config.data.max_train_per_client < len(index):
            index = np.sort(rng.choice(index, config.data.max_train_per_client, replace=False))
        clients.append(ClientData(torch.from_numpy(np.array(role.train_x[index], dtype=np.int64)),
                                  torch.from_numpy(np.array(role.train_y[index], dtype=np.int64))))
        labels.append(np.array(role.train_y[index]))
    test_x = np.concatenate([np.asarray(r.test_x) for r in data.roles])
    test_y = np.concatenate([np.asarray(r.test_y) for r in data.roles])
    if config.data.test_samples and config.data.test_samples < len(test_y):
        pick = np.sort(np.random.default_rng(derive_seed(seed, "test")).choice(len(test_y), config.data.test_samples,
                                                                               replace=False))
        test_x, test_y = test_x[pick], test_y[pick]
    test = ClientData(torch.from_numpy(test_x.astype(np.int64)), torch.from_numpy(test_y.astype(np.int64)))
    all_labels = np.concatenate(labels)
    offsets = np.cumsum([0] + [len(l) for l in labels])
    parts = [np.arange(offsets[i], offsets[i + 1]) for i in range(len(labels))]
    tv = client_tv_distances(parts, all_labels, len(data.vocab))
    return FederatedDataset(clients, test, None, len(data.vocab)), tv, data.fingerprint


def _width_costs(family, model: ModelConfig, history) -> list[dict]:
    """Parameter and MAC fractions of the full model at every width a client trained at in the run."""
    widths = {width for record in history for width in record.widths}
    table = width_cost_table(family, widths, example_input(model))
    return [{"width": w, "param_fraction": params, "mac_fraction": macs} for w, (params, macs) in table.items()]


def run(config: Config, seed: int, context: RunContext) -> dict:
    build = _text_federation if config.data.name == "shakespeare" else _image_federation
    federated, tv, fingerprint = build(config, seed, context)
    caps_rng = np.random.default_rng(derive_seed(seed, "caps"))
    if config.caps.assignment == "equal_shares":
        caps = equal_share_caps(config.federation.num_clients, config.caps.tiers, rng=caps_rng)
    else:
        caps = draw_capacity_caps(config.federation.num_clients, config.caps.tiers, config.caps.probabilities,
                                  rng=caps_rng)
    if isinstance(config.federation.budget, MetricOf):
        raise ValueError("budget reference was not resolved before the run")
    federation = FederationConfig(**config.federation.model_dump())
    family = build_model_family(config.model)
    rounds = federation.rounds

    def progress(record) -> None:
        context.progress((record.round + 1) / rounds, f"round {record.round + 1}/{rounds}")

    result = run_federation(family, federated.to(context.device), federation, caps, seed,
                            device=context.device, on_round=progress, oracle_tv=tv)
    record = result.to_dict()
    record["width_costs"] = _width_costs(family, config.model, result.history)
    record["tv_distance"] = [float(t) for t in tv]
    record["client_sizes"] = [len(c) for c in federated.clients]
    record["test_size"] = len(federated.test)
    record["num_classes"] = federated.num_classes
    record["data_fingerprint"] = fingerprint
    return record
