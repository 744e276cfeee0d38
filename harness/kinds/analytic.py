"""Kinds that need no training: the allocation rule, sub-model costs, mask coverage."""
from __future__ import annotations

import math
import statistics
from functools import partial

from pydantic import Field

from harness.kinds.base import ExperimentKind, KindExample, Metric, NotApplicable, Plot
from harness.runners.model_config import model_sources
from harness.schema.base import StrictModel


class ClientArg(StrictModel):
    client: int = Field(ge=0)


class WidthArg(StrictModel):
    width: float = Field(gt=0.0, le=1.0)


class RoundArg(StrictModel):
    round: int = Field(ge=0)


Exact = partial(Metric, deterministic=True, numerics_invariant=True)
"""A metric computed analytically from the config: the seed plays no part, nor do the CPU's kernels."""

CoverageMetric = partial(Metric, deterministic=lambda config: config["extraction"] != "random",
                         numerics_invariant=True)
"""Rolling and static extraction involve no randomness; random extraction draws per trial (from
seeded generators: counts, the same on every CPU)."""


def _nan_if_none(value):
    return math.nan if value is None else float(value)


def _draw_allocation(ax, results_by_variant, labels):
    for variant, results in results_by_variant.items():
        curve = results[0]["curve"]
        ax.plot(curve["ratio"], curve["allocation"], label=labels[variant])
    ax.set_xlabel("relative estimate H~/H-bar")
    ax.set_ylabel("allocated width p")
    ax.legend(fontsize=7)


ALLOCATION_RULE = ExperimentKind(
    name="allocation_rule",
    evidence="analytic",
    description="Sweep of Eq. 6 over the relative estimate H~/H-bar for one capacity tier.",
    runner="harness.runners.allocation_rule",
    metrics={
        "cap_reached_at": Exact("smallest swept H~/H-bar at which the allocation equals the cap",
                                 lambda r, a: _nan_if_none(r["cap_reached_at"])),
        "min_allocation": Exact("smallest allocation over the sweep", lambda r, a: r["min_allocation"]),
        "max_allocation": Exact("largest allocation over the sweep", lambda r, a: r["max_allocation"]),
        "allocation_span": Exact("largest minus smallest allocation over the sweep",
                                  lambda r, a: r["max_allocation"] - r["min_allocation"]),
    },
    plots={"allocation_curves": Plot("allocation against relative estimate per tier", _draw_allocation)},
    example=KindExample({"p_max": 0.75, "p_min": 0.4, "gamma": 0.25, "federation_size": 20, "ratio_max": 3.0,
                         "ratio_step": 0.01}),
)


def _allocation_of(result, args: ClientArg) -> float:
    allocation = result["allocation"]
    if args.client >= len(allocation):
        raise NotApplicable(f"client {args.client} does not exist; the federation has {len(allocation)} clients")
    return allocation[args.client]


ALLOCATION_EXAMPLE = ExperimentKind(
    name="allocation_example",
    evidence="analytic",
    description="Eq. 6 followed by the coverage guarantee on a stated federation.",
    runner="harness.runners.allocation_example",
    metrics={"allocation": Exact("allocation of one client after the rule and the guarantee",
                                  _allocation_of, args=ClientArg)},
    example=KindExample({"h_tilde": [2.1, 0.3, 1.2], "p_max": [0.3, 0.8, 0.5], "p_min": 0.4, "gamma": 0.25,
                         "coverage_guarantee": True}, args={"allocation": {"client": 1}}),
)


def _width_row(result, width: float) -> dict:
    for row in result["widths"]:
        if math.isclose(row["width"], width):
            return row
    raise NotApplicable(f"width {width} was not measured; measured: {[r['width'] for r in result['widths']]}")


def _draw_cost_curves(ax, results_by_variant, labels):
    for variant, results in results_by_variant.items():
        rows = results[0]["widths"]
        ax.plot([r["width"] for r in rows], [r["param_fraction"] for r in rows], "o-",
                label=f"{labels[variant]}: parameters")
        ax.plot([r["width"] for r in rows], [r["mac_fraction"] for r in rows], "s--",
                label=f"{labels[variant]}: MACs")
    grid = [i / 100 for i in range(5, 101)]
    ax.plot(grid, [p * p for p in grid], ":", color="grey", label="p²")
    ax.set_xlabel("width p")
    ax.set_ylabel("fraction of the full model")
    ax.legend(fontsize=7)


SUBMODEL_COST = ExperimentKind(
    name="submodel_cost",
    evidence="analytic",
    description="Parameter and MAC fractions of prefix sub-models at given widths.",
    runner="harness.runners.submodel_cost",
    metrics={
        "param_fraction": Exact("parameters of the width-p sub-model / full model",
                                 lambda r, a: _width_row(r, a.width)["param_fraction"], args=WidthArg),
        "mac_fraction": Exact("multiply-accumulates of the width-p sub-model / full model",
                               lambda r, a: _width_row(r, a.width)["mac_fraction"], args=WidthArg),
        "param_exponent": Exact("least-squares exponent k of params ∝ p^k", lambda r, a: r["param_exponent"]),
        "mac_exponent": Exact("least-squares exponent k of MACs ∝ p^k", lambda r, a: r["mac_exponent"]),
    },
    plots={"cost_curves": Plot("parameter and MAC fractions against width", _draw_cost_curves)},
    code_sources=lambda config: model_sources(config.model),
    example=KindExample({"model": {"arch": "conv", "hidden": [8, 16], "in_channels": 3, "num_classes": 10,
                                   "image_size": 32}, "widths": [0.5, 1.0]},
                        args={"param_fraction": {"width": 0.5}, "mac_fraction": {"width": 0.5}}),
)


def _mean_rounds(result) -> float:
    if result["trials_never_covered"]:
        return math.inf
    return statistics.fmean(result["rounds_to_cover"])


def _boundaries(result) -> list[dict]:
    if not result.get("cycle_boundaries"):
        raise NotApplicable("this run has no cycle boundaries (set `cycles` in its config)")
    return result["cycle_boundaries"]


def _kept_groups_code(result, round_index: int) -> float:
    windows = result.get("first_trial_windows")
    if windows is None:
        raise NotApplicable("this record has no first_trial_windows (recorded by the runner since the rolling example)")
    if round_index >= len(windows):
        raise NotApplicable(f"round {round_index} is past the {len(windows)} rounds recorded for the first trial")
    return float(sum(2 ** group for group in windows[round_index]))


def _draw_coverage(ax, results_by_variant, labels):
    for variant, results in results_by_variant.items():
        result = results[0]
        finished = sorted(r for r in result["rounds_to_cover"] if r is not None)
        if not finished:
            ax.axhline(0, label=f"{labels[variant]}: never covered", linestyle=":")
            continue
        fraction = [(i + 1) / len(result["rounds_to_cover"]) for i in range(len(finished))]
        ax.step(finished, fraction, where="post", label=labels[variant])
    ax.set_xlabel("rounds")
    ax.set_ylabel("fraction of trials with every group covered m times")
    ax.legend(fontsize=7)


MASK_COVERAGE = ExperimentKind(
    name="mask_coverage",
    evidence="analytic",
    description="Rounds until every index group is kept m times, per extraction scheme.",
    runner="harness.runners.mask_coverage",
    metrics={
        "mean_rounds_to_cover": CoverageMetric("mean over trials of the rounds until all groups are covered m times "
                                       "(inf if some trial never got there)", lambda r, a: _mean_rounds(r),
                                       unit="rounds"),
        "rounds_over_m_times_groups": CoverageMetric("mean rounds to cover / (m · I)",
                                             lambda r, a: _mean_rounds(r) / r["m_times_groups"]),
        "max_rounds_over_m_times_groups": CoverageMetric(
            "largest rounds to cover over the trials / (m · I)",
            lambda r, a: (math.inf if r["trials_never_covered"] else max(r["rounds_to_cover"])) / r["m_times_groups"]),
        "rounds_over_formula": CoverageMetric("mean rounds to cover / (I log I + I (m-1) log log I)",
                                      lambda r, a: _mean_rounds(r) / r["formula_rounds"]),
        "cycle_count_spread": CoverageMetric("largest (max − min) of the per-group counts at any full-cycle boundary "
                                     "(every I rounds) over all trials; 0 = perfectly even",
                                     lambda r, a: float(max(b["max"] - b["min"] for b in _boundaries(r)))),
        "cycle_count_cv": CoverageMetric("mean coefficient of variation of the per-group counts at the cycle "
                                         "boundaries",
                                         lambda r, a: statistics.fmean(b["cv"] for b in _boundaries(r))),
        "uncovered_fraction": CoverageMetric("mean over trials of the fraction of groups covered fewer than m times "
                                             "when the trial ended",
                                             lambda r, a: statistics.fmean(r["uncovered_fraction_at_end"])),
        "kept_groups_code": CoverageMetric("the groups kept at a round of the first trial as one number, Σ 2^g over "
                                   "the kept groups g (groups a, b, c, … are 0, 1, 2, …): {a, b, c, d} is 15",
                                   lambda r, a: _kept_groups_code(r, a.round), args=RoundArg),
    },
    plots={"coverage_cdf": Plot("fraction of trials fully covered against rounds", _draw_coverage)},
    example=KindExample({"extraction": "rolling", "index_groups": 5, "coverage": 1, "trials": 2, "cycles": 2},
                        args={"kept_groups_code": {"round": 1}}),
)
