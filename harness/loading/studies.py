"""Scale studies: every point of a study's axis becomes a generated profile of its experiment.

A point's profile is the study's base profile with the study's `fixed` settings and the axis
value merged into its overrides, named after them (`standard@data.max_train_per_client=320`).
Planning, keys, the store and the executors treat it as any other profile, so a study resumes
like any sweep, and a point whose config equals that of another profile or point shares its
records (a profile's name is not part of a record's key). At every point a claim is verified
against its expectation at the base profile; the paper's own expectation gives the range a
study's figures draw (`harness.report.studies`).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from harness.errors import Problem, did_you_mean, format_field
from harness.loading.configs import deep_merge, nested, path_problem, resolved_config, sets_path
from harness.loading.yamlsource import Document
from harness.schema.spec import ExperimentSpec, Profile, Study

if TYPE_CHECKING:
    from harness.loading.loaded import LoadedClaim, LoadedSpec
    from harness.schema.claim import Claim

PAPER_PROFILE = "paper"
"""The profile whose expectation states what the paper reports: a study draws it as a band."""


@dataclass(frozen=True)
class StudyPoint:
    value: int | float
    profile: str


@dataclass(frozen=True)
class LoadedStudy:
    name: str
    experiment: str
    study: Study
    doc: Document
    points: tuple[StudyPoint, ...]
    variants: tuple[str, ...]
    """The variants the study's claims observe: the only ones that run at its points."""

    @property
    def base(self) -> str:
        return self.study.profile

    @property
    def profiles(self) -> list[str]:
        return [point.profile for point in self.points]

    def select(self, values: Iterable[Any] = ()) -> StudySelection:
        """The study at some of its points (all when none are named); ValueError names a stranger."""
        values = list(values)
        by_value = {point.value: point for point in self.points}
        unknown = [v for v in values if v not in by_value]
        if unknown:
            raise ValueError(f"study {self.name!r} has no point {unknown[0]!r} on {self.study.axis} "
                             f"(points: {', '.join(str(p.value) for p in self.points)})")
        chosen = [by_value[v] for v in values] if values else list(self.points)
        return StudySelection(self, tuple(chosen))


@dataclass(frozen=True)
class StudySelection:
    """What `fedclaims study` runs: a study's claims at some of its points."""

    study: LoadedStudy
    points: tuple[StudyPoint, ...]

    @property
    def profiles(self) -> list[str]:
        return [point.profile for point in self.points]

    @property
    def claim_ids(self) -> list[str]:
        return list(self.study.study.claims)

    def variants_for(self, loaded: LoadedClaim, profile: str) -> list[str]:
        """The variants a claim's observation reads, whatever its expectation (a claim skipped at the
        base profile still shows its trend against the paper's range)."""
        return observed_variants(loaded.claim, self.study.base)


def observed_variants(claim: Claim, base: str) -> list[str]:
    expectation = claim.expect.get(base)
    return expectation.variants_read(claim.observe) if expectation is not None else list(claim.observe.variants)


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def point_settings(study: Study, value: Any) -> dict[str, Any]:
    """The dotted settings a point applies on top of its base profile, the axis last."""
    return {**dict(sorted(study.fixed.items())), study.axis: value}


def point_profile_name(base: str, settings: dict[str, Any]) -> str:
    """`standard@data.max_train_per_client=320` (settings in the order given)."""
    return base + "@" + ",".join(f"{path}={_text(value)}" for path, value in settings.items())


def point_profile(spec: ExperimentSpec, study: Study, value: Any) -> Profile:
    base = spec.profiles[study.profile]
    return Profile(description=f"{study.title}: {study.axis} = {_text(value)} on profile {study.profile!r}",
                   seeds=list(study.seeds or base.seeds),
                   overrides=deep_merge(base.overrides, nested(point_settings(study, value))),
                   variant_overrides=base.variant_overrides)


class _StudyCheck:
    """The problems of one study, each at its line and field."""

    def __init__(self, name: str, loaded: LoadedSpec, claims: dict[str, LoadedClaim],
                 declared_claims: set[str], problems: list[Problem]):
        self.name, self.loaded, self.claims, self.declared_claims = name, loaded, claims, declared_claims
        self.study = loaded.spec.studies[name]
        self.problems = problems
        self.found: list[Problem] = []

    def report(self, sub: tuple, message: str) -> None:
        problem = self.loaded.doc.problem(("studies", self.name, *sub), message)
        if problem not in self.found:
            self.found.append(problem)
            self.problems.append(problem)

    def run(self) -> list[str]:
        """Check everything; return the variants its claims observe."""
        spec, study = self.loaded.spec, self.study
        model = self.loaded.kind.config_model
        if study.profile not in spec.profiles:
            self.report(("profile",), f"unknown profile {study.profile!r} of experiment {spec.experiment!r}"
                                      f"{did_you_mean(study.profile, spec.profiles)}")
            return []
        problem = path_problem(model, study.axis)
        if problem:
            self.report(("axis",), problem)
        for path in study.fixed:
            problem = path_problem(model, path) or (
                "the axis cannot also be fixed" if path == study.axis else None)
            if problem:
                self.report(("fixed", path), problem)
        variants = self._claims()
        if self.found:
            return variants
        self._variants_keep_the_axis(variants)
        for index, value in enumerate(study.points):
            self._point(index, value, variants)
        return variants

    def _claims(self) -> list[str]:
        variants: list[str] = []
        experiment = self.loaded.spec.experiment
        for index, claim_id in enumerate(self.study.claims):
            where = ("claims", index)
            if claim_id in self.study.claims[:index]:
                self.report(where, f"claim {claim_id!r} is listed twice")
                continue
            loaded = self.claims.get(claim_id)
            if loaded is None:
                if claim_id in self.declared_claims:
                    self.report(where, f"claim {claim_id!r} has errors of its own (see its claim file)")
                else:
                    ours = [c for c, other in self.claims.items() if other.claim.experiment == experiment]
                    self.report(where, f"unknown claim {claim_id!r}{did_you_mean(claim_id, ours)}")
                continue
            if loaded.claim.experiment != experiment:
                self.report(where, f"claim {claim_id!r} measures experiment {loaded.claim.experiment!r}, "
                                   f"not {experiment!r}")
                continue
            if self.study.profile not in loaded.claim.expect:
                self.report(where, f"claim {claim_id!r} states no expectation at profile {self.study.profile!r}, "
                                   "which the study's points verify it against")
                continue
            variants += [v for v in observed_variants(loaded.claim, self.study.profile) if v not in variants]
        return variants

    def _variants_keep_the_axis(self, variants: list[str]) -> None:
        """A variant that sets a varied path itself would run the same config at every point."""
        spec = self.loaded.spec
        overrides = spec.profiles[self.study.profile].variant_overrides
        for path in [self.study.axis, *self.study.fixed]:
            for variant in variants:
                if sets_path(spec.variants[variant].config, path) or sets_path(overrides.get(variant, {}), path):
                    sub = ("axis",) if path == self.study.axis else ("fixed", path)
                    self.report(sub, f"variant {variant!r} sets {path} itself, so the study's value would not "
                                     "reach its runs")

    def _point(self, index: int, value: Any, variants: list[str]) -> None:
        spec, study = self.loaded.spec, self.study
        name = point_profile_name(study.profile, point_settings(study, value))
        profile = point_profile(spec, study, value)
        with_point = spec.model_copy(update={"profiles": {**spec.profiles, name: profile}})
        for variant in variants:
            try:
                self.loaded.kind.config_model.model_validate(resolved_config(with_point, variant, name))
            except ValidationError as error:
                for item in error.errors():
                    loc = ".".join(str(part) for part in item["loc"])
                    if loc in study.fixed:
                        self.report(("fixed", loc), f"{item['msg']} (variant {variant!r})")
                    else:
                        self.report(("points", index), f"{study.axis} = {_text(value)} does not make a valid config: "
                                                       f"{format_field(item['loc'])}: {item['msg']} "
                                                       f"(variant {variant!r})")


def load_studies(specs: dict[str, LoadedSpec], claims: list[LoadedClaim], declared_claims: set[str],
                 problems: list[Problem]) -> dict[str, LoadedStudy]:
    """Check every study; give each valid one's points to its experiment as profiles, and its
    claims their base expectation at those profiles."""
    by_id = {loaded.id: loaded for loaded in claims}
    studies: dict[str, LoadedStudy] = {}
    for loaded in specs.values():
        for name, study in loaded.spec.studies.items():
            if name in studies:
                other = studies[name].doc.file
                problems.append(loaded.doc.problem(("studies", name),
                                                   f"duplicate study name {name!r} (also in {other})"))
                continue
            check = _StudyCheck(name, loaded, by_id, declared_claims, problems)
            variants = check.run()
            if check.found:
                continue
            points = tuple(StudyPoint(value, point_profile_name(study.profile, point_settings(study, value)))
                           for value in study.points)
            studies[name] = LoadedStudy(name, loaded.spec.experiment, study, loaded.doc, points, tuple(variants))
    for loaded_study in studies.values():
        _attach(loaded_study, specs[loaded_study.experiment], by_id)
    return studies


def _attach(study: LoadedStudy, loaded: LoadedSpec, claims: dict[str, LoadedClaim]) -> None:
    spec = loaded.spec
    generated = {point.profile: point_profile(spec, study.study, point.value) for point in study.points}
    loaded.spec = spec.model_copy(update={"profiles": {**spec.profiles, **generated}})
    for claim_id in study.study.claims:
        claim = claims[claim_id]
        base = claim.claim.expect[study.base]
        claim.claim = claim.claim.model_copy(update={"expect": {**claim.claim.expect,
                                                                **{name: base for name in generated}}})


def generated_profiles(studies: Iterable[LoadedStudy]) -> set[str]:
    return {point.profile for study in studies for point in study.points}
