"""The shipped claims follow the encoding rules of docs/claims.md: the paper's words, its printed
numbers with their rounding, its own quantities, labelled diagnostics and README quotes."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.catalog import load_catalog
from harness.schema import claim as schema

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
CLAIM_ID = re.compile(r"\b(?:hasfl|fedrolex|fedhenet)\.[a-z0-9._-]*[a-z0-9]")


def claim(claim_id: str) -> schema.Claim:
    return CATALOG.claim(claim_id).claim


def accepted(expectation) -> tuple[float, float]:
    if isinstance(expectation, schema.Between):
        return expectation.between
    return expectation.approx - expectation.half_width, expectation.approx + expectation.half_width


@pytest.mark.parametrize("claim_id, profiles, printed_low, printed_high", [
    ("hasfl.table3.cifar10.guarantee-off-largest-allocation", ("paper", "standard"), "0.58", "0.69"),
    ("hasfl.table4.cifar10.estimate-tracks-capacity", ("paper", "standard"), "-0.84", "-0.72"),
    ("hasfl.table4.emnist.estimate-tracks-capacity", ("paper", "standard"), "-0.84", "-0.72"),
    ("hasfl.table4.cifar10.no-data-signal-given-capacity", ("paper", "standard"), "-0.60", "0.10"),
    ("hasfl.table4.emnist.no-data-signal-given-capacity", ("paper", "standard"), "-0.60", "0.10"),
    ("hasfl.table4.cifar10.allocations-ignore-data", ("paper", "smoke", "standard"), "-0.46", "0.19"),
    ("hasfl.table4.emnist.allocations-ignore-data", ("paper", "smoke", "standard"), "-0.46", "0.19"),
    ("hasfl.uniform.cifar10-rise-and-decline", ("paper",), "6", "11"),
    ("hasfl.table6.shakespeare.hasfl-four-point-decline", ("paper",), "4", "4"),
    ("fedhenet.noniid.fedavg-33-40", ("paper",), "33", "40"),
    ("fedhenet.noniid.fedprox-33-40", ("paper",), "33", "40"),
])
def test_printed_numbers_are_read_with_their_rounding(claim_id, profiles, printed_low, printed_high) -> None:
    """Every value the paper would print as the given numbers (as printed, with their decimals) is
    accepted, and nothing a whole rounding step beyond them."""
    decimals = max(len(x.partition(".")[2]) for x in (printed_low, printed_high))
    half = 0.5 * 10 ** -decimals
    printed_low, printed_high = float(printed_low), float(printed_high)
    for profile in profiles:
        low, high = accepted(claim(claim_id).expect[profile])
        assert low <= printed_low - half + 1e-12 and high >= printed_high + half - 1e-12, (profile, low, high)
        assert low > printed_low - 3 * half and high < printed_high + 3 * half, (profile, low, high)


@pytest.mark.parametrize("claim_id, pair", [
    ("hasfl.table6.shakespeare.hasfl-weakest", ["fjord", "hasfl"]),
    ("hasfl.table6.shakespeare.hasfl-weakest-vs-uniform", ["uniform", "hasfl"]),
    ("hasfl.table6.shakespeare.only-hasfl-degrades", ["hasfl", "fjord"]),
    ("hasfl.table6.shakespeare.only-hasfl-degrades-vs-uniform", ["hasfl", "uniform"]),
])
def test_a_sentence_about_one_method_ranks_only_that_method(claim_id, pair) -> None:
    """'HAS-FL is the weakest' and 'the only one that degrades' order HAS-FL against each other
    policy, never the others among themselves."""
    for expectation in claim(claim_id).expect.values():
        assert isinstance(expectation, schema.Skip) or expectation.order == pair


def test_a_figure_read_qualitatively_is_not_held_to_every_client_on_every_seed() -> None:
    low_capacity = claim("hasfl.figure5.cifar10.low-capacity-clients-at-caps")
    assert low_capacity.observe.metric == "clients_mean" and low_capacity.observe.args["quantity"] == "at_cap"
    assert all(e.of == "mean" for e in low_capacity.expect.values())


def test_no_claim_uses_a_comparator_neither_the_paper_nor_the_authors_code_has() -> None:
    for loaded in CATALOG.claims:
        assert getattr(loaded.claim.observe, "metric", None) != "total_bytes_full_network", loaded.id
    ids = {loaded.id for loaded in CATALOG.claims}
    assert "fedhenet.cost.total-bytes-below-full-network-fedavg" not in ids
    assert "fedhenet.he.payload-measured-in-run" not in ids


def test_a_claim_of_a_quantified_saving_tests_the_quantity_at_the_paper_profile() -> None:
    for claim_id in ("fedhenet.cost.wall-time-below-fedavg", "fedhenet.energy.about-70-percent-saved",
                     "hasfl.table5.cifar10.hasfl-threefold-less-computation"):
        assert isinstance(claim(claim_id).expect["paper"], schema.Between), claim_id


def test_privacy_sentences_are_tested_against_what_the_coordinator_learns() -> None:
    privacy = [loaded for loaded in CATALOG.claims if "privacy" in loaded.claim.statement.lower()]
    assert privacy
    for loaded in privacy:
        assert loaded.claim.observe.metric.startswith("coordinator_"), loaded.id
        assert loaded.claim.observe.metric not in ("coordinator_holds_secret_key", "coordinator_could_decrypt")


@pytest.mark.parametrize("suffix", [".cached-features", ".this-implementation", ".n10"])
def test_second_measurements_are_labelled_diagnostics(suffix: str) -> None:
    labelled = [loaded for loaded in CATALOG.claims if loaded.id.endswith(suffix)]
    assert labelled
    assert all(loaded.claim.role == "diagnostic" for loaded in labelled)


def test_every_diagnostic_names_the_papers_claim_it_explains() -> None:
    ids = {loaded.id: loaded.claim for loaded in CATALOG.claims}
    for loaded in CATALOG.claims:
        if loaded.claim.role == "diagnostic":
            named = set(CLAIM_ID.findall(loaded.claim.note)) & set(ids)
            assert any(ids[other].role == "paper" for other in named), loaded.id


def test_only_readme_quotes_cite_the_readme_as_their_source() -> None:
    for loaded in CATALOG.claims:
        cites_readme = "readme" in loaded.claim.source.lower()
        assert cites_readme == (loaded.claim.quote_from == "authors-readme"), loaded.id
