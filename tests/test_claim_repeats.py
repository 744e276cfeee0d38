"""A claim that repeats another's observation and test (`repeats:`) adds no independent evidence: every such
pair among the shipped claims declares it, and its verdicts count once, under the claim it repeats."""
from __future__ import annotations

from itertools import combinations
from pathlib import Path

from harness.loading.catalog import load_catalog
from harness.report.attributions import relations
from harness.report.tally import tally
from harness.verdicts.levels import level_reader
from harness.verdicts.verdict import Verdict

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)


def _test_of(claim, profile: str) -> tuple | None:
    """What the claim tests at the profile, with 'A − B above 0' and 'order [A, B]' read as the one paired test
    they are; None where it tests nothing there."""
    expectation = claim.expect.get(profile)
    if expectation is None or expectation.skips:
        return None
    hypothesis = dict(expectation.hypothesis())
    observe = claim.observe
    metric = (getattr(observe, "metric", None), repr(sorted(getattr(observe, "args", {}).items())))
    if type(observe).__name__ == "DifferenceObservation" and hypothesis.pop("above", None) == 0.0:
        return ("paired order", metric, tuple(observe.of), tuple(sorted(hypothesis.items())))
    if type(observe).__name__ == "CompareObservation" and len(hypothesis.get("order", ())) == 2:
        order = tuple(hypothesis.pop("order"))
        return ("paired order", metric, order, tuple(sorted(hypothesis.items())))
    return (type(observe).__name__, metric, tuple(observe.variants), repr(sorted(hypothesis.items())))


def _repeating_pairs() -> list[tuple[str, str, str]]:
    pairs = []
    for first, second in combinations(CATALOG.claims, 2):
        if first.claim.experiment != second.claim.experiment:
            continue
        for profile in set(first.claim.expect) & set(second.claim.expect):
            tested = _test_of(first.claim, profile)
            if tested is not None and tested == _test_of(second.claim, profile):
                pairs.append((first.id, second.id, profile))
                break
    return pairs


def test_every_claim_that_repeats_another_says_which() -> None:
    pairs = _repeating_pairs()
    assert pairs, "the FedRolex gap claims repeat the participation claims: the scan must find them"
    undeclared = [(a, b, profile) for a, b, profile in pairs
                  if CATALOG.claim(a).claim.repeats != b and CATALOG.claim(b).claim.repeats != a]
    assert not undeclared, f"claims testing one relation on one observation without `repeats:`: {undeclared}"


def test_a_repeat_counts_once_under_the_claim_it_repeats() -> None:
    repeat = CATALOG.claim("fedrolex.homogeneous.gap-narrower-than-heterofl")
    assert repeat.claim.repeats == "fedrolex.participation.10pct"
    reader = level_reader(CATALOG, {})
    verdicts = [Verdict(loaded.id, loaded.paper, "standard", loaded.claim.experiment, loaded.claim.source,
                        loaded.claim.statement, "", "PASS", "")
                for loaded in (repeat, CATALOG.claim("fedrolex.participation.10pct"))]
    levels = {(v.claim, v.profile): reader.level(v) for v in verdicts}
    counted = tally(verdicts, levels)
    assert sum(counted.of("repeat").values()) == 1
    assert sum(sum(counts.values()) for group, counts in counted.groups.items() if group != "repeat") == 1


def test_a_repeat_states_the_relation_of_the_claim_it_repeats() -> None:
    """So the attribution rule reads a repeat's FAIL as it reads the claim it repeats (a FAIL of that relation
    where the models learn refutes `the scale` for both)."""
    found = relations(CATALOG)
    for loaded in CATALOG.claims:
        if loaded.claim.repeats:
            assert found[loaded.id] == found[loaded.claim.repeats] and loaded.id in found[loaded.id]
