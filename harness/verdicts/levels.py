"""How much a verdict could see: how far its models learned against the paper's, and whether the
effect it rests on is of a size that matters.

**Learning level.** For a variant with an accuracy the paper states (its own accuracy claims'
`paper` expectation), level = (measured − chance) / (paper − chance): the share of the paper's
gain over a uniform guess that the run reached (chance = 100 / classes, from the kind's
`Learning` declaration). A claim's level is that of its reference variant: among the variants it
reads that were measured and whose accuracy the paper states, the one the paper puts highest (a
variant that collapses in the paper may be what the claim is about, and would flatter the level),
else the same choice over its experiment's variants.

**Groups.** Every verdict falls in one:

- `learned`: an empirical claim tested where the models reached at least `LEARNED` (half) of the
  paper's gain over chance, on an effect no smaller than its metric's smallest effect of interest;
- `weak`: an empirical claim tested where the models barely learn (level below `LEARNED`, or no
  level could be read), or whose ordering rests on less than the smallest effect of interest: a
  PASS there is weak evidence and a FAIL cannot count as a non-reproduction by itself;
- `cost`: an empirical measurement of a real pipeline's cost (a time, an energy), where no
  learning level applies;
- `analytic`: analytic and structural checks (a kind that trains nothing, or a metric fixed by
  the protocol's structure or exact algebra);
- `diagnostic`: labelled measurements that are not the paper's claims (roles `diagnostic` and `probe`).
"""
from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from harness.kinds.evaluations import MissingValue
from harness.loading.catalog import Catalog
from harness.schema import claim as schema

LEARNED = 0.5
"""The learning level (share of the paper's gain over chance) from which the models count as learning."""
ACCURACY_METRICS = ("end_accuracy", "final_accuracy", "best_accuracy", "accuracy")
GROUPS = ("learned", "weak", "cost", "analytic", "diagnostic")

Accuracies = Mapping[tuple[str, str, str], float]
"""(experiment, variant, profile) -> mean accuracy (%) over the seeds."""


@dataclass(frozen=True)
class Level:
    """The group a verdict counts in and why."""

    group: str
    fraction: float | None = None
    """The learning level (None where it does not apply or could not be read)."""
    text: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def paper_accuracies(catalog: Catalog) -> dict[tuple[str, str], tuple[float, str]]:
    """The paper's accuracy per (experiment, variant), from its claims that state one (value, claim id)."""
    levels: dict[tuple[str, str], tuple[float, str]] = {}
    for loaded in catalog.claims:
        claim = loaded.claim
        paper = claim.expect.get("paper")
        if (isinstance(claim.observe, schema.MetricObservation) and len(claim.observe.variants) == 1
                and claim.observe.metric in ACCURACY_METRICS and getattr(claim, "role", "paper") == "paper"):
            value = paper.centre() if paper is not None else None
            if value is not None:
                levels.setdefault((claim.experiment, claim.observe.variants[0]), (value, claim.id))
    return levels


def accuracies_from_records(catalog: Catalog, requests, records: Mapping[str, dict | None]) -> dict:
    """Mean accuracy per (experiment, variant, profile) over the stored records of the requests."""
    found: dict[tuple[str, str, str], list[float]] = {}
    for request in requests:
        record = records.get(request.key)
        loaded = catalog.specs.get(request.experiment)
        if record is None or record.get("status") != "ok" or loaded is None or loaded.kind.learning is None:
            continue
        learning = loaded.kind.learning
        metric = loaded.kind.metrics[learning.metric]
        try:
            value = metric.compute(record["result"], metric.args())
        except MissingValue:
            continue  # the claims reading the record are ERROR, naming it; it measures no level
        if value == value:  # not NaN
            found.setdefault((request.experiment, request.variant, request.profile), []).append(float(value))
    return {key: statistics.fmean(values) for key, values in found.items()}


def accuracies_from_verdicts(catalog: Catalog, verdicts) -> dict:
    """Mean accuracy per (experiment, variant, profile) from the series the verdicts observed (for
    profiles re-verified from archived observations, whose records are elsewhere)."""
    found: dict[tuple[str, str, str], float] = {}
    for verdict in verdicts:
        target = catalog.specs[verdict.experiment]
        learning = target.kind.learning
        if learning is None:
            continue
        labels = {f"{v.label or name} ({learning.metric})": name for name, v in target.spec.variants.items()}
        for label, numbers in (verdict.numbers or {}).items():
            variant = labels.get(label)
            if variant is not None and numbers.get("quantity") == learning.metric and numbers.get("mean") is not None:
                found.setdefault((verdict.experiment, variant, verdict.profile), float(numbers["mean"]))
    return found


@dataclass
class LevelReader:
    """Reads each verdict's group from the accuracies measured and the paper's."""

    catalog: Catalog
    measured: Accuracies
    paper: Mapping[tuple[str, str], tuple[float, str]]

    def _fraction(self, experiment: str, variant: str, profile: str) -> float | None:
        measured = self.measured.get((experiment, variant, profile))
        paper = self.paper.get((experiment, variant))
        target = self.catalog.specs[experiment]
        if measured is None or paper is None or target.kind.learning is None or profile not in target.spec.profiles:
            return None
        chance = target.kind.learning.chance(target.resolve(variant, profile).model_dump(mode="json"))
        return (measured - chance) / (paper[0] - chance) if paper[0] > chance else None

    def learning(self, experiment: str, variants: Iterable[str], profile: str) -> tuple[float | None, str]:
        """The claim's learning level and the variant it was read from: of the variants it reads
        that were measured and whose accuracy the paper states, the one the paper puts highest
        (else the same choice over the experiment's variants)."""
        def reference(names) -> str | None:
            known = [v for v in names if (experiment, v) in self.paper and (experiment, v, profile) in self.measured]
            return max(known, key=lambda v: self.paper[(experiment, v)][0]) if known else None

        variant = reference(variants) or reference(self.catalog.specs[experiment].spec.variants)
        if variant is None:
            return None, ""
        return self._fraction(experiment, variant, profile), variant

    def accuracy_text(self, experiment: str, variants: Iterable[str], profile: str) -> str:
        """'HAS-FL 21.7% (paper 74.5%), ...' for the variants read, where measured."""
        spec = self.catalog.specs[experiment].spec
        parts = []
        for variant in variants:
            measured = self.measured.get((experiment, variant, profile))
            if measured is None:
                continue
            paper = self.paper.get((experiment, variant))
            parts.append(f"{spec.variants[variant].label or variant} {measured:.1f}%"
                         + (f" (paper {paper[0]:g}%)" if paper else ""))
        return ", ".join(parts)

    def level(self, verdict) -> Level:
        loaded = self.catalog.claim(verdict.claim)
        claim = loaded.claim
        target = self.catalog.specs[claim.experiment]
        role = getattr(claim, "role", "paper")
        if role == "diagnostic":
            return Level("diagnostic", text="a labelled measurement, not the paper's claim")
        if role == "probe":
            return Level("diagnostic", text="the project's own test of a sentence the paper does not test itself, "
                                            "not the paper's experiment")
        if target.kind.evidence == "analytic":
            return Level("analytic", text="computed by a rule, a count or a coverage: no training")
        metric = target.kind.metrics.get(getattr(claim.observe, "metric", ""))
        if metric is not None and metric.structural:
            return Level("analytic", text="fixed by the protocol's structure or exact algebra")
        if metric is not None and not metric.learned:
            return Level("cost", text="a measured cost of a real pipeline: no learning level applies")
        variants = list(claim.observe.variants)
        fraction, variant = self.learning(claim.experiment, variants, verdict.profile)
        if fraction is None:
            measured = self.accuracy_text(claim.experiment, variants, verdict.profile)
            return Level("weak", None, "no learning level: the paper states no accuracy for these variants"
                         + (f" (measured: {measured})" if measured else ""))
        label = target.spec.variants[variant].label or variant
        level_text = f"learning level {fraction:.2f} ({label}: share of the paper's gain over chance)"
        if fraction < LEARNED:
            return Level("weak", fraction, f"{level_text}, below {LEARNED}: the models barely learn here")
        small = _effect_below_interest(self.catalog, verdict, metric)
        if small:
            return Level("weak", fraction, f"{level_text}; {small}")
        return Level("learned", fraction, level_text)


def _series_means(verdict) -> dict[str, float]:
    return {label: float(n["mean"]) for label, n in (verdict.numbers or {}).items()
            if n.get("mean") is not None and not label.startswith("spread reference: ")}


def _effect_below_interest(catalog: Catalog, verdict, metric) -> str:
    """Why the effect an inequality or ordering rests on is below its metric's smallest effect of
    interest ('' when it is not, or when no such effect is declared)."""
    if metric is None or metric.smallest_effect is None or verdict.status not in ("PASS", "FAIL"):
        return ""
    loaded = catalog.claim(verdict.claim)
    expectation = loaded.claim.expect[verdict.profile]
    spec = catalog.specs[loaded.claim.experiment].spec
    metric_name = getattr(loaded.claim.observe, "metric", "")  # a metric is given: the observation names one
    effect = expectation.effect(_series_means(verdict), lambda v: f"{spec.variants[v].label or v} ({metric_name})")
    if effect is None or effect >= metric.smallest_effect:
        return ""
    return (f"the effect it rests on ({effect:.3g}) is below the smallest of interest for this metric "
            f"({metric.smallest_effect:g} {metric.unit or 'units'})")


def level_reader(catalog: Catalog, measured: Accuracies) -> LevelReader:
    return LevelReader(catalog, measured, paper_accuracies(catalog))
