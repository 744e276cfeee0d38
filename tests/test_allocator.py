"""The C allocator's settings in a run's process (harness.running.allocator)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.running import worker
from harness.running.allocator import on_glibc

REPO = Path(__file__).resolve().parents[1]
glibc_only = pytest.mark.skipif(not on_glibc(), reason="the allocator's settings apply to glibc only")

TUNE = "from harness.running.allocator import tune_allocator; print(tune_allocator())"
DIGEST = """
import hashlib, sys
import numpy as np, torch
sys.path.insert(0, "tests")
from harness.running.allocator import tune_allocator
if sys.argv[1] == "tuned":
    assert tune_allocator()
torch.set_num_threads(1)
from federation_helpers import federation_config
from methods.federated import ClientData, FederatedDataset, run_federation
from methods.models.lstm import CharLSTMFamily
g = torch.Generator().manual_seed(0)
def part(n):
    return ClientData(torch.randint(0, 95, (n, 40), generator=g), torch.randint(0, 95, (n,), generator=g))
data = FederatedDataset([part(20 + i) for i in range(6)], part(16), None, 95)
config = federation_config(num_clients=6, clients_per_round=4, rounds=3, local_epochs=1, batch_size=8,
                           lr=0.1, extraction="rolling", eval_every=1)
result = run_federation(CharLSTMFamily(95, 8, 96, 2), data, config, np.array([1.0, 0.5, 0.25, 1.0, 0.5, 0.75]), 0)
digest = hashlib.sha256()
for name, value in sorted(result.final_params.items()):
    digest.update(name.encode()); digest.update(value.numpy().tobytes())
digest.update(repr([(r.test_accuracy, r.test_loss, r.train_loss, r.update_norms) for r in result.history]).encode())
print(digest.hexdigest())
"""


def _python(code: str, *args: str, **environment: str) -> str:
    env = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(REPO), **environment}, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@glibc_only
def test_set_on_glibc_unless_the_user_chose_a_threshold() -> None:
    assert _python(TUNE) == "True"
    assert _python(TUNE, MALLOC_MMAP_THRESHOLD_="65536") == "False"
    assert _python(TUNE, MALLOC_TRIM_THRESHOLD_="65536") == "False"


@glibc_only
def test_the_settings_change_no_bit_of_a_run() -> None:
    assert _python(DIGEST, "tuned") == _python(DIGEST, "glibc-defaults")


def test_a_run_sets_its_process_up_before_it_runs(monkeypatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(worker, "tune_allocator", lambda: calls.append("allocator"))
    monkeypatch.setattr(worker, "_run_request", lambda request, settings, progress: calls.append("run"))
    worker.run_request({}, {"device": "cpu", "threads": 1})
    assert calls == ["allocator", "run"]
