"""Re-verification from the observations a report recorded (`harness.archive`): it reproduces the
verdicts that were decided from records, and a file that is not a report is refused by name."""
import json
from pathlib import Path

import pytest

from harness.archive import load_archive, reverify
from harness.catalog import load_catalog
from harness.pipeline import expectation_alpha
from harness.verify import apply_families

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)


def test_the_committed_observations_give_back_the_committed_verdicts() -> None:
    archive = load_archive(ROOT / "REPORT.json")
    verdicts = [reverify(CATALOG, loaded, profile, archive) for loaded in CATALOG.claims
                for profile in archive.profiles() if (loaded.id, profile) in archive.verdicts]
    apply_families(verdicts, lambda v: expectation_alpha(CATALOG, v))
    decided = [v for v in verdicts if archive.verdicts[(v.claim, v.profile)].get("numbers")]
    assert len(decided) > 250
    changed = [(v.claim, v.profile, archive.verdicts[(v.claim, v.profile)]["status"], v.status) for v in decided
               if (v.status, v.reason) != (archive.verdicts[(v.claim, v.profile)]["status"],
                                           archive.verdicts[(v.claim, v.profile)]["reason"])]
    assert changed == [], "REPORT.json was not regenerated after a change of the rules or expectations"


def test_an_observation_missing_from_the_archive_is_not_run(tmp_path) -> None:
    data = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    claim = "fedrolex.participation.10pct"
    data["verdicts"] = [v for v in data["verdicts"] if not (v["claim"] == claim and v["profile"] == "standard")]
    path = tmp_path / "REPORT.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    verdict = reverify(CATALOG, CATALOG.claim(claim), "standard", load_archive(path))
    assert verdict.status == "SKIPPED" and "the archived observations hold none of it" in verdict.reason


def test_a_file_that_is_not_a_report_is_refused_by_name(tmp_path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{"verdicts": [{"claim": 1}]}', encoding="utf-8")
    with pytest.raises(ValueError, match="notes.json"):
        load_archive(path)


def test_a_claim_added_later_reads_the_archived_observation_of_the_same_series(tmp_path) -> None:
    data = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    sign = "hasfl.abstract.cifar10.estimate-negative-with-width"
    data["verdicts"] = [v for v in data["verdicts"] if v["claim"] != sign]
    path = tmp_path / "REPORT.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    archive = load_archive(path)
    magnitude = archive.verdicts[("hasfl.table4.cifar10.estimate-tracks-capacity", "standard")]
    verdict = reverify(CATALOG, CATALOG.claim(sign), "standard", archive)
    assert verdict.numbers == magnitude["numbers"] and verdict.status in ("PASS", "FAIL", "INCONCLUSIVE")
