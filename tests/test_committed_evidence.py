"""Committed evidence checked as git checks its objects: a record is its key, is the record REPORT.json lists for
its run, and is read only from a regular file inside records/; `fedclaims records verify` checks the whole
bundle and the sequential plans at once. Each forgery is refused by name, and no verdict comes from it."""
from __future__ import annotations

import copy
import functools
import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.running import store as store_module
from harness.running.bundle import BundleError, RecordBundle
from harness.running.store import ResultStore, sealed

REPO = Path(__file__).resolve().parents[1]
EXPERIMENT = "hasfl-allocation-rule"


def _committed(experiment: str = EXPERIMENT) -> list[dict]:
    """The experiment's committed records, each a fresh copy (a test may change its own)."""
    return copy.deepcopy(_read_committed(experiment))


@functools.cache
def _read_committed(experiment: str) -> list[dict]:
    """Read once a session: reading the bundle decompresses every committed record."""
    bundle = RecordBundle(REPO / "records")
    return [record for record in bundle.records() if record["experiment"] == experiment]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project's claims and specs with the allocation rule's committed records."""
    root = tmp_path / "project"
    for folder in ("claims", "specs"):
        shutil.copytree(REPO / folder, root / folder)
    RecordBundle(root / "records").add(_committed())
    return root


def _resealed(record: dict, **changes) -> dict:
    """The record changed and sealed again as the store seals one (format, checksum recomputed)."""
    body = {k: v for k, v in {**record, **changes}.items() if k not in ("checksum", "format")}
    return sealed(body)


def _plant(bundle: RecordBundle, key: str, record: dict) -> Path:
    path = bundle.path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.write_bytes(gzip.compress(json.dumps(record).encode()))
    return path


def _verify(project: Path, capsys) -> tuple[int, str]:
    code = main(["--root", str(project), "records", "verify"])
    return code, capsys.readouterr().out


def test_the_shipped_records_verify(capsys) -> None:
    code, out = _verify(REPO, capsys)
    assert code == 0, out
    assert "0 problem(s)" in out


def test_a_resealed_record_with_a_raised_number_is_not_the_one_the_report_lists(project: Path) -> None:
    record = _committed()[0]
    bundle = RecordBundle(project / "records", {record["key"]: record["checksum"]}, "REPORT.json")
    forged = _resealed(record, result={**record["result"], "cap_reached_at": 9.0})
    _plant(bundle, record["key"], forged)
    with pytest.raises(BundleError, match="is not the record REPORT.json lists for this run"):
        bundle.read(record["key"])
    store = ResultStore(project / "store", bundle=bundle)
    assert store.get(record["key"]) is None and record["key"] in store.refused


@pytest.mark.parametrize("forgery, message", [
    ("another-runs-key", "do not give its key"),
    ("claims-seed-3", "do not give its key"),
    ("unknown-field", "unknown field 'note'"),
    ("status-error", "a bundle holds finished runs only"),
])
def test_a_record_that_is_not_its_key_or_not_a_finished_run_is_refused(project, capsys, forgery, message) -> None:
    first, second = _committed()[:2]
    bundle = RecordBundle(project / "records")
    forged = {"another-runs-key": lambda: _resealed(second, key=first["key"]),
              "claims-seed-3": lambda: _resealed(first, seed=3),
              "unknown-field": lambda: _resealed(first, note="trust me"),
              "status-error": lambda: _resealed(first, status="error", result=None,
                                                error={"type": "X", "message": "boom"})}[forgery]()
    if forgery == "status-error":  # an error record of its own key: the key is still the run's
        forged = _resealed(forged, key=store_module.record_key(forged))
        first = forged
    _plant(bundle, first["key"], forged)
    with pytest.raises(BundleError, match=message):
        bundle.read(first["key"])
    code, out = _verify(project, capsys)
    assert code == 2 and message in out and str(bundle.path(first["key"])) in out


def test_links_in_or_out_of_records_are_never_followed(project: Path, tmp_path: Path, capsys) -> None:
    first, second = _committed()[:2]
    bundle = RecordBundle(project / "records")
    outside = tmp_path / "outside.json.gz"
    outside.write_bytes(bundle.path(first["key"]).read_bytes())
    bundle.path(first["key"]).unlink()
    bundle.path(first["key"]).symlink_to(outside)
    with pytest.raises(BundleError, match="symbolic link"):
        bundle.read(first["key"])
    folder = bundle.path(second["key"]).parent
    moved = tmp_path / "prefix"
    shutil.move(str(folder), moved)
    folder.symlink_to(moved, target_is_directory=True)
    with pytest.raises(BundleError, match="symbolic link"):
        bundle.read(second["key"])
    code, out = _verify(project, capsys)
    assert code == 2 and out.count("symbolic link") >= 2


def test_a_gzip_bomb_is_refused_before_it_fills_the_memory(project: Path, monkeypatch) -> None:
    record = _committed()[0]
    monkeypatch.setattr(store_module, "MAX_RECORD_BYTES", 1 << 20)
    bundle = RecordBundle(project / "records")
    path = bundle.path(record["key"])
    path.write_bytes(gzip.compress(b" " * (4 << 20)))
    with pytest.raises(BundleError, match="holds more than 1 MB; no record is that large"):
        bundle.read(record["key"])


@pytest.mark.parametrize("thing", ["folder", "fifo"])
def test_a_folder_or_fifo_under_a_records_name_is_refused_not_taken_for_no_record(project, thing) -> None:
    record = _committed()[0]
    bundle = RecordBundle(project / "records")
    path = bundle.path(record["key"])
    path.unlink()
    path.mkdir() if thing == "folder" else os.mkfifo(path)
    assert bundle.has(record["key"])
    with pytest.raises(BundleError, match="not a regular file"):
        bundle.read(record["key"])


def test_a_stray_file_and_a_plan_whose_seeds_have_no_records_are_named(project: Path, capsys) -> None:
    (project / "records" / "notes.txt").write_text("hello")
    sequential = project / "records" / "sequential"
    sequential.mkdir()
    shutil.copy(REPO / "records" / "sequential" / "learning.json", sequential / "learning.json")
    code, out = _verify(project, capsys)
    assert code == 2
    assert "notes.txt: neither a record" in out
    if "not checked (their data is not here)" in out:
        pytest.skip("CIFAR-10 is not on this machine ($FEDCLAIMS_DATA): the plan's runs cannot be keyed")
    assert "has no committed record" in out and "learning.json: claims." in out


def _project_with_claims_records(tmp_path: Path, claim: str, profile: str, drop: int) -> tuple[Path, list[str]]:
    """A project (claims, specs, REPORT.json) holding the committed records of the claim's runs at the profile
    as REPORT.json lists them, less `drop` of them: (its root, the run keys)."""
    root = tmp_path / "project"
    for folder in ("claims", "specs"):
        shutil.copytree(REPO / folder, root / folder)
    report = json.loads((REPO / "REPORT.json").read_text(encoding="utf-8"))
    verdict = next(v for v in report["verdicts"] if (v["claim"], v["profile"]) == (claim, profile))
    keys = list(dict.fromkeys(verdict["runs"]))
    committed = RecordBundle(REPO / "records")
    RecordBundle(root / "records").add(committed.read(key) for key in keys[drop:])
    (root / "REPORT.json").write_text(json.dumps(report), encoding="utf-8")
    return root, keys


def _forged(root: Path, claim: str, profile: str) -> Path:
    """REPORT.json with every archived value of the claim at the profile raised by 1, sealed again."""
    from harness.verdicts.archive import sealed as sealed_archive
    path = root / "REPORT.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for verdict in data["verdicts"]:
        if (verdict["claim"], verdict["profile"]) == (claim, profile):
            for series in verdict["numbers"].values():
                series["values"] = {seed: value + 1.0 for seed, value in series["values"].items()}
    path.write_text(json.dumps(sealed_archive(data)), encoding="utf-8")
    return path


def test_a_resealed_archive_does_not_decide_by_one_missing_record_while_the_others_contradict_it(tmp_path) -> None:
    from harness.pipeline import verify
    from harness.settings import Settings
    from harness.verdicts.archive import load_archive

    claim, profile = "fedrolex.accuracy.low-heterogeneity-beats-heterofl", "standard"
    data = Settings.from_env(REPO).data_dir
    if data is None:
        pytest.skip("CIFAR-10 is not on this machine ($FEDCLAIMS_DATA): the claim's runs cannot be keyed")
    root, keys = _project_with_claims_records(tmp_path, claim, profile, drop=1)
    settings = Settings(root=root, store_dir=tmp_path / "store", cache_dir=tmp_path / "cache", data_dir=data,
                        download=False, executor="local", committed_records=True)
    genuine = verify(settings, pattern=f"^{claim}$", profiles=(), run=False,
                     archive=load_archive(root / "REPORT.json"), archived=(profile,))
    verdict = next(v for v in genuine.verdicts if v.profile == profile)
    assert verdict.status == "FAIL" and verdict.numbers, verdict.reason  # the archive's, a record missing
    with pytest.raises(ValueError, match=f"claim {claim} at {profile}, series .*: archived value .* differs from "
                                         "its record's .*the archive was edited"):
        verify(settings, pattern=f"^{claim}$", profiles=(), run=False, archive=load_archive(_forged(root, claim,
                                                                                                     profile)),
               archived=(profile,))


def test_a_claim_reading_a_refused_record_is_error_naming_it_never_a_verdict_from_it(project: Path, tmp_path) -> None:
    from harness.pipeline import verify
    from harness.settings import Settings

    claim = "hasfl.alloc.cap-at-2.4-for-tier-1.0"
    settings = Settings(root=project, store_dir=tmp_path / "store", cache_dir=tmp_path / "cache", data_dir=None,
                        download=False, executor="local", committed_records=True)
    before = next(v for v in verify(settings, pattern=f"^{claim}$", run=False).verdicts)
    assert before.status == "PASS"
    bundle = RecordBundle(project / "records")
    key = before.runs[0]
    path = _plant(bundle, key, _resealed(bundle.read(key), note="edited"))
    after = next(v for v in verify(settings, pattern=f"^{claim}$", run=False).verdicts)
    assert after.status == "ERROR" and "RefusedRecord" in after.reason and str(path) in after.reason
