"""The design check of a loaded catalog (`harness.loading.design.design_problems`), cached by content.

The check is mostly numerical integration (the correlation designs): seconds for the shipped project, most of a
catalog load. So `load_catalog` leaves it to the commands that tell a user of undecidable claims
(`fedclaims validate`, `design` and `plan`, through `harness.pipeline.select(..., check_design=True)`), and
their answer is remembered as JSON in the cache folder (`design-check/<key>.json`), keyed by:
- the catalog's files: each claim and spec document's name, data and line numbers (a problem names them);
- the design's code: the import closures (`harness.provenance.code_fingerprint`, by content) of the check, of the
  claim schema and of each expectation and observation module (found by name, so in no importer's closure),
  and of the module each spec's kind and each metric comes from; and the versions of python, numpy and scipy.
A kind or metric whose source cannot be read leaves the check uncached (run every time).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import Problem, SpecError
from harness.kinds import KINDS, METRICS
from harness.loading.design import design_problems
from harness.loading.yamlsource import Document
from harness.provenance import code_fingerprint, code_hash, library_versions, source_fingerprint
from harness.schema.expectations import EXPECTATIONS
from harness.schema.observations import OBSERVATIONS

if TYPE_CHECKING:
    from harness.loading.catalog import Catalog

CACHE_FOLDER = "design-check"
DESIGN_MODULES = ("harness.loading.design", "harness.schema.claim")
"""The check and the claim model it reads; the expectation and observation modules are added by name."""
LIBRARIES = ("python", "numpy", "scipy")


def check_design(catalog: Catalog, cache_dir: Path | None) -> None:
    """Raise SpecError listing each expectation no number of seeds can decide (file, line and field);
    remembered under `cache_dir` (None: not remembered)."""
    problems = cached_design_problems(catalog, cache_dir)
    if problems:
        raise SpecError(problems)


def cached_design_problems(catalog: Catalog, cache_dir: Path | None) -> list[Problem]:
    """`design_problems(catalog)`, read from the cache where its key was checked before."""
    key = design_key(catalog) if cache_dir is not None else None
    if key is None or cache_dir is None:
        return design_problems(catalog)
    file = cache_dir / CACHE_FOLDER / f"{key}.json"
    remembered = _read(file)
    if remembered is not None:
        return remembered
    problems = design_problems(catalog)
    _write(file, problems)
    return problems


def design_key(catalog: Catalog) -> str | None:
    """The content the check's answer depends on, hashed (None: some kind's or metric's code is unreadable)."""
    code = _design_code(catalog)
    if code is None:
        return None
    versions = library_versions()
    parts = {"documents": [_document_digest(doc) for doc in _documents(catalog)], "code": code_hash(code),
             "libraries": {name: versions.get(name, "absent") for name in LIBRARIES}}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _documents(catalog: Catalog) -> list[Document]:
    docs = {id(doc): doc for doc in [*(spec.doc for spec in catalog.specs.values()),
                                     *(claim.doc for claim in catalog.claims)]}
    return sorted(docs.values(), key=lambda doc: doc.file.as_posix())


def _document_digest(doc: Document) -> str:
    """A document's name, data and the line of each path it spells out, hashed (dates and other
    YAML scalars JSON lacks by their text)."""
    text = json.dumps([doc.file.as_posix(), doc.data, [[list(path), line] for path, line in doc.lines.items()]],
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _design_code(catalog: Catalog) -> dict[str, str] | None:
    modules = {*DESIGN_MODULES, *(model.__module__ for model in [*EXPECTATIONS.values(), *OBSERVATIONS.values()])}
    code: dict[str, str] = {}
    for module in sorted(modules):
        code.update(code_fingerprint(module))
    for module in sorted(_extension_modules(catalog)):
        found = _module_code(module)
        if found is None:
            return None
        code.update(found)
    return code


def _extension_modules(catalog: Catalog) -> set[str]:
    """The modules the catalog's kinds and every metric they may carry come from."""
    modules = {module for name in METRICS.names() for module in METRICS.sources(name)}
    for loaded in catalog.specs.values():
        modules.update(KINDS.sources(loaded.spec.kind))
        modules.update(module for metric in loaded.spec.metrics for module in METRICS.sources(metric))
    return modules


def _module_code(module: str) -> dict[str, str] | None:
    """A module's code fingerprint; for an extension file (loaded under a name of its own), the file's."""
    found = code_fingerprint(module)
    if found:
        return found
    file = getattr(sys.modules.get(module), "__file__", None)
    return source_fingerprint(file) if file and file.endswith(".py") else None


def _read(file: Path) -> list[Problem] | None:
    """The problems a cache file holds (None: absent, unreadable or not in the expected form)."""
    try:
        data: Any = json.loads(file.read_text(encoding="utf-8"))
        return [Problem(Path(entry["file"]), entry["line"], entry["field"], entry["message"])
                for entry in data["problems"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(file: Path, problems: list[Problem]) -> None:
    """Atomic replace; an unwritable cache only costs checking again next time."""
    entries = [{"file": problem.file.as_posix() if isinstance(problem.file, Path) else str(problem.file),
                "line": problem.line, "field": problem.field, "message": problem.message} for problem in problems]
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=".design-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"problems": entries}, out, indent=1)
        os.replace(temporary, file)
    except OSError:
        pass
