"""CKKS (TenSEAL) encryption of the M statistics and a coordinator that can only add them.

The clients share one secret key, as in the paper: they create (or receive) the private
context; the coordinator gets `public_context(ctx)`, a serialization without the secret
key, so it can add ciphertexts but never decrypt them. Only M is encrypted; U S travels in
plaintext (the feature second moments are not protected).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import tenseal as ts

# Largest total coeff_mod bit count SEAL accepts at 128-bit security, per ring degree.
_MAX_COEFF_BITS = {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881}


@dataclass(frozen=True)
class CkksParams:
    """CKKS context settings; the defaults are the authors'."""

    poly_modulus_degree: int = 32768
    coeff_mod_bit_sizes: tuple[int, ...] = (60, 40, 40, 60)
    global_scale: float = 2.0 ** 40

    @property
    def slots(self) -> int:
        return self.poly_modulus_degree // 2


def sufficient_degree(params: CkksParams, length: int) -> int:
    """The smallest ring degree with at least `length` slots that also fits the modulus chain."""
    bits = sum(params.coeff_mod_bit_sizes)
    for degree in sorted(_MAX_COEFF_BITS):
        if degree // 2 >= length and _MAX_COEFF_BITS[degree] >= bits:
            return degree
    raise ValueError(f"no supported poly_modulus_degree has {length} slots for {bits} modulus bits")


def check_fits(params: CkksParams, length: int) -> None:
    """Raise ValueError, before any encryption, when a length-`length` vector exceeds the slots."""
    if length > params.slots:
        raise ValueError(
            f"a CKKS vector of length {length} does not fit the {params.slots} slots of "
            f"poly_modulus_degree={params.poly_modulus_degree}; use poly_modulus_degree >= "
            f"{sufficient_degree(params, length)} (one vector per class holds D+1 values)")


def create_context(params: CkksParams) -> ts.Context:
    """The key holders' (clients') private context: it holds the shared secret key."""
    ctx = ts.context(ts.SCHEME_TYPE.CKKS, poly_modulus_degree=params.poly_modulus_degree,
                     coeff_mod_bit_sizes=list(params.coeff_mod_bit_sizes))
    ctx.global_scale = params.global_scale
    return ctx


def refuse_secret_key(context: ts.Context) -> None:
    """The coordinator's key guard: raise ValueError when `context` holds a secret key."""
    if context.is_private():
        raise ValueError("the coordinator must not receive a context with the secret key")


def public_context(ctx: ts.Context) -> bytes:
    """The serialized context without the secret key: all the coordinator ever holds."""
    data = ctx.serialize(save_public_key=True, save_secret_key=False,
                         save_galois_keys=False, save_relin_keys=False)
    if ts.context_from(data).is_private():
        raise RuntimeError("serialized coordinator context still holds a secret key")
    return data


def encrypt_columns(ctx: ts.Context, m: np.ndarray, params: CkksParams) -> list[bytes]:
    """One serialized ckks_vector per column (class) of M, (D+1) x C."""
    check_fits(params, m.shape[0])
    return [ts.ckks_vector(ctx, np.ascontiguousarray(m[:, c]).tolist()).serialize()
            for c in range(m.shape[1])]


def decrypt_columns(ctx: ts.Context, columns: Sequence[bytes]) -> np.ndarray:
    """Decrypt serialized per-class vectors back to a (D+1) x C float64 matrix."""
    if not ctx.is_private():
        raise ValueError("this context has no secret key; only the clients can decrypt")
    return np.stack([np.asarray(ts.ckks_vector_from(ctx, b).decrypt(), dtype=np.float64)
                     for b in columns], axis=1)


class Coordinator:
    """Sums clients' encrypted M column by column; it holds no secret key."""

    def __init__(self, public_ctx_bytes: bytes) -> None:
        self.context = ts.context_from(public_ctx_bytes)
        refuse_secret_key(self.context)
        self._sum: list[ts.CKKSVector] | None = None
        self.clients = 0
        self.seconds = 0.0

    def add(self, encrypted_vectors_bytes: Sequence[bytes]) -> None:
        """Add one client's serialized per-class ciphertexts to the running sum."""
        start = time.perf_counter()
        vectors = [ts.ckks_vector_from(self.context, b) for b in encrypted_vectors_bytes]
        if self._sum is None:
            self._sum = vectors
        elif len(vectors) != len(self._sum):
            raise ValueError(f"expected {len(self._sum)} ciphertexts, got {len(vectors)}")
        else:
            for acc, v in zip(self._sum, vectors):
                acc += v
        self.clients += 1
        self.seconds += time.perf_counter() - start

    def encrypted_sum(self) -> list[bytes]:
        """The serialized encrypted sum, to broadcast back to the clients."""
        if self._sum is None:
            raise ValueError("no client has been added")
        start = time.perf_counter()
        out = [v.serialize() for v in self._sum]
        self.seconds += time.perf_counter() - start
        return out

    def holds_secret_key(self) -> bool:
        """Whether the coordinator's own context carries a secret key."""
        return self.context.is_private()

    def try_decrypt(self, ciphertext: bytes) -> np.ndarray | None:
        """Decrypt one serialized ciphertext with the coordinator's own context; None if it cannot."""
        vector = ts.ckks_vector_from(self.context, ciphertext)
        try:
            return np.asarray(vector.decrypt(), dtype=np.float64)
        except ValueError:  # TenSEAL: "the current context of the tensor doesn't hold a secret_key"
            return None


def coordinator_exposure(coordinator: Coordinator, ciphertext: bytes, plaintext: np.ndarray) -> dict:
    """What the coordinator could learn from one client ciphertext it aggregated, by trying.

    `plaintext` is the vector the client encrypted; a decryption counts only when it
    returns that vector (to CKKS precision), not merely when it runs.
    """
    recovered = coordinator.try_decrypt(ciphertext)
    error = None if recovered is None else float(np.max(np.abs(recovered[:len(plaintext)] - plaintext)))
    scale = float(np.max(np.abs(plaintext))) or 1.0
    return {"holds_secret_key": coordinator.holds_secret_key(),
            "decrypted": error is not None and error <= 1e-3 * scale,
            "decryption_error": error}
