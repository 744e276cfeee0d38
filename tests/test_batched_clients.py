"""Batched client execution computes what the one-at-a-time reference computes.

Every round of batched runs (every policy, objective and extraction mode on the conv and
char-LSTM families, with clipping, weight decay, momentum and unequal client sizes: ragged last
batches, different step counts) is replayed by the sequential reference from the same state;
the grouped, chunked and per-client conv forms; the cohort trainer against train_local client
by client; the per-client SGD against torch.optim.SGD with clip_grad_norm_.
"""
from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pytest
import torch
from torch import nn

from methods.federated import ClientData, FederatedDataset, FederationConfig, loop, round_training, run_federation
from methods.federated.cohort import train_cohort
from methods.federated.objectives import LocalSettings, train_local
from methods.federated.round_training import cohorts
from methods.federated.stacked_sgd import StackedSGD, clip_per_client_
from methods.federated.submodel import ModuleCache, SubmodelView
from methods.models import conv_stacked
from methods.models.conv import ConvFamily
from methods.models.lstm import CharLSTMFamily
from methods.models.slicing import SliceableFamily
from tests.federation_helpers import federation_config

SIZES = [5, 16, 9, 20, 12, 3]
CAPS = np.array([0.25, 0.5, 0.75, 1.0, 0.5, 0.25])


@pytest.fixture(autouse=True)
def one_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def conv_family() -> ConvFamily:
    return ConvFamily(3, 4, [4, 6, 8])


def lstm_family() -> CharLSTMFamily:
    return CharLSTMFamily(vocab_size=7, embed_dim=3, hidden=8, num_layers=2)


def _sample(family: SliceableFamily, n: int, g: torch.Generator) -> ClientData:
    if isinstance(family, ConvFamily):
        return ClientData(torch.randn(n, 3, 8, 8, generator=g),
                          torch.randint(0, 4, (n,), generator=g))
    return ClientData(torch.randint(0, 7, (n, 6), generator=g),
                      torch.randint(0, 7, (n,), generator=g))


def federation(family: SliceableFamily, sizes=SIZES) -> FederatedDataset:
    g = torch.Generator().manual_seed(0)
    clients = [_sample(family, n, g) for n in sizes]
    test = _sample(family, 24, g)
    if isinstance(family, ConvFamily):
        return FederatedDataset(clients, test, test.x[:16], 4, blank=torch.full((3,), -1.0))
    return FederatedDataset(clients, test, None, 7)


def config(**overrides) -> FederationConfig:
    base = dict(num_clients=len(SIZES), clients_per_round=5, rounds=3, local_epochs=2,
                batch_size=4, lr=0.05, momentum=0.9, weight_decay=1e-2, clip_norm=0.5,
                eval_every=1, eval_batch_size=8)
    return federation_config(**{**base, **overrides})


def _generator_copy(generator: torch.Generator) -> torch.Generator:
    copy = torch.Generator()
    copy.set_state(generator.get_state())
    return copy


def _assert_same_state(batched, sequential, path: str) -> None:
    if isinstance(sequential, dict):
        assert batched.keys() == sequential.keys(), path
        for key in sequential:
            _assert_same_state(batched[key], sequential[key], f"{path}.{key}")
    elif isinstance(sequential, torch.Tensor):
        torch.testing.assert_close(batched, sequential, rtol=1e-4, atol=1e-6, msg=path)
    elif hasattr(sequential, "__dict__"):
        _assert_same_state(vars(batched), vars(sequential), path)
    else:
        assert batched == sequential, path


def replayed_batched_run(monkeypatch, family: SliceableFamily, cfg: FederationConfig,
                         seed: int = 3):
    """A batched run in which every round's local training is replayed by the sequential
    reference from the same starts, generators and objective state, and compared: each
    client's result and the objective's state after the round (SCAFFOLD's control variates).

    Whole runs are not compared: tiny float differences can flip a max-pool or ReLU decision
    a round later, after which the two runs legitimately part.
    """
    train_round = loop.train_round
    rounds = []

    def checked(execution, objective, family, modules, clients, views, starts, data, settings,
                generators):
        reference = copy.deepcopy(objective)
        copies = {i: _generator_copy(g) for i, g in generators.items()}
        results = train_round(execution, objective, family, modules, clients, views, starts,
                              data, settings, generators)
        expected = train_round("sequential", reference, family, ModuleCache(family, "cpu"),
                               clients, views, starts, data, settings, copies)
        for i in clients:
            got, ref = results[i], expected[i]
            assert (got.num_samples, got.steps, got.nonfinite) == (ref.num_samples, ref.steps,
                                                                   ref.nonfinite)
            assert got.mean_loss == pytest.approx(ref.mean_loss, rel=1e-5, nan_ok=True)
            for name, value in ref.update.items():
                torch.testing.assert_close(got.update[name], value, rtol=1e-4, atol=1e-6)
        _assert_same_state(objective, reference, "objective")
        rounds.append(sorted(len(c) for c in cohorts(clients, views, settings)))
        return results

    monkeypatch.setattr(loop, "train_round", checked)
    result = run_federation(family, federation(family), cfg, CAPS, seed)
    assert result.rounds_completed == cfg.rounds and not result.diverged
    return result, rounds


RUNS = [
    *[dict(policy=p) for p in ("full", "heterofl", "fjord", "uniform")],
    dict(policy="hasfl", t_warm=1, t_adapt=1, t_norm=2),
    dict(policy="random_budget", budget=0.5),
    dict(policy="heterofl", extraction="rolling"),
    dict(policy="fjord", extraction="random"),
    dict(policy="heterofl", extraction="rolling", objective="fedprox", mu=0.5),
    dict(policy="uniform", extraction="random", objective="scaffold"),
    dict(policy="heterofl", extraction="prefix", objective="scaffold", keep_momentum=True),
    dict(policy="full", objective="fedprox", mu=0.5),
]


@pytest.mark.parametrize("family", [conv_family, lstm_family], ids=["conv", "lstm"])
@pytest.mark.parametrize("overrides", RUNS, ids=lambda o: "-".join(str(v) for v in o.values()))
def test_every_batched_round_equals_the_sequential_reference(monkeypatch, family,
                                                             overrides) -> None:
    result, cohort_sizes = replayed_batched_run(monkeypatch, family(), config(**overrides))
    assert result.changed_outside_union == 0
    assert max(max(sizes) for sizes in cohort_sizes) > 1  # clients did train together


def test_the_fedrolex_reference_settings_batched_equal_the_sequential_reference(monkeypatch) -> None:
    """Label split (masked loss, own classifier rows), count weights, capacities redrawn every round and
    crop-and-flip augmentation, trained in cohorts, replay client by client."""
    cfg = config(policy="dynamic", extraction="rolling", weighting="equal", label_split=True, count_weighted=True,
                 augmentation="crop_flip")
    result, cohort_sizes = replayed_batched_run(monkeypatch, conv_family(), cfg)
    assert result.changed_outside_union == 0
    assert max(max(sizes) for sizes in cohort_sizes) > 1
    widths = [[w for _, w in client] for client in result.client_widths]
    assert any(len(set(w)) > 1 for w in widths)  # a client's width changed between rounds


@pytest.mark.parametrize("grouped_up_to, chunk", [(0, 1 << 20), (1 << 30, 1)],
                         ids=["per-client", "one-client-chunks"])
def test_other_conv_forms_equal_the_sequential_reference(monkeypatch, grouped_up_to,
                                                         chunk) -> None:
    monkeypatch.setattr(conv_stacked, "GROUPED_UP_TO", grouped_up_to)
    monkeypatch.setattr(conv_stacked, "CHUNK_ELEMENTS", chunk)
    replayed_batched_run(monkeypatch, conv_family(), config(
        policy="fjord", extraction="random", objective="scaffold", keep_momentum=True))


def test_sequential_and_batched_runs_agree_on_everything_but_float_noise() -> None:
    """One whole run each way, where no decision flips: same clients, widths, steps, and
    parameters to float tolerance."""
    family = conv_family()
    data = federation(family)
    cfg = config(policy="heterofl", rounds=2)
    runs = [run_federation(family, data, dataclasses.replace(cfg, client_execution=mode), CAPS, 3)
            for mode in ("sequential", "batched")]
    assert [r.clients for r in runs[0].history] == [r.clients for r in runs[1].history]
    assert runs[0].unit_update_counts == runs[1].unit_update_counts
    for name, value in runs[0].final_params.items():
        torch.testing.assert_close(runs[1].final_params[name], value, rtol=1e-4, atol=1e-5)


def test_clipping_is_active_in_these_runs() -> None:
    family = conv_family()
    data = federation(family)
    clipped, unclipped = (run_federation(family, data, config(policy="heterofl", clip_norm=c),
                                         CAPS, 3) for c in (0.5, None))
    assert not torch.allclose(clipped.final_params["classifier.weight"],
                              unclipped.final_params["classifier.weight"])


def test_same_width_clients_form_one_cohort_even_with_random_units() -> None:
    family = conv_family()
    params = {n: torch.zeros(1) for n in family.param_axes()}
    g = torch.Generator().manual_seed(0)
    views = {i: SubmodelView.for_width(family, params, w, "random", 0, g)
             for i, w in enumerate([0.5, 1.0, 0.5, 0.25, 1.0, 0.5])}
    assert any(not torch.equal(views[0].units(group), views[2].units(group))
               for group in family.groups)
    same = LocalSettings(1, 4, 0.1, 0.0, 0.0, None)
    assert cohorts(range(6), views, dict.fromkeys(range(6), same)) == [[0, 2, 5], [1, 4], [3]]


# ---------------------------------------------------------------- the cohort trainer

def _train_both(family, width: float, sizes: list[int], settings: LocalSettings, correction=None):
    """train_local client by client, and train_cohort, from the same random sub-models."""
    data = federation(family, sizes).clients
    g = torch.Generator().manual_seed(5)
    full = {n: p.detach() for n, p in family.build(generator=g).named_parameters()}
    views = [SubmodelView.for_width(family, full, width, "random", 0, g) for _ in sizes]
    starts = [v.extract(full) for v in views]
    module = family.build(views[0].sizes)
    reference = []
    for i, (start, d) in enumerate(zip(starts, data)):
        hook = None if correction is None else (
            lambda params, start=start: [p.grad.add_(correction * (p.detach() - start[n]))
                                         for n, p in params.items()])
        reference.append(train_local(module, start, d, settings, torch.Generator().manual_seed(i),
                                     hook))
    stacked_correction = None
    if correction is not None:
        anchor = {n: torch.stack([s[n] for s in starts]) for n in starts[0]}

        def stacked_correction(params, grads):
            for n, grad in grads.items():
                grad.add_(correction * (params[n].detach() - anchor[n]))
    batched = train_cohort(family.stacked(views[0].sizes), starts, data, settings,
                           [torch.Generator().manual_seed(i) for i in range(len(sizes))],
                           stacked_correction)
    return reference, batched


@pytest.mark.parametrize("family", [conv_family, lstm_family], ids=["conv", "lstm"])
@pytest.mark.parametrize("correction", [None, 0.3], ids=["sgd", "proximal"])
def test_cohort_results_equal_train_local_client_by_client(family, correction) -> None:
    sizes = [5, 16, 0, 9, 20, 4]  # ragged last batches, 0 to 10 steps, one client without data
    settings = LocalSettings(epochs=2, batch_size=4, lr=0.05, momentum=0.9, weight_decay=1e-2,
                             clip_norm=0.5)
    reference, batched = _train_both(family(), 0.5, sizes, settings, correction)
    for ref, got, n in zip(reference, batched, sizes):
        expected = (n, 2 * math.ceil(n / 4), False)
        assert (got.num_samples, got.steps, got.nonfinite) == expected
        assert (ref.num_samples, ref.steps, ref.nonfinite) == expected
        if n == 0:
            assert math.isnan(got.mean_loss) and math.isnan(ref.mean_loss)
        else:
            assert got.mean_loss == pytest.approx(ref.mean_loss, rel=1e-5)
        for name, value in ref.update.items():
            torch.testing.assert_close(got.update[name], value, rtol=1e-4, atol=1e-6)


def test_cohort_reports_divergence_per_client() -> None:
    settings = LocalSettings(epochs=3, batch_size=4, lr=1e30, momentum=0.9, weight_decay=0.0,
                             clip_norm=None)
    reference, batched = _train_both(conv_family(), 1.0, [8, 0, 12], settings)
    assert [r.nonfinite for r in batched] == [r.nonfinite for r in reference] == [True, False, True]


# ---------------------------------------------------------------- per-client SGD

def test_stacked_sgd_equals_torch_sgd_per_client_and_idle_clients_stay_put() -> None:
    g = torch.Generator().manual_seed(0)
    shapes = {"w": (3, 4), "b": (4,)}
    clients = 3
    start = {n: torch.randn(clients, *s, generator=g) for n, s in shapes.items()}
    grads = [{n: torch.randn(clients, *s, generator=g) * 3 for n, s in shapes.items()}
             for _ in range(4)]
    active = [None, torch.tensor([0, 2]), torch.tensor([1]), None]

    params = {n: t.clone() for n, t in start.items()}
    optimizer = StackedSGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)
    for step, rows in zip(grads, active):
        step = {n: t.clone() for n, t in step.items()}
        clip_per_client_(step, 1.0)
        optimizer.step(step, rows)

    for c in range(clients):
        reference = {n: nn.Parameter(t[c].clone()) for n, t in start.items()}
        sgd = torch.optim.SGD(reference.values(), lr=0.1, momentum=0.9, weight_decay=0.01)
        for step, rows in zip(grads, active):
            if rows is not None and c not in rows.tolist():
                continue  # an idle client neither moves nor decays its momentum
            for n, p in reference.items():
                p.grad = step[n][c].clone()
            nn.utils.clip_grad_norm_(reference.values(), 1.0)
            sgd.step()
        for n, p in reference.items():
            torch.testing.assert_close(params[n][c], p.detach(), rtol=1e-6, atol=1e-7)


def test_sub_models_above_the_size_limit_train_one_after_another(monkeypatch) -> None:
    family = conv_family()
    data = federation(family)
    cfg = config(policy="fjord", extraction="random")
    monkeypatch.setattr(round_training, "STACKED_UP_TO_PARAMETERS", 0)
    batched, sequential = (run_federation(family, data, dataclasses.replace(
        cfg, client_execution=mode), CAPS, 3) for mode in ("batched", "sequential"))
    for name, value in sequential.final_params.items():
        assert torch.equal(batched.final_params[name], value)
