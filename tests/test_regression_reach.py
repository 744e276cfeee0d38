"""What the cross-numerics regression check can see, on recordings of real other machines.

A false alarm: `baselines/numerics/<profile>-amd-epyc-milan-avx2.json` records the claims on an AVX2
machine (the baselines were recorded on an AVX-512 one); decided again under today's rules, they
must pass the baseline whose drift was measured without them (leave one out).

A regression at the standard profile's five seeds:
`baselines/numerics/standard-recording-machine-f0abaf0.json` is a real recording of the standard
profile on another machine (other CPU, other numerics) of records whose histories are those of
the baseline's. Its FedRolex observations, decided again under today's rules, are checked against
`baselines/standard.json` as that machine's user would: they must pass. Then one FedRolex variant
is lowered by 2 accuracy points on every seed (its own series, and every paired difference it
enters), a stand-in for a method change of the size FedRolex's claims argue about: the check must
fail and name a claim that reads the variant. Re-running the standard profile's FedRolex runs
under kernel pins would take some 10 minutes of CI per variant; the recorded machine gives the
real drift of the numerics for free, and the lowered values are the change.

The recordings were made before FedRolex was brought in line with its authors' code (issue 43), so
their FedRolex observations are of the earlier method: they are checked against the baseline of that
method (`tests/data/regression/fedrolex-before-reference.json`, the FedRolex entries the baselines
held then; every other entry is unchanged since), and against today's baseline they must fail: the
real method change is told from the real drift.
"""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from harness.loading.catalog import load_catalog
from harness.regression import baseline, drift
from harness.verdicts.archive import baseline_archive, reverify
from harness.verdicts.verify import Verdict, apply_families

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
RECORDING = ROOT / "baselines" / "numerics" / "standard-recording-machine-f0abaf0.json"
BEFORE_REFERENCE = ROOT / "tests" / "data" / "regression" / "fedrolex-before-reference.json"
LABEL = re.compile(r"(?P<series>.*) \(end_accuracy\)")


REENCODED_SINCE = {"fedrolex.homogeneous.upper-bound-above-fedrolex": (
    "fedrolex.homogeneous.gap-narrower-than-heterofl", "fedrolex.homogeneous.gap-narrower-than-dropout")}
"""FedRolex claims re-encoded since the recordings (issue 39): the recorded claim, and the claims that replaced it
(their entries are today's method's, so the check against the earlier method leaves them out)."""
ADDED_SINCE = ("fedrolex.cost.costs-above-lower-bound",)
"""FedRolex claims encoded since the recordings (issue 59: the costs half of A.6's lower-bound sentence): the
recordings hold no entry of them, so the check against the earlier method leaves them out."""


def _before_reference(profile: str) -> dict:
    """The committed baseline as it was when the recordings were made: its FedRolex entries those of
    the method before issue 43."""
    earlier = json.loads(BEFORE_REFERENCE.read_text(encoding="utf-8"))[profile]
    committed = baseline.load(ROOT / "baselines" / f"{profile}.json")
    added = {claim for claims in REENCODED_SINCE.values() for claim in claims} | set(ADDED_SINCE)
    untested = {claim for claim, entry in committed["claims"].items() if claim not in earlier
                and entry["status"] == "SKIPPED" and entry["reason"].startswith("the claim states no expectation")}
    """Claims added since that test nothing at this profile (FedRolex's -as-run claims: learning only)."""
    assert set(earlier) - set(REENCODED_SINCE) == {c for c in committed["claims"] if c.startswith("fedrolex.")} \
        - added - untested
    claims = {claim: entry for claim, entry in committed["claims"].items() if claim not in added | untested}
    return {**committed, "claims": {**claims, **earlier}}


def _recording() -> dict:
    return json.loads(RECORDING.read_text(encoding="utf-8"))


def _verdicts(path: Path, recording: dict, profile: str, papers=("hasfl", "fedrolex", "fedhenet"),
              borrowed: bool = False) -> list[Verdict]:
    """The recording's observations decided again under today's rules and expectations; with
    `borrowed`, also claims added since it was made, from the recorded claim that observed the
    same series (`harness.verdicts.archive`)."""
    archive = baseline_archive(path, recording)
    verdicts = [reverify(CATALOG, loaded, profile, archive) for loaded in CATALOG.claims if loaded.paper in papers]
    verdicts = [v for v in verdicts if v.numbers and (borrowed or v.claim in recording["claims"])]
    apply_families(verdicts, lambda v: getattr(CATALOG.claim(v.claim).claim.expect.get(v.profile), "alpha", 0.05))
    return verdicts


def _fedrolex_verdicts(recording: dict) -> list[Verdict]:
    return _verdicts(RECORDING, recording, "standard", ("fedrolex",), borrowed=True)


@pytest.mark.parametrize("profile", ["smoke", "standard"])
def test_a_real_other_machine_passes_the_baseline_measured_without_it(profile: str) -> None:
    path = ROOT / "baselines" / "numerics" / f"{profile}-amd-epyc-milan-avx2.json"
    mine = json.loads(path.read_text(encoding="utf-8"))
    committed = _before_reference(profile)
    others = {file.name: drift.recording(json.loads(file.read_text(encoding="utf-8")), profile, file.name)
              for file in sorted((ROOT / "baselines" / "numerics").glob(f"{profile}-*.json")) if file != path}
    without = {**committed, "drift": drift.measure({f"{profile}.json": drift.recording(committed, profile, "b"),
                                                    **others})}
    verdicts = _verdicts(path, mine, profile)
    assert verdicts and all(v.numerics and v.numerics != committed["claims"][v.claim]["numerics"]
                            for v in verdicts if v.claim in committed["claims"])
    result = baseline.check(verdicts, without, complete=False)
    assert result.differences == [], [str(d) for d in result.differences]
    assert {c.path for c in result.claims.values()} <= {baseline.CROSS, baseline.UNCOMPARED}


def _variants(recording: dict) -> list[str]:
    return sorted({m["series"] for entry in recording["claims"].values() for label in entry.get("numbers", {})
                   if (m := LABEL.fullmatch(label)) and " − " not in m["series"]})


def _lowered(recording: dict, variant: str, points: float) -> tuple[dict, set[str]]:
    """The recording with `variant`'s end accuracy lowered on every seed, and the claims reading it."""
    changed, readers = copy.deepcopy(recording), set()
    for claim, entry in changed["claims"].items():
        for label, series in entry.get("numbers", {}).items():
            match = LABEL.fullmatch(label)
            if not match:
                continue
            terms = match["series"].split(" − ")
            sign = -1.0 if terms[0] == variant else 1.0 if terms[1:] == [variant] else 0.0
            if sign:
                readers.add(claim)
                series["values"] = {seed: None if v is None else v + sign * points
                                    for seed, v in series["values"].items()}
    return changed, readers


BASELINE = _before_reference("standard")


@pytest.mark.parametrize("profile", ["smoke", "standard"])
def test_the_recorded_fedrolex_of_the_earlier_method_fails_todays_baseline(profile: str) -> None:
    """The FedRolex of issue 43 (label split, dynamic capacities, shards, augmentation, count weights)
    is a changed method: the check names its claims on the recorded machine, beyond that machine's
    drift."""
    if profile == "smoke":
        path = ROOT / "baselines" / "numerics" / "smoke-amd-epyc-milan-avx2.json"
        verdicts = _verdicts(path, json.loads(path.read_text(encoding="utf-8")), profile, ("fedrolex",))
    else:
        verdicts = _fedrolex_verdicts(_recording())
    today = baseline.load(ROOT / "baselines" / f"{profile}.json")
    assert baseline.check(verdicts, _before_reference(profile), complete=False).differences == []
    named = {d.claim for d in baseline.check(verdicts, today, complete=False).differences}
    assert "fedrolex.accuracy.high-heterogeneity-ordering" in named and len(named) >= 5, named


def test_the_other_machine_passes_the_standard_baseline() -> None:
    result = baseline.check(_fedrolex_verdicts(_recording()), BASELINE, complete=False)
    assert result.differences == [], [str(d) for d in result.differences]
    assert all(c.path == baseline.CROSS for c in result.claims.values())


@pytest.mark.parametrize("variant", _variants(_recording()))
def test_a_fedrolex_variant_lowered_by_two_points_fails_on_the_other_machine(variant: str) -> None:
    changed, readers = _lowered(_recording(), variant, 2.0)
    assert readers, f"no recorded claim reads {variant}"
    result = baseline.check(_fedrolex_verdicts(changed), BASELINE, complete=False)
    named = {d.claim for d in result.differences}
    assert named & readers, (variant, named, readers)
