"""Federated sub-model training: metrics, per-client quantities and plots over its records.

Metrics on the test evaluations refuse a record in which one the run made is missing (null): the
claim is ERROR, naming the record, variant, seed and round (`harness.kinds.evaluations`). Only
`min_loss` says otherwise in its definition: it skips a missing loss, and its verdicts say which.
"""
from __future__ import annotations

import math
import statistics
from typing import Any

import numpy as np

from harness.extensions import ExtensionPoint
from harness.kinds import federated_adaptation as adaptation
from harness.kinds import federated_updates as updates
from harness.kinds.base import (
    ClientQuantity,
    ExperimentKind,
    KindExample,
    Learning,
    Metric,
    NotApplicable,
    Plot,
    classified,
)
from harness.kinds.evaluations import Tolerance, by_round, evaluations, present_evaluations
from harness.runners.model_config import model_sources
from harness.runners.parts import OBJECTIVES, POLICIES, ROUND_HOOKS


def _accuracies(result) -> list[tuple[int, float]]:
    """(round, accuracy in %) of every evaluation the run made; MissingValue where one is null."""
    return [(t, 100.0 * accuracy) for t, accuracy in evaluations(result, "test_accuracy")]


def _final_accuracy(result, args) -> float:
    points = _accuracies(result)
    return points[-1][1] if points else math.nan


SMOOTHING_FRACTION = 0.1
"""The smoothed accuracy curve averages the evaluations of the last 10% of rounds at every point."""


def _smoothed(result, points: list[tuple[int, float]]) -> list[float]:
    """At each evaluation, the mean value over the evaluations of the preceding 10% of rounds.

    Under non-IID partial participation the global model swings from round to round with the
    clients that trained it last (several points at L = 2); the window averages over those draws.
    """
    window = max(1, round(SMOOTHING_FRACTION * result["config"]["rounds"]))
    return [float(np.mean([a for t2, a in points if t - window < t2 <= t])) for t, _ in points]


def _smoothed_accuracies(result) -> list[float]:
    return _smoothed(result, _accuracies(result))


def _end_accuracy(result, args) -> float:
    smoothed = _smoothed_accuracies(result)
    return smoothed[-1] if smoothed else math.nan


def _peak_to_end_drop(result, args) -> float:
    smoothed = _smoothed_accuracies(result)
    return max(smoothed) - smoothed[-1] if smoothed else math.nan


def _best_accuracy(result, args) -> float:
    points = _accuracies(result)
    return max(a for _, a in points) if points else math.nan


def _losses(result) -> list[float]:
    return [loss for _, loss in evaluations(result, "test_loss")]


def _final_loss(result, args) -> float:
    losses = _losses(result)
    return losses[-1] if losses else math.nan


def _smoothed_losses(result) -> list[float]:
    return _smoothed(result, evaluations(result, "test_loss"))


def _end_loss(result, args) -> float:
    smoothed = _smoothed_losses(result)
    return smoothed[-1] if smoothed else math.nan


def _loss_rise_after_min(result, args) -> float:
    smoothed = _smoothed_losses(result)
    return smoothed[-1] - min(smoothed) if smoothed else math.nan


LOWEST_LOSS_SKIPS = Tolerance("test_loss", "skips it: the lowest loss is taken over the evaluations that have one "
                                           "(the loss of a round a run diverged at is non-finite, stored as null)")


def _min_loss(result, args) -> float:
    losses = [loss for _, loss in present_evaluations(result, "test_loss")]
    return min(losses) if losses else math.nan


def _mean_capacity(result, args) -> float:
    return statistics.fmean(r["mean_width"] for r in result["history"])


def _unit_count_cv(result, args) -> float:
    """Coefficient of variation of the per-unit update counts, pooled over all sliced groups."""
    counts = np.concatenate([np.asarray(c, dtype=float) for c in result["unit_update_counts"].values()])
    return float(counts.std() / counts.mean()) if counts.mean() > 0 else math.nan


def _mean_width_of_client(result) -> list[float]:
    return [statistics.fmean(w for _, w in widths) if widths else math.nan for widths in result["client_widths"]]


def _h_tilde(result) -> list[float]:
    estimates = result["client_statistics"].get("h_tilde")
    if estimates is None:
        raise NotApplicable("this run has no heterogeneity estimates (only HAS-FL keeps them)")
    return [math.nan if h is None else h for h in estimates]


def _final_allocation(result) -> list[float]:
    if not result["adaptations"]:
        raise NotApplicable("this run made no adaptation step (only HAS-FL re-allocates)")
    return [float(p) for p in result["adaptations"][-1]["allocation"]]


def _allocation_is_static(config) -> bool:
    """The policy's widths are fixed by the caps and seeded draws (`AllocationPolicy.static`): widths,
    coverage and unit counts then do not depend on any floating-point kernel."""
    return POLICIES.load(config["federation"]["policy"]["name"]).static


UPLOAD_PROXY = ("communication counted in model coordinates a client uploads (parameter counts), not in bytes "
                "sent: a ratio of coordinates equals the ratio of bytes at one number format and no compression")
COMPUTE_PROXY = ("computation counted in multiply-accumulates of one forward pass of the sub-model (MACs, "
                 "measured by the model's hooks), not in training time")
AT_CAP_TOLERANCE = 1e-9


def _at_cap(result) -> list[float]:
    """1.0 where the client's final allocation is its capacity cap, else 0.0 (HAS-FL)."""
    return [float(p >= cap - AT_CAP_TOLERANCE) for p, cap in zip(_final_allocation(result), result["caps"])]


def _named_sources(config) -> list[str]:
    """The modules a config names: its model family's and its method's parts' (policy, objective, round hook)."""
    federation = config.federation
    named: list[tuple[ExtensionPoint[Any], Any]] = [(POLICIES, federation.policy), (OBJECTIVES, federation.objective),
                                                    (ROUND_HOOKS, federation.round_hook)]
    return model_sources(config.model) + [source for point, part in named if part is not None
                                          for source in point.sources(part["name"])]


def _draw_accuracy(ax, results_by_variant, labels):
    """Mean over seeds as a line, the band between the lowest and highest seed shaded; seeds are
    paired by round, over the rounds every seed evaluated, and a missing evaluation is a gap."""
    for variant, results in results_by_variant.items():
        curves = [by_round(r, "test_accuracy") for r in results]
        common = sorted(set.intersection(*(set(c) for c in curves)))
        rounds = [t + 1 for t in common]
        values = 100.0 * np.array([[c[t] for t in common] for c in curves]).reshape(len(curves), len(common))
        line, = ax.plot(rounds, values.mean(axis=0),
                        label=f"{labels[variant]} (mean, band: seed range, n={len(results)})")
        if len(results) > 1:
            ax.fill_between(rounds, values.min(axis=0), values.max(axis=0), color=line.get_color(), alpha=0.15,
                            linewidth=0)
    ax.set_xlabel("round")
    ax.set_ylabel("test accuracy (%)")
    ax.legend(fontsize=6)


def _draw_h_tilde(ax, results_by_variant, labels):
    for results in results_by_variant.values():
        caps = np.concatenate([r["caps"] for r in results])
        h = np.concatenate([_h_tilde(r) for r in results])
        tv = np.concatenate([r["tv_distance"] for r in results])
        jitter = np.random.default_rng(0).uniform(-0.02, 0.02, size=caps.size)
        points = ax.scatter(caps + jitter, h, c=tv, cmap="viridis", s=18)
        ax.figure.colorbar(points, ax=ax, label="TV distance to the global label distribution")
    ax.set_xlabel("capacity cap p_max (jittered)")
    ax.set_ylabel("final smoothed estimate H~")


def _draw_unit_counts(ax, results_by_variant, labels):
    for variant, results in results_by_variant.items():
        counts = np.concatenate([np.asarray(c, dtype=float) for c in results[0]["unit_update_counts"].values()])
        ax.hist(counts, bins=40, histtype="step", linewidth=1.5, label=labels[variant])
    ax.set_xlabel("client-rounds that trained the unit (first seed, all sliced layers)")
    ax.set_ylabel("units")
    ax.legend(fontsize=7)


def _draw_allocations(ax, results_by_variant, labels):
    variant, results = next(iter(results_by_variant.items()))
    result = results[0]
    cmap = {0.25: "tab:red", 0.5: "tab:orange", 0.75: "tab:green", 1.0: "tab:blue"}
    for client, widths in enumerate(result["client_widths"]):
        if widths:
            colour = cmap.get(result["caps"][client], "grey")
            ax.plot([t + 1 for t, _ in widths], [w for _, w in widths], ".-", color=colour, alpha=0.6, lw=0.8)
    ax.set_xlabel("round (points: rounds the client took part)")
    ax.set_ylabel("allocated width (colour = cap)")
    ax.set_title(f"{labels[variant]}, first seed", fontsize=8)


ACCURACY_POINTS = 0.1
"""Accuracy differences below the papers' printed resolution (0.1 points) are no evidence of an ordering."""
LOSS_NATS = 0.01
"""Cross-entropy differences below 0.01 nats are no evidence of an ordering."""


def _chance(config) -> float:
    """100 / classes: the image models' classes, the character model's vocabulary."""
    model = config["model"]
    return 100.0 / (model.get("num_classes") or model["vocab_size"])


FEDERATED_TRAINING = ExperimentKind(
    name="federated_training",
    evidence="empirical",
    description="Federated (sub-)model training with a composed allocation policy, local objective and aggregator.",
    runner="harness.runners.federated",
    learning=Learning("end_accuracy", _chance, best="best_accuracy"),
    conformance_parts=("server", "client", "augmentation"),
    conformance_idle={"augmentation": {"federation.augmentation": ("none",)}},
    metrics=classified({
        "final_accuracy": Metric("test accuracy (%) at the last evaluation", _final_accuracy, unit="%"),
        "best_accuracy": Metric("highest test accuracy (%) over the evaluations", _best_accuracy, unit="%"),
        "end_accuracy": Metric("test accuracy (%) at the end of training, averaged over the evaluations of the "
                               "last 10% of rounds", _end_accuracy, unit="%"),
        "peak_to_end_drop": Metric("peak of the smoothed accuracy curve (mean over a window of 10% of the rounds) "
                                   "minus its end value (percentage points)", _peak_to_end_drop, unit="points"),
        "peak_to_final_drop": Metric("best minus final test accuracy (percentage points)",
                                     lambda r, a: _best_accuracy(r, a) - _final_accuracy(r, a), unit="points"),
        "final_loss": Metric("test cross-entropy at the last evaluation", _final_loss, unit="nats"),
        "min_loss": Metric("lowest test cross-entropy over the evaluations that have one", _min_loss, unit="nats",
                           tolerates=LOWEST_LOSS_SKIPS),
        "end_loss": Metric("test cross-entropy at the end of training, averaged over the evaluations of the last "
                           "10% of rounds", _end_loss, unit="nats"),
        "loss_rise_after_min": Metric("end value of the smoothed test-loss curve (mean over a window of 10% of the "
                                      "rounds) minus its minimum: 0 when the loss falls to the very end",
                                      _loss_rise_after_min, unit="nats"),
        "mean_capacity": Metric("mean over rounds of the participants' mean width", _mean_capacity,
                                numerics_invariant=_allocation_is_static),
        "diverged": Metric("1 if a loss or parameter became non-finite, else 0", lambda r, a: float(r["diverged"])),
        "chance_accuracy": Metric("100 / number of classes (%)", lambda r, a: 100.0 / r["num_classes"], unit="%",
                                  deterministic=True, numerics_invariant=True),
        "accuracy_above_chance": Metric("final accuracy minus chance (points)",
                                        lambda r, a: _final_accuracy(r, a) - 100.0 / r["num_classes"]),
        "changed_outside_union": Metric("coordinates never trained by any client that differ from their "
                                        "initial value (Proposition 3 says 0)",
                                        lambda r, a: float(r["changed_outside_union"]), numerics_invariant=True),
        "never_covered_fraction": Metric("fraction of global coordinates no client ever trained",
                                         lambda r, a: r["never_covered_coordinates"] / r["total_coordinates"],
                                         numerics_invariant=_allocation_is_static),
        "unit_count_cv": Metric("coefficient of variation of per-unit update counts (evenness of training)",
                                _unit_count_cv, numerics_invariant=_allocation_is_static),
        "compute_reduction": Metric("full model's MACs over the mean MACs of a client's sub-model per client-round "
                                    "(how many times less computation a participant does than at full width)",
                                    updates.compute_reduction, numerics_invariant=_allocation_is_static,
                                    proxy=COMPUTE_PROXY),
        "mean_upload_size": Metric("mean size of a client's update per client-round, in coordinates: what a "
                                   "participant uploads, and the parameter count of the sub-model it trains",
                                   updates.mean_upload_size, numerics_invariant=_allocation_is_static,
                                   proxy=UPLOAD_PROXY),
        "upload_reduction": Metric("full model's coordinates over the mean size of a client's update per "
                                   "client-round (how many times less a participant uploads than at full width)",
                                   updates.upload_reduction, numerics_invariant=_allocation_is_static,
                                   proxy=UPLOAD_PROXY),
        "final_untrained_unit_fraction": Metric(
            "mean over sliced layers of the share of units outside the largest final allocation (HAS-FL, nested "
            "sub-models): the channels no client's final sub-model holds", adaptation.final_untrained_unit_fraction),
        "h_bar_cycle_peak": Metric("mean over complete normalisation cycles of the largest H-bar (mean of H~, "
                                   "before rescaling) in the cycle (HAS-FL, Figure 4)", adaptation.h_bar_cycle_peak),
        "h_bar_rise_fraction": Metric("share of adaptation steps at which H-bar rose from its value after the "
                                      "previous step, 1 after a rescaling (HAS-FL, Figure 4)",
                                      adaptation.h_bar_rise_fraction),
        "allocation_mean_lowest": Metric("lowest mean allocation over the clients across adaptation steps (HAS-FL)",
                                         adaptation.allocation_mean_lowest),
        "allocation_mean_highest": Metric("highest mean allocation over the clients across adaptation steps "
                                          "(HAS-FL)", adaptation.allocation_mean_highest),
    }, structural=("changed_outside_union", "chance_accuracy"),
        independent=("mean_capacity", "never_covered_fraction", "unit_count_cv", "compute_reduction",
                     "mean_upload_size", "upload_reduction", "final_untrained_unit_fraction", "allocation_mean_lowest",
                     "allocation_mean_highest"),
        smallest_effects={**dict.fromkeys(("final_accuracy", "best_accuracy", "end_accuracy", "peak_to_end_drop",
                                           "peak_to_final_drop", "accuracy_above_chance"), ACCURACY_POINTS),
                          **dict.fromkeys(("final_loss", "min_loss", "end_loss", "loss_rise_after_min"), LOSS_NATS)}),
    client_quantities={
        "h_tilde": ClientQuantity("final smoothed heterogeneity estimate H~ (HAS-FL)", _h_tilde),
        "p_max": ClientQuantity("capacity cap", lambda r: [float(c) for c in r["caps"]], numerics_invariant=True),
        "tv": ClientQuantity("total-variation distance of the client's label distribution to the global one",
                             lambda r: list(r["tv_distance"]), numerics_invariant=True),
        "mean_width": ClientQuantity("mean width the client trained at over its rounds", _mean_width_of_client,
                                     numerics_invariant=_allocation_is_static),
        "final_allocation": ClientQuantity("the client's allocation after the last adaptation step (HAS-FL)",
                                           _final_allocation),
        "mean_update_norm": ClientQuantity("L2 norm of the client's update over the coordinates it trained, mean "
                                           "over the rounds it took part in", updates.mean_update_norm),
        "mean_update_size": ClientQuantity("number of global coordinates the client's update holds (its upload), "
                                           "mean over the rounds it took part in", updates.mean_update_size,
                                           numerics_invariant=_allocation_is_static),
        "at_cap": ClientQuantity("1 if the client's allocation after the last adaptation step is its cap, else 0 "
                                 "(HAS-FL; with clients_mean and a tier: the share of that tier at its cap)", _at_cap),
    },
    plots={
        "accuracy_curves": Plot("test accuracy per round, mean over seeds", _draw_accuracy),
        "h_tilde_vs_cap": Plot("final H~ against p_max, coloured by TV", _draw_h_tilde),
        "allocations": Plot("width per client over rounds", _draw_allocations),
        "unit_counts": Plot("distribution of per-unit update counts", _draw_unit_counts),
    },
    datasets=lambda config: [config.data.name],
    code_sources=_named_sources,
    example=KindExample({
        "data": {"name": "cifar10", "partition": {"scheme": "dirichlet", "alpha": 0.3}, "max_train_per_client": 16,
                 "test_samples": 64, "calibration_samples": 16},
        "model": {"arch": "conv", "hidden": [4, 8], "in_channels": 3, "num_classes": 10, "image_size": 32},
        "federation": {"num_clients": 4, "clients_per_round": 4, "rounds": 3, "local_epochs": 1, "batch_size": 8,
                       "policy": {"name": "hasfl", "t_warm": 1, "t_adapt": 1, "t_norm": 2}}}),
    trial=lambda config: {"data": {"max_train_per_client": 4, "test_samples": 16, "calibration_samples": 8},
                          "federation": {"rounds": 1, "eval_every": 1}},
)
