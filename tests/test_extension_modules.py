"""A spec's `package.module:Name` runs only from allowed places and never as a program; a name two
installed packages register in one group is refused with both named (issue 42, causes 3 and 7)."""
from __future__ import annotations

from importlib import metadata

import pytest

from harness import extensions
from harness.extensions import UnknownExtension
from harness.runners.parts import OBJECTIVES, POLICIES
from harness.settings import scoped_code
from tests.test_extension_files import GOOD_POLICY, POLICY_LINE, _problems, _project, _write
from tests.test_extension_files import _own_scope as _own_scope  # the autouse fixture: no code scope leaks in


@pytest.mark.parametrize("module", ["venv.__main__", "unittest.__main__", "json.tool", "venv"])
def test_standard_library_modules_and_any_main_are_refused_before_import(tmp_path, module):
    with scoped_code(tmp_path), pytest.raises(UnknownExtension, match=rf"^{module}: ") as raised:
        POLICIES.load(f"{module}:Anything")
    assert "__main__" in str(raised.value) or "standard-library" in str(raised.value)
    assert not (tmp_path / "bin").exists()  # venv's __main__ would have made an environment here


def test_an_installed_module_no_package_registers_is_refused(tmp_path):
    with scoped_code(tmp_path), pytest.raises(UnknownExtension, match=r"^yaml: lies outside the project folder"):
        POLICIES.load("yaml:SafeLoader")


def test_validate_refuses_a_site_packages_module_at_the_specs_policy_line(tmp_path):
    root = _project(tmp_path / "project", "yaml:SafeLoader")
    (problem,) = _problems(root)
    assert (str(problem.file), problem.line, problem.field) == ("specs/policy-file.yaml", POLICY_LINE,
                                                                 "config.federation.policy")
    assert "yaml: lies outside the project folder" in problem.message


def test_modules_inside_the_project_or_an_allowed_path_and_the_projects_own_load(tmp_path, monkeypatch):
    _write(tmp_path / "project" / "mypolicies" / "__init__.py", GOOD_POLICY)
    _write(tmp_path / "elsewhere" / "theirpolicies.py", GOOD_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path / "project"))
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    with scoped_code(tmp_path / "project"):
        assert POLICIES.load("mypolicies:Everyone").__name__ == "Everyone"
        with pytest.raises(UnknownExtension, match="^theirpolicies: lies outside"):
            POLICIES.load("theirpolicies:Everyone")
        assert OBJECTIVES.load("methods.federated.objectives:FedProxObjective").__name__ == "FedProxObjective"
    with scoped_code(tmp_path / "project", [tmp_path / "elsewhere"]):
        assert POLICIES.load("theirpolicies:Everyone").__name__ == "Everyone"


def _entry(name: str, value: str, distribution: str) -> metadata.EntryPoint:
    entry = metadata.EntryPoint(name, value, "fedclaims.objectives")
    dist = type("Dist", (), {"name": distribution})()
    return entry._for(dist) if hasattr(entry, "_for") else entry


@pytest.fixture
def two_registrations(monkeypatch):
    """Two installed packages both register an objective called 'fedprox'; one registers 'mine' twice
    (an editable install lists its distribution twice)."""
    entries = [_entry("fedprox", "pkg_a.objectives:Prox", "pkg-a"), _entry("fedprox", "pkg_b.objectives:Prox", "pkg-b"),
               _entry("mine", "methods.federated.objectives:FedProxObjective", "pkg-c"),
               _entry("mine", "methods.federated.objectives:FedProxObjective", "pkg-c")]
    real = metadata.entry_points

    def entry_points(**selection):
        if selection.get("group") == "fedclaims.objectives":
            return metadata.EntryPoints(entries)
        return real(**selection)

    monkeypatch.setattr(extensions.metadata, "entry_points", entry_points)
    for cached in (extensions._registrations, extensions._entry_points, extensions._cached_entry):
        cached.cache_clear()
    yield
    for cached in (extensions._registrations, extensions._entry_points, extensions._cached_entry):
        cached.cache_clear()


def test_a_name_two_packages_register_is_refused_naming_both(two_registrations):
    message = r"'fedprox' is registered in fedclaims.objectives by pkg-a \(pkg_a.objectives:Prox\) and pkg-b"
    with pytest.raises(UnknownExtension, match=message):
        OBJECTIVES.load("fedprox")
    with pytest.raises(UnknownExtension, match=message):
        OBJECTIVES.sources("fedprox")
    assert OBJECTIVES.load("mine").__name__ == "FedProxObjective"
    assert OBJECTIVES.names() == ["fedprox", "mine"]


def test_the_projects_own_entry_points_are_each_registered_once():
    for group in ("fedclaims.kinds", "fedclaims.policies", "fedclaims.objectives", "fedclaims.round_hooks",
                  "fedclaims.metrics", "fedclaims.papers"):
        assert all(len(entries) == 1 for entries in extensions._registrations(group).values()), group

