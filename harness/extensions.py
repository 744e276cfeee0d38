"""Extension points: the pieces a spec or a claim names, shipped or a user's, all found one way.

Each extension point (`KINDS`, `METRICS`, `POLICIES`, `OBJECTIVES`, `ROUND_HOOKS`, `PAPERS`) is an
entry-point group; a reference to one of its pieces is
- the name of an entry point in that group (the project's own pieces are registered there too,
  in its pyproject.toml, exactly as an installed package registers its own);
- `package.module:Name`, an importable module and an attribute of it, allowed only where the
  module's top-level package lies inside the project folder or an allowed code path (below), is
  the project's own (`harness`, `methods`, `fedclaims`) or belongs to an installed package that
  registers pieces in one of these groups; a standard-library or other installed module is refused
  before anything is imported, and so is any `__main__` (importing it runs a program);
- `path/to/file.py:Name`, a Python file and an attribute of it.

Files are code a spec makes this process run, so they are confined (`CodeScope`):
- a relative path is relative to the project folder (the one holding claims/ and specs/), which
  the harness puts in $FEDCLAIMS_CODE_ROOT for this process and every worker it starts
  (`harness.settings`); without it, the working directory;
- a file runs only if it lies inside that folder or inside a folder (or is a file) listed in
  $FEDCLAIMS_ALLOW_CODE_PATHS (os.pathsep-separated; `--allow-code-path`). Inside means the real
  file, symlinks followed and `..` collapsed, lies under the real folder; so `../elsewhere/x.py`,
  an absolute path elsewhere and a symlink pointing out are refused before anything is read. A
  refusal, a missing file, a file that raises, fails to parse or calls `sys.exit` at import: all
  are an `UnknownExtension` of one line, `path: what went wrong`;
- a file is loaded as the module `extension_file[<its path from the project folder>]`, a name the
  same on every machine.
`sources(reference)` names the module (or file module) a piece was loaded from, so that a run's
key can cover the code it executes. A name two installed packages register in one group is refused,
naming both, rather than one of them winning silently.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, TypeVar

from harness.errors import unknown

T = TypeVar("T")

CODE_ROOT_VARIABLE = "FEDCLAIMS_CODE_ROOT"
ALLOW_CODE_PATHS_VARIABLE = "FEDCLAIMS_ALLOW_CODE_PATHS"
FILE_MODULE_PREFIX = "extension_file"
GROUP_PREFIX = "fedclaims."
"""Every extension point's entry-point group starts with this."""
PROJECT_PACKAGES = frozenset({"harness", "methods", "fedclaims"})


class UnknownExtension(ValueError):
    """A reference that cannot be used: unknown, not allowed to run, or failing to load (one line)."""


@dataclass(frozen=True)
class CodeScope:
    """Where relative extension files are found (`root`) and which files may run: those under
    `root` or under one of `allowed` (folders or files), real paths compared."""

    root: Path
    allowed: tuple[Path, ...] = ()

    def locate(self, where: str) -> Path:
        return (self.root / where).resolve()

    def permits(self, file: Path) -> bool:
        return any(file.is_relative_to(folder) for folder in (self.root, *self.allowed))

    def module_name(self, file: Path) -> str:
        return f"{FILE_MODULE_PREFIX}[{Path(os.path.relpath(file, self.root)).as_posix()}]"


def code_scope() -> CodeScope:
    """The scope the environment sets ($FEDCLAIMS_CODE_ROOT, $FEDCLAIMS_ALLOW_CODE_PATHS)."""
    root = Path(os.environ.get(CODE_ROOT_VARIABLE) or Path.cwd()).resolve()
    listed = os.environ.get(ALLOW_CODE_PATHS_VARIABLE, "").split(os.pathsep)
    return CodeScope(root, tuple(Path(entry).resolve() for entry in listed if entry))


def file_reference(reference: str) -> tuple[str, str] | None:
    """(path, attribute) of a `path/to/file.py:Name` reference; None for any other."""
    where, _, attribute = reference.rpartition(":")
    return (where, attribute) if where.endswith(".py") else None


_LOADED: dict[Path, ModuleType | str] = {}
"""Each extension file loaded in this process: its module, or the one line its import failed with."""


def _import_failure(error: BaseException, file: Path | None = None) -> str:
    """One line saying how an import failed, at which line of `file` where known."""
    if isinstance(error, SystemExit):
        return f"calls sys.exit({error.code!r}) at import"
    if isinstance(error, SyntaxError):
        return f"SyntaxError: {error.msg} (line {error.lineno})"
    lines = [line for frame, line in traceback.walk_tb(error.__traceback__)
             if Path(frame.f_code.co_filename) == file]
    text = str(error).strip().splitlines()
    message = f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
    return message + (f" (line {lines[-1]})" if lines else "")


def _execute(file: Path, module_name: str) -> ModuleType | str:
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        return "cannot be loaded as a Python module"
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        del sys.modules[module_name]
        raise
    except BaseException as error:  # noqa: BLE001 - a user's file may raise anything, exit included
        del sys.modules[module_name]
        return _import_failure(error, file)
    return module


def load_file(where: str) -> tuple[ModuleType, str]:
    """The module of extension file `where` and its name, if the scope lets it run."""
    scope = code_scope()
    file = scope.locate(where)
    if not scope.permits(file):
        raise UnknownExtension(f"{where}: outside the project folder {scope.root}, so not loaded; if you trust "
                               f"it, allow it with {ALLOW_CODE_PATHS_VARIABLE}={file.parent} "
                               "(or --allow-code-path)")
    if not file.is_file():
        raise UnknownExtension(f"{where}: no such file ({file})")
    if file not in _LOADED:
        _LOADED[file] = _execute(file, scope.module_name(file))
    loaded = _LOADED[file]
    if isinstance(loaded, str):
        raise UnknownExtension(f"{where}: {loaded}")
    sys.modules[scope.module_name(file)] = loaded  # another project's file of the same name may hold it
    return loaded, scope.module_name(file)


def _imported(where: str, load: Callable[[], Any]) -> Any:
    """What `load` imports; any failure, an exit included, as an UnknownExtension naming `where`."""
    try:
        return load()
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - importing runs the module, which may raise anything
        raise UnknownExtension(f"{where}: {_import_failure(error)}") from None


def _attribute(module: ModuleType, name: str, where: str) -> Any:
    try:
        return getattr(module, name)
    except AttributeError:
        raise UnknownExtension(f"{where}: no attribute {name!r}") from None


def _distribution(entry: metadata.EntryPoint) -> str:
    return entry.dist.name if entry.dist is not None else "an unnamed distribution"


@functools.cache
def _registrations(group: str) -> dict[str, tuple[metadata.EntryPoint, ...]]:
    """Each name of the group with every distinct registration of it (one distribution listed twice,
    as an editable install can be, counts once)."""
    found: dict[str, dict[tuple[str, str], metadata.EntryPoint]] = {}
    for entry in metadata.entry_points(group=group):
        found.setdefault(entry.name, {}).setdefault((_distribution(entry), entry.value), entry)
    return {name: tuple(entries.values()) for name, entries in found.items()}


@functools.cache
def _entry_points(group: str) -> dict[str, metadata.EntryPoint]:
    """The group's names registered once (a name registered by two packages is in `_conflicts`)."""
    return {name: entries[0] for name, entries in _registrations(group).items() if len(entries) == 1}


def _conflict(group: str, name: str) -> UnknownExtension | None:
    entries = _registrations(group).get(name, ())
    if len(entries) < 2:
        return None
    both = " and ".join(f"{_distribution(entry)} ({entry.value})" for entry in entries)
    return UnknownExtension(f"{name!r} is registered in {group} by {both}: uninstall one, or name the piece as "
                            "'package.module:Name'")


@functools.cache
def _registering_packages() -> frozenset[str]:
    """The top-level packages of every installed piece of every extension group."""
    return frozenset(entry.module.split(".")[0] for distribution in metadata.distributions()
                     for entry in distribution.entry_points if entry.group.startswith(GROUP_PREFIX))


def module_problem(module: str) -> str | None:
    """Why a spec may not run `module` (None: it may), found without importing it: a top-level name's
    spec is looked up without executing any of its code."""
    parts = module.split(".")
    if "__main__" in parts:
        return "a __main__ module runs a program when imported; name a module that defines the piece"
    top = parts[0]
    if top in PROJECT_PACKAGES or top in _registering_packages():
        return None
    if top in sys.stdlib_module_names:
        return ("a standard-library module, not a piece of a paper; name one of the project's, of an allowed "
                "file or of a registered package")
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        found = None
    if found is None:
        return None  # importing it fails with its own message
    places = [Path(p) for p in (found.submodule_search_locations or [found.origin or ""]) if p]
    scope = code_scope()
    if any(scope.permits(place.resolve()) for place in places):
        return None
    where = places[0] if places else top
    return (f"lies outside the project folder {scope.root} ({where}) and no installed package registers it in a "
            f"{GROUP_PREFIX}* group; if you trust it, allow it with {ALLOW_CODE_PATHS_VARIABLE} (or --allow-code-path)")


@dataclass(frozen=True)
class ExtensionPoint(Generic[T]):
    """One kind of piece: its entry-point group, what it is called, and what a loaded piece must be."""

    group: str
    what: str
    accepts: Callable[[Any], bool]
    expected: str
    """What `accepts` asks for, in words (for the error when a piece is something else)."""

    def names(self, distribution: str | None = None) -> list[str]:
        """The registered pieces, sorted: every installed package's, or only those `distribution`
        registers (`fedclaims`: the project's own)."""
        return sorted(name for name, entries in _registrations(self.group).items()
                      if distribution is None or any(_distribution(entry) == distribution for entry in entries))

    def load(self, reference: str) -> T:
        """The piece `reference` names (raises UnknownExtension saying what was tried)."""
        return _load(self, reference)

    def sources(self, reference: str) -> list[str]:
        """The module (for a file: the module it is loaded as, loading it if need be) a piece comes from."""
        conflict = _conflict(self.group, reference)
        if conflict is not None:
            raise conflict
        entry = _entry_points(self.group).get(reference)
        if entry is not None:
            return [entry.module]
        named = file_reference(reference)
        if named is not None:
            return [load_file(named[0])[1]]
        if ":" in reference:
            module = reference.rpartition(":")[0]
            _check_module(module)
            return [module]
        raise self.unknown(reference)

    def unknown(self, reference: str) -> UnknownExtension:
        return UnknownExtension(f"{unknown(self.what, reference, self.names())} (registered in {self.group}), or "
                                "name one as 'package.module:Name' or 'path/to/file.py:Name'")


@functools.cache
def _cached_entry(group: str, name: str) -> Any:
    entry = _entry_points(group)[name]
    return _imported(f"entry point {name!r} ({entry.value})", entry.load)


def _check_module(module: str) -> None:
    problem = module_problem(module)
    if problem is not None:
        raise UnknownExtension(f"{module}: {problem}")


def _load(point: ExtensionPoint[T], reference: str) -> T:
    conflict = _conflict(point.group, reference)
    if conflict is not None:
        raise conflict
    if reference in _entry_points(point.group):
        piece = _cached_entry(point.group, reference)
    elif ":" not in reference:
        raise point.unknown(reference)
    else:
        named = file_reference(reference)
        if named is not None:
            piece = _attribute(load_file(named[0])[0], named[1], named[0])
        else:
            module, _, attribute = reference.rpartition(":")
            _check_module(module)
            piece = _attribute(_imported(module, lambda: importlib.import_module(module)), attribute, module)
    if not point.accepts(piece):
        raise UnknownExtension(f"{reference!r} is not {point.expected}")
    return piece
