"""Fixtures shared by the tests that plan and execute the shipped project's runs (a module
defining its own `catalog` or `settings` uses that one)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.loading.catalog import load_catalog
from harness.settings import Settings

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def catalog():
    """The shipped claims and specs."""
    return load_catalog(REPO / "claims", REPO / "specs", REPO)


@pytest.fixture(scope="module", autouse=True)
def hermetic_store():
    """A test's store holds what the test ran: the project's committed records (`records/`) are read
    only where a test names them, so a command a test starts reads none either. Set per module of
    tests/ (an autouse fixture is set up before the other fixtures of its scope, so module fixtures
    building a command's environment see it too) and undone after it: the claim items and
    benchmarks that run later in the session read the committed records."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FEDCLAIMS_RECORDS", "0")
        yield


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """The shipped project with a fresh store and cache, run in this process, no downloads."""
    return Settings(root=REPO, store_dir=tmp_path / "store", cache_dir=tmp_path / "cache", data_dir=None,
                    download=False, executor="local", committed_records=False)
