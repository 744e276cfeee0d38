"""The payload model counts what the protocol sends, and the payload kind reads it by (D, n_k)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.kinds import kind
from harness.kinds.fedhenet_payload import ShapeArg
from harness.runners import fedhenet_payload
from harness.runners.context import RunContext
from methods.fedhenet import payload, secure
from methods.fedhenet.protocol import run_fedhenet
from tests.test_fedhenet_runner import DIM, _config, context  # noqa: F401 - the fixture is used by name

SMALL = {"poly_modulus_degree": 8192, "coeff_mod_bit_sizes": [60, 40, 40, 60], "global_scale_bits": 40}


@pytest.mark.parametrize("samples", [7, 40])  # fewer, more samples than D+1 = 21
def test_byte_counts_match_what_the_protocol_sends(samples: int) -> None:
    rng = np.random.default_rng(0)
    dim, classes = 20, 3
    y = rng.integers(0, classes, 2 * samples)
    x = rng.normal(size=(2 * samples, dim))
    params = secure.CkksParams(poly_modulus_degree=8192)
    out = run_fedhenet([x[:samples], x[samples:]], [y[:samples], y[samples:]], x, y, classes,
                       encrypted=True, ckks=params)
    sizes = payload.ciphertext_bytes(secure.create_context(params), dim, classes, params, rng)
    for sent in out["bytes_per_client"]:
        assert sent["us_bytes"] == payload.us_bytes(dim, samples, classes, payload.THIS_PROJECT)
        assert sent["m_plain_bytes"] == payload.m_plain_bytes(dim, classes, payload.THIS_PROJECT)
        assert sent["m_encrypted_bytes"] == pytest.approx(sum(sizes), rel=5e-3)


def test_layouts() -> None:
    assert payload.us_bytes(512, 5000, 10, payload.FEDHENET_CODE) == 10 * 513 * 513 * 4
    assert payload.us_bytes(512, 400, 10, payload.THIS_PROJECT) == 513 * 400 * 8
    assert payload.m_plain_bytes(1280, 10, payload.FEDHENET_CODE) == 1281 * 10 * 4
    with pytest.raises(ValueError):
        payload.Layout(us_per_class=False, float_bytes=2)


def _payload_run(us_per_class: bool, float_bytes: int) -> dict:
    config = fedhenet_payload.Config(feature_dims=[20, 40], client_samples=[5, 21, 41, 100], num_classes=4,
                                     us_per_class=us_per_class, float_bytes=float_bytes, ckks=SMALL)
    return fedhenet_payload.run(config, 0, RunContext(data_dir=None, cache_dir=None))


def test_ratio_falls_with_samples_until_d_plus_1_and_is_lower_for_per_class_float32() -> None:
    ours, code = _payload_run(False, 8), _payload_run(True, 4)
    ratio = kind("fedhenet_payload").metrics["payload_ratio"].compute
    for dim in (20, 40):
        samples = (5, 21, 41, 100)
        curve = [ratio(ours, ShapeArg(feature_dim=dim, client_samples=n)) for n in samples]
        for n, here, there in zip(samples, curve, curve[1:]):
            assert here > there if n < dim + 1 else here == there  # U S stops growing at D+1 columns
        assert ratio(code, ShapeArg(feature_dim=dim, client_samples=100)) < curve[-1]
    assert len(ours["rows"]) == 8 and set(ours["ciphertext_bytes"]) == {"20", "40"}
    with pytest.raises(ValueError, match="was not measured"):
        ratio(ours, ShapeArg(feature_dim=20, client_samples=6))


def test_the_runs_measured_ratio_is_the_models_at_its_shape(context) -> None:  # noqa: F811
    from harness.runners import fedhenet as runner
    record = runner.run(_config(encrypted=True), 0, context)  # one class per client: 30 samples each
    measured = kind("fedhenet").metrics["encrypted_to_plain_payload_ratio"].compute(record, None)
    config = fedhenet_payload.Config(feature_dims=[DIM], client_samples=[30], num_classes=10,
                                     us_per_class=False, float_bytes=8, ckks=SMALL)
    model = fedhenet_payload.run(config, 0, RunContext(data_dir=None, cache_dir=None))["rows"][0]["ratio"]
    assert measured == pytest.approx(model, rel=5e-3)
