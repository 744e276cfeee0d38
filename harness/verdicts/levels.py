"""How much a verdict could see: how far its models learned against the paper's, and whether the
effect it rests on is of a size that matters.

**Learning level.** A variant's level at a profile is (measured − chance) / (paper − chance): the share of the
paper's gain over chance its runs reached there. `paper` is the accuracy the paper prints for that variant's
own setting where its spec gives one (`paper:` on the variant), else the experiment's reference's (`reference:`
the paper's main method of that experiment, its accuracy and where the paper states it). Chance is the best
constant predictor's accuracy on the run's test set (its most frequent label), which each record carries
(`Learning.majority`); where it differs between the seeds' test sets (a split drawn per seed, as
Shakespeare's), the level is the mean of the seeds' own levels, each against its own chance; where the records
are not here (a profile re-verified from archived observations), a uniform guess stands in and the level says
so. An accuracy-dependent verdict reads the lowest level of the variants its claim's observation reads (its
`of:`), and its text names the variant that set it and the figure it was read against: a claim is no better
evidenced than its least-learned variant. A variant whose own paper figure is not above chance (a collapse the
paper reports) gives no level and is skipped, said so; a variant the verdict reads that was not measured at
the profile leaves the verdict without a level. Each experiment's profile line quotes its reference's level.

**Groups.** Every verdict falls in one:

- `learned`: an empirical claim tested where every variant it reads reached at least `LEARNED` (half) of
  the paper's gain over chance, on an effect no smaller than its metric's smallest effect of interest;
- `weak`: an empirical claim tested where a variant it reads barely learns (level below `LEARNED`), or whose
  ordering rests on less than the smallest effect of interest: a PASS there is weak evidence and a
  FAIL cannot count as a non-reproduction by itself;
- `unleveled`: an accuracy-dependent claim whose level could not be read (a variant it reads has no paper
  figure and the spec no reference, or was not measured at the profile, or every variant it reads is a
  collapse the paper reports): neither learned nor weak;
- `independent`: an empirical quantity that does not depend on how well the models learn (a
  coverage, the widths a policy allocated, an upload's size): no learning level applies;
- `cost`: an empirical measurement of a real pipeline's cost (a time, an energy), where no
  learning level applies;
- `analytic`: analytic and structural checks (a kind that trains nothing, or a metric fixed by
  the protocol's structure or exact algebra);
- `implementation`: checks that the implementation follows the paper (role `implementation`): their
  outcome is fixed by the code path, so they can fail only by a changed implementation;
- `diagnostic`: labelled measurements that are not the paper's claims (roles `diagnostic` and `probe`).
- `repeat`: a claim that repeats another's observation and test (`repeats:`): no independent evidence, so
  counted once, under the claim it repeats.

Whose a FAIL is (the paper's, its setting's, the implementation's, the scale's, or unexplained) is derived
from the levels of all the claim's verdicts, the scale studies and the conformance fixtures by
`harness.verdicts.attribution`, once every verdict's level is read.
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

from harness.kinds.base import ExperimentKind
from harness.kinds.evaluations import MissingValue
from harness.loading.catalog import Catalog, LoadedSpec

LEARNED = 0.5
"""The learning level (share of the paper's gain over chance) from which the models count as learning."""
GROUPS = ("learned", "weak", "unleveled", "independent", "cost", "analytic", "implementation", "diagnostic",
          "repeat")


@dataclass(frozen=True)
class Measured:
    """A variant's mean accuracy (%) over a profile's seeds and chance on its test sets (None: not recorded)."""

    accuracy: float
    chance: float | None = None
    best: float | None = None
    """The mean over seeds of each run's best evaluation, where the kind declares one (`Learning.best`)."""
    seeds: tuple[tuple[float, float], ...] = ()
    """Each seed's (accuracy, chance) where chance differs between the seeds' test sets (Shakespeare's test
    split is drawn per seed): the level is then the mean of the seeds' own levels; () where it is one figure."""


Accuracies = Mapping[tuple[str, str, str], Measured]
"""(experiment, variant, profile) -> what was measured."""


@dataclass(frozen=True)
class VariantLevel:
    """One variant's learning level at a profile, as a verdict reading it sees it (REPORT.json carries each, so a
    reader can recompute the verdict's lowest)."""

    variant: str
    label: str
    paper: float
    """The paper's accuracy (%) it is read against: the variant's own (`own`) or the experiment's reference's."""
    source: str
    own: bool
    accuracy: float | None = None
    """Its mean accuracy (%) over the profile's seeds; None: not measured at the profile."""
    chance: float | None = None
    """Mean chance (%) over its seeds' test sets (a uniform guess where the records are not here)."""
    seeds: tuple[tuple[float, float], ...] = ()
    """Each seed's (accuracy, chance) where chance differs between the seeds' test sets (`Measured.seeds`)."""
    fraction: float | None = None
    """Its level; None where it was not measured or the paper's figure is not above chance."""
    text: str = ""
    """How it was read, or why it gives no level."""

    @property
    def collapse(self) -> bool:
        """Whether the paper's own figure for it is not above chance, so it gives no level."""
        return self.accuracy is not None and self.fraction is None


@dataclass(frozen=True)
class Level:
    """The group a verdict counts in and why."""

    group: str
    fraction: float | None = None
    """The learning level (None where it does not apply or could not be read)."""
    text: str = ""
    attribution: str = ""
    """For a FAIL: whose it is and why, as `harness.verdicts.attribution` derives it; '' for any other verdict."""
    whose: str = ""
    """For a FAIL: the derived whose alone (one of `harness.verdicts.attribution.WHOSE`, or its UNEXPLAINED)."""
    contradicted: str = ""
    """For a FAIL: the claim's own `whose` where the rule contradicts it, and why."""
    variants: tuple[VariantLevel, ...] = ()
    """Each variant the verdict reads, with its level, accuracy, chance and paper figure (its lowest level is
    `fraction`); () where no learning level applies."""

    def to_dict(self) -> dict:
        return asdict(self)


def accuracies_from_records(catalog: Catalog, requests, records: Mapping[str, dict | None]) -> dict:
    """Mean accuracy, chance and best evaluation per (experiment, variant, profile) over the stored records of
    the requests."""
    found: dict[tuple[str, str, str], list[tuple[float, float | None, float | None]]] = {}
    for request in requests:
        record = records.get(request.key)
        loaded = catalog.specs.get(request.experiment)
        if record is None or record.get("status") != "ok" or loaded is None or loaded.kind.learning is None:
            continue
        learning = loaded.kind.learning
        try:
            value = _metric(loaded, learning.metric, record)
            best = None if learning.best is None else _metric(loaded, learning.best, record)
        except MissingValue:
            continue  # the claims reading the record are ERROR, naming it; it measures no level
        if value == value:  # not NaN
            chance = record["result"].get(learning.majority)
            found.setdefault((request.experiment, request.variant, request.profile), []).append(
                (float(value), None if chance is None else float(chance), best if best == best else None))
    return {key: _mean(values) for key, values in found.items()}


def _metric(loaded: LoadedSpec, name: str, record: dict) -> float:
    metric = loaded.kind.metrics[name]
    return float(metric.compute(record["result"], metric.args()))


def variant_accuracies(catalog: Catalog, lookup, profiles) -> dict:
    """Each experiment's reference and every variant its accuracy-dependent claims read, measured at the profiles,
    read through the verifier's look-up ((experiment, variant, seed, profile) -> (key, record)): a run whose key
    another experiment's identical run shares is found under its own name."""
    found: dict = {}
    for name, loaded in catalog.specs.items():
        for profile in (p for p in profiles if p in loaded.spec.profiles):
            found.update(accuracies_at_seeds(catalog, lookup, name, leveled_variants(catalog, name), profile,
                                             loaded.spec.profiles[profile].seeds))
    return found


def accuracies_at_seeds(catalog: Catalog, lookup, experiment: str, variants: list[str], profile: str,
                        seeds: list[int]) -> dict:
    """`accuracies_from_records` of the variants' runs at the given seeds of one experiment and profile, read
    through the verifier's look-up (a confirmatory test's level reads its own seeds, not the profile's)."""
    runs, records = [], {}
    for variant in variants:
        for seed in seeds:
            key, record = lookup(experiment, variant, seed, profile)
            runs.append(_Run(key, experiment, variant, profile))
            records[key] = record
    return accuracies_from_records(catalog, runs, records)


def leveled_variants(catalog: Catalog, experiment: str) -> list[str]:
    """The experiment's reference and the variants its accuracy-dependent claims read: those a level reads."""
    target = catalog.specs[experiment]
    if target.kind.learning is None:
        return []
    reference = [target.spec.reference.variant] if target.spec.reference is not None else []
    read = [v for loaded in catalog.claims if loaded.claim.experiment == experiment
            and _level_without_learning(loaded.claim, target.kind) is None for v in loaded.claim.observe.variants]
    return list(dict.fromkeys([*reference, *read]))


@dataclass(frozen=True)
class _Run:
    key: str
    experiment: str
    variant: str
    profile: str


def _mean(values: list[tuple[float, float | None, float | None]]) -> Measured:
    bests = [b for _, _, b in values]
    best = None if any(b is None for b in bests) else statistics.fmean(b for b in bests if b is not None)
    known = [(a, c) for a, c, _ in values if c is not None]
    if len(known) < len(values):
        return Measured(statistics.fmean(a for a, _, _ in values), best=best)
    differs = len({c for _, c in known}) > 1
    return Measured(statistics.fmean(a for a, _ in known), statistics.fmean(c for _, c in known), best,
                    tuple(known) if differs else ())


def accuracies_from_verdicts(catalog: Catalog, verdicts) -> dict:
    """Mean accuracy per (experiment, variant, profile) from the series the verdicts observed (for
    profiles re-verified from archived observations, whose records, and so chance, are elsewhere)."""
    found: dict[tuple[str, str, str], Measured] = {}
    for verdict in verdicts:
        target = catalog.specs[verdict.experiment]
        learning = target.kind.learning
        if learning is None:
            continue
        labels = {f"{v.label or name} ({learning.metric})": name for name, v in target.spec.variants.items()}
        for label, numbers in (verdict.numbers or {}).items():
            variant = labels.get(label)
            if variant is not None and numbers.get("quantity") == learning.metric and numbers.get("mean") is not None:
                found.setdefault((verdict.experiment, variant, verdict.profile), Measured(float(numbers["mean"])))
    return found


@dataclass
class LevelReader:
    """Reads each verdict's group from the accuracies measured and the paper figures the specs declare."""

    catalog: Catalog
    measured: Accuracies

    def learning(self, experiment: str, profile: str) -> tuple[float | None, str]:
        """The experiment's reference's learning level at the profile and how it was read (or why it could not
        be): what its profile line quotes."""
        target = self.catalog.specs[experiment]
        reference = target.spec.reference
        if reference is None or target.kind.learning is None:
            return None, "no learning level: the spec declares no reference accuracy"
        read = self.variant_level(experiment, reference.variant, profile)
        if read.fraction is None:
            return None, f"no learning level: {read.text}"
        return read.fraction, f"learning level {read.fraction:.2f}: {read.text}"

    def variant_level(self, experiment: str, variant: str, profile: str) -> VariantLevel:
        """The variant's level at the profile against its own paper figure, else the experiment's reference's
        (the spec declares one of the two and its kind measures accuracy: `paper_figure`)."""
        target = self.catalog.specs[experiment]
        label = target.spec.variants[variant].label or variant
        paper, source, own = paper_figure(target, variant)
        reference = target.spec.reference
        against = ("its own paper figure" if own else "its figure as the experiment's reference"
                   if reference is not None and reference.variant == variant else "the experiment's reference figure")
        measured = self.measured.get((experiment, variant, profile))
        if measured is None:
            return VariantLevel(variant, label, paper, source, own,
                                text=f"{label}, which it reads, was not measured at this profile")
        learning = target.kind.learning
        assert learning is not None  # paper_figure found a figure: the kind measures accuracy
        chance, chance_text = measured.chance, f"chance: its most frequent test label, {measured.chance or 0:.3g}%"
        if chance is None:
            chance = learning.chance(target.resolve(variant, profile).model_dump(mode="json"))
            chance_text = f"chance: a uniform guess (records not here), {chance:.3g}%"
        per_seed = measured.seeds or ((measured.accuracy, chance),)
        if paper <= max(c for _, c in per_seed):
            return VariantLevel(variant, label, paper, source, own, measured.accuracy, chance, measured.seeds, text=(
                f"{label} skipped: the paper's {paper:g}% ({against}, {source}) is not above chance "
                f"({chance:.3g}%), a collapse the paper reports"))
        fraction = statistics.fmean((a - c) / (paper - c) for a, c in per_seed)
        if measured.seeds:
            low, high = min(c for _, c in per_seed), max(c for _, c in per_seed)
            chance_text = (f"chance: each seed's most frequent test label, {low:.3g}–{high:.3g}% (its test split "
                           "is drawn per seed), so the mean of the seeds' own levels")
        best = "" if measured.best is None else f" (its best evaluation {measured.best:.1f}%)"
        return VariantLevel(variant, label, paper, source, own, measured.accuracy, chance, measured.seeds, fraction, (
            f"{label} {measured.accuracy:.1f}%{best} against the paper's {paper:g}% ({against}, {source}; "
            f"{chance_text})"))

    def claim_learning(self, experiment: str, variants: list[str], profile: str
                       ) -> tuple[float | None, str, tuple[VariantLevel, ...]]:
        """The lowest level of the variants a verdict reads, its text, and every variant's level."""
        target = self.catalog.specs[experiment]
        if target.kind.learning is None:
            return None, "no learning level: the spec's kind measures no accuracy", ()
        unfigured = [target.spec.variants[v].label or v for v in variants if paper_figure(target, v)[1] == ""]
        if unfigured:
            return None, (f"no learning level: the spec declares no reference accuracy, nor a paper figure of "
                          f"{', '.join(unfigured)}"), ()
        read = tuple(self.variant_level(experiment, v, profile) for v in variants)
        unmeasured = [r for r in read if r.accuracy is None]
        if unmeasured:
            return None, f"no learning level: {'; '.join(r.text for r in unmeasured)}", read
        skipped = "".join(f"; {r.text}" for r in read if r.collapse)
        leveled = [(r.fraction, r.text) for r in read if r.fraction is not None]
        if not leveled:
            return None, f"no learning level: {'; '.join(r.text for r in read)}", read
        fraction, text = min(leveled)
        which = f" (the lowest of the {len(leveled)} variants it reads)" if len(leveled) > 1 else ""
        return fraction, f"learning level {fraction:.2f}{which}: {text}{skipped}", read

    def level(self, verdict) -> Level:
        """The verdict's group and level (whose a FAIL is comes later, from every verdict's level:
        `harness.verdicts.attribution`); a claim that repeats another's test keeps its level, in group `repeat`."""
        read = self._read(verdict)
        repeats = self.catalog.claim(verdict.claim).claim.repeats
        if repeats is None:
            return read
        return replace(read, group="repeat", text=f"repeats the observation and test of {repeats}: no independent "
                                                  f"evidence, so counted once, under it ({read.text})")

    def _read(self, verdict) -> Level:
        claim = self.catalog.claim(verdict.claim).claim
        target = self.catalog.specs[claim.experiment]
        fixed = _level_without_learning(claim, target.kind)
        if fixed is not None:
            return fixed
        metric = target.kind.metrics.get(getattr(claim.observe, "metric", ""))
        fraction, text, read = self.claim_learning(claim.experiment, claim.observe.variants, verdict.profile)
        if fraction is None:
            return Level("unleveled", None, text, variants=read)
        if fraction < LEARNED:
            return Level("weak", fraction, f"{text}; below {LEARNED}: the models barely learn here", variants=read)
        small = _effect_below_interest(self.catalog, verdict, metric)
        if small:
            return Level("weak", fraction, f"{text}; {small}", variants=read)
        return Level("learned", fraction, text, variants=read)


def paper_figure(target: LoadedSpec, variant: str) -> tuple[float, str, bool]:
    """The paper's accuracy a variant's level is read against, where the paper states it, and whether it is the
    variant's own: its `paper:` figure, else the experiment's reference's; (0, '', False) where there is neither."""
    own = target.spec.variants[variant].paper
    if own is not None:
        return own.accuracy, own.source, True
    reference = target.spec.reference
    return (0.0, "", False) if reference is None else (reference.accuracy, reference.source, False)


def _level_without_learning(claim, kind: ExperimentKind) -> Level | None:
    """The group of a claim whose verdicts read no learning level (by its role, its kind's evidence or its
    metric); None for an accuracy-dependent claim, which reads the lowest level of its variants."""
    role = getattr(claim, "role", "paper")
    if role == "diagnostic":
        return Level("diagnostic", text="a labelled measurement, not the paper's claim")
    if role == "implementation":
        return Level("implementation", text="an implementation check: fixed by the code path (no training or "
                                            "data decides it), so never counted as a reproduction")
    if role == "probe":
        return Level("diagnostic", text="the project's own test of a sentence the paper does not test itself, "
                                        "not the paper's experiment")
    if kind.evidence == "analytic":
        return Level("analytic", text="computed by a rule, a count or a coverage: no training")
    metric = kind.metrics.get(getattr(claim.observe, "metric", ""))
    if metric is not None and metric.structural:
        return Level("analytic", text="fixed by the protocol's structure or exact algebra")
    if metric is not None and not metric.learned:
        return Level("cost", text="a measured cost of a real pipeline: no learning level applies")
    if metric is not None and metric.independent:
        return Level("independent", text="does not depend on how well the models learn: no learning level applies")
    return None


def without_reference(catalog: Catalog) -> list[tuple[LoadedSpec, list[str]]]:
    """Each spec with claims that would read a learning level but that have none to read (a kind that declares
    no `learning`, or a variant they read with no paper figure of its own while the spec declares no
    `reference:`), with those claims' ids: their verdicts are `unleveled`, neither learned nor weak evidence."""
    found = []
    for target in catalog.specs.values():
        claims = [loaded.id for loaded in catalog.claims if loaded.claim.experiment == target.spec.experiment
                  and _level_without_learning(loaded.claim, target.kind) is None
                  and (target.kind.learning is None
                       or any(paper_figure(target, v)[1] == "" for v in loaded.claim.observe.variants))]
        if claims:
            found.append((target, claims))
    return found


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
    return LevelReader(catalog, measured)
