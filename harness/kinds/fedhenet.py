"""FedHENet and its last-layer FedAvg/FedProx baselines on frozen-backbone features."""
from __future__ import annotations

import math

from harness.kinds.base import ExperimentKind, Metric, Plot


def _fedhenet_only(key: str):
    """A FedHENet-record field; NaN for baseline records (which have no such quantity)."""
    def compute(result, args) -> float:
        value = result.get(key)
        return math.nan if value is None else float(value)
    return compute


def _coordinator(key: str):
    """1.0 / 0.0 from what an encrypted run recorded of its coordinator; NaN for other runs."""
    def compute(result, args) -> float:
        record = result.get("coordinator")
        return math.nan if record is None else float(bool(record[key]))
    return compute


def _payload_ratio(result, args) -> float:
    if result["method"] != "fedhenet" or not result["encrypted"]:
        return math.nan
    return result["upload_bytes_per_client"] / result["upload_bytes_per_client_plain"]


def _encryption_fraction(result, args) -> float:
    if result["method"] != "fedhenet" or not result["encrypted"]:
        return math.nan
    return float(result["he_fraction"])


def _bars(ax, results_by_variant, labels, value, ylabel, log=False):
    names = list(results_by_variant)
    means = [sum(value(r) for r in results_by_variant[v]) / len(results_by_variant[v]) for v in names]
    ax.bar(range(len(names)), means, color="tab:blue")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([labels[v] for v in names], rotation=60, ha="right", fontsize=6)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")


def _draw_accuracy(ax, results_by_variant, labels):
    _bars(ax, results_by_variant, labels, lambda r: 100.0 * r["accuracy"], "test accuracy (%)")


def _draw_bytes(ax, results_by_variant, labels):
    _bars(ax, results_by_variant, labels, lambda r: r["total_bytes"], "total bytes (all clients, up + down)", log=True)


def _draw_seconds(ax, results_by_variant, labels):
    _bars(ax, results_by_variant, labels, lambda r: r["wall_seconds"], "training wall seconds (features excluded)")


FEDHENET = ExperimentKind(
    name="fedhenet",
    description="FedHENet (frozen backbone, closed-form ROLANN output layer, optional CKKS aggregation) or a "
                "last-layer FedAvg/FedProx baseline on the same cached features.",
    runner="harness.runners.fedhenet",
    metrics={
        "accuracy": Metric("test accuracy of the trained output layer", lambda r, a: 100.0 * r["accuracy"], unit="%"),
        "rounds": Metric("communication rounds of training", lambda r, a: float(r["rounds"]), unit="rounds"),
        "max_abs_diff_to_centralised": Metric(
            "max |W_federated - W_centralised| (centralised ROLANN on the pooled training features, same run)",
            _fedhenet_only("max_abs_diff_to_centralised")),
        "accuracy_gap_to_centralised": Metric(
            "federated minus centralised test accuracy (same run)",
            lambda r, a: (100.0 * (r["accuracy"] - r["centralised_accuracy"]) if r["method"] == "fedhenet"
                          else math.nan), unit="percentage points"),
        "prediction_disagreement": Metric(
            "fraction of test images whose federated prediction differs from the centralised one",
            lambda r, a: (1.0 - r["prediction_agreement"]) if r["method"] == "fedhenet" else math.nan),
        "encryption_overhead_fraction": Metric(
            "CKKS seconds (encrypt + coordinator sum + decrypt) / FedHENet total seconds, features excluded; "
            "NaN for plaintext runs", _encryption_fraction, varies=True),
        "encryption_overhead_fraction_with_context": Metric(
            "as encryption_overhead_fraction, with the CKKS context creation counted as overhead too",
            lambda r, a: (float(r["he_fraction_with_context"]) if r["method"] == "fedhenet" and r["encrypted"]
                          else math.nan), varies=True),
        "encrypted_to_plain_payload_ratio": Metric(
            "mean client upload with encrypted M / with plaintext M (U S in plaintext float64 both times)",
            _payload_ratio, varies=True),
        "upload_bytes_per_client": Metric("mean bytes one client uploads over the whole training",
                                          lambda r, a: float(r["upload_bytes_per_client"]), unit="bytes", varies=True),
        "total_bytes": Metric("bytes sent over the whole training, all clients, uploads and downloads",
                              lambda r, a: float(r["total_bytes"]), unit="bytes", varies=True),
        "wall_seconds": Metric("training wall seconds on cached features (feature extraction excluded)",
                               lambda r, a: float(r["wall_seconds"]), unit="s", varies=True),
        "feature_seconds": Metric("seconds to obtain the features (extraction, or a cache read)",
                                  lambda r, a: float(r["feature_seconds"]), unit="s", varies=True),
        "coordinator_holds_secret_key": Metric(
            "1 if the coordinator's own CKKS context holds a secret key, else 0 (encrypted FedHENet runs; NaN "
            "otherwise)", _coordinator("holds_secret_key"), deterministic=True),
        "coordinator_could_decrypt": Metric(
            "1 if the coordinator, trying with its own context, decrypted a client ciphertext it aggregated back "
            "to that client's M column, else 0 (encrypted FedHENet runs; NaN otherwise)",
            _coordinator("decrypted"), deterministic=True),
        "clients_used": Metric("clients holding data", lambda r, a: float(r["clients_used"])),
        "clients_skipped": Metric("clients without data (left out)", lambda r, a: float(r["clients_skipped"])),
    },
    plots={
        "accuracy_bars": Plot("test accuracy per variant", _draw_accuracy),
        "bytes_bars": Plot("total bytes per variant (log scale)", _draw_bytes),
        "seconds_bars": Plot("training wall seconds per variant", _draw_seconds),
    },
    datasets=lambda config: [config.data.name],
)
