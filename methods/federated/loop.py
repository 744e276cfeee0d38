"""The round loop: allocation policy (server) x local objective (client) x aggregator (server)."""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from methods.extraction import ExtractionMode
from methods.federated.aggregation import ClientUpdate, aggregate, aggregate_per_coordinate, client_weights
from methods.federated.augmentation import AugmentationMode, CropFlip
from methods.federated.config import FederationConfig
from methods.federated.coordinate_weights import CoordinateWeights
from methods.federated.coverage import CoverageTracker
from methods.federated.data import FederatedDataset
from methods.federated.evaluation import evaluate
from methods.federated.local import LocalSettings
from methods.federated.objectives import ObjectiveContext
from methods.federated.optimizers import ClientOptimizer
from methods.federated.policies import PolicyContext
from methods.federated.precision import Precision, check_supported
from methods.federated.results import FederationResult, RoundRecord
from methods.federated.round_training import train_round
from methods.federated.rounds import RoundContext, work_of
from methods.federated.submodel import ModuleCache, Params, SubmodelView, load_params
from methods.federated.update_statistics import update_statistics
from methods.models.slicing import SliceableFamily
from methods.seeding import numpy_rng, torch_generator

# fedclaims behaviour version: 1

__all__ = ["FederationConfig", "FederationResult", "RoundRecord", "initial_params",
           "run_federation", "sample_clients"]


def initial_model(family: SliceableFamily, seed: int, device: torch.device | str = "cpu") -> nn.Module:
    """The full-width global model, its parameters drawn from the (seed, "init") stream."""
    return family.build(generator=torch_generator(seed, "init")).to(device)


def initial_params(family: SliceableFamily, seed: int,
                   device: torch.device | str = "cpu") -> Params:
    """The full-width global model's parameters drawn from the (seed, "init") stream."""
    return _copies(initial_model(family, seed, device))


def _copies(model: nn.Module) -> Params:
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def sample_clients(seed: int, round_index: int, num_clients: int, per_round: int) -> list[int]:
    """Round ``round_index``'s participants, uniform without replacement, ascending."""
    rng = numpy_rng(seed, "sampling", round_index)
    return sorted(int(i) for i in rng.choice(num_clients, size=per_round, replace=False))


def _all_finite(params: Mapping[str, Tensor]) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in params.values())


def _mean_loss(losses: Sequence[float]) -> float:
    """Mean over the clients that took a step (NaN if none did)."""
    finite_or_nan = [x for x in losses if not np.isnan(x)]
    return float(np.mean(finite_or_nan)) if finite_or_nan else float("nan")


def _should_evaluate(cfg: FederationConfig, round_index: int) -> bool:
    return (round_index + 1) % cfg.eval_every == 0 or round_index == cfg.rounds - 1


def run_federation(family: SliceableFamily, data: FederatedDataset, cfg: FederationConfig,
                   caps: Sequence[float] | np.ndarray, seed: int,
                   device: torch.device | str = "cpu",
                   on_round: Callable[[RoundRecord], None] | None = None,
                   oracle_tv: Sequence[float] | np.ndarray | None = None) -> FederationResult:
    """Run ``cfg.rounds`` rounds (fewer if training diverges; that is recorded, not raised).

    ``oracle_tv`` (each client's true label skew) reaches the policy's context for positive
    controls; no real server has it.
    """
    started = time.perf_counter()
    device = torch.device(device)
    check_supported(cfg.precision, device)
    caps = np.asarray(caps, dtype=np.float64)
    federation = _Federation(family, _prepared(data, cfg, caps, device), cfg, caps, seed, device, oracle_tv)
    for t in range(cfg.rounds):
        record, diverged = federation.round(t)
        if on_round is not None:
            on_round(record)
        if diverged:
            federation.diverged_round = t
            break
    return federation.result(time.perf_counter() - started)


def _prepared(data: FederatedDataset, cfg: FederationConfig, caps: np.ndarray, device: torch.device
              ) -> FederatedDataset:
    """The federation's data on the device, each client holding only its own labels' rows where the config
    splits labels, and augmented where it asks for it."""
    if len(caps) != cfg.num_clients or len(data.clients) != cfg.num_clients:
        raise ValueError(f"num_clients={cfg.num_clients} but {len(caps)} caps and "
                         f"{len(data.clients)} client datasets")
    data = data.to(device)
    if cfg.label_split:
        data.clients = [client.holding_own_labels(data.num_classes) for client in data.clients]
    if AugmentationMode(cfg.augmentation) is AugmentationMode.CROP_FLIP:
        if data.blank is None:
            raise ValueError("crop_flip augmentation pads images, but the data set gives no blank pixel")
        data.clients = [client.augmented(CropFlip(data.blank)) for client in data.clients]
    return data


class _Federation:
    """One run's server state: the global model, the method's parts, and what the result reports."""

    def __init__(self, family: SliceableFamily, data: FederatedDataset, cfg: FederationConfig, caps: np.ndarray,
                 seed: int, device: torch.device, oracle_tv: Sequence[float] | np.ndarray | None) -> None:
        self.family, self.data, self.cfg, self.caps, self.seed = family, data, cfg, caps, seed
        model = initial_model(family, seed, device)
        self.global_params = _copies(model)
        self.initial = {name: t.clone() for name, t in self.global_params.items()}
        client_sizes = tuple(len(c) for c in data.clients)
        self.policy = cfg.policy.part.from_context(PolicyContext(
            cfg, cfg.policy.settings, caps, seed, client_sizes, None if oracle_tv is None else tuple(oracle_tv)))
        self.objective = cfg.objective.part.from_context(ObjectiveContext(cfg.objective.settings, self.global_params,
                                                                          cfg.num_clients))
        self.hook = None if cfg.round_hook is None else cfg.round_hook.part.from_context(RoundContext(
            cfg.round_hook.settings, seed, cfg.num_clients, cfg.local_epochs, client_sizes))
        self.tracker = CoverageTracker(family, self.global_params)
        self.modules = ModuleCache(family, device)
        self.modules.put(family.groups, model)  # its parameters are overwritten before every use, as a built one's
        self.coordinate_weights = (CoordinateWeights(family, self.global_params, cfg.weighting, cfg.count_weighted,
                                                     cfg.label_split) if cfg.weighs_per_coordinate else None)
        self.history: list[RoundRecord] = []
        self.client_widths: list[list[tuple[int, float]]] = [[] for _ in range(cfg.num_clients)]
        self.diverged_round: int | None = None
        self.final_accuracy: float | None = None
        self.final_loss: float | None = None

    def round(self, t: int) -> tuple[RoundRecord, bool]:
        """Round t: allocate, train the sampled clients, aggregate, evaluate when due; (its record, diverged)."""
        cfg = self.cfg
        drawn = sample_clients(self.seed, t, cfg.num_clients, cfg.clients_per_round)
        widths = self.policy.widths(t, drawn)
        epochs = work_of(self.hook, t, drawn, cfg.local_epochs)
        sampled = [i for i in drawn if epochs[i] > 0]
        lr = cfg.lr * cfg.lr_decay ** t
        views = self._views(t, sampled, widths)
        updates, losses, nonfinite = self._train(t, sampled, widths, epochs, lr, views)
        norms, sizes = update_statistics(updates)
        # an update's float64 norm is finite exactly when all its values are (no overflow)
        nonfinite = nonfinite or not all(map(math.isfinite, norms))
        self.objective.end_round()
        mean_update = self._aggregate(updates, sampled)
        diverged = nonfinite or not _all_finite(self.global_params)
        if not diverged:
            self.policy.observe(t, updates, mean_update)
        record = RoundRecord(t, sampled, [widths[i] for i in sampled],
                             float(np.mean([widths[i] for i in sampled])) if sampled else math.nan, lr,
                             _mean_loss(losses))
        record.update_norms, record.update_sizes = norms, sizes
        if self.hook is not None:
            record.sampled, record.local_epochs = drawn, [epochs[i] for i in sampled]
        if diverged or _should_evaluate(cfg, t):
            self._evaluate(record)
        self.history.append(record)
        return record, diverged

    def _views(self, t: int, sampled: list[int], widths: Mapping[int, float]) -> dict[int, SubmodelView]:
        """Each sampled client's sub-model; clients of one width share a view unless extraction is random."""
        cfg, views = self.cfg, {}
        by_width: dict[float, SubmodelView] = {}  # prefix and rolling units depend on the width
        for i in sampled:
            if ExtractionMode(cfg.extraction).is_random:
                views[i] = SubmodelView.for_width(self.family, self.global_params, widths[i], cfg.extraction,
                                                  t, torch_generator(self.seed, "extraction", t, i))
            else:
                if widths[i] not in by_width:
                    by_width[widths[i]] = SubmodelView.for_width(self.family, self.global_params, widths[i],
                                                                 cfg.extraction, t, None)
                views[i] = by_width[widths[i]]
            self.client_widths[i].append((t, widths[i]))
        return views

    def _train(self, t: int, sampled: list[int], widths: Mapping[int, float], epochs: Mapping[int, int], lr: float,
               views: dict[int, SubmodelView]) -> tuple[list[ClientUpdate], list[float], bool]:
        """The sampled clients' local training from their views: (updates, losses, whether any went non-finite)."""
        cfg = self.cfg
        settings = {i: LocalSettings(epochs[i], cfg.batch_size, lr, cfg.momentum, cfg.weight_decay, cfg.clip_norm,
                                     Precision(cfg.precision), ClientOptimizer(cfg.optimizer)) for i in sampled}
        distinct = {id(v): v for v in views.values()}
        for key, view in distinct.items():
            self.tracker.record(view, sum(id(views[i]) == key for i in sampled))
        extracted = {key: v.extract(self.global_params) for key, v in distinct.items()}
        # a view's clients share one start (read-only)
        starts = {i: extracted[id(views[i])] for i in sampled}
        results = train_round(cfg.client_execution, self.objective, self.family, self.modules, sampled, views,
                              starts, self.data.clients, settings,
                              {i: torch_generator(self.seed, "batches", t, i) for i in sampled})
        updates = [ClientUpdate(i, widths[i], None, None, results[i].num_samples, results[i].mean_loss,
                                compact=results[i].update, placement=None if views[i].is_full else views[i])
                   for i in sampled]
        return updates, [results[i].mean_loss for i in sampled], any(results[i].nonfinite for i in sampled)

    def _aggregate(self, updates: list[ClientUpdate], sampled: list[int]) -> Params:
        """The new global model from the round's updates (per coordinate where the config weighs so); the mean
        update the policy observes."""
        if self.coordinate_weights is None:
            self.global_params, mean_update = aggregate(self.global_params, updates,
                                                        client_weights(self.cfg.weighting, updates))
        else:
            weights = self.coordinate_weights.round_weights(updates, {i: self.data.clients[i].classes for i in sampled})
            self.global_params, mean_update = aggregate_per_coordinate(self.global_params, updates, weights)
        return mean_update

    def _evaluate(self, record: RoundRecord) -> None:
        model = self.modules.get(self.family.groups)
        load_params(model, self.global_params)
        accuracy, loss = evaluate(model, self.data.test, self.data.calibration, self.cfg.eval_batch_size)
        record.test_accuracy, record.test_loss = accuracy, loss
        self.final_accuracy, self.final_loss = accuracy, loss

    def result(self, wall_time_s: float) -> FederationResult:
        tracker, params = self.tracker, self.global_params
        return FederationResult(
            seed=self.seed, config=self.cfg.to_dict(), caps=self.caps.tolist(), history=self.history,
            client_widths=self.client_widths, adaptations=self.policy.adaptations(),
            client_statistics=self.policy.client_statistics(),
            unit_update_counts={g: c.tolist() for g, c in tracker.unit_counts.items()},
            total_coordinates=sum(t.numel() for t in params.values()),
            never_covered_coordinates=tracker.never_covered(),
            changed_outside_union=tracker.changed_outside_union(self.initial, params),
            diverged=self.diverged_round is not None, diverged_round=self.diverged_round,
            rounds_completed=len(self.history), final_accuracy=self.final_accuracy, final_loss=self.final_loss,
            wall_time_s=wall_time_s, final_params=params, covered=tracker.union)
