"""A claim's labels: its role (the paper's claim or a diagnostic), where its quote comes from,
and the evidence it rests on (empirical or analytic, from its experiment's kind)."""
from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.kinds import registered_kinds
from harness.loading.catalog import load_catalog
from harness.schema.claim import Claim

ROOT = Path(__file__).resolve().parents[1]

BASE = {"id": "test.claim", "statement": "A statement long enough to be valid.", "source": "§0",
        "experiment": "hasfl-allocation-rule", "observe": {"metric": "max_allocation", "of": "tier-0.25"},
        "expect": {"smoke": {"equals": 0.25}}}


def test_a_claim_is_the_papers_and_quotes_the_paper_unless_labelled() -> None:
    claim = Claim.model_validate(BASE)
    assert (claim.role, claim.quote_from) == ("paper", "paper")


def test_a_diagnostic_states_what_it_measures_instead() -> None:
    with pytest.raises(ValidationError, match="a diagnostic claim needs a note"):
        Claim.model_validate({**BASE, "role": "diagnostic"})
    with pytest.raises(ValidationError, match="a diagnostic claim needs a note"):
        Claim.model_validate({**BASE, "role": "diagnostic", "note": "   "})
    claim = Claim.model_validate({**BASE, "role": "diagnostic", "note": "cached features; the paper's is c.x"})
    assert claim.role == "diagnostic"


def test_a_readme_quote_names_the_readme() -> None:
    with pytest.raises(ValidationError, match="source naming that README"):
        Claim.model_validate({**BASE, "quote_from": "authors-readme", "source": "§4 Energy Efficiency"})
    claim = Claim.model_validate({**BASE, "quote_from": "authors-readme", "source": "authors' repository README"})
    assert claim.quote_from == "authors-readme"


def test_every_kind_declares_its_evidence() -> None:
    kinds = registered_kinds()
    assert {kind.evidence for kind in kinds.values()} <= {"empirical", "analytic"}
    assert all(kind.evidence == "empirical" for kind in kinds.values() if kind.learning is not None)


def test_a_claims_evidence_is_its_experiment_kinds() -> None:
    catalog = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
    assert catalog.evidence("hasfl.alloc.cap-at-2.4-for-tier-1.0") == "analytic"
    assert catalog.evidence("hasfl.table2.cifar10.hasfl-matches-fjord") == "empirical"
    for loaded in catalog.claims:
        assert catalog.evidence(loaded.id) == catalog.specs[loaded.claim.experiment].kind.evidence


def test_a_probe_says_what_the_project_tests_that_the_paper_does_not() -> None:
    with pytest.raises(ValidationError, match="a probe needs a note"):
        Claim.model_validate({**BASE, "role": "probe"})
    claim = Claim.model_validate({**BASE, "role": "probe", "note": "an attack the paper does not claim to resist"})
    assert claim.role == "probe"
