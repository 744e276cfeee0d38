"""Metrics and per-client quantities of federated_training records, on small synthetic records."""
from __future__ import annotations

import math

import pytest

from harness.kinds import kind

KIND = kind("federated_training")


def metric(name: str, record: dict, **args) -> float:
    spec = KIND.metrics[name]
    return spec.compute(record, spec.args.model_validate(args))


def quantity(name: str, record: dict) -> list[float]:
    return KIND.client_quantities[name].compute(record)


def hasfl_record(caps: list[float], final_allocation: list[float]) -> dict:
    return {"caps": caps, "adaptations": [{"round": 9, "allocation": final_allocation}]}


def test_at_cap_marks_the_clients_whose_final_allocation_is_their_cap() -> None:
    record = hasfl_record([0.25, 0.5, 0.5, 0.5, 1.0], [0.25, 0.5, 0.47, 0.5, 0.61])
    assert quantity("at_cap", record) == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert metric("clients_mean", record, quantity="at_cap", tier=0.5) == pytest.approx(2 / 3)


def test_at_cap_needs_an_adaptation_step() -> None:
    with pytest.raises(ValueError, match="no adaptation step"):
        quantity("at_cap", {"caps": [0.5], "adaptations": []})


def round_record(t: int, clients, widths, norms, sizes, accuracy=None, loss=None) -> dict:
    return {"round": t, "clients": clients, "widths": widths, "mean_width": sum(widths) / len(widths),
            "test_accuracy": accuracy, "test_loss": loss, "update_norms": norms, "update_sizes": sizes}


def two_tier_record() -> dict:
    """Clients 0, 1 at cap 0.25 and 2, 3 at cap 1.0; rounds 10, so the smoothing window is one evaluation."""
    history = [round_record(0, [0, 2], [0.25, 1.0], [1.0, 10.0], [6, 100], 0.20, 2.0),
               round_record(1, [1, 3], [0.25, 1.0], [1.2, 12.0], [6, 100], 0.30, 1.0),
               round_record(2, [0, 3], [0.25, 1.0], [None, 11.0], [6, 100], 0.35, 0.5),
               round_record(3, [1, 2], [0.25, 1.0], [1.1, 11.0], [6, 100], 0.40, 0.8)]
    return {"config": {"rounds": 10}, "caps": [0.25, 0.25, 1.0, 1.0], "history": history,
            "total_coordinates": 100,
            "width_costs": [{"width": 0.25, "param_fraction": 0.06, "mac_fraction": 0.05},
                            {"width": 1.0, "param_fraction": 1.0, "mac_fraction": 1.0}]}


def test_end_loss_and_its_rise_after_the_minimum() -> None:
    record = two_tier_record()
    assert metric("end_loss", record) == pytest.approx(0.8)
    assert metric("loss_rise_after_min", record) == pytest.approx(0.3)
    record["history"][3]["test_loss"] = 0.4
    assert metric("loss_rise_after_min", record) == 0.0


def test_update_norms_and_sizes_per_client_and_their_ratio_across_tiers() -> None:
    record = two_tier_record()
    norms = quantity("mean_update_norm", record)
    assert math.isnan(norms[0])  # client 0's non-finite norm (None in JSON) counts as NaN, not as no round
    assert norms[1:] == pytest.approx([1.15, 10.5, 11.5])
    assert quantity("mean_update_size", record) == [6.0, 6.0, 100.0, 100.0]
    assert metric("clients_tier_ratio", record, quantity="mean_update_norm", high=1.0, low=0.25) == \
        pytest.approx(11.0 / 1.15)
    assert metric("clients_tier_ratio", record, quantity="mean_update_size", high=1.0, low=0.25) == \
        pytest.approx(100 / 6)
    assert math.isnan(metric("clients_tier_ratio", record, quantity="mean_update_size", high=0.5, low=0.25))


def test_per_client_compute_and_upload_against_a_full_width_client() -> None:
    record = two_tier_record()
    assert metric("compute_reduction", record) == pytest.approx(1 / ((0.05 + 1.0) / 2))
    assert metric("upload_reduction", record) == pytest.approx(100 / 53)


def test_records_made_before_the_measurements_say_to_re_run() -> None:
    record = two_tier_record()
    del record["width_costs"]
    with pytest.raises(ValueError, match="re-run"):
        metric("compute_reduction", record)
    for r in record["history"]:
        del r["update_norms"]
    with pytest.raises(ValueError, match="re-run"):
        quantity("mean_update_norm", record)


def adaptation(h_bar: float, rescaled: bool, allocation: list[float]) -> dict:
    return {"h_bar": h_bar, "rescaled": rescaled, "allocation": allocation}


def test_h_bar_sawtooth_peak_and_rises() -> None:
    steps = [adaptation(1.3, False, [0.4, 0.6]), adaptation(1.6, False, [0.5, 0.6]),
             adaptation(1.9, True, [0.5, 0.5]), adaptation(1.2, False, [0.45, 0.5]),
             adaptation(1.1, False, [0.5, 0.7]), adaptation(2.1, True, [0.5, 0.5]),
             adaptation(1.4, False, [0.5, 0.5])]
    record = {"adaptations": steps}
    assert metric("h_bar_cycle_peak", record) == pytest.approx(2.0)  # (1.9 + 2.1) / 2; the open cycle is left out
    assert metric("h_bar_rise_fraction", record) == pytest.approx(5 / 6)  # only 1.2 -> 1.1 falls
    assert metric("allocation_mean_lowest", record) == pytest.approx(0.475)
    assert metric("allocation_mean_highest", record) == pytest.approx(0.6)
    steps[2]["rescaled"] = steps[5]["rescaled"] = False
    assert math.isnan(metric("h_bar_cycle_peak", record))


def test_h_bar_needs_records_that_have_it() -> None:
    with pytest.raises(ValueError, match="re-run"):
        metric("h_bar_cycle_peak", {"adaptations": [{"rescaled": False, "allocation": [0.5]}]})


def test_untrained_units_beyond_the_largest_final_allocation() -> None:
    record = {"adaptations": [adaptation(1.0, False, [0.25, 0.69, 0.5])],
              "unit_update_counts": {"conv0": [1] * 16, "conv1": [1] * 64}}
    assert metric("final_untrained_unit_fraction", record) == pytest.approx((4 / 16 + 19 / 64) / 2)


def test_a_run_records_the_cost_of_every_width_its_clients_trained_at() -> None:
    from types import SimpleNamespace

    from harness.runners.federated import _width_costs
    from harness.runners.model_config import ConvModel, build_model_family

    model = ConvModel(arch="conv", hidden=[8, 16], in_channels=3, num_classes=10, image_size=16)
    history = [SimpleNamespace(widths=[0.25, 1.0]), SimpleNamespace(widths=[0.5, 0.25])]
    rows = _width_costs(build_model_family(model), model, history)
    assert [row["width"] for row in rows] == [0.25, 0.5, 1.0]
    assert rows[-1]["param_fraction"] == rows[-1]["mac_fraction"] == 1.0
    assert 0 < rows[0]["mac_fraction"] < rows[1]["mac_fraction"] < 1.0
    record = {**two_tier_record(), "width_costs": rows}
    record["history"] = [round_record(0, [0, 2], [0.25, 1.0], [1.0, 1.0], [1, 1])]
    assert metric("compute_reduction", record) == pytest.approx(2 / (rows[0]["mac_fraction"] + 1.0))
