"""ROLANN: the closed-form one-layer network of FedHEONN/FedHENet, in float64.

Per class c, ROLANN fits pre-activation targets d = logit(t), t = 0.05 + 0.9*onehot, by
weighted least squares: minimise sum_i f_i^2 (x_i^T w - d_i)^2 (+ lam |w|^2), i.e.
w = (X F^2 X^T + lam I)^-1 X F^2 d. A client sends US = U S from the economy SVD of
X diag(f) and M = X (f^2 * d); sums of Grams and of M are partition-independent, so the
merged solution equals the centralised one for any split of the data.

Weightings:
  "logistic" (default; FedHEONN and the paper): f = sigma'(d) = t(1 - t), the same 0.0475
      for every sample and class, so one SVD per client serves every class and
      (without lam) the solution is ordinary least squares on d.
  "fedhenet_code": the FedHENet code's f = d(1 - d), the derivative formula applied to the
      logit: f^2 is about 4.1x larger for negatives (d = -2.94) than for positives
      (d = +2.94), so U, S differ per class (one SVD per class).
Nothing of size n x n (e.g. a dense diag(f)) is ever formed.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Weighting = Literal["logistic", "fedhenet_code"]
WEIGHTINGS: tuple[str, ...] = ("logistic", "fedhenet_code")
T_LOW, T_HIGH = 0.05, 0.95
_MERGE_ROWS = 4  # merge buffer, in multiples of D+1 rows, before a QR compression


@dataclass(frozen=True)
class ClientStats:
    """What a client sends: US is (D+1) x r, or C x (D+1) x r per class; M is (D+1) x C."""

    US: np.ndarray
    M: np.ndarray
    n: int

    @property
    def per_class(self) -> bool:
        return self.US.ndim == 3


def targets(labels: np.ndarray, num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(t, d): soft one-hot targets and their logits, both n x C."""
    labels = np.asarray(labels, dtype=np.int64)
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(f"labels must lie in [0, {num_classes})")
    t = np.full((labels.size, num_classes), T_LOW)
    t[np.arange(labels.size), labels] = T_HIGH
    return t, np.log(t / (1.0 - t))


def weights_f(t: np.ndarray, d: np.ndarray, weighting: Weighting) -> np.ndarray:
    """Per-sample, per-class weight f (n x C)."""
    if weighting == "logistic":
        return t * (1.0 - t)
    if weighting == "fedhenet_code":
        return d * (1.0 - d)
    raise ValueError(f"unknown weighting {weighting!r}; choose one of {WEIGHTINGS}")


def augment(features: np.ndarray) -> np.ndarray:
    """[n, D] features -> (D+1) x n float64 columns with a leading constant 1 (bias)."""
    features = np.asarray(features, dtype=np.float64)
    if features.ndim != 2:
        raise ValueError(f"features must be [n, D], got shape {features.shape}")
    out = np.empty((features.shape[1] + 1, features.shape[0]))
    out[0] = 1.0
    out[1:] = features.T
    return out


def _r_factor(rows: np.ndarray) -> np.ndarray:
    """R of a QR of `rows` (m x p): R^T R = rows^T rows, at most p rows."""
    if rows.shape[0] <= rows.shape[1]:
        return rows
    return np.linalg.qr(rows, mode="r")  # type: ignore[return-value]  # the stubs say QRResult; mode "r" gives R


def _left_us(rows: np.ndarray) -> np.ndarray:
    """U S of A = rows^T (p x r, economy), from the SVD of the R factor of rows."""
    if rows.shape[0] == 0:
        return np.zeros((rows.shape[1], 0))
    _, s, vt = np.linalg.svd(_r_factor(rows), full_matrices=False)
    return vt.T * s


def client_statistics(features: np.ndarray, labels: np.ndarray, num_classes: int,
                      weighting: Weighting = "logistic") -> ClientStats:
    """A client's (U S, M, n) for its features [n, D] and integer labels."""
    x = augment(features)
    t, d = targets(labels, num_classes)
    if x.shape[1] != d.shape[0]:
        raise ValueError(f"{x.shape[1]} feature rows but {d.shape[0]} labels")
    f = weights_f(t, d, weighting)
    m = x @ (f * f * d)
    if weighting == "logistic":
        us = _left_us(x.T * f[:, :1])
    else:
        us = np.stack([_left_us(x.T * f[:, [c]]) for c in range(num_classes)])
    return ClientStats(US=us, M=m, n=int(d.shape[0]))


def _merge_us(blocks: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """U, S of the concatenation [US_1 | ... | US_K] without forming it whole (TSQR).

    Stacks the blocks' transposes and compresses them by QR whenever the buffer grows
    past a few (D+1) rows; only orthogonal transformations touch the data, so this is as
    stable as one SVD of the concatenation (unlike an eigendecomposition of the Gram).
    """
    p = blocks[0].shape[0]
    acc: list[np.ndarray] = []
    rows = 0
    for block in blocks:
        acc.append(block.T)
        rows += block.shape[1]
        if rows > _MERGE_ROWS * p:
            acc = [_r_factor(np.vstack(acc))]
            rows = acc[0].shape[0]
    _, s, vt = np.linalg.svd(_r_factor(np.vstack(acc)), full_matrices=False)
    return vt.T, s


def _nonempty(stats_list: Sequence[ClientStats]) -> list[ClientStats]:
    stats = [s for s in stats_list if s.n > 0]
    if not stats:
        raise ValueError("no client statistics to merge")
    return stats


def merge_us(stats_list: Sequence[ClientStats]) -> tuple[np.ndarray, np.ndarray]:
    """Server side, plaintext part: U, S of all clients' U_k S_k (leading axis C if per-class)."""
    stats = _nonempty(stats_list)
    if not stats[0].per_class:
        return _merge_us([st.US for st in stats])
    pairs = [_merge_us([st.US[c] for st in stats]) for c in range(stats[0].US.shape[0])]
    return np.stack([u for u, _ in pairs]), np.stack([s for _, s in pairs])


def merge(stats_list: Sequence[ClientStats]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Server side: (U, S, M) with M = sum of the clients' M_k."""
    stats = _nonempty(stats_list)
    u, s = merge_us(stats)
    return u, s, np.sum([st.M for st in stats], axis=0)


def default_rcond(p: int) -> float:
    """Relative cut-off for singular values: p * machine epsilon, as numpy's matrix_rank."""
    return p * np.finfo(np.float64).eps


def _solve_one(u: np.ndarray, s: np.ndarray, m: np.ndarray, lam: float, rcond: float) -> np.ndarray:
    keep = s > rcond * s.max() if s.size and s.max() > 0 else np.zeros(s.shape, dtype=bool)
    if lam == 0.0:
        u, s = u[:, keep], s[keep]
    return u @ ((u.T @ m) / (s * s + lam)[:, None])


def solve(u: np.ndarray, s: np.ndarray, m: np.ndarray, lam: float = 0.0,
          rcond: float | None = None) -> np.ndarray:
    """W = U (S^2 + lam I)^-1 U^T M, (D+1) x C.

    With lam = 0 singular values below rcond * S.max() are dropped (minimum-norm least
    squares on the retained subspace), which keeps W finite when there are fewer samples
    than features or the features are collinear.
    """
    if lam < 0:
        raise ValueError("lam must be >= 0")
    p = m.shape[0]
    rcond = default_rcond(p) if rcond is None else rcond
    if u.ndim == 2:
        return _solve_one(u, s, m, lam, rcond)
    return np.stack([_solve_one(u[c], s[c], m[:, [c]], lam, rcond)[:, 0]
                     for c in range(m.shape[1])], axis=1)


def predict_scores(w: np.ndarray, features: np.ndarray) -> np.ndarray:
    """Pre-activation outputs X^T W, n x C (sigmoid is monotone, so argmax is unchanged)."""
    features = np.asarray(features, dtype=np.float64)
    return w[0] + features @ w[1:]


def predict(w: np.ndarray, features: np.ndarray) -> np.ndarray:
    """Class indices argmax_c of X^T W."""
    return np.argmax(predict_scores(w, features), axis=1)


def centralised_solution(features: np.ndarray, labels: np.ndarray, num_classes: int,
                         weighting: Weighting = "logistic", lam: float = 0.0,
                         rcond: float | None = None) -> np.ndarray:
    """W from the pooled data: one client holding everything."""
    u, s, m = merge([client_statistics(features, labels, num_classes, weighting)])
    return solve(u, s, m, lam=lam, rcond=rcond)
