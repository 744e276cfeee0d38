"""Generated documentation stays true to the code."""
from pathlib import Path

from harness.vocabulary import render

ROOT = Path(__file__).resolve().parents[1]


def test_claims_vocabulary_doc_is_current():
    assert (ROOT / "docs" / "claims.md").read_text(encoding="utf-8") == render(), \
        "docs/claims.md is stale: run `fedclaims vocabulary > docs/claims.md`"
