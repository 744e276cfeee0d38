"""Bytes of one FedHENet client upload, by client sample count n_k, feature dimension D and layout.

A client sends U_k S_k, (D+1) x r with r = min(n_k, D+1) (economy SVD of its (D+1) x n_k
weighted features), and M_k, (D+1) x C, in plaintext or as one CKKS vector per class.
How U S is laid out is not in the paper: this project (logistic weighting, the same f for
every class) sends one U S per client in float64; the FedHENet code sends one U S per class
(its weighting differs per class) as float32 torch tensors. Both serialize M the same way.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tenseal as ts

from .secure import CkksParams, encrypt_columns


@dataclass(frozen=True)
class Layout:
    """How a client message stores its plaintext matrices."""

    us_per_class: bool
    float_bytes: int

    def __post_init__(self) -> None:
        if self.float_bytes not in (4, 8):
            raise ValueError("float_bytes must be 4 (float32) or 8 (float64)")


THIS_PROJECT = Layout(us_per_class=False, float_bytes=8)
FEDHENET_CODE = Layout(us_per_class=True, float_bytes=4)


def us_bytes(feature_dim: int, client_samples: int, num_classes: int, layout: Layout) -> int:
    """Bytes of U_k S_k: (D+1) x min(n_k, D+1) values, once or once per class."""
    p = feature_dim + 1
    copies = num_classes if layout.us_per_class else 1
    return copies * p * min(client_samples, p) * layout.float_bytes


def m_plain_bytes(feature_dim: int, num_classes: int, layout: Layout) -> int:
    """Bytes of M_k in plaintext: (D+1) x C values."""
    return (feature_dim + 1) * num_classes * layout.float_bytes


def ciphertext_bytes(ctx: ts.Context, feature_dim: int, num_classes: int, params: CkksParams,
                     rng: np.random.Generator) -> list[int]:
    """Serialized sizes of the C CKKS vectors of a (D+1) x C matrix, encrypted for real.

    The values do not change the size of a fresh ciphertext; its compressed serialization
    varies by a few hundred bytes with the encryption's own randomness.
    """
    m = rng.normal(size=(feature_dim + 1, num_classes))
    return [len(b) for b in encrypt_columns(ctx, m, params)]


@dataclass(frozen=True)
class Upload:
    """One client's upload in plaintext and with M encrypted."""

    us_bytes: int
    m_plain_bytes: int
    m_encrypted_bytes: int

    @property
    def plain(self) -> int:
        return self.us_bytes + self.m_plain_bytes

    @property
    def encrypted(self) -> int:
        return self.us_bytes + self.m_encrypted_bytes

    @property
    def ratio(self) -> float:
        return self.encrypted / self.plain


def upload(feature_dim: int, client_samples: int, num_classes: int, layout: Layout,
           m_encrypted_bytes: int) -> Upload:
    """The upload of a client holding `client_samples` samples, given its measured ciphertext bytes."""
    return Upload(us_bytes(feature_dim, client_samples, num_classes, layout),
                  m_plain_bytes(feature_dim, num_classes, layout), m_encrypted_bytes)
