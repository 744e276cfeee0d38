"""The federated round loop: aggregation, estimator, policies, coverage, determinism, SCAFFOLD."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from methods.extraction import kept_units, select_units
from methods.federated import ClientData, FederatedDataset, FederationConfig, initial_params, run_federation
from methods.federated.aggregation import ClientUpdate, aggregate, client_weights
from methods.federated.capacity import draw_capacity_caps
from methods.federated.estimator import HeterogeneityEstimator, divergence_estimate
from methods.federated.hasfl import HasflPolicy
from methods.federated.loop import sample_clients
from methods.federated.objectives import FedProxObjective, ScaffoldObjective
from methods.federated.parts import Choice
from methods.federated.policies import RandomBudgetPolicy
from methods.federated.rounds import RoundContext, RoundHook
from methods.federated.submodel import SubmodelView
from methods.models.conv import ConvFamily
from methods.models.lstm import CharLSTMFamily
from methods.models.slicing import SliceableFamily, coverage_masks, default_init_
from methods.seeding import numpy_rng
from tests.federation_helpers import federation_config

SCHEMES = ("samples", "equal")
"""The weightings with one weight per client (the others: tests/test_fedrolex_reference.py)."""


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models only pay thread overhead (and stall when the other core is busy)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def tiny_conv() -> ConvFamily:
    return ConvFamily(3, 4, [4, 6, 8])


def tiny_data(num_clients: int, per_client: int = 16, seed: int = 0) -> FederatedDataset:
    g = torch.Generator().manual_seed(seed)

    def part(n: int) -> ClientData:
        return ClientData(torch.randn(n, 3, 8, 8, generator=g), torch.randint(0, 4, (n,), generator=g))

    return FederatedDataset([part(per_client) for _ in range(num_clients)], part(32),
                            torch.randn(32, 3, 8, 8, generator=g), 4)


def tiny_cfg(**overrides) -> FederationConfig:
    base = dict(num_clients=4, clients_per_round=4, rounds=3, local_epochs=1, batch_size=8,
                lr=0.05, eval_every=1, eval_batch_size=16)
    return federation_config(**{**base, **overrides})


# ---------------------------------------------------------------- aggregation

def _reference_weights(scheme: str, updates: list[ClientUpdate]) -> list[float]:
    return {"samples": [float(u.num_samples) for u in updates], "equal": [1.0] * len(updates)}[scheme]


def _brute_force(global_params, updates, weights):
    """Per coordinate: old + weighted mean of the deltas of the clients holding it."""
    result = {}
    for name, old in global_params.items():
        flat_old = old.flatten().tolist()
        deltas = [u.delta[name].flatten().tolist() for u in updates]
        holds = [[True] * len(flat_old) if u.mask is None else u.mask[name].flatten().tolist()
                 for u in updates]
        values = []
        for j, value in enumerate(flat_old):
            holders = [k for k in range(len(updates)) if holds[k][j] and weights[k] > 0]
            if not holders:
                values.append(value)
                continue
            total = sum(weights[k] for k in holders)
            values.append(value + sum(weights[k] * deltas[k][j] for k in holders) / total)
        result[name] = torch.tensor(values, dtype=torch.float64).view(old.shape)
    return result


@pytest.mark.parametrize("family", [tiny_conv(), CharLSTMFamily(5, 2, 3, 2)],
                         ids=["conv", "lstm"])
@pytest.mark.parametrize("mode", ["prefix", "rolling", "random"])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_aggregation_matches_brute_force(family: SliceableFamily, mode: str, scheme: str) -> None:
    g = torch.Generator().manual_seed(7)
    global_params = initial_params(family, seed=3)
    updates = []
    for k, width in enumerate([0.25, 0.5, 0.3, 0.6]):
        selection = select_units(family.groups, width, mode, 5, g)
        mask = coverage_masks(global_params, family, selection)
        # garbage outside the mask must be ignored
        delta = {n: torch.randn(t.shape, generator=g) for n, t in global_params.items()}
        updates.append(ClientUpdate(k, width, delta, mask, int(torch.randint(1, 50, (1,), generator=g))))
    weights = client_weights(scheme, updates)
    assert weights == pytest.approx(_reference_weights(scheme, updates), rel=1e-9)
    new, mean = aggregate(global_params, updates, weights)
    expected = _brute_force(global_params, updates, weights)
    union = {n: torch.stack([u.mask[n] for u in updates]).any(0) for n in global_params}
    uncovered = 0
    for name, old in global_params.items():
        torch.testing.assert_close(new[name].double(), expected[name], rtol=1e-5, atol=1e-6)
        assert torch.equal(new[name][~union[name]], old[~union[name]])
        assert torch.all(mean[name][~union[name]] == 0)
        torch.testing.assert_close(mean[name], new[name] - old, rtol=1e-4, atol=1e-5)
        uncovered += int((~union[name]).sum())
    if mode != "random":
        assert uncovered > 0


@pytest.mark.parametrize("family", [tiny_conv(), CharLSTMFamily(5, 2, 3, 2)], ids=["conv", "lstm"])
@pytest.mark.parametrize("modes", [("prefix",), ("rolling",), ("random",), ("prefix", "random")],
                         ids=["prefix", "rolling", "random", "mixed"])
@pytest.mark.parametrize("widths", [(0.25, 0.5, 0.5, 0.75, 0.25), (0.25, 0.5, 0.5, 0.75, 0.25, 1.0), (0.25, 0.25, 0.5),
                                    (0.5, 0.5, 0.5), (1.0, 1.0)],
                         ids=["sub-models", "and-full", "narrow", "one-view", "full-only"])
def test_aggregation_of_compact_updates_equals_global_coordinates_bit_for_bit(
        family: SliceableFamily, modes: tuple[str, ...], widths: tuple[float, ...]) -> None:
    """The round loop's updates (each sub-model's own tensors, placed by its view, clients of one
    view sharing it) aggregate to the same bits as the same updates given in global coordinates
    (narrow rolling windows span a box that starts inside the tensor)."""
    g = torch.Generator().manual_seed(11)
    global_params = initial_params(family, seed=4)
    views: dict[tuple[str, float], SubmodelView] = {}
    compact, in_global = [], []
    for k, width in enumerate(widths):
        mode = modes[k % len(modes)]
        key = (mode, width) if mode != "random" else (mode, float(k))
        if key not in views:
            views[key] = SubmodelView.for_width(family, global_params, width, mode, 3, g)
        view = views[key]
        update = {n: torch.randn(t.shape, generator=g) for n, t in view.extract(global_params).items()}
        samples = 3 + k
        compact.append(ClientUpdate(k, width, None, view.mask, samples, compact=update,
                                    placement=None if view.is_full else view))
        in_global.append(ClientUpdate(k, width, view.embed(update), view.mask, samples))
    weights = client_weights("samples", compact)
    new, mean = aggregate(global_params, compact, weights)
    expected_new, expected_mean = aggregate(global_params, in_global, weights)
    for name in global_params:
        assert torch.equal(new[name], expected_new[name]), name
        assert torch.equal(mean[name], expected_mean[name]), name


def test_aggregation_of_updates_sharing_a_mask_object_equals_separate_copies() -> None:
    family = tiny_conv()
    params = initial_params(family, seed=0)
    g = torch.Generator().manual_seed(2)
    half = coverage_masks(params, family, select_units(family.groups, 0.5, "prefix", 0, None))
    copy = {n: m.clone() for n, m in half.items()}
    deltas = [{n: torch.randn(t.shape, generator=g) for n, t in params.items()} for _ in range(3)]
    shared = [ClientUpdate(k, 0.5, d, half, 2 + k) for k, d in enumerate(deltas)]
    separate = [ClientUpdate(k, 0.5, d, half if k == 0 else copy if k == 1 else
                             {n: m.clone() for n, m in half.items()}, 2 + k)
                for k, d in enumerate(deltas)]
    a, mean_a = aggregate(params, shared, [2, 3, 4])
    b, mean_b = aggregate(params, separate, [2, 3, 4])
    for name in params:
        torch.testing.assert_close(a[name], b[name])
        torch.testing.assert_close(mean_a[name], mean_b[name])
        assert torch.equal(a[name][~half[name]], params[name][~half[name]])


def test_aggregation_full_mask_none_equals_all_true_mask() -> None:
    family = tiny_conv()
    params = initial_params(family, seed=0)
    g = torch.Generator().manual_seed(1)
    delta = {n: torch.randn(t.shape, generator=g) for n, t in params.items()}
    ones = {n: torch.ones_like(t, dtype=torch.bool) for n, t in params.items()}
    small = coverage_masks(params, family, select_units(family.groups, 0.5, "prefix", 0, None))
    other = {n: torch.randn(t.shape, generator=g) for n, t in params.items()}
    a, _ = aggregate(params, [ClientUpdate(0, 1.0, delta, None, 5),
                              ClientUpdate(1, 0.5, other, small, 3)], [5, 3])
    b, _ = aggregate(params, [ClientUpdate(0, 1.0, delta, ones, 5),
                              ClientUpdate(1, 0.5, other, small, 3)], [5, 3])
    for name in params:
        torch.testing.assert_close(a[name], b[name])


# ---------------------------------------------------------------- estimator

def test_estimator_hand_computed() -> None:
    delta = {"w": torch.tensor([1.0, 2.0, 9.0, 0.0])}
    aggregate_update = {"w": torch.tensor([1.0, 1.0, 3.0, 1.0])}
    mask = {"w": torch.tensor([True, True, False, True])}
    # masked difference (0, 1, -, -1) -> 2; masked aggregate (1, 1, -, 1) -> 3
    h_hat = divergence_estimate(delta, mask, aggregate_update, epsilon=0.0)
    assert h_hat == pytest.approx(2.0 / 3.0)
    assert divergence_estimate(delta, None, aggregate_update, epsilon=0.0) == pytest.approx(38 / 12)
    assert divergence_estimate(delta, mask, aggregate_update) == pytest.approx(2 / (3 + 1e-8))
    est = HeterogeneityEstimator(num_clients=2, beta=0.9)
    assert est.h_tilde.tolist() == [1.0, 1.0]
    est.observe(0, h_hat)
    assert est.h_tilde[0] == pytest.approx(0.9 + 0.1 * 2 / 3)
    est.observe(0, 4.0)
    first = 0.9 * (0.9 + 0.1 * 2 / 3) + 0.4
    assert est.h_tilde[0] == pytest.approx(first)
    est.rescale()
    mean = (first + 1.0) / 2
    assert est.h_tilde.tolist() == pytest.approx([first / mean, 1.0 / mean])
    assert est.h_tilde.mean() == pytest.approx(1.0)


# ---------------------------------------------------------------- HAS-FL schedule

def _drive_hasfl(coverage_guarantee: bool, rounds: int = 25):
    caps = np.array([0.25, 0.5, 0.75, 1.0, 0.75, 1.0])
    policy = HasflPolicy(caps, p_min=0.4, gamma=0.25, beta=0.9, t_warm=10, t_adapt=5, t_norm=20,
                         coverage_guarantee=coverage_guarantee)
    mean = {"w": torch.tensor([1.0, -1.0, 0.5])}
    used, estimates = [], []
    for t in range(rounds):
        clients = list(range(len(caps)))
        widths = policy.widths(t, clients)
        used.append([widths[i] for i in clients])
        # full-cap clients agree with the aggregate (H^ = 0); the others diverge
        updates = [ClientUpdate(i, widths[i], {"w": mean["w"] + (0.0 if caps[i] == 1.0 else i)},
                                None, 10) for i in clients]
        policy.observe(t, updates, mean)
        estimates.append(list(policy.client_statistics()["h_tilde"]))
    return caps, np.array(used), policy, estimates


def test_hasfl_warm_up_schedule_and_coverage_guarantee() -> None:
    caps, used, policy, estimates = _drive_hasfl(coverage_guarantee=True)
    assert np.array_equal(used[:10], np.tile(caps, (10, 1)))  # warm-up: 10 rounds at caps
    assert [a["round"] for a in policy.adaptations()] == [9, 14, 19, 24]
    assert [a["rescaled"] for a in policy.adaptations()] == [False, False, True, False]
    assert not np.array_equal(used[10], caps)
    for start in (10, 15, 20):  # constant between adaptations
        assert np.array_equal(used[start:start + 5], np.tile(used[start], (5, 1)))
    for t in (10, 11, 12, 13):  # estimates move only at adaptation rounds
        assert estimates[t] == estimates[9]
    assert np.mean(estimates[19]) == pytest.approx(1.0)
    assert np.all(used <= caps + 1e-12)
    assert np.all(used[10:, caps == 1.0] == 1.0)
    for a in policy.adaptations():
        assert a["allocation"][3] == a["allocation"][5] == 1.0


def test_hasfl_without_coverage_guarantee_caps_everyone_below_one() -> None:
    caps, used, policy, _ = _drive_hasfl(coverage_guarantee=False)
    assert np.all(used[:10].max(axis=1) == 1.0)
    assert np.all(used[10:].max(axis=1) < 1.0)
    assert max(max(a["allocation"]) for a in policy.adaptations()) < 1.0


# ---------------------------------------------------------------- random budget

def test_random_budget_matches_budget_every_round() -> None:
    caps = draw_capacity_caps(20, rng=numpy_rng(4, "caps"))
    budget = 0.45
    policy = RandomBudgetPolicy(caps, budget, floor=0.25, seed=4)
    feasible = 0
    per_client: dict[int, set[float]] = {}
    for t in range(40):
        sampled = sample_clients(4, t, 20, 10)
        widths = policy.widths(t, sampled)
        values = np.array([widths[i] for i in sampled])
        assert np.all(values <= caps[sampled] + 1e-12) and np.all(values >= 0.25 - 1e-12)
        if caps[sampled].mean() > budget:
            feasible += 1
            assert abs(values.mean() - budget) < 1e-6
        else:
            assert np.array_equal(values, caps[sampled])
        for i in sampled:
            per_client.setdefault(i, set()).add(widths[i])
    assert feasible >= 30
    assert max(len(v) for v in per_client.values()) > 1  # time-varying
    assert policy.widths(3, [0, 1]) == policy.widths(3, [0, 1])


# ---------------------------------------------------------------- Proposition 3

def test_proposition_3_uncovered_coordinates_stay_at_init() -> None:
    family, data = tiny_conv(), tiny_data(4)
    caps = np.array([0.25, 0.5, 0.75, 1.0])
    result = run_federation(family, data, tiny_cfg(policy="uniform"), caps, seed=5)
    assert not result.diverged
    assert result.never_covered_coordinates > 0
    assert result.changed_outside_union == 0
    initial = initial_params(family, seed=5)
    half = select_units(family.groups, 0.5, "prefix", 0, None)
    inside = coverage_masks(initial, family, half)
    changed_inside = 0
    for name, value in result.final_params.items():
        assert torch.equal(result.covered[name], inside[name])
        assert torch.equal(value[~inside[name]], initial[name][~inside[name]])
        changed_inside += int((value[inside[name]] != initial[name][inside[name]]).sum())
    assert changed_inside > 0
    for group, n in family.groups.items():
        counts = result.unit_update_counts[group]
        assert counts[kept_units(n, 0.5):] == [0] * (n - kept_units(n, 0.5))
        assert counts[0] == 3 * 4

    full = run_federation(family, data, tiny_cfg(policy="heterofl", rounds=1), caps, seed=5)
    assert full.never_covered_coordinates == 0 and full.changed_outside_union == 0


# ---------------------------------------------------------------- determinism, divergence

@pytest.mark.parametrize("policy, extraction", [("hasfl", "prefix"), ("fjord", "random")])
def test_same_seed_same_record(policy: str, extraction: str) -> None:
    family, data = tiny_conv(), tiny_data(6)
    caps = np.array([0.25, 0.5, 0.75, 1.0, 0.5, 0.25])
    schedule = dict(t_warm=1, t_adapt=1, t_norm=2) if policy == "hasfl" else {}
    cfg = tiny_cfg(num_clients=6, clients_per_round=3, rounds=4, policy=policy, extraction=extraction, **schedule)

    def record(seed: int) -> dict:
        d = run_federation(family, data, cfg, caps, seed=seed).to_dict()
        assert d.pop("wall_time_s") > 0
        return d

    first = record(11)
    assert json.dumps(first, allow_nan=False)
    assert first == record(11)
    assert first != record(12)
    if policy == "hasfl":
        assert len(first["adaptations"]) == 4 and first["client_statistics"]["h_tilde"]


def test_divergence_is_recorded_not_raised() -> None:
    family, data = tiny_conv(), tiny_data(4)
    caps = np.array([0.25, 0.5, 0.75, 1.0])
    result = run_federation(family, data, tiny_cfg(policy="heterofl", lr=1e6, rounds=20),
                            caps, seed=0)
    assert result.diverged
    assert result.rounds_completed == result.diverged_round + 1 < 20
    d = result.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["diverged"] is True and 0.0 <= d["final_accuracy"] <= 1.0
    assert d["history"][-1]["test_accuracy"] is not None


# ---------------------------------------------------------------- local objectives

class LinearFamily(SliceableFamily):
    """A 3 -> 2 linear classifier with no sliceable groups."""

    def __init__(self) -> None:
        self.groups = {}

    def build(self, sizes=None, *, generator=None) -> nn.Module:
        self.check_sizes(sizes)
        model = nn.Linear(3, 2)
        if generator is not None:
            default_init_(model, generator)
        return model

    def param_axes(self):
        return {"weight": (None, None), "bias": (None,)}


def _linear_data(sizes: list[int]) -> FederatedDataset:
    g = torch.Generator().manual_seed(2)
    parts = [ClientData(torch.randn(n, 3, generator=g), torch.randint(0, 2, (n,), generator=g))
             for n in sizes]
    return FederatedDataset(parts, parts[0], None, 2)


def test_scaffold_control_variates_match_hand_reference() -> None:
    sizes = [5, 8, 6, 7]
    family, data, seed = LinearFamily(), _linear_data(sizes), 9
    cfg = federation_config(num_clients=4, clients_per_round=3, rounds=3, local_epochs=3,
                            batch_size=64, lr=0.1, lr_decay=0.9, clip_norm=None,
                            objective="scaffold", policy="full")
    result = run_federation(family, data, cfg, np.ones(4), seed=seed)

    x = initial_params(family, seed)
    c = {n: torch.zeros_like(t) for n, t in x.items()}
    c_i = {i: {n: torch.zeros_like(t) for n, t in x.items()} for i in range(4)}
    for t in range(3):  # the third round reads c and c_i written by the first two
        lr = 0.1 * 0.9 ** t
        sampled = result.history[t].clients
        assert len(sampled) == 3
        deltas, delta_cs = [], []
        for i in sampled:
            y = {n: v.clone() for n, v in x.items()}
            for _ in range(3):  # K = 3 full-batch steps
                w = {n: v.clone().requires_grad_(True) for n, v in y.items()}
                loss = F.cross_entropy(data.clients[i].x @ w["weight"].T + w["bias"],
                                       data.clients[i].y)
                grads = dict(zip(w, torch.autograd.grad(loss, list(w.values()))))
                y = {n: y[n] - lr * (grads[n] - c_i[i][n] + c[n]) for n in y}
            new_ci = {n: c_i[i][n] - c[n] + (x[n] - y[n]) / (3 * lr) for n in x}
            delta_cs.append({n: new_ci[n] - c_i[i][n] for n in x})
            c_i[i] = new_ci
            deltas.append(({n: y[n] - x[n] for n in x}, sizes[i]))
        total = sum(n for _, n in deltas)
        x = {n: x[n] + sum(d[n] * k for d, k in deltas) / total for n in x}
        c = {n: c[n] + sum(d[n] for d in delta_cs) / 4 for n in x}
    for name in x:
        torch.testing.assert_close(result.final_params[name], x[name], rtol=1e-5, atol=1e-6)

    momentum = run_federation(family, data,
                              dataclasses.replace(cfg, objective=Choice.of(ScaffoldObjective, keep_momentum=True)),
                              np.ones(4), seed=seed)
    assert not torch.allclose(momentum.final_params["weight"], x["weight"])


def test_fedprox_with_zero_mu_is_plain_sgd() -> None:
    family, data = LinearFamily(), _linear_data([5, 8, 6, 7])
    cfg = federation_config(num_clients=4, clients_per_round=2, rounds=2, local_epochs=2,
                            batch_size=4, lr=0.1, policy="full")
    sgd = run_federation(family, data, cfg, np.ones(4), seed=1)
    prox0 = run_federation(family, data, dataclasses.replace(cfg, objective=Choice.of(FedProxObjective, mu=0.0)),
                           np.ones(4), seed=1)
    prox = run_federation(family, data, dataclasses.replace(cfg, objective=Choice.of(FedProxObjective, mu=1.0)),
                          np.ones(4), seed=1)
    for name in sgd.final_params:
        assert torch.equal(sgd.final_params[name], prox0.final_params[name])
    assert not torch.equal(sgd.final_params["weight"], prox.final_params["weight"])


# ---------------------------------------------------------------- round hooks

class _FirstDroppedSecondPartial(RoundHook):
    """Each round: the first sampled client drops out, the second runs one epoch, the others all E."""

    def __init__(self, context: RoundContext) -> None:
        self.epochs = context.local_epochs

    def local_epochs(self, round_index, sampled):
        return {i: (0, 1)[k] if k < 2 else self.epochs for k, i in enumerate(sampled)}


class _EveryoneFull(RoundHook):
    def __init__(self, context: RoundContext) -> None:
        self.epochs = context.local_epochs

    def local_epochs(self, round_index, sampled):
        return dict.fromkeys(sampled, self.epochs)


def test_a_round_hook_drops_clients_and_sets_partial_work() -> None:
    family, data, caps = tiny_conv(), tiny_data(4), np.ones(4)
    cfg = tiny_cfg(policy="full", local_epochs=3)
    hooked = run_federation(family, data, dataclasses.replace(cfg, round_hook=Choice.of(_FirstDroppedSecondPartial)),
                            caps, seed=5)
    for record in hooked.history:
        assert record.clients == record.sampled[1:] and record.local_epochs == [1, 3, 3]
        assert len(record.update_norms) == 3
    plain = run_federation(family, data, cfg, caps, seed=5)
    full = run_federation(family, data, dataclasses.replace(cfg, round_hook=Choice.of(_EveryoneFull)), caps, seed=5)
    for name, value in plain.final_params.items():
        assert torch.equal(full.final_params[name], value)  # full work for everyone is no hook at all
        assert not torch.equal(hooked.final_params[name], value)
    assert "sampled" not in plain.to_dict()["history"][0] and full.to_dict()["history"][0]["local_epochs"] == [3] * 4
