"""Implementation checks (`role: implementation`) can fail: each is verified at smoke with the
implementation it checks broken in this process (runs execute here, in a fresh store), and must FAIL.
Their PASS with the implementation intact is the committed report's and the claims' own tests'."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from harness.loading.catalog import load_catalog
from harness.settings import Settings
from methods.extraction import ExtractionMode

REPO = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(REPO / "claims", REPO / "specs", REPO)
needs_data = pytest.mark.skipif(not os.environ.get("FEDCLAIMS_DATA"), reason="FEDCLAIMS_DATA is not set")


def _verdicts(tmp_path: Path, *claims: str) -> dict[str, str]:
    from harness.pipeline import verify

    settings = Settings.from_env(REPO, store_dir=tmp_path / "store", workers=1, executor="local")
    pattern = "^(" + "|".join(claim.replace(".", r"\.") for claim in claims) + ")$"
    return {v.claim: v.status for v in verify(settings, pattern=pattern, profiles=("smoke",)).verdicts
            if v.profile == "smoke"}


def _verdict(tmp_path: Path, claim: str) -> str:
    return _verdicts(tmp_path, claim)[claim]


def test_the_implementation_checks_are_the_code_path_ones() -> None:
    checks = {c.id for c in CATALOG.claims if c.claim.role == "implementation"}
    assert checks == {"fedhenet.protocol.one-round", "fedhenet.he.coordinator-holds-no-secret-key",
                      "fedrolex.cost.communication-below-upper-bound", "fedrolex.cost.computation-below-upper-bound",
                      "fedrolex.cost.costs-above-lower-bound",
                      "fedrolex.evenness.random-uneven", "fedrolex.coverage.static-never-covers",
                      "fedrolex.evenness.static-never-beyond-width", "hasfl.prop3.uniform-leaves-coordinates-untrained"}


def test_an_implementation_check_on_a_quantity_learning_decides_is_refused(tmp_path: Path) -> None:
    source = (REPO / "claims" / "fedrolex.yaml").read_text(encoding="utf-8")
    broken = source.replace("    role: implementation\n    observe: {metric: upload_reduction, of: fedrolex-l2}",
                            "    role: implementation\n    observe: {metric: end_accuracy, of: fedrolex-l2}", 1)
    assert broken != source
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "fedrolex.yaml").write_text(broken, encoding="utf-8")
    with pytest.raises(Exception, match="implementation check observes what the code path fixes"):
        load_catalog(tmp_path / "claims", REPO / "specs", REPO)


def _mode(mode) -> ExtractionMode:
    return ExtractionMode(mode)


def test_random_extraction_that_rolls_fails_random_uneven(tmp_path: Path, monkeypatch) -> None:
    import harness.runners.mask_coverage as coverage
    real = coverage.select_units

    def rolling_instead(groups, width, mode, round_index, generator):
        chosen = ExtractionMode.ROLLING if _mode(mode) is ExtractionMode.RANDOM else mode
        return real(groups, width, chosen, round_index, generator)

    monkeypatch.setattr(coverage, "select_units", rolling_instead)
    assert _verdict(tmp_path, "fedrolex.evenness.random-uneven") == "FAIL"


@pytest.mark.parametrize("claim", ["fedrolex.coverage.static-never-covers",
                                   "fedrolex.evenness.static-never-beyond-width"])
def test_static_extraction_that_rolls_fails_never_covers(claim: str, tmp_path: Path, monkeypatch) -> None:
    import harness.runners.mask_coverage as coverage
    real = coverage.select_units

    def rolling_instead(groups, width, mode, round_index, generator):
        chosen = ExtractionMode.ROLLING if _mode(mode) is ExtractionMode.PREFIX else mode
        return real(groups, width, chosen, round_index, generator)

    monkeypatch.setattr(coverage, "select_units", rolling_instead)
    assert _verdict(tmp_path, claim) == "FAIL"


@pytest.mark.claims_cold
@needs_data
def test_a_uniform_sub_model_that_moves_leaves_nothing_untrained(tmp_path: Path, monkeypatch) -> None:
    """Uniform's half-width prefix replaced by a window that moves on at every extraction (at the same
    width, so at the same cost): the union of what clients train grows to the whole model."""
    import methods.extraction as extraction
    calls = iter(range(10**9))

    def moving(n: int, width: float) -> torch.Tensor:
        return (next(calls) + torch.arange(extraction.kept_units(n, width))) % n

    monkeypatch.setattr(extraction, "prefix_indices", moving)
    assert _verdict(tmp_path, "hasfl.prop3.uniform-leaves-coordinates-untrained") == "FAIL"


@pytest.mark.claims_cold
@needs_data
def test_cost_formulas_that_ignore_the_width_fail_the_cost_checks(tmp_path: Path, monkeypatch) -> None:
    """Two formulas broken in one verify (the claims share their runs); each breaks one claim's metric:
    the upload counted as the whole model, and every width costed as the full model's MACs."""
    import harness.runners.federated as runner
    import methods.federated.loop as loop
    real = loop.update_statistics

    def whole_model_uploads(updates):
        norms, _ = real(updates)
        return norms, [sum(t.numel() for t in u.delta.values()) for u in updates]

    def full_model_costs(family, widths, example_input):
        return {width: (1.0, 1.0) for width in widths}

    monkeypatch.setattr(loop, "update_statistics", whole_model_uploads)
    monkeypatch.setattr(runner, "width_cost_table", full_model_costs)
    assert _verdicts(tmp_path, "fedrolex.cost.communication-below-upper-bound",
                     "fedrolex.cost.computation-below-upper-bound") == {
        "fedrolex.cost.communication-below-upper-bound": "FAIL", "fedrolex.cost.computation-below-upper-bound": "FAIL"}


@pytest.mark.claims_cold
@needs_data
def test_a_coordinator_given_the_secret_key_and_a_second_round_fail(tmp_path: Path, monkeypatch) -> None:
    """Two breaks in one verify (the claims share their runs); each breaks one claim's quantity: the
    coordinator given the clients' context with its secret key (its guard removed), and a protocol that
    takes a second round."""
    import harness.runners.fedhenet as runner
    import methods.fedhenet.protocol as protocol
    import methods.fedhenet.secure as secure
    real = runner.run_fedhenet

    def with_the_secret_key(context) -> bytes:
        return context.serialize(save_public_key=True, save_secret_key=True, save_galois_keys=False,
                                 save_relin_keys=False)

    def twice(*args, **kwargs):
        real(*args, **kwargs)
        return {**real(*args, **kwargs), "rounds": 2}

    monkeypatch.setattr(protocol, "public_context", with_the_secret_key)
    monkeypatch.setattr(secure, "refuse_secret_key", lambda context: None)
    monkeypatch.setattr(runner, "run_fedhenet", twice)
    assert _verdicts(tmp_path, "fedhenet.he.coordinator-holds-no-secret-key", "fedhenet.protocol.one-round") == {
        "fedhenet.he.coordinator-holds-no-secret-key": "FAIL", "fedhenet.protocol.one-round": "FAIL"}


def test_a_sub_model_is_cut_by_its_width_here() -> None:
    """The unbroken extraction the breaks above replace: a half-width prefix keeps half the units."""
    from methods.extraction import kept_units, prefix_indices
    assert kept_units(64, 0.5) == 32 and torch.equal(prefix_indices(64, 0.5), torch.arange(32))
