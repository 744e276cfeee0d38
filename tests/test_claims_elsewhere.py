"""The claims suite on a machine whose numerics no baseline and no committed record holds (issue 58): this
machine under the kernel pins `fedclaims numerics` offers (`harness.numerics.simulated_machine`), in a child
pytest over the claims that read HAS-FL CIFAR-10's random-budget variant. The suite retrains its sample run
(seed 0 of that variant) under those numerics, compares it with its committed record in the metrics no kernel
touches, and checks the claims reading it against the baseline's measured drift: they pass, as on a fresh
machine of another CPU family."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.numerics import numerics, simulated_machine

REPO = Path(__file__).resolve().parents[1]
SELECTION = ["claims/hasfl.yaml", "-k", "cifar10 and random"]

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not os.environ.get("FEDCLAIMS_DATA"), reason="FEDCLAIMS_DATA is not set")]


def test_the_claims_pass_under_numerics_no_baseline_or_record_holds(tmp_path: Path) -> None:
    pins = simulated_machine(numerics("cpu", 1))
    if pins is None:
        pytest.skip("no kernel pins simulate another machine on this CPU")
    environment = {name: value for name, value in os.environ.items() if name != "FEDCLAIMS_RECORDS"}
    environment.update(pins, PYTHONPATH=str(REPO), FEDCLAIMS_CACHE=str(tmp_path / "cache"), FEDCLAIMS_DOWNLOAD="0")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "--rootdir", str(REPO), "--claims-workers", "1", *SELECTION],
                         cwd=REPO, env=environment, capture_output=True, text=True, timeout=900)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-4000:]
    (line,) = [line for line in output.splitlines() if line.startswith("fedclaims: retrained a sample")]
    assert "hasfl-cifar10/random-budget same numbers" in line, line
    here = line.split("hasfl-cifar10/random-budget same numbers (made under numerics ")[1].split(", here ")[1][:16]
    baseline = json.loads((REPO / "baselines" / "smoke.json").read_text(encoding="utf-8"))
    assert here not in baseline["numerics"], f"{here} is the baseline's: not another machine"
    assert "passed" in output.splitlines()[-1], output[-2000:]
