"""What an experiment kind declares: its runner, and the vocabulary claims may use."""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel

from harness.kinds.evaluations import Tolerance

Result = Mapping[str, Any]


class NoArgs(BaseModel):
    model_config = {"extra": "forbid"}


class NotApplicable(ValueError):
    """A metric or client quantity that this run's record does not have (a HAS-FL estimate of a run
    of another policy, a width the run did not measure): the claim reading it is ERROR with this
    message."""


@dataclass(frozen=True)
class Metric:
    """One number per run record."""

    description: str
    compute: Callable[[Result, Any], float]
    args: type[BaseModel] = NoArgs
    unit: str = ""
    varies: bool = False
    """True for measurements that differ from run to run (timings, sizes of compressed ciphertexts):
    a baseline then compares the verdicts of claims on it, not their numbers."""
    deterministic: bool | Callable[[Mapping[str, Any]], bool] = False
    """True when the value is fixed by the run's config and not drawn by its seed (an analytic
    result, an exact count): one seed then decides a test of the mean. A callable decides from
    the run's resolved config (e.g. deterministic for rolling extraction, not for random). A
    stochastic metric is only tested against its spread over seeds."""

    agreement: float = 0.0
    """Relative difference allowed between the seeds of a deterministic metric (e.g. the sizes of
    compressed random ciphertexts); seeds further apart make the claim an ERROR."""
    numerics_invariant: bool | Callable[[Mapping[str, Any]], bool] = False
    """True when the value does not pass through floating-point kernels whose last bits differ
    between CPUs (an analytic result, a count, an allocation rule's arithmetic, an exact-algebra
    error at rounding level): another machine reproduces it to a tight tolerance. False for what
    training or float kernels compute: across numerics it is compared as a distribution. A
    callable decides from the run's resolved config."""
    structural: bool = False
    """The value is fixed by the protocol's structure or exact algebra (a round count, a byte count,
    an equality with the centralised solution, what the coordinator holds), not by how well the
    models learned: a claim on it counts as an analytic and structural check."""
    learned: bool = True
    """False for a measured cost of a real pipeline (a time, an energy, a saved fraction): it
    depends on the machine, not on how far the models learned, so no learning level applies."""
    independent: bool = False
    """The value does not depend on how well the models learn (a coverage, the widths a policy allocated,
    an upload's size): a claim on it carries no learning level."""
    smallest_effect: float | None = None
    """The smallest difference in this metric that is evidence of an ordering (in its unit): a
    claim that A is above B resting on less is reported as weak evidence."""
    tolerates: Tolerance | None = None
    """How the metric's definition treats evaluations whose value is missing, said in every verdict
    that meets one. None: a metric that reads evaluations refuses a record missing one (`MissingValue`:
    the claim is ERROR, naming the record, variant, seed and round; `harness.kinds.evaluations`)."""
    example_args: Mapping[str, Any] | None = None
    """Arguments to read an example record with, where `args` has required fields."""
    unseeded: bool | Callable[[Mapping[str, Any]], bool] = False
    """True when a source of randomness no seed reaches draws the value (CKKS encryption's keys and noise):
    a re-run of the same config and seed gives other bits, so the golden guard
    (`harness.running.golden`) leaves it out of its bit-for-bit comparison and says so. A callable decides
    from the run's resolved config."""
    proxy: str | Callable[[Result], str] = ""
    """What the value stands in for, with the conversion, where it is not the paper's own quantity
    (communication counted in coordinates, computation in MACs, energy from CPU time); a callable
    decides from the run's result (e.g. energy measured by RAPL is not a proxy). '' : not a proxy."""

    def is_deterministic(self, config: Mapping[str, Any]) -> bool:
        return self.deterministic(config) if callable(self.deterministic) else bool(self.deterministic)

    def is_numerics_invariant(self, config: Mapping[str, Any]) -> bool:
        invariant = self.numerics_invariant
        return invariant(config) if callable(invariant) else bool(invariant)

    def is_unseeded(self, config: Mapping[str, Any]) -> bool:
        return self.unseeded(config) if callable(self.unseeded) else bool(self.unseeded)


@dataclass(frozen=True)
class ExtensionMetric:
    """A metric added to existing kinds from outside their declaration: a `fedclaims.metrics`
    entry point, or a reference in a spec's `metrics` (`path/to/file.py:NAME`). Claims name it
    `name`; it applies to the records of the kinds named in `kinds`."""

    name: str
    kinds: tuple[str, ...]
    metric: Metric


@dataclass(frozen=True)
class ClientQuantity:
    """One number per client of a run record."""

    description: str
    compute: Callable[[Result], list[float]]
    numerics_invariant: bool | Callable[[Mapping[str, Any]], bool] = False
    """As for Metric: the per-client values do not depend on floating-point kernels."""

    def is_numerics_invariant(self, config: Mapping[str, Any]) -> bool:
        invariant = self.numerics_invariant
        return invariant(config) if callable(invariant) else bool(invariant)


@dataclass(frozen=True)
class Plot:
    """A figure from the records of an experiment: draw(axes, {variant: [results]}, labels)."""

    description: str
    draw: Callable[..., None]


@dataclass(frozen=True)
class KindExample:
    """A small run of a kind (seconds on a CPU): the generic kind test validates its config, runs it
    and reads every metric, client quantity and plot the kind declares from its record; a new spec
    can start from it."""

    config: Mapping[str, Any]
    args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Arguments of the metrics that take them, by metric name (else the metric's `example_args`)."""


Evidence = Literal["empirical", "analytic"]
"""`empirical`: the runs train models (or time real pipelines) and their numbers depend on that
training; `analytic`: the runs compute a rule, a count or a coverage without training anything,
so their records are the same at every profile that resolves to the same config."""


def classified(metrics: Mapping[str, Metric], structural: tuple[str, ...] = (), costs: tuple[str, ...] = (),
               smallest_effects: Mapping[str, float] | None = None,
               independent: tuple[str, ...] = ()) -> dict[str, Metric]:
    """A kind's metrics with the named ones marked structural, as costs (not learned), independent of
    learning or with their smallest effect of interest (one table per kind instead of a flag in every entry)."""
    unknown = (set(structural) | set(costs) | set(smallest_effects or {}) | set(independent)) - set(metrics)
    if unknown:
        raise KeyError(f"no such metrics: {sorted(unknown)}")
    return {name: replace(metric, structural=metric.structural or name in structural,
                          learned=metric.learned and name not in costs,
                          independent=metric.independent or name in independent,
                          smallest_effect=(smallest_effects or {}).get(name, metric.smallest_effect))
            for name, metric in metrics.items()}


@dataclass(frozen=True)
class Learning:
    """How far a kind's models learned (`harness.verdicts.levels`): the metric read as accuracy (in %),
    the record field holding chance on the run's test set (the accuracy of its most frequent label, the
    best constant prediction), and a uniform guess from the resolved config for records without it."""

    metric: str
    chance: Callable[[Mapping[str, Any]], float]
    """The accuracy of a uniform guess (100 / classes), from a run's resolved config."""
    majority: str = "majority_accuracy"
    best: str | None = None
    """The metric of the best evaluation of the run, which reports show beside `metric` (papers that keep
    their best checkpoint report it); None where the kind has none."""


@dataclass(frozen=True)
class ExperimentKind:
    """A kind of experiment: the module that runs it and how its records are read.

    The runner module holds `Config` (a pydantic model of the resolved config) and
    `run(config, seed, context) -> dict`. Only the runner module and what it imports
    from this project determine a record, so only they enter its code hash.
    """

    name: str
    description: str
    runner: str
    metrics: Mapping[str, Metric]
    evidence: Evidence
    """What a claim on this kind's records rests on (see `Evidence`)."""
    client_quantities: Mapping[str, ClientQuantity] = field(default_factory=dict)
    plots: Mapping[str, Plot] = field(default_factory=dict)
    datasets: Callable[[Any], list[str]] = lambda config: []
    """The data sets a run loads, from its config (an instance of the runner's `Config`)."""
    code_sources: Callable[[Any], list[str]] = lambda config: []
    """Code a run loads by name from its config (a user's policy: a module name or a file path),
    hashed into the run's key beside the runner's import closure."""
    learning: Learning | None = None
    """How the level its models learned to is read (None: the kind trains nothing)."""
    example: KindExample | None = None
    """A small run of this kind that every registered kind must declare (`tests/test_kinds.py`)."""
    config_problems: Callable[[Any], list[tuple[tuple[str, ...], str]]] = lambda config: []
    """What a valid config (an instance of the runner's `Config`) still cannot run as it is written (a part
    whose own method the chosen execution path would not call): (the setting's path, the message) pairs,
    each refused by `fedclaims validate` at the line that sets it."""
    config_notes: Callable[[Any], list[str]] = lambda config: []
    """How a valid config (an instance of the runner's `Config`) runs other than it reads (an execution path
    the engine leaves for a part that cannot take it): said once by `verify` and `report`, and in the report's
    Provenance (`harness.pipeline.execution_notes`)."""
    conformance_parts: tuple[str, ...] = ()
    """The parts of a run of this kind (e.g. the server's extraction and aggregation, the clients' training, their
    augmentation) that conformance fixtures must each cover, for every variant a claim reads, before the
    implementation is ruled out as whose the claim's FAIL is (`harness.report.attributions.conformance`; each
    fixture's `covers.parts` names the parts it holds the project to). Empty: never ruled out."""
    conformance_idle: Mapping[str, Mapping[str, tuple[Any, ...]]] = field(default_factory=dict)
    """Per part of `conformance_parts`, the settings (dotted key -> values) at which a run does not run it (it is
    the identity there, as augmentation at `federation.augmentation: none`): a variant at any of them needs no
    fixture of that part, and a claim none of whose variants runs the part is judged on the other parts."""
    timed: bool = False
    """Whether its runs measure their own seconds as results (a cost claim reads them): such runs are executed
    one at a time after the other runs of an invocation, so that none of them shares the CPU with another run
    of the same invocation (`harness.running.execution`)."""
    trial: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    """Overrides that shrink a resolved config of this kind to one round on a handful of samples, keeping
    its models, methods and federation as they are (`fedclaims trial`, `tests/test_paper_profile.py`);
    None: a config of this kind is cheap as it stands."""

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(self.runner)

    @property
    def config_model(self) -> type[BaseModel]:
        return self.module.Config
