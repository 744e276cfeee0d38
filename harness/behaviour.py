"""The behaviour versions a run's code declares: what a record's key holds of its code.

A module whose numbers an edit may be meant to move (a runner, an engine, a policy, an objective, a
data-set loader, a model family) declares its version in a line of its own at its top level,

    # fedclaims behaviour version: 3

and its author bumps the number with an edit that is meant to change a number. An edit that changes
no number (a renamed local, a split function, a type hint) keeps every key, and the golden guard
(`harness.running.golden`) checks that promise: where a kind's code differs from what its golden
records were made with, it re-runs them and fails where a number moved without a bump. The version
is a comment, not a statement, so that bumping it changes no module's content digest: the code
fingerprint a record's provenance keeps (harness.provenance) describes the code alone.

A module outside the project packages that declares no version (a user's policy file) is keyed by its
content digest instead, so editing it re-runs its records; a project module that declares none is
covered by the versions of the modules that import it, and by the guard.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from harness.provenance import FILE_PREFIX, PROJECT_PACKAGES, code_fingerprint, source_fingerprint

DECLARATION = re.compile(rb"^# fedclaims behaviour version: (\d+)[ \t]*$", re.MULTILINE)

_DECLARED: dict[Path, tuple[tuple[int, int], int | None]] = {}
"""Each file's declared version, with the modification time and size it was read at."""


def declared_version(file: Path) -> int | None:
    """The version a file declares, if it does; ValueError if it declares more than one."""
    status = file.stat()
    remembered = _DECLARED.get(file)
    if remembered is not None and remembered[0] == (status.st_mtime_ns, status.st_size):
        return remembered[1]
    found = DECLARATION.findall(file.read_bytes())
    if len(found) > 1:
        raise ValueError(f"{file} declares its behaviour version {len(found)} times")
    version = int(found[0]) if found else None
    _DECLARED[file] = ((status.st_mtime_ns, status.st_size), version)
    return version


def module_file(name: str) -> Path | None:
    """The source file of a module, if it has one."""
    spec = importlib.util.find_spec(name)
    return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def _file(name: str) -> Path | None:
    return Path(name[len(FILE_PREFIX):]) if name.startswith(FILE_PREFIX) else module_file(name)


def _behaviour(fingerprint: dict[str, str]) -> dict[str, str]:
    """Of the modules of a code fingerprint (name -> content digest): each one's declared version, and
    the content digest of each module outside the project packages that declares none."""
    found: dict[str, str] = {}
    for name, digest in sorted(fingerprint.items()):
        file = _file(name)
        version = declared_version(file) if file is not None else None
        if version is not None:
            found[name] = f"version {version}"
        elif name.startswith(FILE_PREFIX) or name.split(".")[0] not in PROJECT_PACKAGES:
            found[name] = f"content {digest}"
    return found


def declared_behaviour(module: str) -> dict[str, str]:
    """What a run executing `module` is keyed by: over its import closure, the declared versions, and
    the content of the modules outside the project that declare none."""
    return _behaviour(code_fingerprint(module))


def source_behaviour(source: str) -> dict[str, str]:
    """`declared_behaviour` of a source a config names: a module, or a file path (`file:<path>`)."""
    return _behaviour(source_fingerprint(source))
