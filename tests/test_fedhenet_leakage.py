"""What FedHENet's coordinator recovers from the plaintext U_k S_k, against the clients' own data."""
from __future__ import annotations

import numpy as np
import pytest

from harness.kinds import kind
from harness.runners import fedhenet as runner
from methods.fedhenet import rolann
from methods.fedhenet.leakage import coordinator_learns, moments_from_upload, moments_of
from tests.test_fedhenet_runner import _config, context  # noqa: F401 - the fixture is used by name

F0 = rolann.T_HIGH * (1 - rolann.T_HIGH)


@pytest.mark.parametrize("n", [5, 40])  # fewer and more samples than feature dimensions + 1
def test_a_clients_count_mean_and_second_moments_follow_from_its_plaintext_upload(n: int) -> None:
    rng = np.random.default_rng(n)
    features = rng.normal(2.0, 1.5, size=(n, 12))
    labels = rng.integers(0, 3, size=n)
    us = rolann.client_statistics(features, labels, 3).US
    recovered, actual = moments_from_upload(us, F0), moments_of(features)
    assert recovered.n == pytest.approx(n)
    assert np.allclose(recovered.mean, actual.mean) and np.allclose(recovered.second_moment, actual.second_moment)


def test_one_class_clients_are_named_by_their_recovered_mean() -> None:
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 5, size=(4, 8))
    clients = [rng.normal(centres[c], 1.0, size=(30, 8)) for c in range(4)]
    labels = [np.full(30, c) for c in range(4)]
    public_y = np.repeat(np.arange(4), 25)
    public_x = centres[public_y] + rng.normal(0, 1.0, size=(100, 8))
    uploads = [rolann.client_statistics(x, y, 4).US for x, y in zip(clients, labels)]
    learned = coordinator_learns(uploads, clients, labels, public_x, public_y, 4)
    assert learned["recovers_client_moments"] is True and learned["clients"] == 4
    assert max(learned["relative_error"].values()) < 1e-9
    assert learned["label_inference_accuracy"] == 1.0
    wrong = coordinator_learns(uploads, [x + 1.0 for x in clients], labels, public_x, public_y, 4)
    assert wrong["recovers_client_moments"] is False  # checked against the data, not assumed


def test_cached_fedhenet_runs_record_what_the_coordinator_learns(context) -> None:  # noqa: F811
    metrics = kind("fedhenet").metrics
    for encrypted in (False, True):
        record = runner.run(_config(encrypted=encrypted), 0, context)
        assert metrics["coordinator_recovers_client_moments"].compute(record, None) == 1.0
        assert metrics["coordinator_moment_relative_error"].compute(record, None) < 1e-6
        assert 0.0 <= metrics["coordinator_label_inference_accuracy"].compute(record, None) <= 1.0
    baseline = runner.run(_config(method="fedavg", rounds=1), 0, context)
    assert np.isnan(metrics["coordinator_recovers_client_moments"].compute(baseline, None))
