"""The fetch stage: a first run that downloads its data verifies without ERROR.

A tiny project (its own claims/ and specs/) needs the Shakespeare text, which only a loopback
server has. plan (dry) -> verify (fetch, run, verify) -> plan again, from an empty cache and store.
"""
from __future__ import annotations

import hashlib
import io
import random
from pathlib import Path

import pytest
from rich.console import Console

from harness import cli
from harness.datasets.downloads import SOURCES, Source
from harness.pipeline import verify
from harness.settings import Settings
from tests.loopback import Served, loopback_server

CLAIM_ID = "tiny.accuracy-is-a-percentage"
CLAIMS = f"""\
paper: tiny
title: "A tiny paper whose one claim needs downloaded text"
reference: "test fixture"
claims:
  - id: {CLAIM_ID}
    statement: "Next-character accuracy is a percentage."
    source: "§1"
    experiment: tiny-text
    observe: {{metric: final_accuracy, of: full}}
    expect:
      smoke: {{between: [0.0, 100.0]}}
"""
SPEC = """\
experiment: tiny-text
paper: tiny
title: "One round of a tiny LSTM on twenty roles"
kind: federated_training
config:
  data: {name: shakespeare, partition: {scheme: roles}, max_train_per_client: 16, test_samples: 40}
  model: {arch: char_lstm, hidden: 4, embed_dim: 2, vocab_size: 95, num_layers: 1, seq_len: 80}
  federation: {num_clients: 20, clients_per_round: 2, rounds: 1, local_epochs: 1, batch_size: 16, policy: full}
variants:
  full: {label: "Full width"}
profiles:
  smoke: {description: "seconds", seeds: [0]}
"""
WORDS = "to be or not that is the question whether tis nobler in mind suffer slings arrows".split()


def role_text() -> bytes:
    """Twenty roles in the ROLE: format, each long enough for 80-character windows."""
    blocks = []
    for role in range(20):
        pick = random.Random(role)
        blocks.append(f"ROLE{role:02d}:\n" + " ".join(pick.choice(WORDS) for _ in range(140)) + "\n")
    return "\n".join(blocks).encode()


TEXT = role_text()
DIGEST = hashlib.sha256(TEXT).hexdigest()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "claims").mkdir(parents=True)
    (root / "specs").mkdir()
    (root / "claims" / "tiny.yaml").write_text(CLAIMS)
    (root / "specs" / "tiny-text.yaml").write_text(SPEC)
    for name in ("FEDCLAIMS_DATA", "FEDCLAIMS_STORE", "FEDCLAIMS_DOWNLOAD", "FEDCLAIMS_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    return root


def _settings(root: Path) -> Settings:
    return Settings.from_env(root, workers=1, executor="local")


def _plan(root: Path, capsys: pytest.CaptureFixture) -> str:
    assert cli.main(["--root", str(root), "plan"]) == 0
    return capsys.readouterr().out


def _serve(monkeypatch: pytest.MonkeyPatch, server, sha256: str = DIGEST) -> None:
    monkeypatch.setitem(SOURCES, "shakespeare",
                        Source("tinyshakespeare.txt", server.url("tiny.txt"), sha256, len(TEXT)))


def test_first_run_downloads_once_and_every_verdict_is_a_verdict(project: Path, capsys, monkeypatch) -> None:
    with loopback_server({"tiny.txt": Served(TEXT)}) as server:
        _serve(monkeypatch, server)
        listing = _plan(project, capsys)
        assert server.requests == []  # a dry listing downloads nothing
        assert "data set shakespeare: not fetched yet" in listing and server.url("tiny.txt") in listing
        assert "to run" in listing and "tiny-text/full/seed 0 (smoke)" in listing

        outcome = verify(_settings(project), console=Console(file=io.StringIO()))
        assert server.requests == ["tiny.txt"]
        assert [(v.claim, v.status) for v in outcome.verdicts] == [(CLAIM_ID, outcome.verdicts[0].status)]
        assert outcome.verdicts[0].status in {"PASS", "FAIL", "INCONCLUSIVE"}, outcome.verdicts[0].reason
        assert outcome.data.fingerprints == {"shakespeare": DIGEST} and outcome.data.problems == {}
        (request,) = outcome.requests
        record = outcome.store.get(request.key)
        assert record["status"] == "ok" and record["provenance"]["datasets"] == {"shakespeare": DIGEST}

        # The dry listing now keys the run exactly as the run was stored.
        listing = _plan(project, capsys)
        assert f"{request.key[:16]}  stored" in listing and "not fetched yet" not in listing
        again = verify(_settings(project), console=Console(file=io.StringIO()))
        assert (again.execution.ran, again.execution.reused) == (0, 1)
        assert again.verdicts[0].status == outcome.verdicts[0].status
        assert server.requests == ["tiny.txt"]


def test_a_rejected_download_is_unavailable_everywhere_not_an_error(project: Path, monkeypatch) -> None:
    with loopback_server({"tiny.txt": Served(TEXT)}) as server:
        _serve(monkeypatch, server, sha256="f" * 64)
        console = io.StringIO()
        outcome = verify(_settings(project), console=Console(file=console, width=1000))
    (verdict,) = outcome.verdicts
    assert verdict.status == "SKIPPED" and verdict.reason.startswith("data unavailable")
    assert outcome.data.fingerprints == {"shakespeare": "unavailable"}
    problem = outcome.data.problems["shakespeare"]
    assert "DataCheckFailed" in problem and "f" * 64 in problem
    assert "is not the pinned" in console.getvalue()
    (request,) = outcome.requests
    record = outcome.store.get(request.key)
    assert record["status"] == "unavailable" and record["provenance"]["datasets"] == {"shakespeare": "unavailable"}
    cache = Path(_settings(project).cache_dir) / "data" / "shakespeare"
    assert not cache.exists() or list(cache.iterdir()) == []
