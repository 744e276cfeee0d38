"""Allocation policies by name: the built-in ones, and a user's, found by entry point or path.

A policy name is one of
- a built-in name (`full`, `heterofl`, `uniform`, `fjord`, `random_budget`, `hasfl`);
- the name of an entry point in the `fedclaims.policies` group of an installed package;
- `package.module:Class`, an importable module and a class in it;
- `path/to/file.py:Class`, a Python file (relative to the working directory) and a class in it.
A user's class implements `AllocationPolicy` and is built as `Class(context)` from a
`PolicyContext`; `policy_sources` names the source it was loaded from, so that the run's key
can hold a hash of it.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

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
    """A policy name that is neither built in, an entry point, nor a loadable `module:Class`."""


def _from_file(path: Path, name: str) -> type:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    module_name = f"fedclaims_user_policy_{digest}"
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise UnknownPolicy(f"cannot load {path} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
    return _attribute(module, name, str(path))


def _attribute(module, name: str, where: str) -> type:
    try:
        return getattr(module, name)
    except AttributeError:
        raise UnknownPolicy(f"{where} has no class {name!r}") from None


def _entry_point(name: str) -> metadata.EntryPoint | None:
    return next((ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name), None)


def _user_class(name: str) -> type:
    entry = _entry_point(name)
    if entry is not None:
        return entry.load()
    if ":" not in name:
        installed = sorted(ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))
        raise UnknownPolicy(f"unknown policy {name!r}; built in: {', '.join(POLICIES)}"
                            + (f"; installed ({ENTRY_POINT_GROUP}): {', '.join(installed)}" if installed else "")
                            + "; or name a class as 'package.module:Class' or 'path/to/file.py:Class'")
    where, _, attribute = name.rpartition(":")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise UnknownPolicy(f"policy file {where} does not exist (paths are relative to the working directory)")
        return _from_file(path, attribute)
    try:
        module = importlib.import_module(where)
    except ImportError as error:
        raise UnknownPolicy(f"cannot import {where!r} for policy {name!r}: {error}") from None
    return _attribute(module, attribute, where)


def resolve_policy(name: str) -> PolicyFactory:
    """The factory of policy `name` (raises UnknownPolicy with what was tried)."""
    if name in POLICIES:
        return POLICIES[name]
    cls = _user_class(name)
    if not (isinstance(cls, type) and issubclass(cls, AllocationPolicy)):
        raise UnknownPolicy(f"{name!r} is not a subclass of methods.federated.policies.AllocationPolicy")
    return cls


def policy_sources(name: str) -> list[str]:
    """Where a user's policy comes from: [module name] or [file path]; [] for a built-in one."""
    if name in POLICIES:
        return []
    entry = _entry_point(name)
    where = entry.value.partition(":")[0] if entry is not None else name.rpartition(":")[0]
    return [where]


def build_policy(cfg: FederationConfig, caps: np.ndarray, seed: int, client_sizes: tuple[int, ...] = (),
                 oracle_tv: tuple[float, ...] | None = None) -> AllocationPolicy:
    """The policy ``cfg.policy`` for clients with ``caps``."""
    context = PolicyContext(cfg, np.asarray(caps, dtype=np.float64), seed, tuple(client_sizes),
                            None if oracle_tv is None else tuple(oracle_tv))
    return resolve_policy(cfg.policy)(context)
