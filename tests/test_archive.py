"""Re-verification from the observations a report recorded (`harness.verdicts.archive`): it reproduces the
verdicts that were decided from records, and a file that is not a report is refused by name."""
import dataclasses
import json
from pathlib import Path

import pytest

from harness.loading.catalog import load_catalog
from harness.pipeline import profile_level_of
from harness.verdicts.archive import _digest, load_archive, reverify, sealed
from harness.verdicts.verify import apply_families

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)


def test_the_committed_observations_give_back_the_committed_verdicts() -> None:
    archive = load_archive(ROOT / "REPORT.json")
    verdicts = [reverify(CATALOG, loaded, profile, archive) for loaded in CATALOG.claims
                for profile in archive.profiles() if (loaded.id, profile) in archive.verdicts]
    apply_families(verdicts, lambda v: profile_level_of(CATALOG, v))
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
    path.write_text(json.dumps(sealed(data)), encoding="utf-8")
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
    path.write_text(json.dumps(sealed(data)), encoding="utf-8")
    archive = load_archive(path)
    magnitude = archive.verdicts[("hasfl.table4.cifar10.estimate-tracks-capacity", "standard")]
    verdict = reverify(CATALOG, CATALOG.claim(sign), "standard", archive)
    assert verdict.numbers == magnitude["numbers"] and verdict.status in ("PASS", "FAIL", "INCONCLUSIVE")


def _archive_without(tmp_path, claim_ids: set[str], profile: str):
    data = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    data["verdicts"] = [v for v in data["verdicts"] if not (v["claim"] in claim_ids and v["profile"] == profile)]
    path = tmp_path / "REPORT.json"
    path.write_text(json.dumps(sealed(data)), encoding="utf-8")
    return load_archive(path)


def test_a_claim_the_archive_holds_nothing_of_is_verified_from_this_stores_records(settings, tmp_path) -> None:
    """Standard's records live on another machine; a claim added since is decided from the records
    this store has (an analytic rule's are shared by every profile), and so is a claim the archive
    holds whose every record is here."""
    from harness.pipeline import verify

    added, kept = "hasfl.alloc.starts-at-p-min", "hasfl.alloc.cap-at-2.4-for-tier-1.0"
    archive = _archive_without(tmp_path, {added}, "standard")
    outcome = verify(settings, pattern=r"^hasfl\.alloc\.(starts-at-p-min|cap-at-2\.4-for-tier-1\.0)$",
                     profiles=("smoke",), archive=archive, archived=("standard",))
    standard = {v.claim: v for v in outcome.verdicts if v.profile == "standard"}
    assert standard[added].status == "PASS" and standard[added].runs
    assert standard[kept].runs, "verified from its records, not the archive"
    assert all(run in {r["key"] for r in outcome.archived_runs} for v in standard.values() for run in v.runs)
    assert outcome.archived["standard"].endswith(
        "; here 2 claim(s) are verified from this store's records instead, which hold every run they read (1 of "
        f"them the archive held no observation of; numerics {', '.join(standard[added].numerics)})")


def test_a_claim_whose_records_are_here_is_verified_from_them_not_the_archives_observation(settings,
                                                                                            tmp_path) -> None:
    """The archive's observation was made by earlier code (its runs are other records); the store's records
    are this code's. (The archived observation is altered here so that the two give different verdicts.)"""
    from harness.pipeline import verify

    claim = "hasfl.alloc.cap-at-2.4-for-tier-1.0"
    archive = load_archive(_altered(tmp_path, claim, earlier_code=True))

    outcome = verify(settings, pattern=f"^{claim}$", profiles=("smoke",), archive=archive, archived=("standard",))
    standard = next(v for v in outcome.verdicts if v.profile == "standard")
    assert standard.status == "PASS" and standard.runs

    elsewhere = dataclasses.replace(settings, store_dir=tmp_path / "empty-store")
    (from_archive,) = verify(elsewhere, pattern=f"^{claim}$", profiles=(), run=False, archive=archive,
                             archived=("standard",)).verdicts
    assert from_archive.status == "FAIL"  # the altered observation


def _altered(tmp_path: Path, claim: str, earlier_code: bool) -> Path:
    """REPORT.json with the claim's standard observation set to 2.5 on every seed, as if recorded under this
    machine's numerics, and sealed again; with `earlier_code` its runs are other records (as an earlier code's
    keys are)."""
    from harness.numerics import numerics
    data = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    for verdict in data["verdicts"]:
        if (verdict["claim"], verdict["profile"]) == (claim, "standard"):
            for series in verdict["numbers"].values():
                series["mean"], series["values"] = 2.5, {seed: 2.5 for seed in series["values"]}
            verdict["numerics"] = [numerics("cpu", 1)["fingerprint"]]
            if earlier_code:
                verdict["runs"] = ["0" * 64 for _ in verdict["runs"]]
    path = tmp_path / "REPORT.json"
    path.write_text(json.dumps(sealed(data)), encoding="utf-8")
    return path


def test_a_value_edited_and_sealed_again_is_refused_where_its_records_are_here(settings, tmp_path) -> None:
    """The same runs (keys are content addresses) cannot have given other values: the archive was edited
    and its checksum recomputed."""
    from harness.pipeline import verify

    claim = "hasfl.alloc.cap-at-2.4-for-tier-1.0"
    archive = load_archive(_altered(tmp_path, claim, earlier_code=False))
    with pytest.raises(ValueError, match=rf"REPORT.json: claim {claim} at standard, series .*, seed \d+: archived "
                                         r"value 2.5 differs from its record's"):
        verify(settings, pattern=f"^{claim}$", profiles=("smoke",), archive=archive, archived=("standard",))


def test_the_same_runs_made_under_other_numerics_may_differ_from_the_archive(settings, tmp_path) -> None:
    """Another machine's records of the same runs have other last bits: not an edit."""
    from harness.pipeline import verify

    claim = "hasfl.alloc.cap-at-2.4-for-tier-1.0"
    path = _altered(tmp_path, claim, earlier_code=False)
    data = json.loads(path.read_text(encoding="utf-8"))
    for verdict in data["verdicts"]:
        if (verdict["claim"], verdict["profile"]) == (claim, "standard"):
            verdict["numerics"] = ["another-machine00"]
            keys = set(verdict["runs"])
    for run in data["runs"]:
        if run["key"] in keys:
            run["record"] = "f" * 64  # another machine's record of the run
    path.write_text(json.dumps(sealed(data)), encoding="utf-8")
    outcome = verify(settings, pattern=f"^{claim}$", profiles=("smoke",), archive=load_archive(path),
                     archived=("standard",))
    assert next(v for v in outcome.verdicts if v.profile == "standard").status == "PASS"


def test_a_claim_neither_the_archive_nor_the_store_holds_is_not_run(settings, tmp_path) -> None:
    from harness.pipeline import verify

    added = "hasfl.alloc.starts-at-p-min"
    archive = _archive_without(tmp_path, {added}, "standard")
    outcome = verify(settings, pattern=r"^hasfl\.alloc\.starts-at-p-min$", profiles=(), run=False,
                     archive=archive, archived=("standard",))
    (verdict,) = outcome.verdicts
    assert verdict.status == "SKIPPED" and "the archived observations hold none of it" in verdict.reason
    assert outcome.archived["standard"] == archive.provenance("standard"), "nothing was verified from records"


def test_profiles_come_in_order_of_scale_whatever_their_source(settings) -> None:
    """The digest reads the last profile as the largest scale: an archived `standard` goes before a
    `learning` read from the store, and the paper's own profile (declared first, as the base) last."""
    from harness.pipeline import verify

    outcome = verify(settings, pattern=r"^hasfl\.parity\.cifar10\.random-budget-matches-hasfl$", profiles=("smoke",),
                     run=False, render_only=("learning",), archive=load_archive(ROOT / "REPORT.json"),
                     archived=("standard",))
    assert outcome.profiles == ["smoke", "standard", "learning"]
    assert CATALOG.by_scale(["paper", "learning", "smoke", "standard"]) == ["smoke", "standard", "learning", "paper"]


def _edited(tmp_path, change, seal: bool):
    data = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "REPORT.json"
    path.write_text(json.dumps(sealed(data) if seal else data), encoding="utf-8")
    return path


def _first_numbers(data):
    verdict = next(v for v in data["verdicts"] if v.get("numbers"))
    return verdict, next(iter(verdict["numbers"].values()))["values"]


def _edit_a_value(data):
    _, values = _first_numbers(data)
    seed = next(iter(values))
    values[seed] = 99.0


def _duplicate_a_verdict(data):
    verdict, _ = _first_numbers(data)
    data["verdicts"].append(json.loads(json.dumps(verdict)))


def _text_for_a_value(data):
    _, values = _first_numbers(data)
    values[next(iter(values))] = "high"


def _rename_a_seed(data):
    _, values = _first_numbers(data)
    values["s1"] = values.pop(next(iter(values)))


def _a_record_digest_that_is_not_one(data):
    data["runs"][0]["record"] = "edited"


def _format_99(data):
    data.pop("checksum", None)
    data["format"] = 99
    data["checksum"] = _digest(data)


def _a_key_for_another_run(data):
    data["runs"].append({**data["runs"][0], "seed": 12345})


@pytest.mark.parametrize("change, seal, message", [
    (_edit_a_value, False, "checksum does not match"),
    (_format_99, False, "format 99; this version reads format 1"),
    (_duplicate_a_verdict, True, "two verdicts of claim"),
    (_text_for_a_value, True, "has value 'high'"),
    (_rename_a_seed, True, "seed 's1'"),
    (_a_key_for_another_run, True, "listed as"),
    (_a_record_digest_that_is_not_one, True, "record digest 'edited' is not a SHA-256 hex digest"),
])
def test_an_archive_edited_or_damaged_is_refused_by_name(tmp_path, change, seal, message) -> None:
    path = _edited(tmp_path, change, seal)
    with pytest.raises(ValueError, match="REPORT.json") as raised:
        load_archive(path)
    assert message in str(raised.value)


def test_an_archived_observation_of_another_config_is_not_taken_as_the_profiles() -> None:
    """FedRolex's learning tier changed its CNN and rounds after the archive was written: a record behind the
    archived observation, at hand, ran the old config, so the observation is not re-verified as the
    profile's (before: the old tier's numbers were shown under the new tier's level)."""
    from harness.verdicts.archive import Archive
    from harness.verdicts.reverification import archived_config_changed
    claim = CATALOG.claim("fedrolex.accuracy.high-heterogeneity-ordering")
    spec = CATALOG.specs["fedrolex-cifar10"]
    current = spec.resolve("fedrolex-l2", "learning").model_dump(mode="json", exclude_none=False)
    older = json.loads(json.dumps(current))
    older["model"]["hidden"] = [16, 32, 64]
    archive = Archive(Path("REPORT.json"), "abc", {(claim.id, "learning"): {"runs": ["k0"], "numbers": {}}})

    class Store:
        def __init__(self, config):
            self.config = config

        def reusable(self, key):
            return {"variant": "fedrolex-l2", "config": self.config}

    assert "ran another config of fedrolex-l2 at learning" in archived_config_changed(
        CATALOG, claim, "learning", archive, Store(older))
    assert archived_config_changed(CATALOG, claim, "learning", archive, Store(current)) is None


def test_a_profiles_origin_does_not_accumulate_the_notes_of_each_report_that_carried_it(tmp_path) -> None:
    """Each report re-verifying a profile notes the claims it verified from records; the next report reads the
    origin without that note and adds its own (the notes of every earlier regeneration piled up before)."""
    data = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    origin = "re-verified from the observations recorded in REPORT.json at commit `abc`"
    data["archived"] = {"learning": origin + "; here 3 claim(s) are verified ...; here 14 claim(s) are verified ..."}
    path = tmp_path / "REPORT.json"
    path.write_text(json.dumps(sealed(data)), encoding="utf-8")
    assert load_archive(path).provenance("learning") == origin


def test_archived_values_of_seeds_the_profile_does_not_run_are_refused(tmp_path) -> None:
    claim = "hasfl.alloc.cap-at-2.4-for-tier-1.0"

    def add_a_seed(data):
        verdict = next(v for v in data["verdicts"] if (v["claim"], v["profile"]) == (claim, "standard"))
        values = next(iter(verdict["numbers"].values()))["values"]
        values["12345"] = next(iter(values.values()))

    archive = load_archive(_edited(tmp_path, add_a_seed, seal=True))
    with pytest.raises(ValueError, match=rf"REPORT.json: claim {claim} at standard, series .*: seeds \[12345\] are "
                                         r"not among the profile's \[0\]"):
        reverify(CATALOG, CATALOG.claim(claim), "standard", archive)


def test_an_archived_observation_whose_config_digest_differs_is_not_taken_as_the_profiles() -> None:
    """With no record at hand, the config digest the archive recorded for each shown variant tells a changed
    profile (the HAS-FL learning tier's CNN widened after its archived runs)."""
    from harness.verdicts.archive import Archive, config_id
    from harness.verdicts.reverification import archived_config_changed
    claim = CATALOG.claim("hasfl.table4.cifar10.estimate-tracks-capacity")
    spec = CATALOG.specs["hasfl-cifar10"]
    entry = {(claim.id, "learning"): {"runs": ["k0"], "numbers": {}}}

    class NoRecords:
        def reusable(self, key):
            return None

    def archive(digest: str) -> Archive:
        return Archive(Path("REPORT.json"), "abc", entry,
                       configs={config_id("hasfl-cifar10", "hasfl", "learning"): digest})

    assert "ran another config of hasfl at learning" in archived_config_changed(
        CATALOG, claim, "learning", archive("0" * 64), NoRecords())
    assert archived_config_changed(CATALOG, claim, "learning", archive(spec.config_digest("hasfl", "learning")),
                                   NoRecords()) is None
    assert archived_config_changed(CATALOG, claim, "learning", Archive(Path("REPORT.json"), "abc", entry),
                                   NoRecords()) is None  # an archive written before digests: not told


def test_a_config_digest_follows_the_spec() -> None:
    spec = CATALOG.specs["hasfl-cifar10"]
    assert spec.config_digest("hasfl", "learning") != spec.config_digest("hasfl", "standard")
    assert spec.config_digest("hasfl", "learning") == spec.config_digest("hasfl", "learning")
