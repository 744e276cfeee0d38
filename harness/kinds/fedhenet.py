"""FedHENet and its last-layer FedAvg/FedProx baselines on a frozen backbone.

A run evaluates once: `accuracy` (and the gap to the centralised solution) refuses a record whose
accuracy is null, making the claim ERROR with the record named (`harness.kinds.evaluations`).
"""
from __future__ import annotations

import math

from harness.kinds.base import ExperimentKind, KindExample, Learning, Metric, Plot, classified
from harness.kinds.evaluations import required
from methods.energy import CPU_TIME_PROXY, PROXY_WATTS_PER_CORE


def _field(key: str):
    """A record field; NaN where the run has no such quantity (another method or pipeline)."""
    def compute(result, args) -> float:
        value = result.get(key)
        return math.nan if value is None else float(value)
    return compute


def _encrypted_field(key: str):
    """A field of encrypted FedHENet runs; NaN for plaintext and baseline runs."""
    def compute(result, args) -> float:
        value = result.get(key) if result["method"] == "fedhenet" and result["encrypted"] else None
        return math.nan if value is None else float(value)
    return compute


def _encrypted(config) -> bool:
    """Whether the run aggregates under CKKS, whose keys and encryption noise TenSEAL draws unseeded."""
    return bool(config.get("encrypted"))


def _coordinator(key: str):
    """1.0 / 0.0 from what an encrypted run recorded of its coordinator; NaN for other runs."""
    def compute(result, args) -> float:
        record = result.get("coordinator")
        return math.nan if record is None else float(bool(record[key]))
    return compute


def _coordinator_learns(read):
    """A number from what the coordinator recovered of the clients (cached-features FedHENet runs with the
    logistic weighting); NaN for other runs."""
    def compute(result, args) -> float:
        learned = result.get("coordinator_learns")
        return math.nan if learned is None else float(read(learned))
    return compute


def _payload_ratio(result, args) -> float:
    if result["method"] != "fedhenet" or not result["encrypted"]:
        return math.nan
    return result["upload_bytes_per_client"] / result["upload_bytes_per_client_plain"]


def _gap_to_centralised(result, args) -> float:
    if "centralised_accuracy" not in result:
        return math.nan  # a run that trains no centralised comparator
    return 100.0 * (required(result, "accuracy") - required(result, "centralised_accuracy"))


def _full_network_bytes(result, args) -> float:
    return float(result["total_bytes"] if result["method"] == "fedhenet" else result["total_bytes_full_network"])


CIPHERTEXT_AGREEMENT = 1e-3
"""Compressed serializations of random CKKS ciphertexts differ by ~0.05% between runs of one config."""


def _sizes_fixed_by_config(config) -> bool:
    """Client sample counts, hence byte counts, are drawn by the seed only for Dirichlet partitions."""
    return config.get("partition", {}).get("scheme") != "dirichlet"


def _bars(ax, results_by_variant, labels, value, ylabel, log=False):
    """Mean over seeds as a bar, every seed as a dot on it."""
    names = list(results_by_variant)
    means = [sum(value(r) for r in results_by_variant[v]) / len(results_by_variant[v]) for v in names]
    ax.bar(range(len(names)), means, color="tab:blue")
    for i, v in enumerate(names):
        seeds = [value(r) for r in results_by_variant[v]]
        ax.plot([i] * len(seeds), seeds, "k.", markersize=4)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([labels[v] for v in names], rotation=60, ha="right", fontsize=6)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")


def _or_nan(value) -> float:
    """A figure draws a missing value as none."""
    return math.nan if value is None else float(value)


def _draw_accuracy(ax, results_by_variant, labels):
    _bars(ax, results_by_variant, labels, lambda r: 100.0 * _or_nan(r["accuracy"]), "test accuracy (%)")


def _draw_bytes(ax, results_by_variant, labels):
    _bars(ax, results_by_variant, labels, lambda r: r["total_bytes"], "total bytes (all clients, up + down)", log=True)


def _draw_seconds(ax, results_by_variant, labels):
    _bars(ax, results_by_variant, labels, lambda r: _or_nan(r.get("wall_seconds")),
          "training seconds on cached features")


def _draw_pipeline_seconds(ax, results_by_variant, labels):
    _bars(ax, results_by_variant, labels, lambda r: _or_nan(r.get("pipeline_seconds")),
          "seconds of the whole pipeline from images")


def _energy_proxy(result) -> str:
    """Energy read from CPU time is a proxy; RAPL's package counters are a measurement."""
    if result.get("energy_source") != CPU_TIME_PROXY:
        return ""
    return (f"energy from the process's CPU seconds at an assumed {PROXY_WATTS_PER_CORE:g} W per busy core (no RAPL "
            "counter readable here): a ratio of two such energies is their ratio of CPU seconds")


STRUCTURAL = ("rounds", "max_abs_diff_to_centralised", "accuracy_gap_to_centralised", "prediction_disagreement",
              "encrypted_to_plain_payload_ratio", "upload_bytes_per_client", "total_bytes", "total_bytes_full_network",
              "coordinator_recovers_client_moments", "coordinator_moment_relative_error",
              "coordinator_label_inference_accuracy", "coordinator_holds_secret_key", "coordinator_could_decrypt",
              "clients_used", "clients_skipped")
"""Protocol structure and exact algebra: one round, federated = centralised, byte counts, what the
coordinator holds and can learn. They hold however well the frozen backbone's features separate."""
COSTS = ("encryption_overhead_fraction", "encryption_overhead_fraction_with_context",
         "pipeline_encryption_overhead_fraction", "pipeline_encryption_overhead_fraction_with_context",
         "wall_seconds", "pipeline_seconds", "pipeline_energy_joules", "pipeline_cpu_seconds",
         "energy_saved_fraction", "pipeline_seconds_saved_fraction", "feature_seconds")
CLASSES = {"cifar10": 10}
"""Classes of the data sets FedHENet's runner reads (chance is 100 / classes)."""

FEDHENET = ExperimentKind(
    name="fedhenet",
    evidence="empirical",
    description="FedHENet (frozen backbone, closed-form ROLANN output layer, optional CKKS aggregation) or a "
                "last-layer FedAvg/FedProx baseline, on cached features or as each method's whole pipeline "
                "from images.",
    runner="harness.runners.fedhenet",
    learning=Learning("accuracy", lambda config: 100.0 / CLASSES[config["data"]["name"]]),
    timed=True,
    metrics=classified({
        "accuracy": Metric("test accuracy of the trained output layer", lambda r, a: 100.0 * required(r, "accuracy"),
                           unit="%"),
        "rounds": Metric("communication rounds of training", lambda r, a: float(r["rounds"]), unit="rounds",
                         deterministic=True, numerics_invariant=True),
        "max_abs_diff_to_centralised": Metric(
            "max |W_federated - W_centralised| (centralised ROLANN on the pooled training features, same run; "
            "FedHENet on cached features)", _field("max_abs_diff_to_centralised"), unseeded=_encrypted),
        "accuracy_gap_to_centralised": Metric(
            "federated minus centralised test accuracy (same run; FedHENet on cached features)",
            _gap_to_centralised, unit="percentage points", numerics_invariant=True),
        "prediction_disagreement": Metric(
            "fraction of test images whose federated prediction differs from the centralised one",
            lambda r, a: (1.0 - r["prediction_agreement"]) if "prediction_agreement" in r else math.nan,
            numerics_invariant=True),
        "encryption_overhead_fraction": Metric(
            "on cached features: CKKS seconds (encrypt + coordinator sum + decrypt) / FedHENet's protocol "
            "seconds, feature extraction excluded; NaN for plaintext, baseline and from-images runs",
            _encrypted_field("he_fraction"), varies=True),
        "encryption_overhead_fraction_with_context": Metric(
            "as encryption_overhead_fraction, with the CKKS context creation counted as overhead too",
            _encrypted_field("he_fraction_with_context"), varies=True),
        "pipeline_encryption_overhead_fraction": Metric(
            "from images: CKKS seconds (encrypt + coordinator sum + decrypt) / FedHENet's whole pipeline "
            "seconds (feature extraction of every client and of the test set included); NaN for other runs",
            _encrypted_field("pipeline_he_fraction"), varies=True),
        "pipeline_encryption_overhead_fraction_with_context": Metric(
            "as pipeline_encryption_overhead_fraction, with the CKKS context creation counted as overhead too",
            _encrypted_field("pipeline_he_fraction_with_context"), varies=True),
        "encrypted_to_plain_payload_ratio": Metric(
            "mean client upload with encrypted M / with plaintext M, measured in the run at its own shape "
            "(U S in plaintext float64, one per client, both times)",
            _payload_ratio, varies=True, deterministic=_sizes_fixed_by_config,
            agreement=CIPHERTEXT_AGREEMENT, numerics_invariant=True),
        "upload_bytes_per_client": Metric("mean bytes one client uploads over the whole training",
                                          lambda r, a: float(r["upload_bytes_per_client"]), unit="bytes", varies=True,
                                          deterministic=_sizes_fixed_by_config, agreement=CIPHERTEXT_AGREEMENT,
                                          numerics_invariant=True),
        "total_bytes": Metric(
            "bytes sent over the whole training, all clients, uploads and downloads; the baselines exchange "
            "only the last layer (float32), as the FedHENet repository's baselines do",
            lambda r, a: float(r["total_bytes"]), unit="bytes", varies=True, deterministic=_sizes_fixed_by_config,
            agreement=CIPHERTEXT_AGREEMENT, numerics_invariant=True),
        "total_bytes_full_network": Metric(
            "as total_bytes, but the iterative baselines exchange the whole network (the frozen backbone's "
            "parameters + the linear head, float32) down and up every round; FedHENet runs: their own "
            "total_bytes (FedHENet never sends the backbone)",
            _full_network_bytes, unit="bytes", varies=True, deterministic=_sizes_fixed_by_config,
            agreement=CIPHERTEXT_AGREEMENT, numerics_invariant=True),
        "wall_seconds": Metric("training seconds on cached features (feature extraction excluded); NaN for "
                               "from-images runs", _field("wall_seconds"), unit="s", varies=True),
        "pipeline_seconds": Metric(
            "seconds of the method's whole pipeline from decoded images: FedHENet embeds each client's images "
            "and the test set once, then runs its round; the baselines run the frozen backbone on every batch "
            "of every local epoch of every round and on the test set at every evaluation (backbone loading "
            "excluded); NaN for cached-features runs", _field("pipeline_seconds"), unit="s", varies=True),
        "pipeline_energy_joules": Metric(
            "energy of the method's whole pipeline from images (methods.energy: RAPL package counters where "
            "readable, else a proxy, the process's CPU seconds at an assumed 10 W per busy core; the record's "
            "energy_source says which); NaN for cached-features runs", _field("pipeline_energy_joules"), unit="J",
            varies=True, proxy=_energy_proxy),
        "pipeline_cpu_seconds": Metric("CPU seconds of the process over the whole pipeline from images (all its "
                                       "threads)", _field("pipeline_cpu_seconds"), unit="s", varies=True),
        "energy_saved_fraction": Metric(
            "1 - this pipeline's energy / its reference pipeline's (config `reference`: another variant, same seed "
            "and profile); NaN without a reference", _field("energy_saved_fraction"), varies=True,
            proxy=_energy_proxy),
        "pipeline_seconds_saved_fraction": Metric(
            "1 - this pipeline's seconds / its reference pipeline's (config `reference`); NaN without a reference",
            _field("pipeline_seconds_saved_fraction"), varies=True),
        "coordinator_recovers_client_moments": Metric(
            "1 if the coordinator, from the plaintext U_k S_k alone, recovered every client's sample count, feature "
            "mean and second-moment matrix to relative error 1e-6 (checked against the client's own features), "
            "else 0; FedHENet runs on cached features, logistic weighting",
            _coordinator_learns(lambda learned: learned["recovers_client_moments"])),
        "coordinator_moment_relative_error": Metric(
            "largest relative error over clients of the coordinator's recovered sample count, feature mean and "
            "second moments", _coordinator_learns(lambda learned: max(learned["relative_error"].values()))),
        "coordinator_label_inference_accuracy": Metric(
            "share of clients whose majority class the coordinator names from its recovered feature mean, as the "
            "nearest class mean of public labelled features (the run's test images)",
            _coordinator_learns(lambda learned: learned["label_inference_accuracy"])),
        "feature_seconds": Metric("seconds to obtain the cached features (extraction, or a cache read)",
                                  _field("feature_seconds"), unit="s", varies=True),
        "coordinator_holds_secret_key": Metric(
            "1 if the coordinator's own CKKS context holds a secret key, else 0 (encrypted FedHENet runs; NaN "
            "otherwise)", _coordinator("holds_secret_key"), deterministic=True, numerics_invariant=True),
        "coordinator_could_decrypt": Metric(
            "1 if the coordinator, trying with its own context, decrypted a client ciphertext it aggregated back "
            "to that client's M column, else 0 (encrypted FedHENet runs; NaN otherwise)",
            _coordinator("decrypted"), deterministic=True, numerics_invariant=True),
        "clients_used": Metric("clients holding data", lambda r, a: float(r["clients_used"]),
                               deterministic=_sizes_fixed_by_config, numerics_invariant=True),
        "clients_skipped": Metric("clients without data (left out)", lambda r, a: float(r["clients_skipped"]),
                                  deterministic=_sizes_fixed_by_config, numerics_invariant=True),
    }, structural=STRUCTURAL, costs=COSTS, smallest_effects={"accuracy": 0.1}),
    plots={
        "accuracy_bars": Plot("test accuracy per variant", _draw_accuracy),
        "bytes_bars": Plot("total bytes per variant (log scale)", _draw_bytes),
        "seconds_bars": Plot("training seconds on cached features per variant", _draw_seconds),
        "pipeline_seconds_bars": Plot("seconds of the whole pipeline from images per variant",
                                      _draw_pipeline_seconds),
    },
    datasets=lambda config: [config.data.name],
    example=KindExample({"data": {"name": "cifar10", "train_samples": 200, "test_samples": 100, "subset_seed": 0},
                         "backbone": {"name": "efficientnet_lite0", "resolution": 32, "batch_size": 64},
                         "partition": {"scheme": "iid", "min_size": 10}, "num_clients": 4, "method": "fedhenet",
                         "encrypted": False}),
    # Clients a small subset leaves without data are skipped, as at any scale (`clients_skipped`).
    trial=lambda config: {"data": {"train_samples": 10 * config["num_clients"], "test_samples": 20},
                          "partition": {"min_size": 0}, "rounds": 1},
)
