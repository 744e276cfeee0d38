"""Load and validate every claim and spec file, and check their cross-references.

All problems of all files are collected and raised together as one SpecError;
each names its file, line and field and, for a misspelling, the closest valid name.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from pydantic import ValidationError

from harness.errors import Problem, SpecError, closest, did_you_mean
from harness.extensions import ExtensionPoint, UnknownExtension
from harness.kinds import kind as experiment_kind
from harness.loading.claim_checks import check_as_run, check_claim, check_families, check_repeats
from harness.loading.configs import deep_merge, settings_at  # noqa: F401 (deep_merge: part of this module's API)
from harness.loading.loaded import LoadedClaim, LoadedSpec
from harness.loading.patterns import claim_matcher
from harness.loading.spec_checks import check_spec
from harness.loading.studies import PAPER_PROFILE, LoadedStudy, generated_profiles, load_studies
from harness.loading.validation_errors import problems_from
from harness.loading.yamlsource import Document, load_document
from harness.schema.claim import ClaimFile
from harness.schema.spec import ExperimentSpec


@dataclass
class Catalog:
    specs: dict[str, LoadedSpec] = field(default_factory=dict)
    claims: list[LoadedClaim] = field(default_factory=list)
    papers: dict[str, ClaimFile] = field(default_factory=dict)
    studies: dict[str, LoadedStudy] = field(default_factory=dict)

    def claim(self, claim_id: str) -> LoadedClaim:
        for loaded in self.claims:
            if loaded.id == claim_id:
                return loaded
        raise KeyError(claim_id)

    def evidence(self, claim_id: str) -> str:
        """'empirical' or 'analytic': the evidence of the kind of experiment the claim reads."""
        return self.specs[self.claim(claim_id).claim.experiment].kind.evidence

    def study(self, name: str) -> LoadedStudy:
        if name not in self.studies:
            raise ValueError(f"unknown study {name!r}{did_you_mean(name, self.studies)}")
        return self.studies[name]

    def select(self, papers: Iterable[str] = (), pattern: str | None = None) -> list[LoadedClaim]:
        """Claims of the given papers (all if none) whose id matches a glob or regex pattern.

        A paper that does not exist, or a pattern that matches no claim of them, is a ValueError
        with the nearest valid name: a typo must not verify nothing and succeed."""
        papers = set(papers)
        for paper in sorted(papers - set(self.papers)):
            raise ValueError(f"unknown paper {paper!r} (--paper){did_you_mean(paper, self.papers)}")
        of_papers = [c for c in self.claims if not papers or c.paper in papers]
        if not pattern:
            return of_papers
        matches = claim_matcher(pattern)
        chosen = [c for c in of_papers if matches(c.id)]
        if not chosen:
            among = f" of paper {', '.join(sorted(papers))}" if papers else ""
            raise ValueError(f"no claim{among} matches --claim {pattern!r}"
                             + _nearest_pattern(pattern, [c.id for c in of_papers]))
        return chosen

    def profiles(self) -> list[str]:
        """Every profile some spec defines, the points of scale studies included (spec order)."""
        return list(dict.fromkeys(p for spec in self.specs.values() for p in spec.spec.profiles))

    def by_scale(self, profiles: Iterable[str]) -> list[str]:
        """``profiles`` from the smallest scale to the largest: in the order the specs declare them
        (smoke, standard, learning, then each study's points along its axis), the paper's own
        profile last whatever its place in a spec (specs declare it first, as the base)."""
        order = [p for p in self.profiles() if p != PAPER_PROFILE] + [PAPER_PROFILE]
        rank = {profile: i for i, profile in enumerate(order)}
        return sorted(profiles, key=lambda profile: rank.get(profile, len(rank)))

    def check_profiles(self, profiles: Iterable[str]) -> None:
        """A ValueError naming the nearest profile for a name no spec defines."""
        known = self.profiles()
        for profile in profiles:
            if profile not in known:
                points = generated_profiles(self.studies.values())
                shown = [p for p in known if p not in points]
                raise ValueError(f"unknown profile {profile!r} (--profile){did_you_mean(profile, shown)}")


def _nearest_pattern(pattern: str, ids: list[str]) -> str:
    """'; did you mean ...?' with the claim id, or the dotted prefix of one, nearest the pattern's literal part."""
    literal = re.sub(r"[*?^$()|+\\\[\]{}]", "", pattern).rstrip(".")
    prefixes = {".".join(i.split(".")[:n]) for i in ids for n in range(1, i.count(".") + 2)}
    match = closest(literal, prefixes)
    if match is None:
        return "; `fedclaims design` lists the claim ids"
    return f"; did you mean {match + '.*' if match not in ids else match!r}?"


# --- pydantic errors -> problems ------------------------------------------------


def _relative(path: Path, root: Path | None) -> Path:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve())
        except ValueError:
            pass
    return path


def _load_docs(directories: Path | list[Path], root: Path | None, problems: list[Problem]) -> list[Document]:
    """The documents of each folder once: a folder reached twice (by the project's path and by an installed
    package's entry point, or through a link) is the same folder, known by its resolved path."""
    docs = []
    seen: set[Path] = set()
    for directory in directories if isinstance(directories, list) else [directories]:
        if directory.resolve() in seen:
            continue
        seen.add(directory.resolve())
        docs += _load_folder(directory, root, problems)
    return docs


def _load_folder(directory: Path, root: Path | None, problems: list[Problem]) -> list[Document]:
    if not directory.is_dir():
        problems.append(Problem(directory, None, "<directory>", "directory does not exist"))
        return []
    docs = []
    for file in sorted(directory.glob("*.yaml")):
        try:
            docs.append(load_document(file, _relative(file, root)))
        except SpecError as error:
            problems.extend(error.problems)
    return docs


def load_specs(specs_dir: Path | list[Path], root: Path | None, problems: list[Problem]) -> dict[str, LoadedSpec]:
    specs: dict[str, LoadedSpec] = {}
    for doc in _load_docs(specs_dir, root, problems):
        if not isinstance(doc.data, dict):
            problems.append(doc.problem((), "a spec file must be a mapping"))
            continue
        try:
            spec = ExperimentSpec.model_validate(doc.data)
        except ValidationError as error:
            problems.extend(problems_from(error, doc))
            continue
        if spec.experiment in specs:
            other = specs[spec.experiment].doc.file
            problems.append(doc.problem(("experiment",),
                                        f"duplicate experiment id {spec.experiment!r} (also in {other})"))
            continue
        try:
            kind = experiment_kind(spec.kind)
        except UnknownExtension as error:
            problems.append(doc.problem(("kind",), str(error)))
            continue
        try:
            kind = experiment_kind(spec.kind, tuple(spec.metrics))
        except UnknownExtension as error:
            problems.append(doc.problem(("metrics",), str(error)))
            continue
        before = len(problems)
        check_spec(spec, doc, kind, problems)
        if len(problems) == before:
            specs[spec.experiment] = LoadedSpec(spec, doc, kind)
    return specs


def load_claims(claims_dir: Path | list[Path], root: Path | None, specs: dict[str, LoadedSpec],
                spec_ids: set[str], problems: list[Problem]) -> tuple[list[LoadedClaim], dict[str, ClaimFile]]:
    claims: list[LoadedClaim] = []
    papers: dict[str, ClaimFile] = {}
    first_seen: dict[str, Problem] = {}
    for doc in _load_docs(claims_dir, root, problems):
        if not isinstance(doc.data, dict):
            problems.append(doc.problem((), "a claim file must be a mapping"))
            continue
        try:
            claim_file = ClaimFile.model_validate(doc.data)
        except ValidationError as error:
            problems.extend(problems_from(error, doc))
            continue
        papers.setdefault(claim_file.paper, claim_file)
        on_broken_specs: dict[str, list[int]] = {}
        for index, claim in enumerate(claim_file.claims):
            path = ("claims", index)
            if claim.id in first_seen:
                where = first_seen[claim.id]
                problems.append(doc.problem((*path, "id"),
                                            f"duplicate claim id {claim.id!r} (first at {where.file}:{where.line})"))
                continue
            first_seen[claim.id] = doc.problem((*path, "id"), "")
            if claim.experiment not in specs and claim.experiment in spec_ids:
                on_broken_specs.setdefault(claim.experiment, []).append(index)
                continue
            loaded = LoadedClaim(claim, claim_file.paper, doc, path)
            if check_claim(loaded, specs, spec_ids, problems):
                claims.append(loaded)
        problems.extend(_broken_spec_problem(doc, experiment, indices)
                        for experiment, indices in on_broken_specs.items())
        check_families(doc, claim_file, problems)
        check_repeats(doc, claim_file, problems)
        check_as_run(doc, claim_file, problems)
    return claims, papers


def _broken_spec_problem(doc: Document, experiment: str, indices: list[int]) -> Problem:
    """One problem for the claims of a file that read an experiment whose spec has problems of its
    own (listed at the spec's lines): at the first of them, counting the others."""
    others = len(indices) - 1
    more = f"; {others} more claim{'s' if others > 1 else ''} of this file read it" if others else ""
    return doc.problem(("claims", indices[0], "experiment"),
                       f"experiment {experiment!r} has errors of its own (see its spec file){more}; "
                       "claims on it are checked once it loads")


def load_catalog(claims_dir: Path, specs_dir: Path, root: Path | None = None, include: Iterable[Path] = ()) -> Catalog:
    """Load everything; raise SpecError listing every problem found. Whether each expectation is decidable
    by design is not checked here (it integrates numerically): `harness.loading.design_check` does.

    `include`: folders of further papers (each holding claims/ and specs/), such as those installed
    packages register (`installed_papers`)."""
    problems: list[Problem] = []
    claims_dirs = [claims_dir, *(Path(folder) / "claims" for folder in include)]
    specs_dirs = [specs_dir, *(Path(folder) / "specs" for folder in include)]
    specs = load_specs(specs_dirs, root, problems)
    spec_ids = set(specs).union(*map(_declared_experiment_ids, specs_dirs))
    claims, papers = load_claims(claims_dirs, root, specs, spec_ids, problems)
    studies = load_studies(specs, claims, set().union(*map(_declared_claim_ids, claims_dirs)), problems)
    if problems:
        raise SpecError(problems)
    return Catalog(specs, claims, papers, studies)


PAPERS: ExtensionPoint[ModuleType] = ExtensionPoint(
    "fedclaims.papers", "paper", lambda piece: isinstance(piece, ModuleType) and piece.__file__ is not None,
    "a package whose folder holds claims/ and specs/")


def installed_papers() -> list[Path]:
    """The folders of the papers installed packages register (`fedclaims.papers`: a package whose
    folder holds claims/ and specs/, loaded beside the project's own)."""
    folders = []
    for name in PAPERS.names():
        file = PAPERS.load(name).__file__
        assert file is not None  # PAPERS accepts only a package loaded from a folder
        folders.append(Path(file).parent)
    return folders


def load_project(settings) -> Catalog:
    """The project's claims and specs with those of every installed paper. Whether each expectation is decidable
    by design is not checked here: `harness.loading.design_check.check_design` does, where a command asks."""
    return load_catalog(settings.claims_dir, settings.specs_dir, settings.root, installed_papers())


def _declared_experiment_ids(specs_dir: Path) -> set[str]:
    """Experiment ids of spec files, even invalid ones, to tell 'unknown' from 'broken'."""
    ids = set()
    if specs_dir.is_dir():
        for file in specs_dir.glob("*.yaml"):
            match = re.search(r"""^experiment:\s*["']?([A-Za-z0-9._-]+)["']?\s*(#.*)?$""",
                              file.read_text(encoding="utf-8"), re.M)
            if match:
                ids.add(match.group(1))
    return ids


def _declared_claim_ids(claims_dir: Path) -> set[str]:
    """Claim ids of claim files, even invalid ones, to tell 'unknown' from 'broken'."""
    ids = set()
    if claims_dir.is_dir():
        for file in claims_dir.glob("*.yaml"):
            ids.update(re.findall(r"""^\s*-?\s*id:\s*["']?([a-z0-9][a-z0-9._-]*)["']?\s*(?:#.*)?$""",
                                  file.read_text(encoding="utf-8", errors="replace"), re.M))
    return ids
