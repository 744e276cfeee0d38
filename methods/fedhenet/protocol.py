"""FedHENet's one-round protocol, simulated in one process.

Clients compute (U S, M); each encrypts M (one CKKS vector per class) under the shared
key; the coordinator merges the plaintext U S and sums the ciphertexts; every client
decrypts the summed M and solves for the same W. Timings are sequential wall-clock
seconds; the decryption is measured once (every client performs the same one).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import rolann
from .rolann import Weighting
from .secure import (
    CkksParams,
    Coordinator,
    check_fits,
    coordinator_exposure,
    create_context,
    decrypt_columns,
    encrypt_columns,
    public_context,
)

# fedclaims behaviour version: 1


def _clock() -> float:
    return time.perf_counter()


def _encrypted_sum(stats: Sequence[rolann.ClientStats], per_client: list[dict[str, Any]], ckks: CkksParams,
                   seconds: dict[str, float]) -> tuple[np.ndarray, int, tuple[Coordinator, bytes, np.ndarray]]:
    """Each client's M encrypted under a context only the clients hold, summed by a coordinator holding the
    public context alone, and decrypted by a client: (the sum, the bytes a client downloads for it, the
    coordinator with one client's first ciphertext and its plaintext, to check what it could read)."""
    t = _clock()
    ctx = create_context(ckks)
    coordinator = Coordinator(public_context(ctx))
    seconds["context_setup"] = _clock() - t
    seconds["encrypt"] = 0.0
    probe: tuple[bytes, np.ndarray] | None = None
    for record, st in zip(per_client, stats):
        t = _clock()
        payload = encrypt_columns(ctx, st.M, ckks)
        seconds["encrypt"] += _clock() - t
        record["m_encrypted_bytes"] = sum(len(b) for b in payload)
        coordinator.add(payload)
        if probe is None:
            probe = (payload[0], st.M[:, 0])
    if probe is None:
        raise ValueError("no client holds data")
    summed = coordinator.encrypted_sum()
    seconds["aggregate_encrypted"] = coordinator.seconds
    t = _clock()
    m = decrypt_columns(ctx, summed)
    seconds["decrypt_per_client"] = _clock() - t
    return m, sum(len(b) for b in summed), (coordinator, *probe)


def run_fedhenet(client_features: Sequence[np.ndarray], client_labels: Sequence[np.ndarray],
                 test_features: np.ndarray, test_labels: np.ndarray, num_classes: int, *,
                 encrypted: bool, ckks: CkksParams = CkksParams(), lam: float = 0.0,
                 weighting: Weighting = "logistic", rcond: float | None = None) -> dict[str, Any]:
    """Run the protocol; returns accuracy, weights, rounds (1), bytes per client, timings and, when
    encrypted, what the coordinator could decrypt (`coordinator`, see secure.coordinator_exposure)."""
    start = _clock()
    dim = int(np.asarray(test_features).shape[1]) + 1
    if encrypted:
        check_fits(ckks, dim)
    pairs = [(f, y) for f, y in zip(client_features, client_labels) if len(y) > 0]
    skipped = len(client_features) - len(pairs)
    if not pairs:
        raise ValueError("no client holds data")

    t = _clock()
    stats = [rolann.client_statistics(f, y, num_classes, weighting) for f, y in pairs]
    seconds = {"client_statistics": _clock() - t}

    per_client: list[dict[str, Any]] = [{"n": st.n, "us_bytes": st.US.nbytes, "m_plain_bytes": st.M.nbytes,
                                         "m_encrypted_bytes": None} for st in stats]
    t = _clock()
    u, s = rolann.merge_us(stats)
    seconds["merge_us"] = _clock() - t
    download_bytes = u.nbytes + s.nbytes

    exposure_probe: tuple[Coordinator, bytes, np.ndarray] | None = None
    if encrypted:
        m, downloaded, exposure_probe = _encrypted_sum(stats, per_client, ckks, seconds)
    else:
        t = _clock()
        m = np.sum([st.M for st in stats], axis=0)
        seconds["aggregate_plain"] = _clock() - t
        downloaded = m.nbytes
    download_bytes += downloaded

    t = _clock()
    w = rolann.solve(u, s, m, lam=lam, rcond=rcond)
    accuracy = float(np.mean(rolann.predict(w, test_features) == np.asarray(test_labels)))
    seconds["solve_and_evaluate"] = _clock() - t
    seconds["total"] = _clock() - start
    he = sum(seconds.get(k, 0.0) for k in ("encrypt", "aggregate_encrypted", "decrypt_per_client"))
    # After the clock: a check of the coordinator, not a step of the protocol.
    exposure = coordinator_exposure(*exposure_probe) if exposure_probe is not None else None

    def mean(key: str) -> float:
        return float(np.mean([r[key] for r in per_client]))

    return {
        "accuracy": accuracy,
        "weights": w,
        "rounds": 1,
        "encrypted": encrypted,
        "weighting": weighting,
        "lam": lam,
        "clients_used": len(pairs),
        "clients_skipped": skipped,
        "bytes_per_client": per_client,
        "mean_upload_bytes_plain": mean("us_bytes") + mean("m_plain_bytes"),
        "mean_upload_bytes_encrypted": (None if not encrypted
                                        else mean("us_bytes") + mean("m_encrypted_bytes")),
        "download_bytes_per_client": int(download_bytes),
        "seconds": seconds,
        "he_seconds": he,
        "he_fraction_of_total": he / seconds["total"],
        "coordinator": exposure,
    }
