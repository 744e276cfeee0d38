"""Removing the coordinator's key guard shows in the run record and in the privacy claims' verdicts."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.kinds import kind
from harness.loading.catalog import load_catalog
from harness.runners import fedhenet as runner
from harness.verdicts.verify import FAIL, PASS, verify_claim
from methods.fedhenet import protocol, secure
from tests.test_fedhenet_runner import _config
from tests.test_fedhenet_runner import context as context  # the fixture, re-exported for pytest

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ("fedhenet.he.coordinator-cannot-decrypt", "fedhenet.he.coordinator-holds-no-secret-key")


def _verdicts(record: dict) -> dict[str, str]:
    """Each privacy claim's smoke verdict with `record` as every seed's fedhenet-encrypted run."""
    catalog = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
    config = _config(encrypted=True).model_dump(mode="json")
    lookup = lambda experiment, variant, seed, profile: (f"{variant}-{seed}",  # noqa: E731
                                                         {"status": "ok", "result": record, "config": config})
    return {claim: verify_claim(catalog, catalog.claim(claim), "smoke", lookup).status for claim in CLAIMS}


def _leak_the_secret_key(monkeypatch) -> None:
    """Hand the coordinator the clients' private context and drop its guard."""
    monkeypatch.setattr(protocol, "public_context", lambda ctx: ctx.serialize(save_secret_key=True))
    monkeypatch.setattr(secure, "refuse_secret_key", lambda ctx: None)


def test_honest_coordinator_cannot_decrypt(context):
    record = runner.run(_config(encrypted=True), 0, context)
    assert record["coordinator"]["holds_secret_key"] is False
    assert record["coordinator"]["decrypted"] is False and record["coordinator"]["decryption_error"] is None
    metrics = kind("fedhenet").metrics
    assert metrics["coordinator_could_decrypt"].compute(record, None) == 0.0
    assert metrics["coordinator_holds_secret_key"].compute(record, None) == 0.0
    assert _verdicts(record) == dict.fromkeys(CLAIMS, PASS)


def test_without_the_key_guard_the_record_and_the_claims_react(context, monkeypatch):
    _leak_the_secret_key(monkeypatch)
    record = runner.run(_config(encrypted=True), 0, context)
    assert record["coordinator"]["holds_secret_key"] is True
    assert record["coordinator"]["decrypted"] is True and record["coordinator"]["decryption_error"] < 1e-3
    metrics = kind("fedhenet").metrics
    assert metrics["coordinator_could_decrypt"].compute(record, None) == 1.0
    assert metrics["coordinator_holds_secret_key"].compute(record, None) == 1.0
    assert _verdicts(record) == dict.fromkeys(CLAIMS, FAIL)


def test_without_the_coordinators_guard_the_public_context_still_holds_no_key(context, monkeypatch):
    monkeypatch.setattr(secure, "refuse_secret_key", lambda ctx: None)
    assert runner.run(_config(encrypted=True), 0, context)["coordinator"]["holds_secret_key"] is False


def test_a_leaked_key_alone_is_refused_by_the_coordinator(context, monkeypatch):
    monkeypatch.setattr(protocol, "public_context", lambda ctx: ctx.serialize(save_secret_key=True))
    with pytest.raises(ValueError, match="secret key"):
        runner.run(_config(encrypted=True), 0, context)


def test_plaintext_runs_have_no_coordinator_record(context):
    record = runner.run(_config(), 0, context)
    assert record["coordinator"] is None
    assert math.isnan(kind("fedhenet").metrics["coordinator_could_decrypt"].compute(record, None))
