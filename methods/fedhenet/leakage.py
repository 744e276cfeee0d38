"""What FedHENet's coordinator learns from the plaintext half of each upload, U_k S_k.

With the logistic weighting every sample carries the same weight f0 = t(1 - t) = 0.0475, a
constant of the protocol, so U_k S_k (U_k S_k)^T = f0^2 X_k X_k^T with X_k the client's
features under a leading row of ones: its [0, 0] entry is f0^2 n_k, the rest of its first
row f0^2 times the feature sums, the remainder f0^2 times the sum of x x^T. The coordinator,
which only needs the plaintext it is sent, recovers every client's sample count, feature mean
and second-moment matrix. With one class per client the feature mean is that class's mean,
which anyone holding labelled images of the classes can name (here: the run's test images,
standing for public labelled data).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import rolann

RECOVERED = 1e-6
"""Relative error below which a statistic counts as recovered."""


@dataclass(frozen=True)
class ClientMoments:
    n: float
    mean: np.ndarray
    second_moment: np.ndarray
    """(1/n) sum over samples of x x^T."""


def moments_from_upload(us: np.ndarray, f0: float) -> ClientMoments:
    """The client's sample count, feature mean and second moments, from its plaintext U S alone."""
    gram = (us @ us.T) / (f0 * f0)
    n = gram[0, 0]
    return ClientMoments(n, gram[0, 1:] / n, gram[1:, 1:] / n)


def moments_of(features: np.ndarray) -> ClientMoments:
    """The same statistics computed from the client's own features [n, D]."""
    x = np.asarray(features, dtype=np.float64)
    return ClientMoments(float(len(x)), x.mean(axis=0), x.T @ x / len(x))


def _relative_error(recovered: np.ndarray | float, actual: np.ndarray | float) -> float:
    actual = np.asarray(actual, dtype=np.float64)
    return float(np.max(np.abs(np.asarray(recovered) - actual)) / (np.max(np.abs(actual)) or 1.0))


def nearest_class(mean: np.ndarray, class_means: np.ndarray) -> int:
    return int(np.argmin(np.linalg.norm(class_means - mean, axis=1)))


def coordinator_learns(uploads_us: Sequence[np.ndarray], client_features: Sequence[np.ndarray],
                       client_labels: Sequence[np.ndarray], public_features: np.ndarray,
                       public_labels: np.ndarray, num_classes: int) -> dict:
    """What the coordinator recovers of each client from U_k S_k (logistic weighting), checked
    against the client's own data: the worst relative errors over clients, whether every client's
    count, mean and second moments were recovered, and the share of clients whose majority class
    the recovered mean names by the nearest public class mean."""
    f0 = rolann.T_HIGH * (1.0 - rolann.T_HIGH)  # the logistic weighting's f, the same for every sample
    public_features = np.asarray(public_features, dtype=np.float64)
    class_means = np.stack([public_features[np.asarray(public_labels) == c].mean(axis=0)
                            for c in range(num_classes)])
    errors: dict[str, list[float]] = {"n": [], "mean": [], "second_moment": []}
    named = []
    for us, features, labels in zip(uploads_us, client_features, client_labels):
        recovered, actual = moments_from_upload(us, f0), moments_of(features)
        for key in errors:
            errors[key].append(_relative_error(getattr(recovered, key), getattr(actual, key)))
        majority = int(np.bincount(np.asarray(labels), minlength=num_classes).argmax())
        named.append(nearest_class(recovered.mean, class_means) == majority)
    worst = {key: max(values) for key, values in errors.items()}
    return {"relative_error": worst,
            "recovers_client_moments": all(e < RECOVERED for e in worst.values()),
            "label_inference_accuracy": float(np.mean(named)),
            "clients": len(named)}
