"""One round's local training: every sampled client from its start, in cohorts or one by one.

Batched execution groups the clients whose sub-models have the same shapes (after extraction,
random units included) and who run the same local epochs, and trains each group through the
family's stacked form; families without a stacked form, sub-models too large to gain from it,
objectives that override only ``train``, optimisers other than SGD (the stacked form steps SGD) and
sequential execution train one client after another with a module of the sub-model's size.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from methods.federated.config import ClientExecution
from methods.federated.data import ClientData
from methods.federated.local import LocalResult, LocalSettings
from methods.federated.objectives import LocalObjective
from methods.federated.optimizers import ClientOptimizer
from methods.federated.submodel import ModuleCache, Params, SubmodelView
from methods.models.slicing import SliceableFamily

STACKED_UP_TO_PARAMETERS = 1 << 17
"""A cohort trains together when one client's sub-model has at most this many parameters.
Above it, G clients' parameters, gradients and momentum no longer share the caches and one
client after another was faster (2-core CPU: the paper's CNN, the 256-unit LSTM)."""


def cohorts(clients: Sequence[int], views: Mapping[int, SubmodelView],
            settings: Mapping[int, LocalSettings]) -> list[list[int]]:
    """Clients grouped by sub-model sizes and local settings, groups in order of first appearance."""
    groups: dict[tuple, list[int]] = {}
    for i in clients:
        groups.setdefault((tuple(views[i].sizes.values()), settings[i]), []).append(i)
    return list(groups.values())


def train_round(execution: ClientExecution | str, objective: LocalObjective,
                family: SliceableFamily, modules: ModuleCache, clients: Sequence[int],
                views: Mapping[int, SubmodelView], starts: Mapping[int, Params],
                data: Sequence[ClientData], settings: Mapping[int, LocalSettings],
                generators: Mapping[int, torch.Generator]) -> dict[int, LocalResult]:
    """Every client's ``LocalResult``, keyed by client (``settings``: each client's local work)."""
    results: dict[int, LocalResult] = {}
    batched = ClientExecution(execution) is ClientExecution.BATCHED and objective.trains_cohorts()
    for members in cohorts(clients, views, settings) if batched else [[i] for i in clients]:
        stacked = family.stacked(views[members[0]].sizes) if batched else None
        size = sum(t.numel() for t in starts[members[0]].values())
        stepped_by_sgd = settings[members[0]].optimizer is ClientOptimizer.SGD
        if stacked is None or size > STACKED_UP_TO_PARAMETERS or not stepped_by_sgd:
            for i in members:
                results[i] = objective.train(i, modules.get(views[i].sizes), views[i], starts[i],
                                             data[i], settings[i], generators[i])
            continue
        trained = objective.train_cohort(members, stacked, [views[i] for i in members],
                                         [starts[i] for i in members], [data[i] for i in members],
                                         settings[members[0]], [generators[i] for i in members])
        results.update(zip(members, trained))
    return results
