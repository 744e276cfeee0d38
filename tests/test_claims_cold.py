"""The `claims_cold` tier: every smoke run behind the claims retrained in a fresh store, no committed record read,
and every claim checked against the committed baseline as the claims suite checks it (exactly under the
baseline's numerics, against the measured drift under others). The default tier's claim items read the
committed records and retrain a sample of them (`harness.running.sample`); this retrains all of them (about
15 to 25 minutes on two cores)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.pipeline import verify
from harness.regression import baseline as baseline_io
from harness.settings import Settings

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.claims_cold


def test_every_smoke_run_retrained_holds_the_baseline(tmp_path: Path) -> None:
    settings = Settings.from_env(REPO, store_dir=tmp_path / "store", committed_records=False)
    outcome = verify(settings, profiles=["smoke"])
    assert outcome.execution.ran > 0 and outcome.execution.reused == 0, outcome.execution.text()
    errors = [f"{v.claim}: {v.reason}" for v in outcome.verdicts if v.status == "ERROR"]
    assert not errors, "\n".join(errors)
    check = baseline_io.check(outcome.verdicts, baseline_io.load(REPO / "baselines" / "smoke.json"), complete=False,
                              widen_unrecorded=True)
    failures = [f"{claim}: {'; '.join(result.failures)}" for claim, result in check.claims.items() if result.failures]
    assert not failures, "\n".join(failures)
