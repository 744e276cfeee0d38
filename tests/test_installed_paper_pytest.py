"""pytest runs the claims of a paper that lives in an installed package (`fedclaims.papers`), both
from the project (`pytest -m <paper>`) and from the package's own claims folder, where the catalog
reaches the package twice (its path and its entry point) and must read it once."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]

SPEC = """\
experiment: rulepaper-rule
paper: rulepaper
title: HAS-FL's allocation rule, read by a paper outside the project
kind: allocation_rule
config: {p_min: 0.4, gamma: 0.25, federation_size: 20, ratio_max: 5.0, ratio_step: 0.01, p_max: 1.0}
variants:
  top: {label: "p_max = 1.0"}
profiles:
  smoke: {seeds: [0]}
"""

CLAIMS = """\
paper: rulepaper
title: A paper installed as a package
reference: "a throwaway package of the test suite"
claims:
  - id: rulepaper.floor
    statement: "No client is allocated less than p_min = 0.4."
    source: "§1"
    experiment: rulepaper-rule
    observe: {metric: min_allocation, of: top}
    expect:
      smoke: {approx: 0.4, tolerance: 1.0e-9}
  - id: rulepaper.ceiling
    statement: "No client is allocated more than its cap, 1.0."
    source: "§1"
    experiment: rulepaper-rule
    observe: {metric: max_allocation, of: top}
    expect:
      smoke: {approx: 1.0, tolerance: 1.0e-9}
"""


def installed_package(site: Path, name: str, files: dict[str, str], entry_points: str) -> Path:
    """A package folder `name` under `site` holding `files` (paths inside it), with its distribution's
    metadata and `entry_points.txt`, as pip would leave it on a path."""
    for relative, text in {"__init__.py": f'"""A paper for fedclaims: {name}."""\n', **files}.items():
        (site / name / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / name / relative).write_text(text)
    meta = site / f"{name}-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text(entry_points)
    return site


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return installed_package(tmp_path_factory.mktemp("site"), "rulepaper",
                             {"claims/rulepaper.yaml": CLAIMS, "specs/rulepaper-rule.yaml": SPEC},
                             "[fedclaims.papers]\nrulepaper = rulepaper\n")


def _pytest(site: Path, tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]),
                   "FEDCLAIMS_CACHE": str(tmp_path / "cache"), "FEDCLAIMS_RECORDS": "0", "FEDCLAIMS_DOWNLOAD": "0"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "--claims-store", str(tmp_path / "store"), "--rootdir", str(REPO), *arguments],
                          cwd=REPO, env=environment, capture_output=True, text=True, timeout=600)


def test_the_project_runs_an_installed_papers_claims_by_its_marker(site, tmp_path) -> None:
    run = _pytest(site, tmp_path, "claims", "-m", "rulepaper")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "2 passed" in run.stdout, run.stdout[-2000:]


def test_the_packages_claims_folder_runs_on_its_own(site, tmp_path) -> None:
    run = _pytest(site, tmp_path, str(site / "rulepaper" / "claims"), "-m", "rulepaper")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "2 passed" in run.stdout and "duplicate" not in run.stdout + run.stderr, run.stdout[-2000:]


def test_pytest_counts_what_it_runs_prints_each_run_and_names_items_that_paste_back(site, tmp_path) -> None:
    """The collection line counts the installed paper's items (pytest's own count leaves them out), a line
    says each run that finished while the claims were verified, and a node id pytest printed runs again."""
    run = _pytest(site, tmp_path, "claims", "-m", "rulepaper", "-rA")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert ("fedclaims: 2 claim items to run (2 claims of rulepaper at smoke; 2 from installed papers, not in "
            "pytest's count above)") in run.stdout, run.stdout[-3000:]
    finished = [line for line in run.stdout.splitlines() if " runs finished (" in line]
    assert len(finished) == 1 and finished[0].startswith("1/1 runs finished (")
    assert finished[0].endswith("s): rulepaper-rule/top/seed 0 (smoke): ok")
    assert "fedclaims: 1 runs: 0 reused, 1 run, 0 failed" in run.stdout
    (node_id,) = re.findall(r"^PASSED (\S+::rulepaper\.floor\[smoke\])$", run.stdout, re.M)
    again = _pytest(site, tmp_path, node_id)
    assert again.returncode == 0 and "1 passed" in again.stdout, again.stdout[-3000:] + again.stderr[-3000:]
    assert "fedclaims: 1 claim item to run (1 claim of rulepaper at smoke); the first" in again.stdout
