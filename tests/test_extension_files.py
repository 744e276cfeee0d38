"""Extension files named by specs (here policy files): one-line errors, confinement to the
project, machine-free keys.

An extension file is code a spec makes the harness run. It is found from the project folder (not
the working directory), runs only inside it or where the user allowed, and a file that fails at
import is one line `path: error`, whatever it raised (sys.exit included).
"""
from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from harness import extensions
from harness.errors import SpecError
from harness.extensions import ALLOW_CODE_PATHS_VARIABLE, CODE_ROOT_VARIABLE, UnknownExtension
from harness.kinds import kind
from harness.loading.catalog import load_catalog
from harness.runners.parts import POLICIES
from harness.running.planning import run_code
from harness.settings import LEGACY_ALLOW_VARIABLE, Settings, scoped_code

GOOD_POLICY = """\
from pathlib import Path
from methods.federated.policies import AllocationPolicy
Path(__file__).with_suffix(".ran").touch()

class Everyone(AllocationPolicy):
    def __init__(self, context):
        self.context = context

    def widths(self, round_index, sampled):
        return {int(i): 1.0 for i in sampled}
"""

FAILING_AT_IMPORT = {
    "raises": ('x = 1\nraise RuntimeError("boom at import")\n', "RuntimeError: boom at import (line 2)"),
    "syntax": ("def broken(:\n    pass\n", "SyntaxError: invalid syntax (line 1)"),
    "missing_module": ("import no_such_module_for_fedclaims\n",
                       "ModuleNotFoundError: No module named 'no_such_module_for_fedclaims' (line 1)"),
    "exits": ("import sys\nsys.exit(3)\n", "calls sys.exit(3) at import"),
}

SPEC = """\
experiment: policy-file
paper: test
title: a spec naming a policy file
kind: federated_training
config:
  data:
    name: cifar10
    partition: {scheme: iid}
  model: {arch: conv, hidden: [4, 8, 8], in_channels: 3, num_classes: 10, image_size: 32}
  federation:
    num_clients: 4
    clients_per_round: 2
    rounds: 1
    policy: POLICY
variants:
  a: {label: A, config: {federation: {local_epochs: 1}}}
  b: {label: B, config: {federation: {local_epochs: 2}}}
profiles:
  tiny:
    seeds: [0]
"""
POLICY_LINE = 14


@pytest.fixture(autouse=True)
def _own_scope(monkeypatch):
    """Each test starts with no policy scope in the environment, and the one before is restored
    after it (Settings.from_env sets one)."""
    for name in (CODE_ROOT_VARIABLE, ALLOW_CODE_PATHS_VARIABLE, LEGACY_ALLOW_VARIABLE):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def _project(folder: Path, policy: str, experiment: str = "policy-file") -> Path:
    (folder / "claims").mkdir(parents=True)
    (folder / "specs").mkdir()
    spec = SPEC.replace("POLICY", policy).replace("experiment: policy-file", f"experiment: {experiment}")
    (folder / "specs" / f"{experiment}.yaml").write_text(spec)
    return folder


def _write(file: Path, text: str) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)
    return file


def _problems(root: Path, **overrides) -> list:
    settings = Settings.from_env(root, store_dir=root / "store", **overrides)
    try:
        load_catalog(settings.claims_dir, settings.specs_dir, settings.root)
    except SpecError as error:
        return error.problems
    return []


@pytest.mark.parametrize("name", FAILING_AT_IMPORT)
def test_a_policy_file_failing_at_import_is_one_line_and_the_process_survives(tmp_path, name):
    source, failure = FAILING_AT_IMPORT[name]
    _write(tmp_path / "policies" / f"{name}.py", source)
    with scoped_code(tmp_path), pytest.raises(UnknownExtension) as raised:
        POLICIES.load(f"policies/{name}.py:Anything")
    assert str(raised.value) == f"policies/{name}.py: {failure}"


@pytest.mark.parametrize("name", FAILING_AT_IMPORT)
def test_validate_places_a_failing_policy_file_at_the_specs_policy_line(tmp_path, name):
    root = _project(tmp_path / "project", f"policies/{name}.py:Anything")
    _write(root / "policies" / f"{name}.py", FAILING_AT_IMPORT[name][0])
    (problem,) = _problems(root)
    assert (str(problem.file), problem.line, problem.field) == ("specs/policy-file.yaml", POLICY_LINE,
                                                                 "config.federation.policy")
    assert f"policies/{name}.py: {FAILING_AT_IMPORT[name][1]}" in problem.message
    assert "\n" not in problem.message


def test_a_specs_policy_path_is_relative_to_the_project_not_the_working_directory(tmp_path, monkeypatch):
    root = _project(tmp_path / "project", "policies/everyone.py:Everyone")
    _write(root / "policies" / "everyone.py", GOOD_POLICY)
    monkeypatch.chdir(tmp_path)
    assert _problems(root) == []
    assert (root / "policies" / "everyone.ran").exists()


def _outside(tmp_path: Path) -> Path:
    return _write(tmp_path / "elsewhere" / "everyone.py", GOOD_POLICY)


@pytest.mark.parametrize("spelling", ["../elsewhere/everyone.py", "ABSOLUTE", "policies/link.py"])
def test_a_policy_file_outside_the_project_is_refused_without_running_it(tmp_path, monkeypatch, spelling):
    outside = _outside(tmp_path)
    root = _project(tmp_path / "project", f"{str(outside) if spelling == 'ABSOLUTE' else spelling}:Everyone")
    (root / "policies").mkdir()
    (root / "policies" / "link.py").symlink_to(outside)
    monkeypatch.chdir(tmp_path / "elsewhere")  # where the old rule found ../elsewhere from cwd
    (problem,) = _problems(root)
    assert problem.line == POLICY_LINE and problem.field == "config.federation.policy"
    assert "outside the project folder" in problem.message and ALLOW_CODE_PATHS_VARIABLE in problem.message
    assert not outside.with_suffix(".ran").exists()


@pytest.mark.parametrize("variable", [ALLOW_CODE_PATHS_VARIABLE, LEGACY_ALLOW_VARIABLE])
def test_a_policy_file_outside_the_project_runs_in_a_folder_the_user_allowed(tmp_path, monkeypatch, variable):
    outside = _outside(tmp_path)
    root = _project(tmp_path / "project", "../elsewhere/everyone.py:Everyone")
    monkeypatch.setenv(variable, str(outside.parent))
    assert _problems(root) == []
    assert outside.with_suffix(".ran").exists()


def test_the_option_allows_as_the_setting_does(tmp_path):
    outside = _outside(tmp_path)
    root = _project(tmp_path / "project", "../elsewhere/everyone.py:Everyone")
    assert _problems(root, allowed_code_paths=[outside.parent]) == []


def test_validate_refuses_an_outside_file_unless_the_command_line_allows_it(tmp_path, capsys):
    from harness import cli
    outside = _outside(tmp_path)
    root = _project(tmp_path / "project", "../elsewhere/everyone.py:Everyone")
    assert cli.main(["--root", str(root), "validate"]) == 2
    assert "outside the project folder" in capsys.readouterr().err and not outside.with_suffix(".ran").exists()
    assert cli.main(["--root", str(root), "--allow-code-path", str(outside.parent), "validate"]) == 0
    assert outside.with_suffix(".ran").exists()
    assert cli.main(["--root", str(root), "--allow-policy-path", str(outside.parent), "validate"]) == 0


def _code(root: Path) -> dict[str, str]:
    settings = Settings.from_env(root, store_dir=root / "store")
    loaded = load_catalog(settings.claims_dir, settings.specs_dir, settings.root).specs["policy-file"]
    return {name: digest for name, digest in run_code(kind("federated_training"), loaded.resolve("a", "tiny")).items()
            if name.startswith("extension_file")}


def test_a_policy_files_key_names_it_from_the_project_on_any_machine(tmp_path, monkeypatch):
    first, second = (_project(tmp_path / where, "policies/everyone.py:Everyone") for where in ("one", "two/deeper"))
    for root in (first, second):
        _write(root / "policies" / "everyone.py", GOOD_POLICY)
    monkeypatch.chdir(tmp_path)
    codes = [_code(first), _code(second)]
    assert codes[0] == codes[1] and list(codes[0]) == ["extension_file[policies/everyone.py]"]
    _write(second / "policies" / "everyone.py", GOOD_POLICY + "EDITED = True  # an edit of its code\n")
    assert _code(second) != codes[0]


def _resolve_in_worker(name: str) -> list[str]:
    POLICIES.load(name)
    return POLICIES.sources(name)


def test_a_spawned_worker_finds_and_may_run_what_the_driver_may(tmp_path, monkeypatch):
    outside = _outside(tmp_path)
    root = _project(tmp_path / "project", "unused")
    _write(root / "policies" / "everyone.py", GOOD_POLICY)
    Settings.from_env(root, store_dir=root / "store", allowed_code_paths=[outside.parent])
    monkeypatch.chdir(tmp_path / "elsewhere")
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        inside = pool.apply(_resolve_in_worker, ("policies/everyone.py:Everyone",))
        allowed = pool.apply(_resolve_in_worker, ("../elsewhere/everyone.py:Everyone",))
    assert (inside, allowed) == (["extension_file[policies/everyone.py]"], ["extension_file[../elsewhere/everyone.py]"])


def test_a_module_policy_failing_at_import_is_one_line(tmp_path, monkeypatch):
    _write(tmp_path / "exiting_policy_module.py", "import sys\nsys.exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with scoped_code(tmp_path), pytest.raises(UnknownExtension,
                                              match=r"^exiting_policy_module: calls sys.exit\(3\) at import$"):
        POLICIES.load("exiting_policy_module:Anything")


def test_scope_without_the_harness_is_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert extensions.code_scope() == extensions.CodeScope(tmp_path.resolve(), ())


def test_audit_checks_the_policy_before_fetching_any_data(tmp_path, monkeypatch):
    from harness.audit import audit
    _write(tmp_path / "exits.py", "import sys\nsys.exit(3)\n")
    monkeypatch.chdir(tmp_path)

    def fetch(*args, **kwargs):
        raise AssertionError("data fetched before the policy was checked")

    monkeypatch.setattr(audit, "fetch_data", fetch)
    root = _project(tmp_path / "project", "heterofl", experiment="hasfl-cifar10")
    settings = Settings.from_env(root, store_dir=root / "store")
    with pytest.raises(UnknownExtension, match=r"^exits.py: calls sys.exit\(3\) at import$"):
        audit.run_audit(settings, "exits.py:Anything", "tiny", ["cifar10"])


def test_audit_names_a_command_line_file_from_the_project_and_allows_it(tmp_path, monkeypatch):
    from harness.audit.audit import as_project_policy, check_command_line_policy
    outside = _outside(tmp_path)
    root = _project(tmp_path / "project", "heterofl")
    monkeypatch.chdir(tmp_path)
    check_command_line_policy("elsewhere/everyone.py:Everyone")
    settings = Settings.from_env(root, store_dir=root / "store")
    policy, allowed = as_project_policy("elsewhere/everyone.py:Everyone", settings)
    assert policy == "../elsewhere/everyone.py:Everyone"
    assert outside.resolve() in allowed.allowed_code_paths
