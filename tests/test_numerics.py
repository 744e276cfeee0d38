"""The numerics description: what enters the fingerprint, and drift between two stores."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness import numerics
from harness.regression.numerics_drift import accuracy_growth, pairs
from harness.running.store import ResultStore
from tests.record_helpers import keyed

ROOT = Path(__file__).resolve().parents[1]


def _described(env: dict[str, str]) -> dict:
    code = "import json; from harness.numerics import numerics; print(json.dumps(numerics(threads=1)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    return json.loads(done.stdout)


def test_description_names_libraries_kernels_cpu_pins_device_threads() -> None:
    here = numerics.numerics("cpu", threads=1)
    for field in ("torch", "mkl", "onednn", "aten_cpu_capability", "blas", "cpu", "pins", "device", "threads"):
        assert field in here
    assert here["cpu"]["caches"] and here["cpu"]["flags_sha256"] and here["threads"] == 1
    assert here["fingerprint"] == numerics.fingerprint_of(here)
    assert numerics.numerics("cpu", threads=2)["fingerprint"] != here["fingerprint"]


def test_a_pin_changes_the_fingerprint_and_is_recorded() -> None:
    env = {k: v for k, v in os.environ.items() if k not in numerics.PIN_VARIABLES}
    plain = _described(env)
    pinned = _described({**env, "MKL_CBWR": "COMPATIBLE"})
    assert pinned["pins"] == {"MKL_CBWR": "COMPATIBLE"} and plain["pins"] == {}
    assert pinned["fingerprint"] != plain["fingerprint"]


def test_record_fingerprint_of_old_records_is_unrecorded() -> None:
    assert numerics.fingerprint({"provenance": {}}) == "unrecorded"
    assert numerics.fingerprint({"provenance": {"numerics": {"fingerprint": "abc"}}}) == "abc"


def _record(run: str, fp: str, accuracies: list[float]) -> dict:
    history = [{"round": i, "test_accuracy": a} for i, a in enumerate(accuracies)]
    return keyed({"experiment": "e", "variant": "v", "seed": 0, "profile": "smoke", "kind": "federated_training",
                  "config": {"run": run}, "status": "ok", "error": None, "result": {"history": history},
                  "provenance": {"numerics": {"fingerprint": fp}}})


def test_drift_between_two_stores_grows_round_by_round(tmp_path: Path) -> None:
    first, second = ResultStore(tmp_path / "a"), ResultStore(tmp_path / "b")
    first.put(_record("k1", "here", [0.1, 0.2, 0.3]))
    second.put(_record("k1", "there", [0.1, 0.21, 0.33]))
    first.put(_record("k2", "here", [0.1, 0.2, 0.3]))
    second.put(_record("k2", "here", [0.1, 0.2, 0.3]))  # same numerics: not drift
    found = list(pairs(first, second))
    assert [p.key for p in found] == [_record("k1", "here", [])["key"]]
    (growth,) = accuracy_growth(found)
    assert growth.rms[0] == 0.0 and growth.rms[2] > growth.rms[1] > 0.0
