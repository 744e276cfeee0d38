"""The committed regression baseline: verdicts and observed numbers of one profile, and the
numerics they were computed under.

How a check compares (docs/regression.md states the rule in full):

- Records under the **same numerics** as the baseline (one fingerprint, the recorded one): exact.
  Any changed verdict fails, any number beyond the tolerance the baseline states (per claim, else
  the file's default) fails. It detects any change.
- Records under **other numerics**:
  - numbers that do not pass through floating-point kernels (series marked numerics-invariant:
    analytic results, counts, coverage, allocation-rule arithmetic, exact-algebra errors) are
    checked against the same tight tolerance;
  - trained quantities are compared as distributions: each series' per-seed differences are
    tested against the drift the baseline measured across numerics (`harness.regression.drift`),
    Holm-corrected over every series of the check;
  - a verdict that moved is *fragile* when its recorded statistics were nearer the new verdict
    than the reach of the measured drift (`harness.regression.nearness.near_margin`: the 99% quantile of the
    statistic's move when its recorded seeds move by the drift; at least one standard error),
    whatever the two verdicts (PASS <-> FAIL included); further away it fails. A fragile move
    fails too when the claim's own series show a shift (Holm over the fragile claims at the
    check's level); only a fragile move with no detectable shift is a warning.
  - each claim states the smallest shift its drift tests detect with 80% power.
- Always: a series or seed the baseline has not recorded fails; an ERROR fails; a baseline of
  another profile is refused. A FAIL is kept with its numbers: it documents a claim that does not
  reproduce, and the check then expects exactly that failure. A claim whose data was unavailable
  on the recording machine is stored as "unavailable here"; where the data exists, it is checked
  against its own expectation.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.regression import baseline_file, nearness
from harness.regression import drift as drift_io
from harness.regression.timing import timing_move
from harness.verdicts.verify import ERROR, FAIL, Verdict
from methods.plain import json_safe

DEFAULT_TOLERANCE = {"absolute": 1e-9, "relative": 1e-6}
UNAVAILABLE = "unavailable here"
EXACT, CROSS, UNCOMPARED = "same numerics", "other numerics", "not compared"
MOVES_ALPHA = drift_io.ALPHA / 2
"""The family-wise rate at which a verdict moved by drift alone fails, in each of the two ways a move
can fail (beyond the drift's reach; within it, with its series shifted); with the series' drift
tests at ALPHA, a check raises a false alarm on at most 2 · ALPHA of machines, under the model."""
SPREAD_FLOOR = 1e-9
"""A seed spread below this is no unit to state a detectable change in (the seeds agree)."""


@dataclass(frozen=True)
class Difference:
    claim: str
    message: str

    def __str__(self) -> str:
        return f"{self.claim}: {self.message}"


@dataclass
class ClaimCheck:
    """The outcome of comparing one claim's verdict with its baseline entry."""

    claim: str
    path: str = UNCOMPARED
    failures: list[str] = field(default_factory=list)
    fragile: list[str] = field(default_factory=list)
    drift_series: list[tuple[str, dict, dict]] = field(default_factory=list, repr=False)
    """(label, current numbers, recorded numbers) of the series left for the drift test."""
    tests: list[drift_io.DriftTest] = field(default_factory=list, repr=False)
    detects: str = ""
    """The smallest change the check would detect in this claim with 80% power."""
    detectable_sds: float | None = None
    """That change in the recorded seed SDs of its most sensitive series (drift-tested claims)."""


@dataclass
class Check:
    """A whole regression check: per-claim outcomes and what concerns the baseline itself."""

    claims: dict[str, ClaimCheck] = field(default_factory=dict)
    general: list[Difference] = field(default_factory=list)
    drift_tests: int = 0

    @property
    def differences(self) -> list[Difference]:
        return self.general + [Difference(c.claim, m) for c in self.claims.values() for m in c.failures]

    @property
    def fragile(self) -> list[Difference]:
        """The fragile notes of claims that do not fail (a failure beats a fragile note: one claim, one count)."""
        return [Difference(c.claim, m) for c in self.claims.values() if not c.failures for m in c.fragile]

    @property
    def differing_claims(self) -> list[str]:
        """Claims with a difference, each once (and the baseline itself, where a difference concerns it)."""
        return list(dict.fromkeys(d.claim for d in self.differences))

    @property
    def fragile_claims(self) -> list[str]:
        return list(dict.fromkeys(d.claim for d in self.fragile))

    def summary(self) -> str:
        paths = {EXACT: 0, CROSS: 0, UNCOMPARED: 0}
        for c in self.claims.values():
            paths[c.path] += 1
        fallback = sum(not t.scale.measured for c in self.claims.values() for t in c.tests)
        return (f"{paths[EXACT]} claims under the baseline's numerics (compared exactly), {paths[CROSS]} under other "
                f"numerics ({self.drift_tests} series tested against the measured drift"
                + (f", {fallback} of them against the unmeasured fallback √2 × seed sd" if fallback else "")
                + f"), {paths[UNCOMPARED]} without records to compare (skipped, an error, or data unavailable); "
                f"{_claims(len(self.differing_claims))} differing ({len(self.differences)} differences), "
                f"{_claims(len(self.fragile_claims))} fragile and not differing. {self.reach()}")

    def reach(self) -> str:
        """The smallest change the check detects with 80% power, over its claims."""
        exact = sum(c.path == EXACT for c in self.claims.values())
        sizes = sorted(c.detectable_sds for c in self.claims.values() if c.detectable_sds is not None)
        parts = [f"{exact} claims: any change"] if exact else []
        if sizes:
            middle = sizes[len(sizes) // 2]
            parts.append(f"{len(sizes)} drift-tested claims: a shift of {middle:.2g} recorded seed SDs (median; "
                         f"{sizes[0]:.2g} to {sizes[-1]:.2g})")
        return ("Detects with 80% power: " + "; ".join(parts) + ".") if parts else ""


def _claims(count: int) -> str:
    return f"{count} claim{'' if count == 1 else 's'}"


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: cannot read the baseline ({error})") from error
    if not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
        raise ValueError(f"{path}: a baseline is a JSON object with a 'claims' mapping")
    wrong = baseline_file.problems(data, path)
    if wrong:
        raise ValueError("the baseline cannot be read:\n" + "\n".join(wrong))
    return data


def _close(current: float | None, recorded: float | None, tolerance: dict[str, float]) -> bool:
    if current is None or recorded is None:
        return current is recorded
    if math.isinf(current) or math.isinf(recorded):
        return current == recorded
    return abs(current - recorded) <= tolerance["absolute"] + tolerance["relative"] * abs(recorded)


def _series_changes(current: dict, recorded: dict, tolerance: dict[str, float], exact: bool
                    ) -> tuple[list[str], list[tuple[str, dict, dict]]]:
    """Per-series differences: (failures, series left for the drift test under other numerics)."""
    failures, drifting = [], []
    for label in current.keys() - recorded.keys():
        failures.append(f"series {label!r} is not in the baseline (record it with `fedclaims baseline update`)")
    for label, numbers in recorded.items():
        now = current.get(label)
        if now is None:
            failures.append(f"series {label!r} is no longer observed")
            continue
        recorded_values = numbers.get("values", {})
        for seed in now["values"].keys() - recorded_values.keys():
            failures.append(f"{label} seed {seed} is not in the baseline (record it with `fedclaims baseline update`)")
        for seed in recorded_values.keys() - now["values"].keys():
            failures.append(f"{label} seed {seed} is no longer observed")
        if not (exact or now.get("numerics_invariant", False) or numbers.get("numerics_invariant", False)):
            drifting.append((label, now, numbers))
            continue
        for seed, value in recorded_values.items():
            if seed in now["values"] and not _close(now["values"][seed], value, tolerance):
                failures.append(f"drift beyond tolerance {tolerance}: {label} seed {seed}: "
                                f"{now['values'][seed]} vs baseline {value}"
                                + ("" if exact else " (numerics-invariant: checked tightly across numerics)"))
    return failures, drifting


def _verdict_move(verdict: Verdict, entry: dict[str, Any], measured: dict[str, Any], quantile: float
                  ) -> tuple[str | None, str | None]:
    """(failure, fragile note) of a verdict that moved under other numerics: fragile when the
    recorded statistics were within the drift's reach (at `quantile`) of the new verdict,
    whichever two verdicts."""
    before, after = entry["status"], verdict.status
    moved = f"verdict changed from {before} to {after} ({verdict.reason})"
    margins = entry.get("margins") or {}
    distance = margins.get(after)  # stored as None when infinite (decided without a spread)
    near = nearness.near_margin(entry.get("evidence", []), entry.get("numbers", {}), entry.get("experiment", ""),
                                measured, quantile)
    if distance is not None and distance < near:
        return None, (f"fragile: {before} → {after} under other numerics; the recorded statistics were "
                      f"{distance:.2f} SE from {after}, within the {near:.2f} SE the measured drift may move them")
    far = ("the baseline records no margin" if after not in margins else
           "the recorded verdict was decided without a spread" if distance is None else
           f"the recorded statistics were {distance:.2f} SE from {after}")
    return f"{moved}; {far}, beyond the {near:.2f} SE within which the measured drift of the numerics may move " \
           "them", None


def same_numerics(verdict: Verdict, entry: dict[str, Any]) -> bool:
    recorded = entry.get("numerics") or []
    return len(recorded) == 1 and verdict.numerics == recorded and recorded[0] != "unrecorded"


def check_one(verdict: Verdict, entry: dict[str, Any] | None, default: dict[str, float],
              measured: dict[str, Any] | None = None, quantile: float = nearness.NEAR_QUANTILE) -> ClaimCheck:
    """One claim's comparison; its drift-tested series are decided over the whole check (`check`)."""
    result = ClaimCheck(verdict.claim)
    if verdict.status == ERROR:
        result.failures.append(f"ERROR ({verdict.reason}); an error is never an accepted baseline outcome")
        return result
    if entry is None:
        result.failures.append("not in the baseline (run `fedclaims baseline update` to record it)")
        return result
    if entry["status"] == UNAVAILABLE:
        if not verdict.data_unavailable and verdict.status == FAIL:
            result.failures.append("its data was unavailable where the baseline was recorded; here it FAILs its "
                                   f"expectation ({verdict.reason})")
        return result
    if verdict.data_unavailable:
        result.failures.append(f"the baseline records {entry['status']}, but the data is unavailable here "
                               f"({verdict.reason})")
        return result
    if not verdict.numerics and not entry.get("numerics"):
        if verdict.status != entry["status"]:
            result.failures.append(f"verdict changed from {entry['status']} to {verdict.status} ({verdict.reason})")
        return result
    exact = same_numerics(verdict, entry)
    result.path = EXACT if exact else CROSS
    if verdict.status != entry["status"] and entry.get("compare") == "verdict":
        failure, fragile = timing_move(entry["status"], verdict.status, verdict.reason, json_safe(verdict.numbers),
                                       entry.get("numbers", {}))
        result.failures += [failure] if failure else []
        result.fragile += [fragile] if fragile else []
        return result
    if verdict.status != entry["status"]:
        if exact:
            result.failures.append(f"verdict changed from {entry['status']} to {verdict.status} ({verdict.reason})")
            return result
        failure, fragile = _verdict_move(verdict, entry, measured or {}, quantile)
        if failure:
            result.failures.append(failure)
            return result
        assert fragile is not None  # a move that is not a failure is fragile
        result.fragile.append(fragile)
    if entry.get("compare") == "verdict":
        return result
    tolerance = {**default, **entry.get("tolerance", {})}
    failures, result.drift_series = _series_changes(json_safe(verdict.numbers), entry.get("numbers", {}), tolerance,
                                                    exact)
    result.failures += failures
    return result


def check(verdicts: list[Verdict], baseline: dict[str, Any], complete: bool = True,
          widen_unrecorded: bool = False) -> Check:
    """Compare the verdicts with the baseline; `complete`: the verdicts cover every claim. With
    `widen_unrecorded` (the claims suite, reading committed records), a series made under numerics no
    recording holds is tested against the larger of the measured drift and its fallback
    (`drift.scale`); `fedclaims baseline check` tests it against the measured drift alone."""
    outcome = Check()
    profile = baseline.get("profile")
    wrong = sorted({v.profile for v in verdicts if v.profile != profile})
    if wrong:
        outcome.general.append(Difference("<baseline>", f"recorded for profile {profile!r}, compared with verdicts "
                                                        f"of {wrong}"))
        return outcome
    default = {**DEFAULT_TOLERANCE, **baseline.get("tolerance", {})}
    entries = baseline["claims"]
    measured = baseline.get("drift") or {}
    tests = []
    crossing = [v for v in verdicts if entries.get(v.claim, {}).get("evidence") and v.numerics
                and not same_numerics(v, entries[v.claim])]
    quantile = 1.0 - MOVES_ALPHA / max(1, len(crossing))  # Bonferroni over the claims whose verdict may move
    for verdict in verdicts:
        claim = check_one(verdict, entries.get(verdict.claim), default, measured, quantile)
        outcome.claims[verdict.claim] = claim
        for label, now, then in claim.drift_series:
            named = then if then.get("quantity") else now  # the quantity as the baseline recorded it
            recorded = not widen_unrecorded or drift_io.recorded(measured, verdict.experiment, verdict.numerics)
            test = drift_io.drift_test(verdict.claim, label, drift_io.group_key(verdict.experiment, named), now,
                                       then, measured, recorded)
            if test is not None:
                tests.append(test)
    outcome.drift_tests = len(tests)
    for test in tests:
        outcome.claims[test.claim].tests.append(test)
    for test in drift_io.holm_rejected(tests):
        outcome.claims[test.claim].failures.append(
            f"moved beyond the drift of the numerics (Holm over {len(tests)} series, family-wise α = "
            f"{drift_io.ALPHA:g}): {test.text()}")
    _fragile_with_a_shift(outcome)
    designs = {v.claim: _drift_design(v, entries.get(v.claim), measured, widen_unrecorded) for v in verdicts}
    family = max(1, sum(len(series) for series in designs.values()))
    for claim in outcome.claims.values():
        _state_reach(claim, designs.get(claim.claim, []), family)
    if complete:
        seen = {v.claim for v in verdicts}
        outcome.general += [Difference(claim, "in the baseline but no longer verified") for claim in entries
                            if claim not in seen]
    return outcome


def _claim_p(claim: ClaimCheck) -> float:
    """The claim's series together: the smallest p of its drift tests, Bonferroni over them."""
    return min(1.0, len(claim.tests) * min(t.p_value for t in claim.tests))


def _fragile_with_a_shift(outcome: Check) -> None:
    """A fragile move whose claim's own series show a shift (Holm over the fragile claims at the
    check's level) is a failure: the verdict moved, and not by the numerics alone."""
    fragile = [c for c in outcome.claims.values() if c.fragile and c.tests and not c.failures]
    for rank, claim in enumerate(sorted(fragile, key=_claim_p)):
        level = MOVES_ALPHA / (len(fragile) - rank)
        if not _claim_p(claim) < level:
            break
        shifted = min(claim.tests, key=lambda t: t.p_value)
        claim.failures += [f"{note.removeprefix('fragile: ')}, but its series moved beyond the drift of the "
                           f"numerics (p = {_claim_p(claim):.3g} over its {len(claim.tests)} series, Holm over the "
                           f"{len(fragile)} fragile claims at α = {MOVES_ALPHA:g}): {shifted.text()}"
                           for note in claim.fragile]
        claim.fragile = []


@dataclass(frozen=True)
class _DesignedSeries:
    """A recorded series a check under other numerics would test against the drift: its label, its drift
    scale and its recorded seeds and spread (the design, whatever the outcome)."""

    label: str
    scale: drift_io.Scale
    seeds: int
    recorded_sd: float


def _drift_design(verdict: Verdict, entry: dict[str, Any] | None, measured: dict[str, Any],
                  widen_unrecorded: bool = False) -> list[_DesignedSeries]:
    """The series of a claim that a check of this verdict's numerics tests against the drift, read from the
    baseline entry alone: the same for every outcome of the same check."""
    if (entry is None or entry.get("compare") == "verdict" or not entry.get("numbers") or not verdict.numerics
            or same_numerics(verdict, entry)):
        return []
    designed = []
    for label, numbers in entry["numbers"].items():
        if numbers.get("numerics_invariant"):
            continue
        seeds = sum(v is not None and math.isfinite(v) for v in numbers.get("values", {}).values())
        sd = numbers.get("std")
        sd = float(sd) if sd is not None and math.isfinite(sd) else math.nan
        experiment = entry.get("experiment", verdict.experiment)
        group = drift_io.group_key(experiment, numbers)
        recorded = not widen_unrecorded or drift_io.recorded(measured, experiment, verdict.numerics)
        designed.append(_DesignedSeries(label, drift_io.scale(measured, group, sd, seeds, label, recorded), seeds,
                                        sd))
    return designed


def _state_reach(claim: ClaimCheck, designed: list[_DesignedSeries], family: int) -> None:
    """What the check can see in this claim: any change when compared exactly, else the smallest constant
    per-seed shift its most sensitive recorded series would show with 80% power at Holm's first step over
    every series the check tests (the design: two runs of the same check state the same reach)."""
    if claim.path == EXACT:
        claim.detects = "any change (same numerics: compared bit for bit, up to the tolerance)"
        return
    if claim.path != CROSS:
        return
    level = drift_io.ALPHA / family
    reaches = []
    for series in designed:
        shift = drift_io.detectable_shift(series.scale, series.seeds, level)
        sds = (shift / series.recorded_sd if math.isfinite(series.recorded_sd) and series.recorded_sd > SPREAD_FLOOR
               else None)
        reaches.append((series, shift, sds))
    if not reaches:
        claim.detects = "any change of its numerics-invariant numbers; its verdict only otherwise"
        return
    best = min(reaches, key=lambda reach: math.inf if reach[2] is None else reach[2])
    series, shift, sds = best
    claim.detectable_sds = sds
    in_sds = f" = {sds:.2g} recorded seed SDs" if sds is not None else ""
    fallback = "" if series.scale.measured else "; its drift group was NOT MEASURED (fallback √2 × seed sd)"
    claim.detects = (f"a shift of {shift:.3g}{in_sds} per seed in {series.label} (80% power at Holm's first step "
                     f"over the check's {family} drift-tested series, α = {level:.2g}; {series.scale.text()}"
                     f"{fallback})")


def compare(verdicts: list[Verdict], baseline: dict[str, Any], complete: bool = True) -> list[Difference]:
    """The failures of a check (`check` also gives the fragile verdicts)."""
    return check(verdicts, baseline, complete).differences
