"""Each client's update norm and size, recorded per round without changing what is trained."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from methods.federated import loop, run_federation
from methods.federated.aggregation import ClientUpdate
from methods.federated.update_statistics import update_statistics
from tests.test_federated_engine import one_thread, tiny_cfg, tiny_conv, tiny_data  # noqa: F401

pytestmark = pytest.mark.usefixtures("one_thread")


def test_norm_and_size_count_only_the_coordinates_a_client_trained() -> None:
    delta = {"w": torch.tensor([3.0, 4.0, 100.0]), "b": torch.tensor([[12.0]])}
    mask = {"w": torch.tensor([True, True, False]), "b": torch.tensor([[True]])}
    before = {name: t.clone() for name, t in delta.items()}
    norms, sizes = update_statistics([ClientUpdate(0, 0.5, delta, mask, 10),
                                      ClientUpdate(1, 1.0, delta, None, 10)])
    assert norms == [pytest.approx(13.0), pytest.approx(math.sqrt(9 + 16 + 100 ** 2 + 144))]
    assert sizes == [3, 4]
    assert all(torch.equal(delta[name], before[name]) for name in delta)


def test_a_run_records_one_norm_and_size_per_participant_and_round() -> None:
    family, data = tiny_conv(), tiny_data(4)
    caps = np.array([0.25, 0.5, 0.75, 1.0])
    result = run_federation(family, data, tiny_cfg(policy="heterofl", clients_per_round=3), caps, seed=3)
    sizes_at_cap = {}
    for record in result.history:
        assert len(record.update_norms) == len(record.update_sizes) == len(record.clients) == 3
        assert all(norm > 0 and math.isfinite(norm) for norm in record.update_norms)
        for client, size in zip(record.clients, record.update_sizes):
            sizes_at_cap.setdefault(caps[client], set()).add(size)
    assert all(len(sizes) == 1 for sizes in sizes_at_cap.values())  # a width has one size
    assert sizes_at_cap[1.0] == {result.total_coordinates}
    ordered = [next(iter(sizes_at_cap[c])) for c in sorted(sizes_at_cap)]
    assert ordered == sorted(ordered) and len(set(ordered)) == len(ordered)
    assert result.to_dict()["history"][0]["update_sizes"] == result.history[0].update_sizes


@pytest.mark.parametrize("policy, extraction, execution", [("hasfl", "prefix", "batched"),
                                                           ("fjord", "random", "sequential")])
def test_recording_norms_changes_no_trained_value(monkeypatch, policy: str, extraction: str,
                                                  execution: str) -> None:
    family, data = tiny_conv(), tiny_data(6)
    caps = np.array([0.25, 0.5, 0.75, 1.0, 0.5, 0.25])
    schedule = dict(t_warm=1, t_adapt=1, t_norm=2) if policy == "hasfl" else {}
    cfg = tiny_cfg(num_clients=6, clients_per_round=3, rounds=4, policy=policy, extraction=extraction,
                   client_execution=execution, **schedule)
    recorded = run_federation(family, data, cfg, caps, seed=7)
    monkeypatch.setattr(loop, "update_statistics", lambda updates: ([], []))
    unrecorded = run_federation(family, data, cfg, caps, seed=7)
    assert recorded.history[0].update_norms and not unrecorded.history[0].update_norms
    for name, value in recorded.final_params.items():
        assert torch.equal(value, unrecorded.final_params[name]), name
    assert [r.test_accuracy for r in recorded.history] == [r.test_accuracy for r in unrecorded.history]


def test_hasfl_records_h_bar_before_each_rescaling() -> None:
    from tests.test_federated_engine import _drive_hasfl
    _, _, policy, _ = _drive_hasfl(coverage_guarantee=True, rounds=45)
    adaptations = policy.adaptations()
    assert [a["rescaled"] for a in adaptations] == [False, False, True, False, False, False, True, False]
    for a in adaptations:
        mean_after = float(np.mean(a["h_tilde"]))
        if a["rescaled"]:
            assert mean_after == pytest.approx(1.0) and a["h_bar"] != pytest.approx(1.0)
        else:
            assert a["h_bar"] == pytest.approx(mean_after)
