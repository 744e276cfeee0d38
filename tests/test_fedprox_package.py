"""The fourth paper, added only through the doors: the FedProx package under examples/ installs with
pip, registers its paper, kind, round hook and metric through entry points, verifies its smoke
claims, and changes the key of no record of the three papers in scope."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "examples" / "fedprox"
PAPERS_IN_SCOPE = ("hasfl", "fedrolex", "fedhenet")

KEYS = """
import json, sys
from harness.loading.catalog import load_project
from harness.running.planning import plan
from harness.settings import Settings
settings = Settings.from_env(sys.argv[1], store_dir=sys.argv[2])
catalog = load_project(settings)
claims = [c for c in catalog.claims if c.paper in sys.argv[3].split(",")]
requests, _ = plan(catalog, claims, ["smoke", "standard", "paper"], settings)
print(json.dumps({"papers": sorted(catalog.papers), "keys": sorted(r.key for r in requests)}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The package installed with pip into a folder of its own (the project's environment untouched)."""
    target = tmp_path_factory.mktemp("fedprox-site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(PACKAGE)], check=True, capture_output=True)
    return target


def _environment(site: Path | None, cache: Path) -> dict[str, str]:
    paths = [str(site)] if site else []
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(REPO)]), "FEDCLAIMS_CACHE": str(cache),
            "FEDCLAIMS_DOWNLOAD": "0"}


def _keys(site: Path | None, tmp_path: Path) -> dict:
    run = subprocess.run([sys.executable, "-c", KEYS, str(REPO), str(tmp_path / "store"), ",".join(PAPERS_IN_SCOPE)],
                         env=_environment(site, tmp_path / "cache"), capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def test_adding_the_package_keeps_the_key_of_every_record_of_the_three_papers(installed, tmp_path) -> None:
    without, with_package = _keys(None, tmp_path), _keys(installed, tmp_path)
    assert "fedprox" in with_package["papers"] and "fedprox" not in without["papers"]
    assert len(without["keys"]) > 300
    assert with_package["keys"] == without["keys"]


def test_the_package_verifies_its_smoke_claims(installed, tmp_path) -> None:
    run = subprocess.run([sys.executable, "-m", "harness.cli", "--root", str(REPO), "report", "--paper", "fedprox",
                          "--output", str(tmp_path / "REPORT.md")],
                         env=_environment(installed, tmp_path / "cache"), cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    verdicts = {v["claim"]: v for v in json.loads((tmp_path / "REPORT.json").read_text())["verdicts"]
                if v["paper"] == "fedprox" and v["profile"] == "smoke"}
    assert len(verdicts) == 5
    reasons = {c: v["reason"] for c, v in verdicts.items()}
    assert {v["status"] for v in verdicts.values()} <= {"PASS", "INCONCLUSIVE"}, reasons
    for central in ("fedprox.abstract.more-accurate-than-fedavg", "fedprox.abstract.more-stable-than-fedavg"):
        assert verdicts[central]["status"] == "PASS", verdicts[central]["reason"]
