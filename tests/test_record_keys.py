"""A record's key changes with the behaviour versions its code declares (harness.behaviour), and not with an
edit of the code that bumps none; its provenance's code fingerprint follows the code itself.

The edits are made in a copy of harness/ and methods/ from which harness.provenance reads every
project module (its `_module_file` resolved there), so the keys are computed exactly as planning
computes them, over the edited source, while this process keeps running the checkout's code.
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import behaviour, provenance
from harness.kinds import kind
from harness.running import planning

REPO = Path(__file__).resolve().parents[1]
DATA = {"cifar10": "c" * 64, "emnist": "e" * 64, "shakespeare": "s" * 64}
CIFAR, SHAKESPEARE = ("hasfl-cifar10", "hasfl"), ("hasfl-shakespeare", "hasfl")
FETCHING = ("harness.datasets.downloads", "harness.datasets.netguard", "harness.datasets.locations",
            "harness.datasets.unpacking", "harness.datasets.hashing", "harness.running.fetching",
            "harness.provenance", "harness.datasets.cifar10_source", "harness.datasets.emnist_source",
            "harness.datasets.shakespeare_source")


def _resolver(root: Path, real: Callable[[str], Path | None]) -> Callable[[str], Path | None]:
    def module_file(name: str) -> Path | None:
        if name.split(".")[0] not in provenance.PROJECT_PACKAGES:
            return real(name)
        base = root.joinpath(*name.split("."))
        return next((file for file in (base.with_suffix(".py"), base / "__init__.py") if file.is_file()), None)
    return module_file


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of harness/ and methods/ that provenance reads instead of the checkout."""
    root = tmp_path / "project"
    for package in provenance.PROJECT_PACKAGES:
        shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(provenance, "_module_file", _resolver(root, provenance._module_file))
    monkeypatch.setattr(behaviour, "module_file", _resolver(root, behaviour.module_file))
    planning._code.cache_clear()
    planning._behaviour.cache_clear()
    yield root
    planning._code.cache_clear()
    planning._behaviour.cache_clear()


def _request(catalog, settings, run: tuple[str, str]) -> planning.RunRequest:
    planning._code.cache_clear()  # planning hashes a module once per process; these tests edit them
    planning._behaviour.cache_clear()
    return planning.request_for(catalog, *run, 0, "smoke", settings, data=DATA)


def _key(catalog, settings, run: tuple[str, str]) -> str:
    return _request(catalog, settings, run).key


def _bump(file: Path) -> None:
    _edit(file, "# fedclaims behaviour version: 1", "# fedclaims behaviour version: 2")


def _edit(file: Path, old: str, new: str) -> None:
    text = file.read_text()
    assert text.count(old) >= 1, f"{file} no longer holds {old!r}"
    file.write_text(text.replace(old, new))


def test_a_cifar10_run_covers_its_loader_and_no_fetching_nor_other_data_sets_code(catalog, settings) -> None:
    config = catalog.specs[CIFAR[0]].resolve(CIFAR[1], "smoke")
    code = planning.run_code(kind("federated_training"), config)
    assert {"harness.runners.federated", "harness.datasets.cifar10", "methods.federated.aggregation"} <= set(code)
    for module in (*FETCHING, "harness.datasets.emnist", "harness.datasets.shakespeare"):
        assert module not in code, module
    text = planning.run_code(kind("federated_training"), catalog.specs[SHAKESPEARE[0]].resolve(SHAKESPEARE[1],
                                                                                                "smoke"))
    assert "harness.datasets.shakespeare" in text and "harness.datasets.cifar10" not in text


def test_editing_a_download_url_or_the_fetching_code_keeps_a_cifar10_runs_key(project, catalog, settings) -> None:
    before = _key(catalog, settings, CIFAR)
    _edit(project / "harness/datasets/downloads.py", "https://www.cs.toronto.edu/~kriz/", "https://mirror.example.org/")
    _edit(project / "harness/datasets/netguard.py", "DOWNLOAD_TIMEOUT_S = 30.0", "DOWNLOAD_TIMEOUT_S = 90.0")
    _edit(project / "harness/datasets/cifar10_source.py", "MAX_BATCH_BYTES = 64 << 20", "MAX_BATCH_BYTES = 96 << 20")
    assert _key(catalog, settings, CIFAR) == before


def test_bumping_the_shakespeare_loaders_version_rekeys_shakespeare_runs_only(project, catalog, settings) -> None:
    cifar, text = _key(catalog, settings, CIFAR), _key(catalog, settings, SHAKESPEARE)
    _edit(project / "harness/datasets/shakespeare.py", "TRAIN_FRACTION = 0.8", "TRAIN_FRACTION = 0.75")
    assert _key(catalog, settings, SHAKESPEARE) == text  # the guard catches a number moved without a bump
    _bump(project / "harness/datasets/shakespeare.py")
    assert _key(catalog, settings, CIFAR) == cifar
    assert _key(catalog, settings, SHAKESPEARE) != text


def test_moving_a_module_keeps_every_key(project, catalog, settings) -> None:
    before = [_key(catalog, settings, run) for run in (CIFAR, SHAKESPEARE)]
    (project / "methods/federated/aggregation.py").rename(project / "methods/aggregation_rules.py")
    importers = [file for package in provenance.PROJECT_PACKAGES for file in (project / package).rglob("*.py")
                 if "methods.federated.aggregation" in file.read_text()]
    assert len(importers) >= 5
    for file in importers:
        _edit(file, "methods.federated.aggregation", "methods.aggregation_rules")
    code = planning.run_code(kind("federated_training"), catalog.specs[CIFAR[0]].resolve(CIFAR[1], "smoke"),
                             reread=True)
    assert "methods.aggregation_rules" in code and "methods.federated.aggregation" not in code
    assert [_key(catalog, settings, run) for run in (CIFAR, SHAKESPEARE)] == before


def test_a_line_of_code_changes_the_fingerprint_not_the_key_and_a_bump_changes_the_key(
        project, catalog, settings) -> None:
    before = _request(catalog, settings, CIFAR)
    aggregation = project / "methods/federated/aggregation.py"
    _edit(aggregation, '"""L2 norm of the client\'s update over the coordinates it trained (summed in float64)."""',
          '"""The L2 norm of a client\'s update, over its trained coordinates."""  # reworded')
    assert _request(catalog, settings, CIFAR).code == before.code
    _edit(aggregation, "    return math.sqrt(total)", "    return total ** 0.5")
    edited = _request(catalog, settings, CIFAR)
    assert edited.key == before.key and edited.code != before.code
    _bump(project / "methods/federated/loop.py")
    assert _key(catalog, settings, CIFAR) != before.key


def test_an_analytic_runs_key_ignores_the_federated_engines_version(project, catalog, settings) -> None:
    run = ("hasfl-allocation-rule", "tier-1.0")
    before = _key(catalog, settings, run)
    _bump(project / "methods/federated/loop.py")
    assert _key(catalog, settings, run) == before


# --- the digest of one module ----------------------------------------------------------------------

def _package(tmp_path: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "synthetic"
    for name, text in {"harness/__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.setattr(provenance, "_module_file", _resolver(root, provenance._module_file))
    return root


def test_switching_an_import_between_modules_defining_the_same_name_changes_the_importers_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path, {"harness/a.py": "def f():\n    return 1\n", "harness/b.py": "def f():\n    return 2\n",
                               "harness/c.py": "from harness.a import f\nfrom harness.b import f as g\n"}, monkeypatch)
    before = provenance.module_digest("harness.c")
    (root / "harness/c.py").write_text("from harness.b import f\nfrom harness.a import f as g\n")
    assert provenance.module_digest("harness.c") != before
    (root / "harness/c.py").write_text('"""Doc."""\nfrom .a import f  # relative\nfrom harness.b import (f as g)\n')
    assert provenance.module_digest("harness.c") == before


def test_a_type_checking_import_is_outside_the_closure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, {"harness/a.py": "X = 1\n", "harness/b.py": "Y = 2\n",
                        "harness/c.py": "from typing import TYPE_CHECKING\n"
                                        "if TYPE_CHECKING:\n    from harness.b import Y\n"
                                        "def f():\n    from harness.a import X\n    return X\n"}, monkeypatch)
    assert provenance.import_closure("harness.c") == ["harness", "harness.a", "harness.c"]
