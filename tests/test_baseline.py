"""The regression baseline: what compare() reports and what updated() keeps."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.regression import baseline, baseline_update
from harness.verdicts.verify import Verdict


def verdict(claim: str, status: str = "PASS", values: dict[int, float] | None = None, profile: str = "smoke",
            label: str = "a (m)", numerics: str = "here", invariant: bool = False,
            margins: dict[str, float] | None = None) -> Verdict:
    values = {0: 0.5, 1: 0.7} if values is None else values
    finite = [v for v in values.values() if not math.isnan(v)]
    numbers = {label: {"mean": sum(finite) / max(1, len(finite)), "std": 0.1, "n": len(values),
                       "values": {str(k): v for k, v in values.items()}, "quantity": "m",
                       "numerics_invariant": invariant}}
    return Verdict(claim=claim, paper="p", profile=profile, experiment="e", source="§1",
                   statement="a statement", expectation="in [0, 1]", status=status,
                   reason=f"reason of {claim}", observed="a: 0.6", numbers=numbers, runs=["k"],
                   numerics=[numerics], margins=margins or {})


def recorded(*verdicts: Verdict, **claim_tolerances) -> dict:
    data = baseline_update.updated(list(verdicts), "smoke", None)
    for claim, tolerance in claim_tolerances.items():
        data["claims"][claim.replace("_", ".")]["tolerance"] = tolerance
    return json.loads(json.dumps(data))  # as read back from the file


def messages(differences) -> list[str]:
    return [str(d) for d in differences]


def test_unchanged_verdicts_have_no_differences() -> None:
    verdicts = [verdict("c.one"), verdict("c.two", "FAIL", {0: 2.0, 1: 3.0})]
    assert baseline.compare(verdicts, recorded(*verdicts)) == []


def test_changed_verdict_is_reported() -> None:
    data = recorded(verdict("c.one"))
    (difference,) = baseline.compare([verdict("c.one", "FAIL")], data)
    assert difference.claim == "c.one"
    assert "verdict changed from PASS to FAIL" in difference.message and "reason of c.one" in difference.message


def test_drift_beyond_default_tolerance_is_reported_and_tiny_drift_is_not() -> None:
    data = recorded(verdict("c.one", values={0: 0.5, 1: 0.7}))
    assert baseline.compare([verdict("c.one", values={0: 0.5 + 1e-12, 1: 0.7})], data) == []
    (difference,) = baseline.compare([verdict("c.one", values={0: 0.5, 1: 0.71})], data)
    assert "drift beyond tolerance" in difference.message
    assert "a (m) seed 1: 0.71 vs baseline 0.7" in difference.message


def test_missing_and_no_longer_verified_claims() -> None:
    data = recorded(verdict("c.old"), verdict("c.kept"))
    found = messages(baseline.compare([verdict("c.kept"), verdict("c.new")], data))
    assert len(found) == 2
    assert any(m.startswith("c.new: not in the baseline") for m in found)
    assert "c.old: in the baseline but no longer verified" in found
    # A partial run (complete=False) does not count unverified claims as gone.
    assert messages(baseline.compare([verdict("c.kept"), verdict("c.new")], data, complete=False)) == [
        m for m in found if m.startswith("c.new")]


def test_series_no_longer_observed_is_reported() -> None:
    data = recorded(verdict("c.one", label="a (m)"))
    gone, new = sorted(messages(baseline.compare([verdict("c.one", label="renamed (m)")], data)))
    assert "series 'a (m)' is no longer observed" in gone
    assert "series 'renamed (m)' is not in the baseline" in new


def test_per_claim_tolerance_is_honoured() -> None:
    data = recorded(verdict("c.loose"), verdict("c.strict"), c_loose={"absolute": 0.01, "relative": 0.0})
    drifted = {0: 0.505, 1: 0.7}
    found = messages(baseline.compare([verdict("c.loose", values=drifted), verdict("c.strict", values=drifted)], data))
    assert len(found) == 1 and found[0].startswith("c.strict: drift beyond tolerance")
    far = {0: 0.52, 1: 0.7}
    (difference,) = baseline.compare([verdict("c.loose", values=far)], data, complete=False)
    assert difference.claim == "c.loose" and "'absolute': 0.01" in difference.message


def test_file_level_tolerance_replaces_the_default() -> None:
    data = recorded(verdict("c.one"))
    data["tolerance"] = {"absolute": 0.05, "relative": 0.0}
    assert baseline.compare([verdict("c.one", values={0: 0.54, 1: 0.7})], data) == []
    assert len(baseline.compare([verdict("c.one", values={0: 0.56, 1: 0.7})], data)) == 1


def test_nan_and_infinite_numbers() -> None:
    data = recorded(verdict("c.nan", values={0: math.nan, 1: 0.7}), verdict("c.inf", values={0: math.inf}))
    assert data["claims"]["c.nan"]["numbers"]["a (m)"]["values"]["0"] is None
    assert baseline.compare([verdict("c.nan", values={0: math.nan, 1: 0.7}), verdict("c.inf", values={0: math.inf})],
                            data) == []
    assert len(baseline.compare([verdict("c.nan", values={0: 0.5, 1: 0.7})], data, complete=False)) == 1


def test_updated_keeps_tolerances_and_records_fails(tmp_path: Path) -> None:
    previous = recorded(verdict("c.one"), verdict("c.two"), c_one={"absolute": 0.5})
    previous["tolerance"] = {"absolute": 1e-6, "relative": 1e-3}
    previous["note"] = "hand-written note"
    fail = verdict("c.two", "FAIL", {0: 2.0, 1: 3.0})
    other_profile = verdict("c.three", profile="paper")
    new = baseline_update.updated([verdict("c.one", values={0: 0.6, 1: 0.8}), fail, other_profile], "smoke", previous)
    assert new["profile"] == "smoke"
    assert new["tolerance"] == {"absolute": 1e-6, "relative": 1e-3}
    assert new["note"] == "hand-written note"
    assert list(new["claims"]) == ["c.one", "c.two"]  # sorted; other profiles left out
    assert new["claims"]["c.one"]["tolerance"] == {"absolute": 0.5}
    assert new["claims"]["c.one"]["numbers"]["a (m)"]["values"] == {"0": 0.6, "1": 0.8}
    assert "tolerance" not in new["claims"]["c.two"]
    entry = new["claims"]["c.two"]
    assert entry["status"] == "FAIL" and entry["reason"] == "reason of c.two"
    assert entry["numbers"]["a (m)"]["values"] == {"0": 2.0, "1": 3.0}
    # Written and read back, it expects exactly that failure.
    path = tmp_path / "baselines" / "smoke.json"
    baseline_update.write(path, new)
    loaded = baseline.load(path)
    assert baseline.compare([verdict("c.one", values={0: 0.6, 1: 0.8}), fail], loaded) == []
    assert "verdict changed from FAIL to PASS" in messages(
        baseline.compare([verdict("c.one", values={0: 0.6, 1: 0.8}), verdict("c.two")], loaded))[0]
    (drift,) = baseline.compare([verdict("c.two", "FAIL", {0: 2.5, 1: 3.0})], loaded, complete=False)
    assert "drift beyond tolerance" in drift.message


def test_updated_without_previous_uses_defaults() -> None:
    new = baseline_update.updated([verdict("c.one")], "smoke", None)
    assert new["tolerance"] == baseline.DEFAULT_TOLERANCE
    assert "tolerance" not in new["claims"]["c.one"]


def test_new_series_and_seeds_fail_until_recorded() -> None:
    data = recorded(verdict("c.one"))
    (seed,) = baseline.compare([verdict("c.one", values={0: 0.5, 1: 0.7, 2: 0.9})], data)
    assert "seed 2 is not in the baseline" in seed.message
    two = verdict("c.one")
    two.numbers["b (m)"] = two.numbers["a (m)"]
    (series,) = baseline.compare([two], data)
    assert "series 'b (m)' is not in the baseline" in series.message


def test_an_error_is_never_accepted() -> None:
    error = verdict("c.one", "ERROR")
    data = recorded(error)
    assert data["claims"]["c.one"]["status"] == "ERROR"
    (difference,) = baseline.compare([error], data)
    assert "never an accepted baseline outcome" in difference.message


def test_baseline_of_another_profile_is_refused() -> None:
    data = recorded(verdict("c.one"))
    (difference,) = baseline.compare([verdict("c.one", profile="standard")], data)
    assert "recorded for profile 'smoke'" in difference.message


def test_unavailable_data_is_recorded_as_such_and_checked_where_the_data_exists() -> None:
    missing = verdict("c.emnist", "SKIPPED")
    missing.data_unavailable = True
    data = recorded(missing)
    assert data["claims"]["c.emnist"] == {"status": baseline.UNAVAILABLE, "reason": "reason of c.emnist"}
    assert baseline.compare([missing], data) == []
    assert baseline.compare([verdict("c.emnist", "PASS")], data) == []          # the data exists: it holds
    assert baseline.compare([verdict("c.emnist", "INCONCLUSIVE")], data) == []
    (fails,) = baseline.compare([verdict("c.emnist", "FAIL")], data)
    assert "FAILs its expectation" in fails.message
    (lost,) = baseline.compare([missing], recorded(verdict("c.emnist")))
    assert "data is unavailable here" in lost.message


def test_a_selection_updates_only_its_claims() -> None:
    previous = recorded(verdict("c.one"), verdict("c.two"))
    new = baseline_update.updated([verdict("c.two", values={0: 0.9, 1: 0.9})], "smoke", previous, complete=False)
    assert set(new["claims"]) == {"c.one", "c.two"}
    assert new["claims"]["c.one"] == previous["claims"]["c.one"]
    assert new["claims"]["c.two"]["numbers"]["a (m)"]["values"] == {"0": 0.9, "1": 0.9}


@pytest.mark.parametrize("text", ["not json", "[]", '{"claims": []}'])
def test_load_rejects_what_is_not_a_baseline(tmp_path: Path, text: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="b.json"):
        baseline.load(path)


def test_cli_check_of_a_selection_runs_only_what_it_needs(tmp_path: Path, capsys) -> None:
    from harness import cli
    root = Path(__file__).resolve().parents[1]
    options = ["--store", str(tmp_path / "store"), "--executor", "local", "--baseline", str(tmp_path / "smoke.json"),
               "--claim", "hasfl.alloc.cap-at-*"]
    assert cli.main(["--root", str(root), "baseline", "update", *options]) == 0
    written = baseline.load(tmp_path / "smoke.json")
    assert set(written["claims"]) == {"hasfl.alloc.cap-at-2.4-for-tier-1.0", "hasfl.alloc.cap-at-1.4-for-tier-0.75",
                                      "hasfl.alloc.cap-at-0.4-for-tier-0.5"}
    capsys.readouterr()
    assert cli.main(["--root", str(root), "baseline", "check", *options]) == 0
    shown = capsys.readouterr()  # the comparison is the command's result (stdout), the runs a diagnostic
    assert "3 runs: 3 reused, 0 run" in shown.err and "3 claims compared with smoke.json: 0 differ" in shown.out
    written["claims"]["hasfl.alloc.cap-at-2.4-for-tier-1.0"]["status"] = "FAIL"
    baseline_update.write(tmp_path / "smoke.json", written)
    assert cli.main(["--root", str(root), "baseline", "check", *options]) == 1


# --- other numerics -------------------------------------------------------------------------

def _measured(rms: float, count: int = 60) -> dict:
    return {"groups": {"e / m": {"rms": rms, "count": count}}}


def test_same_numerics_are_compared_exactly_other_numerics_by_the_measured_drift() -> None:
    data = recorded(verdict("c.one", values={0: 0.5, 1: 0.7}))
    data["drift"] = _measured(0.02)
    moved = {0: 0.51, 1: 0.69}  # within the drift of the numerics
    assert baseline.compare([verdict("c.one", values=moved, numerics="elsewhere")], data) == []
    assert "drift beyond tolerance" in messages(baseline.compare([verdict("c.one", values=moved)], data))[0]
    far = {0: 0.6, 1: 0.8}  # five drift scales on both seeds: a changed method
    (difference,) = baseline.compare([verdict("c.one", values=far, numerics="elsewhere")], data)
    assert "moved beyond the drift of the numerics" in difference.message and "e / m" in difference.message


def test_numerics_invariant_series_stay_tight_across_numerics() -> None:
    data = recorded(verdict("c.count", values={0: 3.0, 1: 3.0}, invariant=True))
    data["drift"] = _measured(10.0)
    found = messages(baseline.compare([verdict("c.count", values={0: 3.0, 1: 4.0}, numerics="elsewhere",
                                               invariant=True)], data))
    assert len(found) == 1 and "numerics-invariant" in found[0]


def test_unmeasured_group_falls_back_on_the_seed_spread() -> None:
    data = recorded(verdict("c.one", values={0: 0.5, 1: 0.7, 2: 0.6}))  # recorded sd 0.1
    assert baseline.compare([verdict("c.one", values={0: 0.55, 1: 0.65, 2: 0.6}, numerics="elsewhere")], data) == []
    far = {0: 10.5, 1: 10.7, 2: 10.6}
    assert len(baseline.compare([verdict("c.one", values=far, numerics="elsewhere")], data)) == 1


def test_a_move_from_near_its_boundary_is_fragile_and_from_far_a_failure() -> None:
    near = recorded(verdict("c.one", "INCONCLUSIVE", margins={"PASS": 0.8, "FAIL": 5.0}))
    result = baseline.check([verdict("c.one", "PASS", numerics="elsewhere")], near)
    assert result.differences == [] and "fragile: INCONCLUSIVE → PASS" in result.fragile[0].message
    (failure,) = baseline.compare([verdict("c.one", "FAIL", numerics="elsewhere")], near)
    assert "5.00 SE from FAIL" in failure.message
    far_flip = recorded(verdict("c.two", "PASS", margins={"FAIL": 6.0}))
    (failure,) = baseline.compare([verdict("c.two", "FAIL", numerics="elsewhere")], far_flip)
    assert "verdict changed from PASS to FAIL" in failure.message and "6.00 SE from FAIL" in failure.message
    (exact,) = baseline.compare([verdict("c.one", "PASS")], near)  # same numerics: any change fails
    assert "verdict changed from INCONCLUSIVE to PASS" in exact.message


def test_adjacent_verdicts_move_by_their_distance_like_any_other() -> None:
    """A 'not above' claim has no INCONCLUSIVE between PASS and FAIL: a PASS 0.2 SE from FAIL that
    fails under other numerics is fragile (before: always a failure)."""
    near_flip = recorded(verdict("c.two", "PASS", margins={"FAIL": 0.2}))
    result = baseline.check([verdict("c.two", "FAIL", numerics="elsewhere")], near_flip)
    assert result.differences == [] and "fragile: PASS → FAIL" in result.fragile[0].message


def test_a_fragile_move_whose_series_shifted_is_a_failure() -> None:
    """The same near move with the claim's series shifted by 2.2 drift scales fails: a fragile
    warning no longer hides a changed method (before: only the warning, as Holm over the whole
    check's series did not reach this one's p)."""
    data = recorded(verdict("c.near", "INCONCLUSIVE", values={0: 0.5, 1: 0.7, 2: 0.6},
                            margins={"PASS": 0.5, "FAIL": 4.0}),
                    *[verdict(f"c.{i}", values={0: 0.5, 1: 0.7, 2: 0.6}) for i in range(200)])
    data["drift"] = _measured(0.01, count=200)
    quiet = [verdict(f"c.{i}", values={0: 0.5, 1: 0.7, 2: 0.6}, numerics="elsewhere") for i in range(200)]
    shift = {0: 0.522, 1: 0.722, 2: 0.622}  # 2.2 drift scales on every seed: p ≈ 0.003, not Holm over 201 series
    result = baseline.check([verdict("c.near", "PASS", values=shift, numerics="elsewhere"), *quiet], data)
    (failure,) = result.differences
    assert failure.claim == "c.near" and "its series moved beyond the drift" in failure.message
    drifted = {0: 0.51, 1: 0.69, 2: 0.605}
    result = baseline.check([verdict("c.near", "PASS", values=drifted, numerics="elsewhere"), *quiet], data)
    assert result.differences == [] and len(result.fragile) == 1


def test_every_claim_states_what_the_check_can_see() -> None:
    data = recorded(verdict("c.one", values={0: 0.5, 1: 0.7, 2: 0.6}), verdict("c.new", values={0: 0.5, 1: 0.7}))
    data["drift"] = {"groups": {"e / m": {"rms": 0.02, "count": 60}}}
    result = baseline.check([verdict("c.one", values={0: 0.5, 1: 0.7, 2: 0.6}, numerics="elsewhere"),
                             verdict("c.new", values={0: 0.5, 1: 0.7})], data)
    assert result.claims["c.new"].detects.startswith("any change")
    cross = result.claims["c.one"]
    assert "a shift of" in cross.detects and cross.detectable_sds == pytest.approx(
        baseline.drift_io.detectable_shift(baseline.drift_io.Scale(0.02, 60, "group"), 3, 0.01 / 1) / 0.1)
    assert "Detects with 80% power: 1 claims: any change; 1 drift-tested claims" in result.summary()
    unmeasured = recorded(verdict("c.one", values={0: 0.5, 1: 0.7, 2: 0.6}))
    said = baseline.check([verdict("c.one", values={0: 0.5, 1: 0.7, 2: 0.6}, numerics="elsewhere")], unmeasured)
    assert "NOT MEASURED" in said.claims["c.one"].detects and "1 of them against the unmeasured" in said.summary()


def test_holm_over_the_check_keeps_many_small_drifts_quiet() -> None:
    """Forty series each moved by about one drift scale: no alarm; one moved by eight: an alarm."""
    verdicts = [verdict(f"c.{i}", values={0: 0.5, 1: 0.7, 2: 0.6}) for i in range(40)]
    data = recorded(*verdicts)
    data["drift"] = _measured(0.01, count=200)
    moved = [verdict(f"c.{i}", values={0: 0.5 + 0.01 * (-1) ** i, 1: 0.7 - 0.012, 2: 0.6 + 0.008},
                     numerics="elsewhere") for i in range(40)]
    assert baseline.compare(moved, data) == []
    moved[7] = verdict("c.7", values={0: 0.58, 1: 0.62, 2: 0.68}, numerics="elsewhere")
    (alarm,) = baseline.compare(moved, data)
    assert alarm.claim == "c.7"


def test_baseline_records_numerics_margins_and_keeps_the_drift_measurement() -> None:
    previous = recorded(verdict("c.one"))
    previous["drift"] = _measured(0.3)
    new = baseline_update.updated([verdict("c.one", margins={"INCONCLUSIVE": 2.5, "FAIL": math.inf})], "smoke",
                                  previous, numerics={"here": {"fingerprint": "here", "cpu": {"model": "x"}}})
    assert new["drift"] == previous["drift"]
    assert new["numerics"] == {"here": {"fingerprint": "here", "cpu": {"model": "x"}}}
    entry = new["claims"]["c.one"]
    assert entry["numerics"] == ["here"] and entry["margins"] == {"INCONCLUSIVE": 2.5, "FAIL": None}


def test_redeciding_a_baseline_keeps_its_numbers_and_is_a_fixed_point_when_committed() -> None:
    from harness.loading.catalog import load_catalog
    from harness.regression.baseline import load
    from harness.regression.baseline_update import redecided
    root = Path(__file__).resolve().parents[1]
    catalog = load_catalog(root / "claims", root / "specs", root)
    for profile in ("smoke", "standard"):
        path = root / "baselines" / f"{profile}.json"
        committed = load(path)
        again, moved = redecided(catalog, committed, path)
        for claim, entry in committed["claims"].items():
            if claim in again["claims"]:
                kept = again["claims"][claim]
                assert (kept.get("numbers"), kept.get("numerics"), kept.get("runs")) == \
                       (entry.get("numbers"), entry.get("numerics"), entry.get("runs")), claim
        assert moved == [], f"baselines/{profile}.json was not decided again after a change of the rules: {moved}"


@pytest.mark.parametrize("profile", ["smoke", "standard"])
def test_every_drift_group_of_a_committed_baseline_is_measured(profile: str) -> None:
    """Every trained series a committed baseline holds is tested against a measured drift (the
    fallback, √2 × its seed spread, needs a shift of many seed SDs to be seen: it is for a user's
    new claims only)."""
    from harness.regression.drift import group_key
    data = baseline.load(Path(__file__).resolve().parents[1] / "baselines" / f"{profile}.json")
    groups = data.get("drift", {}).get("groups", {})
    unmeasured = sorted({group_key(entry["experiment"], series) for entry in data["claims"].values()
                         if entry.get("compare") != "verdict"
                         for series in (entry.get("numbers") or {}).values()
                         if not series.get("numerics_invariant")} - set(groups))
    assert unmeasured == [], f"baselines/{profile}.json: drift never measured for {unmeasured}"


def test_a_claim_is_counted_once_and_a_failure_beats_fragile() -> None:
    """A claim with two failing series and a fragile note is one differing claim and not fragile (before:
    two differences and a fragile verdict for one claim)."""
    result = baseline.Check({"c.a": baseline.ClaimCheck("c.a", failures=["one", "two"], fragile=["near"]),
                             "c.b": baseline.ClaimCheck("c.b", fragile=["near"])})
    assert result.differing_claims == ["c.a"] and len(result.differences) == 2
    assert [d.claim for d in result.fragile] == ["c.b"] and result.fragile_claims == ["c.b"]
    assert "1 claim differing (2 differences), 1 claim fragile and not differing" in result.summary()


def test_the_reach_is_the_designs_whatever_the_outcome() -> None:
    """Two checks of the same recorded claims under other numerics, one where nothing moved and one where a
    claim's verdict moved and another's series are gone, state the same reach for every claim (before: the
    family was the series actually tested, and a moved verdict had none)."""
    data = recorded(*[verdict(f"c.{i}", values={0: 0.5, 1: 0.7, 2: 0.6}) for i in range(3)])
    data["drift"] = {"groups": {"e / m": {"rms": 0.02, "count": 60}}}
    quiet = [verdict(f"c.{i}", values={0: 0.5, 1: 0.7, 2: 0.6}, numerics="elsewhere") for i in range(3)]
    moved = [verdict("c.0", "FAIL", values={0: 0.9, 1: 0.9, 2: 0.9}, numerics="elsewhere"),
             verdict("c.1", values={0: math.nan, 1: math.nan, 2: math.nan}, numerics="elsewhere"), quiet[2]]
    one, other = baseline.check(quiet, data), baseline.check(moved, data)
    assert other.differences, "the moved claim must fail"
    assert {c: r.detects for c, r in one.claims.items()} == {c: r.detects for c, r in other.claims.items()}
    assert one.reach() == other.reach() and "over the check's 3 drift-tested series" in one.claims["c.0"].detects


def test_a_timing_whose_verdict_moves_within_its_runs_spread_is_fragile_and_beyond_it_a_regression() -> None:
    """FedHENet's smoke pipeline saved 0.19 ± 0.04 of FedAvg's seconds when the baseline was recorded (PASS) and
    0.10 ± 0.13 timed alone here (INCONCLUSIVE): the same code, another load. A timing set against its runs'
    spread moves within it; a pipeline made far slower moves beyond it."""
    label = "FedHENet (pipeline_seconds_saved_fraction)"
    then = verdict("t.saved", "PASS", {0: 0.2563, 1: 0.1618, 2: 0.1939, 3: 0.163}, label=label)
    data = baseline_update.updated([then], "smoke", None, varying={"t.saved"})
    data = json.loads(json.dumps(data))
    assert data["claims"]["t.saved"]["compare"] == "verdict"
    load = verdict("t.saved", "INCONCLUSIVE", {0: 0.2585, 1: 0.1435, 2: -0.04785, 3: 0.04976}, label=label)
    quiet = baseline.check_one(load, data["claims"]["t.saved"], {})
    assert quiet.failures == [] and len(quiet.fragile) == 1 and "within its runs' spread" in quiet.fragile[0]
    slower = verdict("t.saved", "FAIL", {0: -0.61, 1: -0.58, 2: -0.66, 3: -0.6}, label=label)
    moved = baseline.check_one(slower, data["claims"]["t.saved"], {})
    assert len(moved.failures) == 1 and "beyond its runs' spread" in moved.failures[0] and moved.fragile == []
