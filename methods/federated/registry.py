"""Allocation policies by name: the built-in ones, and a user's, found by entry point or path.

A policy name is one of
- a built-in name (`full`, `heterofl`, `uniform`, `fjord`, `random_budget`, `hasfl`);
- the name of an entry point in the `fedclaims.policies` group of an installed package;
- `package.module:Class`, an importable module and a class in it (installed code, or code on
  `sys.path`: the user's own, so always allowed);
- `path/to/file.py:Class`, a Python file and a class in it.
A user's class implements `AllocationPolicy` and is built as `Class(context)` from a
`PolicyContext`; `policy_sources` names the source it was loaded from, so that the run's key
can hold a hash of it.

Policy files are code a spec makes this process run, so they are confined (`PolicyScope`):
- a relative path is relative to the project folder (the one holding claims/ and specs/), which
  the harness puts in $FEDCLAIMS_POLICY_ROOT for this process and every worker it starts
  (`harness.settings`); without it, the working directory;
- a file runs only if it lies inside that folder or inside a folder (or is a file) listed in
  $FEDCLAIMS_ALLOW_POLICY_PATHS (os.pathsep-separated; `--allow-policy-path`). Inside means the
  real file, symlinks followed and `..` collapsed, lies under the real folder; so
  `../elsewhere/x.py`, an absolute path elsewhere and a symlink pointing out are refused before
  anything is read. A refusal, a missing file, a file that raises, fails to parse or calls
  `sys.exit` at import: all are an `UnknownPolicy` of one line, `path: what went wrong`;
- a file is loaded as the module `policy_file[<its path from the project folder>]`, a name the
  same on every machine, and its source is hashed under that name.
A policy named on the command line (`fedclaims audit FILE:Class`) is the user's own choice: the
audit allows that file (`harness.audit.audit`).
"""
from __future__ import annotations

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
from typing import TYPE_CHECKING, Any

import numpy as np

from methods.federated.hasfl import HasflPolicy
from methods.federated.policies import (AllocationPolicy, CapPolicy, FjordPolicy, FullPolicy,
                                        RandomBudgetPolicy, UniformPolicy)

if TYPE_CHECKING:
    from methods.federated.config import FederationConfig

ENTRY_POINT_GROUP = "fedclaims.policies"


@dataclass(frozen=True)
class PolicyContext:
    """What a policy is built from.

    ``client_sizes``: each client's number of training samples (a server knows it from the
    updates it receives). ``oracle_tv``: each client's ground-truth label skew (TV distance),
    which no real server has: the harness passes it so that a positive control (a policy that
    allocates by the truth) can be audited; a policy meant for real use must not read it.
    """

    config: FederationConfig
    caps: np.ndarray
    seed: int
    client_sizes: tuple[int, ...] = ()
    oracle_tv: tuple[float, ...] | None = None


PolicyFactory = Callable[[PolicyContext], AllocationPolicy]

POLICIES: dict[str, PolicyFactory] = {
    "full": lambda ctx: FullPolicy(),
    "heterofl": lambda ctx: CapPolicy(ctx.caps),
    "uniform": lambda ctx: UniformPolicy(ctx.caps, ctx.config.uniform_width),
    "fjord": lambda ctx: FjordPolicy(ctx.caps, ctx.config.tiers, ctx.seed),
    "random_budget": lambda ctx: RandomBudgetPolicy(ctx.caps, float(ctx.config.budget), min(ctx.config.tiers),
                                                    ctx.seed),
    "hasfl": lambda ctx: HasflPolicy(
        ctx.caps, p_min=ctx.config.p_min, gamma=ctx.config.gamma, beta=ctx.config.beta, t_warm=ctx.config.t_warm,
        t_adapt=ctx.config.t_adapt, t_norm=ctx.config.t_norm, coverage_guarantee=ctx.config.coverage_guarantee),
}


class UnknownPolicy(ValueError):
    """A policy name that cannot be used: unknown, not allowed to run, or failing to load (one line)."""


POLICY_ROOT_VARIABLE = "FEDCLAIMS_POLICY_ROOT"
ALLOW_POLICY_PATHS_VARIABLE = "FEDCLAIMS_ALLOW_POLICY_PATHS"


@dataclass(frozen=True)
class PolicyScope:
    """Where relative policy files are found (`root`) and which files may run: those under
    `root` or under one of `allowed` (folders or files), real paths compared."""

    root: Path
    allowed: tuple[Path, ...] = ()

    def locate(self, where: str) -> Path:
        return (self.root / where).resolve()

    def permits(self, file: Path) -> bool:
        return any(file.is_relative_to(folder) for folder in (self.root, *self.allowed))

    def module_name(self, file: Path) -> str:
        return f"policy_file[{Path(os.path.relpath(file, self.root)).as_posix()}]"


def policy_scope() -> PolicyScope:
    """The scope the environment sets ($FEDCLAIMS_POLICY_ROOT, $FEDCLAIMS_ALLOW_POLICY_PATHS)."""
    root = Path(os.environ.get(POLICY_ROOT_VARIABLE) or Path.cwd()).resolve()
    listed = os.environ.get(ALLOW_POLICY_PATHS_VARIABLE, "").split(os.pathsep)
    return PolicyScope(root, tuple(Path(entry).resolve() for entry in listed if entry))


_LOADED: dict[Path, ModuleType | str] = {}
"""Each policy file loaded in this process: its module, or the one line its import failed with."""


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


def _policy_module(where: str) -> tuple[ModuleType, str]:
    """The module of policy file `where` and its name, if the scope lets it run."""
    scope = policy_scope()
    file = scope.locate(where)
    if not scope.permits(file):
        raise UnknownPolicy(f"{where}: outside the project folder {scope.root}, so not loaded; if you trust "
                            f"it, allow it with {ALLOW_POLICY_PATHS_VARIABLE}={file.parent} "
                            "(or --allow-policy-path)")
    if not file.is_file():
        raise UnknownPolicy(f"{where}: no such policy file ({file})")
    if file not in _LOADED:
        _LOADED[file] = _execute(file, scope.module_name(file))
    loaded = _LOADED[file]
    if isinstance(loaded, str):
        raise UnknownPolicy(f"{where}: {loaded}")
    sys.modules[scope.module_name(file)] = loaded  # another project's file of the same name may hold it
    return loaded, scope.module_name(file)


def _imported(where: str, load: Callable[[], Any]) -> Any:
    """What `load` imports; any failure, an exit included, as an UnknownPolicy naming `where`."""
    try:
        return load()
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - importing runs the module, which may raise anything
        raise UnknownPolicy(f"{where}: {_import_failure(error)}") from None


def _attribute(module, name: str, where: str) -> type:
    try:
        return getattr(module, name)
    except AttributeError:
        raise UnknownPolicy(f"{where}: no class {name!r}") from None


def _entry_point(name: str) -> metadata.EntryPoint | None:
    return next((ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name), None)


def _unknown(name: str) -> UnknownPolicy:
    installed = sorted(ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))
    return UnknownPolicy(f"unknown policy {name!r}; built in: {', '.join(POLICIES)}"
                         + (f"; installed ({ENTRY_POINT_GROUP}): {', '.join(installed)}" if installed else "")
                         + "; or name a class as 'package.module:Class' or 'path/to/file.py:Class'")


def policy_file(name: str) -> tuple[str, str] | None:
    """(path, class) of a `path/to/file.py:Class` name; None for any other name."""
    where, _, attribute = name.rpartition(":")
    return (where, attribute) if where.endswith(".py") else None


def _user_class(name: str) -> type:
    entry = _entry_point(name)
    if entry is not None:
        return _imported(f"entry point {name!r} ({entry.value})", entry.load)
    if ":" not in name:
        raise _unknown(name)
    file = policy_file(name)
    if file is not None:
        return _attribute(_policy_module(file[0])[0], file[1], file[0])
    module, _, attribute = name.rpartition(":")
    return _attribute(_imported(module, lambda: importlib.import_module(module)), attribute, module)


def resolve_policy(name: str) -> PolicyFactory:
    """The factory of policy `name` (raises UnknownPolicy with what was tried)."""
    if name in POLICIES:
        return POLICIES[name]
    cls = _user_class(name)
    if not (isinstance(cls, type) and issubclass(cls, AllocationPolicy)):
        raise UnknownPolicy(f"{name!r} is not a subclass of methods.federated.policies.AllocationPolicy")
    return cls


def policy_sources(name: str) -> list[str]:
    """The module whose source a user's policy is, for the run's key (a policy file: the module
    it is loaded as, loading it if need be); [] for a built-in one."""
    if name in POLICIES:
        return []
    entry = _entry_point(name)
    if entry is not None:
        return [entry.value.partition(":")[0]]
    file = policy_file(name)
    if file is not None:
        return [_policy_module(file[0])[1]]
    return [name.rpartition(":")[0]]


def build_policy(cfg: FederationConfig, caps: np.ndarray, seed: int, client_sizes: tuple[int, ...] = (),
                 oracle_tv: tuple[float, ...] | None = None) -> AllocationPolicy:
    """The policy ``cfg.policy`` for clients with ``caps``."""
    context = PolicyContext(cfg, np.asarray(caps, dtype=np.float64), seed, tuple(client_sizes),
                            None if oracle_tv is None else tuple(oracle_tv))
    return resolve_policy(cfg.policy)(context)
