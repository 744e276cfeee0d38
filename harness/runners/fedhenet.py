"""FedHENet on a frozen backbone: one closed-form round, optional CKKS, or a last-layer baseline.

One run = one method on one partition of (a subset of) CIFAR-10, in one of two pipelines:

- `cached_features`: features of the train and test subsets come from the memoised backbone
  (harness.runners.fedhenet_caches; their time is `feature_seconds`, in no other timing).
  `fedhenet` runs methods.fedhenet.protocol.run_fedhenet; `wall_seconds` is its total (client
  statistics + CKKS context, encryption, coordinator sum, decryption + merge + solve + test
  evaluation), and in the same run the centralised ROLANN solution on the pooled training
  features, to which the federated W is compared (max |W_fed - W_central|, test-prediction
  agreement, accuracy gap). W itself is not stored; a small summary is. `fedavg` / `fedprox`
  train on the same features; `wall_seconds` is their rounds (with per-round evaluation).
- `from_images`: each method's whole pipeline from decoded images, as the FedHENet repository
  runs it (methods.fedhenet.pipeline): `pipeline_seconds` includes FedHENet's one extraction
  pass, and the baselines' backbone pass on every batch of every local epoch of every round.
  The pipeline's energy is metered around the same call (methods.energy: RAPL where readable,
  else CPU seconds at a stated power, labelled `energy_source`); with a `reference` (another
  variant's pipeline seconds and energy, same seed) the run records the fractions it saved.

Cached-features FedHENet runs also record what the coordinator learns from the plaintext
U_k S_k (methods.fedhenet.leakage), checked against the clients' own features.

Baseline records also count the bytes a full-network FedAvg would exchange (the backbone's
parameters + the head, float32, down and up, every client, every round).
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.datasets.arrays import ImageData
from harness.datasets.errors import DatasetUnavailable
from harness.datasets.registry import load_dataset
from harness.runners import fedhenet_caches as caches
from harness.runners.ckks_config import CkksConfig
from harness.runners.context import RunContext
from harness.runners.references import MetricOf
from methods.energy import EnergyMeter, EnergyReading
from methods.fedhenet import leakage, rolann
from methods.fedhenet.backbones import Backbone, WeightsUnavailable, get_backbone, load_model, parameter_count
from methods.fedhenet.baselines import LinearFLConfig, LinearFLResult, exchanged_bytes, run_linear_fl
from methods.fedhenet.pipeline import fedhenet_from_images, linear_fl_from_images
from methods.fedhenet.protocol import run_fedhenet
from methods.partition import dirichlet_partition, iid_partition, majority_accuracy, one_class_per_client
from methods.seeding import setup_seed

# fedclaims behaviour version: 1


class DataConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Literal["cifar10"] = "cifar10"
    train_samples: int | None = Field(None, ge=10, description="class-stratified train subset; None = all")
    test_samples: int | None = Field(None, ge=10, description="class-stratified test subset; None = all")
    subset_seed: int = Field(0, description="the subset is fixed by this, not by the run's seed, so "
                                            "every variant and seed shares one feature extraction")


class BackboneConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Literal["efficientnet_lite0", "resnet18"] = "efficientnet_lite0"
    resolution: int = Field(224, ge=32)
    batch_size: int = Field(64, ge=1)


class PartitionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scheme: Literal["iid", "dirichlet", "one_class_per_client"]
    alpha: float | None = Field(None, gt=0.0)
    min_size: int = Field(10, ge=0, description="Dirichlet redraws until every client has this many samples")

    @model_validator(mode="after")
    def _alpha(self):
        if (self.scheme == "dirichlet") != (self.alpha is not None):
            raise ValueError("alpha is required for, and only for, the dirichlet scheme")
        return self


class PipelineReference(BaseModel):
    """Another variant's whole-pipeline cost in the same seed and profile (planning fills in the
    numbers from its record), to which this run's saving is measured."""

    model_config = ConfigDict(extra="forbid")
    pipeline_seconds: float | MetricOf
    pipeline_energy_joules: float | MetricOf


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: DataConfig = DataConfig()
    backbone: BackboneConfig = BackboneConfig()
    partition: PartitionConfig
    num_clients: int = Field(ge=1)
    method: Literal["fedhenet", "fedavg", "fedprox"] = "fedhenet"
    encrypted: bool = False
    ckks: CkksConfig = CkksConfig()
    lam: float = Field(0.0, ge=0.0)
    rcond: float | None = Field(None, gt=0.0)
    weighting: Literal["logistic", "fedhenet_code"] = "logistic"
    rounds: int = Field(10, ge=1, description="baseline rounds (one local epoch each)")
    batch_size: int = Field(32, ge=1, description="baseline local batch size")
    prox_mu: float = Field(0.01, ge=0.0)
    pipeline: Literal["cached_features", "from_images"] = Field(
        "cached_features", description="cached_features: every method trains on memoised backbone features "
        "(extraction timed apart); from_images: each method's whole pipeline from decoded images, timed")
    reference: PipelineReference | None = Field(
        None, description="from_images only: the pipeline this run's time and energy savings are measured against")

    @model_validator(mode="after")
    def _consistent(self):
        if self.encrypted and self.method != "fedhenet":
            raise ValueError("only the fedhenet method has an encrypted variant")
        if self.reference is not None and self.pipeline != "from_images":
            raise ValueError("a reference pipeline is compared only from images (pipeline: from_images)")
        return self


def _stratified(labels: np.ndarray, size: int | None, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of a class-balanced subset (all indices when size is None or too large)."""
    if size is None or size >= len(labels):
        return np.arange(len(labels))
    classes = np.unique(labels)
    per_class = np.array_split(np.arange(size), len(classes))
    picks = [rng.permutation(np.flatnonzero(labels == c))[:len(share)] for c, share in zip(classes, per_class)]
    return np.sort(np.concatenate(picks))


def _partition(config: Config, labels: np.ndarray, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(setup_seed(seed, "partition"))
    scheme = config.partition
    if scheme.scheme == "iid":
        return iid_partition(len(labels), config.num_clients, rng)
    if scheme.scheme == "dirichlet":
        assert scheme.alpha is not None  # PartitionConfig requires it for this scheme
        return dirichlet_partition(labels, config.num_clients, scheme.alpha, rng, min_size=scheme.min_size)
    return one_class_per_client(labels, config.num_clients, rng)


@dataclass(frozen=True)
class _Subset:
    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    num_classes: int
    fingerprint: str


def _subset(config: Config, context: RunContext) -> _Subset:
    data = load_dataset(config.data.name, context)
    if not isinstance(data, ImageData):
        raise ValueError(f"{config.data.name} is not an image data set")
    rng = np.random.default_rng(setup_seed(config.data.subset_seed, "fedhenet-subset"))
    train_index = _stratified(data.train_y, config.data.train_samples, rng)
    test_index = _stratified(data.test_y, config.data.test_samples, rng)
    return _Subset(data.train_x[train_index], np.asarray(data.train_y[train_index], dtype=np.int64),
                   data.test_x[test_index], np.asarray(data.test_y[test_index], dtype=np.int64),
                   data.num_classes, data.fingerprint)


def _protocol_options(config: Config) -> dict:
    return {"encrypted": config.encrypted, "ckks": config.ckks.params(), "lam": config.lam,
            "weighting": config.weighting, "rcond": config.rcond}


def _baseline_config(config: Config, seed: int) -> LinearFLConfig:
    return LinearFLConfig(rounds=config.rounds, batch_size=config.batch_size,
                          mu=config.prox_mu if config.method == "fedprox" else 0.0,
                          seed=setup_seed(seed, "baseline"))


def _fedhenet_fields(out: dict, encrypted: bool) -> dict:
    """Accuracy, traffic, protocol timings and the coordinator check of one FedHENet round."""
    per_client = out["bytes_per_client"]
    upload_plain = [r["us_bytes"] + r["m_plain_bytes"] for r in per_client]
    upload = [r["us_bytes"] + r["m_encrypted_bytes"] for r in per_client] if encrypted else upload_plain
    download_total = out["download_bytes_per_client"] * out["clients_used"]
    return {
        "accuracy": out["accuracy"], "rounds": out["rounds"],
        "clients_used": out["clients_used"], "clients_skipped": out["clients_skipped"],
        "upload_bytes_per_client_plain": float(np.mean(upload_plain)),
        "upload_bytes_per_client": float(np.mean(upload)),
        "us_bytes_per_client": float(np.mean([r["us_bytes"] for r in per_client])),
        "m_bytes_per_client": float(np.mean([r["m_encrypted_bytes"] if encrypted else r["m_plain_bytes"]
                                             for r in per_client])),
        "download_bytes_per_client": out["download_bytes_per_client"],
        "total_upload_bytes": int(sum(upload)), "total_download_bytes": int(download_total),
        "total_bytes": int(sum(upload) + download_total),
        "seconds": out["seconds"], "he_seconds": out["he_seconds"],
        "he_with_context_seconds": out["he_seconds"] + out["seconds"].get("context_setup", 0.0),
        "coordinator": out["coordinator"],
    }


def _baseline_fields(out: LinearFLResult, config: Config, backbone: Backbone, feature_dim: int,
                     clients: int, num_classes: int) -> dict:
    """Accuracy and traffic of a last-layer baseline, and what a full-network FedAvg would send."""
    backbone_parameters = parameter_count(backbone)
    head = feature_dim * num_classes + num_classes
    return {
        "accuracy": out.round_accuracy[-1], "round_accuracy": out.round_accuracy, "rounds": config.rounds,
        "clients_used": out.clients_used, "clients_skipped": clients - out.clients_used,
        "total_bytes": int(out.bytes_sent), "upload_bytes_per_client": out.bytes_sent / 2 / max(out.clients_used, 1),
        "backbone_parameters": backbone_parameters,
        "total_bytes_full_network": exchanged_bytes(backbone_parameters + head, out.clients_used, config.rounds),
    }


def _coordinator_learns(client_f: list[np.ndarray], client_y: list[np.ndarray], test_f: np.ndarray,
                        data: _Subset) -> dict:
    """What the coordinator recovers from the plaintext U_k S_k each client sent (recomputed here as
    the clients computed them), checked against the clients' own features (methods.fedhenet.leakage)."""
    held = [(f, y) for f, y in zip(client_f, client_y) if len(y)]
    uploads = [rolann.client_statistics(f, y, data.num_classes, "logistic").US for f, y in held]
    return leakage.coordinator_learns(uploads, [f for f, _ in held], [y for _, y in held], test_f, data.test_y,
                                      data.num_classes)


def _energy_fields(reading: EnergyReading | None, reference: PipelineReference | None, seconds: float) -> dict:
    """The pipeline's metered energy and, against a reference pipeline, the fractions of its time and
    energy saved."""
    if reading is None:
        raise ValueError("the pipeline's energy was not metered")
    fields = {"pipeline_energy_joules": reading.joules, "energy_source": reading.source,
              "pipeline_cpu_seconds": reading.cpu_seconds}
    if reference is not None:
        if isinstance(reference.pipeline_seconds, MetricOf) or isinstance(reference.pipeline_energy_joules, MetricOf):
            raise ValueError("reference pipeline was not resolved before the run")
        fields["pipeline_seconds_saved_fraction"] = 1.0 - seconds / reference.pipeline_seconds
        fields["energy_saved_fraction"] = 1.0 - reading.joules / reference.pipeline_energy_joules
    return fields


def _on_cached_features(config: Config, seed: int, context: RunContext, data: _Subset,
                        parts: list[np.ndarray], record: dict) -> dict:
    folder = Path(context.cache_dir) / "features"
    backbone = get_backbone(config.backbone.name, config.backbone.resolution)
    started = time.perf_counter()
    stored = all(caches.features_stored(backbone, x, folder) for x in (data.train_x, data.test_x))
    def extract(images: np.ndarray, what: str) -> np.ndarray:
        return caches.features(backbone, images, folder, config.backbone.batch_size,
                               lambda done, total: context.progress(0.0, f"{what} features {done}/{total}"))

    train_f, test_f = extract(data.train_x, "train"), extract(data.test_x, "test")
    record.update(feature_dim=int(train_f.shape[1]), feature_seconds=time.perf_counter() - started,
                  features_cached=stored)
    client_f = [train_f[p] for p in parts]
    client_y = [data.train_y[p] for p in parts]
    context.progress(0.5, config.method)

    if config.method != "fedhenet":
        baseline = run_linear_fl(client_f, client_y, test_f, data.test_y, data.num_classes,
                                 _baseline_config(config, seed))
        record.update(_baseline_fields(baseline, config, backbone, train_f.shape[1], len(parts), data.num_classes),
                      wall_seconds=baseline.wall_seconds)
        return record

    out = run_fedhenet(client_f, client_y, test_f, data.test_y, data.num_classes, **_protocol_options(config))
    fields = _fedhenet_fields(out, config.encrypted)
    if config.weighting == "logistic":
        record["coordinator_learns"] = _coordinator_learns(client_f, client_y, test_f, data)
    w = out["weights"]
    pooled = np.sort(np.concatenate([p for p in parts if len(p)]))
    t = time.perf_counter()
    w_central, central_cached = caches.centralised(train_f[pooled], data.train_y[pooled], data.num_classes, folder,
                                                   weighting=config.weighting, lam=config.lam, rcond=config.rcond)
    central_seconds = time.perf_counter() - t
    pred = rolann.predict(w, test_f)
    pred_central = rolann.predict(w_central, test_f)
    total = out["seconds"]["total"]
    record.update(
        fields, wall_seconds=total, he_fraction=out["he_seconds"] / total,
        he_fraction_with_context=fields["he_with_context_seconds"] / total,
        centralised_accuracy=float(np.mean(pred_central == data.test_y)),
        centralised_seconds=central_seconds, centralised_cached=central_cached,
        max_abs_diff_to_centralised=float(np.max(np.abs(w - w_central))),
        max_abs_w_central=float(np.max(np.abs(w_central))),
        prediction_agreement=float(np.mean(pred == pred_central)),
        w_summary={"shape": list(w.shape), "frobenius": float(np.linalg.norm(w)),
                   "sha256_rounded_1e-6": hashlib.sha256(np.round(w, 6).tobytes()).hexdigest()[:16]},
        weighting=config.weighting, lam=config.lam,
    )
    return record


def _from_images(config: Config, seed: int, context: RunContext, data: _Subset,
                 parts: list[np.ndarray], record: dict) -> dict:
    backbone = get_backbone(config.backbone.name, config.backbone.resolution)
    t = time.perf_counter()
    model = load_model(backbone).to(context.device)
    record.update(feature_dim=backbone.feature_dim, model_load_seconds=time.perf_counter() - t)
    client_x = [data.train_x[p] for p in parts]
    client_y = [data.train_y[p] for p in parts]
    context.progress(0.1, f"{config.method} from images")

    if config.method != "fedhenet":
        with EnergyMeter() as meter:
            baseline = linear_fl_from_images(backbone, model, client_x, client_y, data.test_x, data.test_y,
                                             data.num_classes, _baseline_config(config, seed), context.device)
        record.update(_baseline_fields(baseline, config, backbone, backbone.feature_dim, len(parts),
                                       data.num_classes),
                      pipeline_seconds=baseline.wall_seconds)
        record.update(_energy_fields(meter.reading, config.reference, baseline.wall_seconds))
        return record

    with EnergyMeter() as meter:
        out = fedhenet_from_images(backbone, model, client_x, client_y, data.test_x, data.test_y, data.num_classes,
                                   batch_size=config.batch_size, device=context.device, **_protocol_options(config))
    fields = _fedhenet_fields(out, config.encrypted)
    total = out["pipeline_seconds"]
    record.update(_energy_fields(meter.reading, config.reference, total))
    record.update(fields, pipeline_seconds=total, extraction_seconds=out["extraction_seconds"],
                  pipeline_he_fraction=out["he_seconds"] / total,
                  pipeline_he_fraction_with_context=fields["he_with_context_seconds"] / total,
                  weighting=config.weighting, lam=config.lam)
    return record


def run(config: Config, seed: int, context: RunContext) -> dict:
    data = _subset(config, context)
    parts = _partition(config, data.train_y, seed)
    sizes = [len(p) for p in parts]
    record: dict = {
        "method": config.method, "encrypted": config.encrypted, "num_clients": config.num_clients,
        "pipeline": config.pipeline, "num_classes": data.num_classes, "train_size": int(len(data.train_y)),
        "test_size": int(len(data.test_y)), "majority_accuracy": majority_accuracy(data.test_y),
        "client_size_min": int(min(sizes)), "client_size_max": int(max(sizes)),
        "data_fingerprint": data.fingerprint,
    }
    pipeline = _on_cached_features if config.pipeline == "cached_features" else _from_images
    try:
        record = pipeline(config, seed, context, data, parts, record)
    except WeightsUnavailable as missing:
        raise DatasetUnavailable(missing.weights, missing.tried, missing.hint) from missing
    context.progress(1.0, "done")
    return record
