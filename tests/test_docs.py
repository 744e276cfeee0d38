"""Generated documentation stays true to the code."""
from pathlib import Path

from harness.loading.vocabulary import render

ROOT = Path(__file__).resolve().parents[1]


def test_claims_vocabulary_doc_is_current():
    assert (ROOT / "docs" / "claims.md").read_text(encoding="utf-8") == render(), \
        "docs/claims.md is stale: run `fedclaims vocabulary > docs/claims.md`"


def test_json_schemas_describe_claims_and_every_kind(tmp_path):
    import json

    from harness.kinds import registered_kinds
    from harness.loading.jsonschema import write_schemas

    claims_path, spec_path = write_schemas(tmp_path)
    claims = json.loads(claims_path.read_text())
    spec = json.loads(spec_path.read_text())
    assert claims["additionalProperties"] is False and "claims" in claims["properties"]
    kinds = {d["properties"]["kind"]["const"] for d in spec["$defs"].values()
             if "kind" in d.get("properties", {}) and "const" in d["properties"]["kind"]}
    assert kinds == set(registered_kinds())
