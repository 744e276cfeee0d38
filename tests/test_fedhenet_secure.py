"""CKKS aggregation of M: exact enough, coordinator blind, clear failures, honest byte counts."""
from __future__ import annotations

import time

import numpy as np
import pytest
import tenseal as ts

from methods.fedhenet import rolann, secure
from methods.fedhenet.protocol import run_fedhenet

SMALL = secure.CkksParams(poly_modulus_degree=8192)


@pytest.fixture(scope="module")
def ctx() -> ts.Context:
    return secure.create_context(SMALL)


def _client_ms(k: int, p: int, c: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(scale=50.0, size=(p, c)) for _ in range(k)]


def _encrypted_sum(ctx: ts.Context, ms: list[np.ndarray], params: secure.CkksParams) -> np.ndarray:
    coordinator = secure.Coordinator(secure.public_context(ctx))
    for m in ms:
        coordinator.add(secure.encrypt_columns(ctx, m, params))
    return secure.decrypt_columns(ctx, coordinator.encrypted_sum())


def test_encrypted_sum_matches_plaintext(ctx: ts.Context) -> None:
    ms = _client_ms(5, 129, 4)
    total = sum(ms)
    assert np.abs(_encrypted_sum(ctx, ms, SMALL) - total).max() <= 1e-4 * np.abs(total).max()


def test_coordinator_holds_no_secret_key_and_cannot_decrypt(ctx: ts.Context) -> None:
    coordinator = secure.Coordinator(secure.public_context(ctx))
    assert not coordinator.context.is_private()
    assert not coordinator.context.has_secret_key()
    coordinator.add(secure.encrypt_columns(ctx, _client_ms(1, 33, 2)[0], SMALL))
    summed = coordinator.encrypted_sum()
    with pytest.raises(ValueError, match="secret"):
        ts.ckks_vector_from(coordinator.context, summed[0]).decrypt()
    with pytest.raises(ValueError, match="secret key"):
        secure.decrypt_columns(coordinator.context, summed)
    assert secure.decrypt_columns(ctx, summed).shape == (33, 2)  # the clients can


def test_coordinator_refuses_a_private_context(ctx: ts.Context) -> None:
    with pytest.raises(ValueError, match="secret key"):
        secure.Coordinator(ctx.serialize(save_secret_key=True))


def test_too_small_context_fails_clearly_before_encrypting() -> None:
    # ctx=None: any attempt to encrypt would fail with another error than this one
    with pytest.raises(ValueError, match=r"length 5000 .*4096 slots.*>= 16384"):
        secure.encrypt_columns(None, np.zeros((5000, 2)), SMALL)  # type: ignore[arg-type]
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"length 4097 .*4096 slots"):
        run_fedhenet([rng.normal(size=(5, 4096))], [np.zeros(5, dtype=int)],
                     rng.normal(size=(2, 4096)), np.zeros(2, dtype=int), 2,
                     encrypted=True, ckks=SMALL)


def test_protocol_bytes_and_equivalence_to_plaintext() -> None:
    rng = np.random.default_rng(0)
    num_classes, dim = 4, 31
    y = rng.integers(0, num_classes, 400)
    x = rng.normal(size=(num_classes, dim))[y] + rng.normal(size=(400, dim))
    parts = np.array_split(np.argsort(y, kind="stable"), 6) + [np.array([], dtype=int)]
    cf, cl = [x[p] for p in parts], [y[p] for p in parts]
    plain = run_fedhenet(cf, cl, x, y, num_classes, encrypted=False, ckks=SMALL)
    enc = run_fedhenet(cf, cl, x, y, num_classes, encrypted=True, ckks=SMALL)
    assert plain["rounds"] == enc["rounds"] == 1
    assert enc["clients_used"] == 6 and enc["clients_skipped"] == 1
    w_ref = rolann.centralised_solution(x, y, num_classes)
    assert np.abs(plain["weights"] - w_ref).max() <= 1e-8
    assert np.abs(enc["weights"] - w_ref).max() <= 1e-4 * np.abs(w_ref).max()
    assert enc["accuracy"] == pytest.approx(plain["accuracy"], abs=1e-9)
    for record in enc["bytes_per_client"]:
        assert record["m_plain_bytes"] == (dim + 1) * num_classes * 8
        assert record["us_bytes"] > 0
        assert record["m_encrypted_bytes"] > record["m_plain_bytes"] > 0
    assert enc["mean_upload_bytes_encrypted"] > enc["mean_upload_bytes_plain"] > 0
    assert enc["seconds"]["encrypt"] > 0 and 0 < enc["he_fraction_of_total"] < 1
    assert plain["he_seconds"] == 0.0


def test_authors_ring_32768() -> None:
    start = time.perf_counter()
    params = secure.CkksParams()
    assert (params.poly_modulus_degree, params.coeff_mod_bit_sizes, params.global_scale) == (
        32768, (60, 40, 40, 60), 2.0 ** 40)
    ctx = secure.create_context(params)
    ms = _client_ms(3, 513, 3, seed=1)
    total = sum(ms)
    assert np.abs(_encrypted_sum(ctx, ms, params) - total).max() <= 1e-4 * np.abs(total).max()
    assert time.perf_counter() - start < 10.0
