"""What one pytest session of the tests and the claims shares and what it keeps apart: the claims plugin
loads the catalog once per session, not once per claims file, and the records switch of tests/
(`hermetic_store`: FEDCLAIMS_RECORDS=0) ends with the tests, so the claim items after them read the
project's committed records.

Each test runs pytest in a child process with an observer plugin that logs the catalog loads and the
records switch each item runs under."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

OBSERVER = '''
import os

import pytest

import harness.loading.catalog as catalog_module

LOG = os.environ["OBSERVER_LOG"]
_load_catalog = catalog_module.load_catalog


def _log(line):
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(line + "\\n")


def _counted(*args, **kwargs):
    _log("catalog loaded")
    return _load_catalog(*args, **kwargs)


catalog_module.load_catalog = _counted


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Keep the first test of tests/ and one analytic claim (a run of well under a second)."""
    tests = [item for item in items if "tests" in item.path.parts][:1]
    claims = [item for item in items if getattr(item, "claim_id", "").startswith("hasfl.alloc.")][:1]
    items[:] = tests + claims


def pytest_runtest_call(item):
    _log(f"{'claim' if hasattr(item, 'claim_id') else 'test'} FEDCLAIMS_RECORDS={os.environ.get('FEDCLAIMS_RECORDS')}")
'''


def _observed(tmp_path: Path, *arguments: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    (tmp_path / "observer.py").write_text(OBSERVER, encoding="utf-8")
    log = tmp_path / "observed.log"
    environment = {name: value for name, value in os.environ.items() if name != "FEDCLAIMS_RECORDS"}
    environment.update({"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]), "OBSERVER_LOG": str(log),
                        "FEDCLAIMS_CACHE": str(tmp_path / "cache"), "FEDCLAIMS_DOWNLOAD": "0"})
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "-p", "observer", "--claims-store", str(tmp_path / "store"), "--rootdir", str(REPO),
                          *arguments], cwd=REPO, env=environment, capture_output=True, text=True, timeout=600)
    return run, log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_the_claims_plugin_loads_the_catalog_once_per_session(tmp_path: Path) -> None:
    assert len(list((REPO / "claims").glob("*.yaml"))) > 1  # else once per file is once
    run, observed = _observed(tmp_path, "--collect-only", "claims")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert observed.count("catalog loaded") == 1, observed


def test_the_records_switch_of_the_tests_does_not_reach_the_claims_after_them(tmp_path: Path) -> None:
    run, observed = _observed(tmp_path, "tests/test_layers.py", "claims")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    ran = [line for line in observed if line.startswith(("test ", "claim "))]
    assert ran == ["test FEDCLAIMS_RECORDS=0", "claim FEDCLAIMS_RECORDS=None"], observed
