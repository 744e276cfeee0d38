"""What a claim must hold beyond its schema: an experiment, variants, metrics and quantities that exist, an
expectation that fits its observation and can fail, a family of one relation."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from harness.errors import Problem, did_you_mean
from harness.kinds.base import ExperimentKind
from harness.loading.validation_errors import argument_problems
from harness.loading.yamlsource import Document
from harness.schema.claim import ClaimFile
from harness.schema.observations import OBSERVATION_KEYS
from harness.schema.observations.base import Shape

if TYPE_CHECKING:
    from harness.loading.loaded import LoadedClaim, LoadedSpec


def check_families(doc: Document, claim_file: ClaimFile, problems: list[Problem]) -> None:
    """A family is tested together (Holm across it): it names at least two claims of its file."""
    members: dict[str, list[int]] = {}
    for index, claim in enumerate(claim_file.claims):
        if claim.family:
            members.setdefault(claim.family, []).append(index)
    for family, indices in members.items():
        if len(indices) == 1:
            problems.append(doc.problem(("claims", indices[0], "family"),
                                        f"family {family!r} has one claim: a family names at least two claims "
                                        "of its file tested together"))


def check_repeats(doc: Document, claim_file: ClaimFile, problems: list[Problem]) -> None:
    """A claim that `repeats` another names a claim of its file, not itself nor one that repeats a third, with
    the same experiment, metric, arguments and variants: the same observation, so no independent evidence."""
    for where, claim, repeated in _links(doc, claim_file, "repeats", problems):
        if repeated.repeats is not None:
            problems.append(doc.problem(where, f"repeats {claim.repeats!r}, which itself repeats "
                                               f"{repeated.repeats!r}: name the claim first made"))
        elif _observed(claim) != _observed(repeated):
            problems.append(doc.problem(where, f"repeats {claim.repeats!r}, whose observation differs "
                                               f"({_observed(repeated)} against {_observed(claim)}): a claim repeats "
                                               "another only where both read the same metric of the same variants"))


def check_as_run(doc: Document, claim_file: ClaimFile, problems: list[Problem]) -> None:
    """A claim `as_run_of` another names a claim of its file, not itself nor one that is itself a claim run as
    the authors' code ran it, of the same experiment (the relation the two state is checked where the rule reads
    it: `harness.report.attributions.as_run_links`)."""
    for where, claim, stated in _links(doc, claim_file, "as_run_of", problems):
        if stated.as_run_of is not None:
            problems.append(doc.problem(where, f"as_run_of {claim.as_run_of!r}, which is itself run as the authors' "
                                               f"code ran {stated.as_run_of!r}: name the claim as the paper states it"))
        elif stated.experiment != claim.experiment:
            problems.append(doc.problem(where, f"as_run_of {claim.as_run_of!r}, of experiment {stated.experiment!r}: "
                                               f"a claim's setting as run is another variant of its own experiment "
                                               f"({claim.experiment!r})"))


def _links(doc: Document, claim_file: ClaimFile, field: str, problems: list[Problem]):
    """(where, claim, named) for each claim of the file whose `field` names another claim of it; one that names no
    other claim of the file (itself, or an unknown id) is a problem, with the closest id."""
    by_id = {claim.id: claim for claim in claim_file.claims}
    for index, claim in enumerate(claim_file.claims):
        target = getattr(claim, field)
        if target is None:
            continue
        where = ("claims", index, field)
        named = by_id.get(target)
        if named is None or named is claim:
            problems.append(doc.problem(where, f"{field} {target!r}: no other claim of this file has that "
                                               f"id{did_you_mean(target, by_id)}"))
        else:
            yield where, claim, named


def _observed(claim) -> tuple:
    observe = claim.observe
    return (claim.experiment, getattr(observe, "metric", None), sorted(getattr(observe, "args", {}).items()),
            sorted(observe.variants))


def check_claim(loaded: LoadedClaim, specs: dict[str, LoadedSpec], spec_ids: set[str],
                 problems: list[Problem]) -> bool:
    claim, doc, path = loaded.claim, loaded.doc, loaded.path
    before = len(problems)

    def report(sub: tuple, message: str) -> None:
        problems.append(doc.problem((*path, *sub), message))

    target = specs.get(claim.experiment)
    if target is None:
        report(("experiment",), f"unknown experiment {claim.experiment!r}{did_you_mean(claim.experiment, spec_ids)}")
        return False
    spec, kind = target.spec, target.kind
    if spec.paper != loaded.paper:
        report(("experiment",),
               f"experiment {claim.experiment!r} belongs to paper {spec.paper!r}, not {loaded.paper!r}")
    obs: Any = claim.observe  # its fields are those of its shape (obs.shape)
    variants_field = "of"
    for j, variant in enumerate(obs.variants):
        if variant not in spec.variants:
            sub = ("observe", variants_field) if isinstance(obs.of, str) else ("observe", variants_field, j)
            report(sub, f"unknown variant {variant!r} of experiment {spec.experiment!r}"
                        f"{did_you_mean(variant, spec.variants)}")
    if obs.shape is Shape.CORRELATION:
        names = [*obs.correlation, *([obs.given] if obs.given else [])]
        for j, name in enumerate(names):
            if name not in kind.client_quantities:
                sub = ("observe", "correlation", j) if j < 2 else ("observe", "given")
                report(sub, f"unknown per-client quantity {name!r} for kind {kind.name!r}"
                            f"{did_you_mean(name, kind.client_quantities)}")
    else:
        metric_key = next(k for k in OBSERVATION_KEYS if k in type(obs).model_fields)
        metric = kind.metrics.get(obs.metric)
        if metric is None:
            report(("observe", metric_key), f"unknown metric {obs.metric!r} for kind {kind.name!r}"
                                            f"{did_you_mean(obs.metric, kind.metrics)}")
        else:
            problems.extend(argument_problems(metric.args, obs.args, doc, (*path, "observe", "args")))
    if claim.role == "implementation" and not _fixed_by_the_code_path(kind, obs):
        report(("role",), "an implementation check observes what the code path fixes (a kind that trains "
                          "nothing, or a structural metric or one that does not depend on learning); "
                          f"{getattr(obs, 'metric', 'a correlation')!r} of kind {kind.name!r} depends on how the "
                          "models learn")
    for profile, expectation in claim.expect.items():
        sub = ("expect", profile)
        if profile not in spec.profiles:
            report(sub, f"unknown profile {profile!r} of experiment {spec.experiment!r}"
                        f"{did_you_mean(profile, spec.profiles)}")
        for message in expectation.fit_problems(obs, spec.variants):
            report(sub, message)
        if profile in spec.profiles:
            for problem in (_exact_equality_of_a_varying_mean(target, obs, expectation, profile),
                            _spread_fixed_by_config(target, obs, expectation, profile)):
                if problem:
                    report(sub, problem)
    return len(problems) == before


def _fixed_by_the_code_path(kind: ExperimentKind, obs) -> bool:
    if kind.evidence == "analytic":
        return True
    metric = kind.metrics.get(getattr(obs, "metric", ""))
    return metric is not None and (metric.structural or metric.independent)


def _spread_fixed_by_config(target: LoadedSpec, obs, expectation, profile: str) -> str | None:
    """A spread observation of a metric the kind declares deterministic at `profile` for some variant."""
    if obs.shape is not Shape.SPREAD or expectation.skips:
        return None
    metric, configs = _metric_configs(target, obs, profile)
    fixed = [variant for variant, config in configs.items() if metric is not None and metric.is_deterministic(config)]
    if not fixed:
        return None
    return (f"the spread of '{obs.metric}' over seeds is a ratio of standard deviations, but the metric "
            f"is fixed by the config of {', '.join(repr(v) for v in fixed)} at this profile (declared "
            "deterministic): its standard deviation is 0 and the ratio 0/0 or infinite on every run")


def _exact_equality_of_a_varying_mean(target: LoadedSpec, obs, expectation, profile: str) -> str | None:
    """An `equals` without a tolerance on a mean that varies with the seed."""
    if not (expectation.exact_equality_of_the_mean
            and obs.shape in (Shape.VALUES, Shape.PAIRED) and not obs.ranked):
        return None
    metric, configs = _metric_configs(target, obs, profile)
    if metric is None or all(metric.is_deterministic(config) for config in configs.values()):
        return None
    return (f"equals {expectation.equals} without a tolerance, tested on the mean of '{obs.metric}', "
            "which varies with the seed: a t-interval is never a single point, so it can never PASS "
            "(state a tolerance, or read each seed with `of: every_seed`)")


def _metric_configs(target: LoadedSpec, obs, profile: str) -> tuple[Any, dict[str, dict]]:
    """The observation's metric and each of its variants' resolved config ((None, {}) where either is invalid)."""
    metric = target.kind.metrics.get(obs.metric)
    try:
        configs = {variant: target.resolve(variant, profile).model_dump(mode="json") for variant in obs.variants}
    except (KeyError, ValidationError, ValueError):
        return None, {}
    return metric, configs
