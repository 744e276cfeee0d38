"""Federated sub-model training on a real data set: one run of the composed round loop."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.datasets.arrays import ImageData, TextData
from harness.datasets.registry import load_dataset
from harness.runners.context import RunContext
from harness.runners.model_config import CharLSTMModel, ImageModel, ModelConfig, build_model_family, example_input
from harness.runners.parts import OBJECTIVES, POLICIES, ROUND_HOOKS, choice, part_field
from methods.costs import width_cost_table
from methods.extraction import ExtractionMode
from methods.federated import (
    ClientData,
    FederatedDataset,
    FederationConfig,
    FederationResult,
    RoundRecord,
    draw_capacity_caps,
    equal_share_caps,
    run_federation,
)
from methods.federated.aggregation import Weighting
from methods.federated.augmentation import AugmentationMode
from methods.federated.config import ClientExecution
from methods.federated.optimizers import ClientOptimizer
from methods.federated.precision import Precision
from methods.models.slicing import SliceableFamily
from methods.partition import (
    client_tv_distances,
    dirichlet_partition,
    iid_partition,
    label_restricted_partition,
    majority_accuracy,
    shard_partition,
    subsample_per_client,
)
from methods.seeding import setup_seed

# fedclaims behaviour version: 1


class PartitionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scheme: Literal["dirichlet", "label_restricted", "shards", "iid", "roles"]
    alpha: float | None = Field(None, gt=0.0)
    labels_per_client: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _parameters(self):
        if self.scheme == "dirichlet" and self.alpha is None:
            raise ValueError("a dirichlet partition needs alpha")
        if self.scheme in ("label_restricted", "shards") and self.labels_per_client is None:
            raise ValueError(f"a {self.scheme} partition needs labels_per_client")
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


class Federation(BaseModel):
    """The round loop's settings and the method's parts (`harness.runners.parts`); the defaults are
    `methods.federated.FederationConfig`'s."""

    model_config = ConfigDict(extra="forbid")
    num_clients: int = Field(20, ge=1)
    clients_per_round: int = Field(10, ge=1)
    rounds: int = Field(200, ge=1)
    local_epochs: int = Field(5, ge=1)
    batch_size: int = Field(32, ge=1)
    lr: float = Field(0.01, gt=0.0)
    lr_decay: float = Field(0.995, gt=0.0)
    momentum: float = Field(0.9, ge=0.0)
    weight_decay: float = Field(1e-4, ge=0.0)
    clip_norm: float | None = Field(10.0, gt=0.0)
    extraction: ExtractionMode = ExtractionMode.PREFIX
    weighting: Weighting = Weighting.SAMPLES
    label_split: bool = False
    count_weighted: bool = False
    augmentation: AugmentationMode = AugmentationMode.NONE
    eval_every: int = Field(1, ge=1)
    eval_batch_size: int = Field(256, ge=1)
    client_execution: ClientExecution = ClientExecution.BATCHED
    # fp32, the default, is left out of a run's config: the keys of runs made before the setting stand
    precision: Precision = Field(Precision.FP32, exclude_if=lambda value: value is Precision.FP32)
    # likewise sgd, the default client optimiser
    optimizer: ClientOptimizer = Field(ClientOptimizer.SGD, exclude_if=lambda value: value is ClientOptimizer.SGD)
    policy: part_field(POLICIES) = Field("heterofl", validate_default=True)  # type: ignore[valid-type]
    objective: part_field(OBJECTIVES) = Field("sgd", validate_default=True)  # type: ignore[valid-type]
    round_hook: part_field(ROUND_HOOKS) | None = None  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _participants(self):
        if self.clients_per_round > self.num_clients:
            raise ValueError(f"clients_per_round ({self.clients_per_round}) exceeds num_clients ({self.num_clients})")
        return self

    def method(self) -> FederationConfig:
        """The run's `FederationConfig`: the loop's settings and each part with its settings."""
        shared = self.model_dump(exclude={"policy", "objective", "round_hook"})
        return FederationConfig(**shared, policy=choice(POLICIES, self.policy),
                                objective=choice(OBJECTIVES, self.objective),
                                round_hook=None if self.round_hook is None else choice(ROUND_HOOKS, self.round_hook))


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: DataConfig
    model: ModelConfig
    caps: CapsConfig = CapsConfig()
    federation: Federation

    @model_validator(mode="after")
    def _consistent(self):
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
    if not isinstance(data, ImageData):
        raise ValueError(f"{config.data.name} is not an image data set")
    model = config.model
    assert isinstance(model, ImageModel)
    if data.num_classes != model.num_classes or data.train_x.shape[-1] != model.in_channels:
        raise ValueError(f"{config.data.name} has {data.num_classes} classes and {data.train_x.shape[-1]} channels; "
                         f"the model expects {model.num_classes} and {model.in_channels}")
    rng = np.random.default_rng(setup_seed(seed, "partition"))
    clients = config.federation.num_clients
    scheme = config.data.partition
    if scheme.scheme == "dirichlet":
        assert scheme.alpha is not None  # PartitionConfig requires it for this scheme
        parts = dirichlet_partition(data.train_y, clients, scheme.alpha, rng)
    elif scheme.scheme == "label_restricted":
        assert scheme.labels_per_client is not None  # PartitionConfig requires it for this scheme
        parts = label_restricted_partition(data.train_y, clients, scheme.labels_per_client, rng)
    elif scheme.scheme == "shards":
        assert scheme.labels_per_client is not None  # PartitionConfig requires it for this scheme
        parts = shard_partition(data.train_y, clients, scheme.labels_per_client, rng)
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
        test_index = np.sort(np.random.default_rng(setup_seed(seed, "test")).choice(
            test_index, config.data.test_samples, replace=False))
    test = ClientData(_images(data.test_x[test_index], mean, std),
                      torch.from_numpy(data.test_y[test_index].astype(np.int64)))
    pool = np.concatenate(parts)
    calibration_index = np.random.default_rng(setup_seed(seed, "calibration")).choice(
        pool, min(config.data.calibration_samples, len(pool)), replace=False)
    calibration = _images(data.train_x[np.sort(calibration_index)], mean, std)
    tv = client_tv_distances(parts, data.train_y, data.num_classes)
    blank = torch.from_numpy(-mean / std)  # a black pixel, normalised: what padding adds
    federated = FederatedDataset(client_data, test, calibration, data.num_classes, blank)
    return federated, tv, data.fingerprint


def _text_federation(config: Config, seed: int, context: RunContext):
    data = load_dataset("shakespeare", context)
    if not isinstance(data, TextData):
        raise ValueError("shakespeare is not a text data set")
    if config.federation.num_clients != len(data.roles):
        raise ValueError(f"Shakespeare has {len(data.roles)} role-clients; "
                         f"num_clients is {config.federation.num_clients}")
    rng = np.random.default_rng(setup_seed(seed, "partition"))
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
        pick = np.sort(np.random.default_rng(setup_seed(seed, "test")).choice(len(test_y), config.data.test_samples,
                                                                               replace=False))
        test_x, test_y = test_x[pick], test_y[pick]
    test = ClientData(torch.from_numpy(test_x.astype(np.int64)), torch.from_numpy(test_y.astype(np.int64)))
    all_labels = np.concatenate(labels)
    offsets = np.cumsum([0] + [len(client_labels) for client_labels in labels])
    parts = [np.arange(offsets[i], offsets[i + 1]) for i in range(len(labels))]
    tv = client_tv_distances(parts, all_labels, len(data.vocab))
    return FederatedDataset(clients, test, None, len(data.vocab)), tv, data.fingerprint


def _width_costs(family, model: ModelConfig, history) -> list[dict]:
    """Parameter and MAC fractions of the full model at every width a client trained at in the run."""
    widths = {width for record in history for width in record.widths}
    table = width_cost_table(family, widths, example_input(model))
    return [{"width": w, "param_fraction": params, "mac_fraction": macs} for w, (params, macs) in table.items()]


@dataclass(frozen=True)
class BuiltFederation:
    """An experiment's federation for one seed: every client's data, the test and calibration sets, each
    client's label skew (total variation from the pooled labels) and the data set's fingerprint."""

    data: FederatedDataset
    tv: np.ndarray
    fingerprint: str


def build_federation(config: Config, seed: int, context: RunContext) -> BuiltFederation:
    """The federation a run of ``config`` trains on for ``seed``: the data set read through ``context``,
    partitioned and subsampled as the config says (the same for every variant of a seed)."""
    build = _text_federation if config.data.name == "shakespeare" else _image_federation
    return BuiltFederation(*build(config, seed, context))


def draw_caps(config: Config, seed: int) -> np.ndarray:
    """Each client's capacity cap for ``seed``, as the config's `caps` draws them."""
    caps_rng = np.random.default_rng(setup_seed(seed, "caps"))
    if config.caps.assignment == "equal_shares":
        return equal_share_caps(config.federation.num_clients, config.caps.tiers, rng=caps_rng)
    if config.caps.probabilities is None:
        raise ValueError("caps drawn i.i.d. (assignment: iid) need probabilities")
    return draw_capacity_caps(config.federation.num_clients, config.caps.tiers, config.caps.probabilities,
                              rng=caps_rng)


@dataclass(frozen=True)
class TrainedFederation:
    """What a trained run leaves for a kind to measure: the result (`final_params`, the per-round
    `history`), the model family, the federation and the caps it trained with."""

    result: FederationResult
    family: SliceableFamily
    federation: BuiltFederation
    caps: np.ndarray


def train_federation(config: Config, seed: int, context: RunContext,
                     on_round: Callable[[RoundRecord], None] | None = None) -> TrainedFederation:
    """Train one run of ``config`` (progress reported through ``context``; ``on_round`` also receives
    every round's record as it ends). A kind that measures something else of the trained model
    (accuracy at each width, say) calls this and reads `result.final_params`."""
    built = build_federation(config, seed, context)
    caps = draw_caps(config, seed)
    federation = config.federation.method()
    family = build_model_family(config.model)
    rounds = federation.rounds

    def each_round(record: RoundRecord) -> None:
        context.progress((record.round + 1) / rounds, f"round {record.round + 1}/{rounds}")
        if on_round is not None:
            on_round(record)

    result = run_federation(family, built.data.to(context.device), federation, caps, seed,
                            device=context.device, on_round=each_round, oracle_tv=built.tv)
    return TrainedFederation(result, family, built, caps)


def run(config: Config, seed: int, context: RunContext) -> dict:
    return federated_record(config, train_federation(config, seed, context))


def federated_record(config: Config, trained: TrainedFederation) -> dict:
    """The result a `federated_training` run records of a trained federation: the round loop's result, the
    federation's config, each width's costs, the clients' label skew and sizes, the test set's size and
    chance (its majority label's accuracy), the data's fingerprint. A kind built on `train_federation`
    starts its own record from it, so the federated kind's metrics read it too."""
    federated = trained.federation.data
    record = trained.result.to_dict()
    record["config"] = config.federation.model_dump(mode="json")
    record["width_costs"] = _width_costs(trained.family, config.model, trained.result.history)
    record["tv_distance"] = [float(t) for t in trained.federation.tv]
    record["client_sizes"] = [len(c) for c in federated.clients]
    record["test_size"] = len(federated.test)
    record["majority_accuracy"] = majority_accuracy(federated.test.y.cpu().numpy())
    record["num_classes"] = federated.num_classes
    record["data_fingerprint"] = trained.federation.fingerprint
    return record
