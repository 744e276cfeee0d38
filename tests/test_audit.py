"""`fedclaims audit` tells a capacity-confounded statistic from one that tracks the data."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from harness.audit.audit import run_audit
from harness.audit.report import write_audit
from harness.settings import Settings

POLICIES = Path(__file__).parent / "data" / "policies" / "toy_policies.py"

# The HAS-FL CIFAR-10 federation at a size a test affords: many clients (the correlations are
# taken over clients), few images and rounds (the statistics of the toy policies do not depend
# on training).
TINY_FEDERATION = """\
experiment: hasfl-cifar10
paper: hasfl
title: tiny HAS-FL CIFAR-10 federation for the audit test
kind: federated_training
config:
  data:
    name: cifar10
    partition: {scheme: dirichlet, alpha: 0.3}
    max_train_per_client: 16
    test_samples: 64
    calibration_samples: 32
  model: {arch: conv, hidden: [4, 8, 8], in_channels: 3, num_classes: 10, image_size: 32}
  federation:
    num_clients: 40
    clients_per_round: 10
    rounds: 2
    local_epochs: 1
    batch_size: 16
variants:
  heterofl: {label: HeteroFL, config: {federation: {policy: heterofl}}}
profiles:
  tiny:
    seeds: [0, 1, 2]
"""


@pytest.fixture(scope="module")
def audits(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("project")
    (root / "claims").mkdir()
    (root / "specs").mkdir()
    (root / "specs" / "hasfl-cifar10.yaml").write_text(TINY_FEDERATION)
    settings = Settings.from_env(root, store_dir=root / "store", workers=2)
    quiet = Console(file=open(os.devnull, "w"))
    return {name: run_audit(settings, f"{POLICIES}:{name}", "tiny", ["cifar10"], console=quiet)
            for name in ("CapacityEcho", "OracleSkew")}


pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not os.environ.get("FEDCLAIMS_DATA"), reason="FEDCLAIMS_DATA is not set")]


def _validation(audit):
    (federation,) = audit.federations
    assert not federation.unavailable, federation.unavailable
    (validation,) = federation.validations
    return validation


def test_a_statistic_that_echoes_capacity_is_flagged_as_confounded(audits) -> None:
    validation = _validation(audits["CapacityEcho"])
    assert validation.with_capacity.significant == -1  # 1 / p_max falls as capacity grows
    assert validation.with_data_given_capacity.significant == 0
    assert validation.confounded
    assert validation.reading.startswith("this statistic tracks capacity, not data")
    assert any("capacity_echo" in finding for finding in audits["CapacityEcho"].findings)


def test_a_statistic_that_is_the_label_skew_passes_the_capacity_check(audits) -> None:
    validation = _validation(audits["OracleSkew"])
    assert validation.with_data_given_capacity.significant == 1
    assert validation.with_data.significant == 1
    assert not validation.confounded
    assert not any("oracle_skew" in finding for finding in audits["OracleSkew"].findings)


def test_the_random_control_spends_the_audited_policy_s_budget(audits) -> None:
    (federation,) = audits["CapacityEcho"].federations
    audited, control = federation.results["audited"], federation.results["random-budget"]
    for seed, result in audited.items():
        realised = sum(r["mean_width"] for r in result["history"]) / len(result["history"])
        assert control[seed]["config"]["policy"]["budget"] == pytest.approx(realised)
        assert control[seed]["caps"] == result["caps"] and control[seed]["tv_distance"] == result["tv_distance"]
    assert {c.against for c in federation.comparisons} == {"random-budget", "heterofl", "fjord"}


def test_the_audit_writes_a_report_and_a_verdict_file(audits, tmp_path: Path) -> None:
    audit = audits["CapacityEcho"]
    markdown, verdicts = write_audit(audit, tmp_path / "audit")
    text = markdown.read_text()
    assert "capacity_echo" in text and "tracks capacity, not data" in text
    data = json.loads(verdicts.read_text())
    assert data["exit_code"] == 1 and data["findings"] == audit.findings
    assert all((tmp_path / "audit" / figure).is_file() for figure in data.get("figures", []))
