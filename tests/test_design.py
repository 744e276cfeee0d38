"""Decidable by design (harness.loading.design): validation refuses a claim no number of seeds can decide,
lists those whose profile has too few, and its figures agree with what the verifier decides.

The catalog tests copy the shipped claims/ and specs/ into a temporary project and add one claim
file; the cross-checks run the verifier on synthetic observations at the design's boundary.
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from harness import cli
from harness.design.readings import DEFAULT_TAU
from harness.design.seed_counts import mean_range_seeds, pooled_range_seeds
from harness.errors import SpecError
from harness.loading import design as design_module
from harness.loading import design_check
from harness.loading.catalog import load_catalog
from harness.loading.design import design_of, designs, short_of_seeds
from harness.loading.design_check import CACHE_FOLDER, check_design, design_key
from harness.loading.planning_spread import baseline_spreads
from harness.schema.expectations.between import Between
from harness.schema.expectations.bounds import Above
from harness.schema.observations.correlation import CorrelationObservation
from harness.schema.observations.metric import MetricObservation
from harness.statistics.correlation_estimates import Correlation, fisher_z_bias
from harness.statistics.sequential_boundary import profile_level
from harness.statistics.series import Observed, Series
from harness.verdicts.verify import INCONCLUSIVE, PASS, evaluate

REPO = Path(__file__).resolve().parents[1]
TABLE4 = (-0.845, -0.715)
"""Table 4's r(H~, p_max) range, 'between −0.72 and −0.84', read with its rounding: 0.341 wide in z."""

LEVEL = profile_level(0.05)
"""The level a verdict on a profile's seeds tests at (0.7 α), which the design reads."""

REFUSED = """\
paper: hasfl
title: Claims no number of seeds can decide
reference: none
claims:
  - id: test.design.per-run-table4
    statement: "The estimates correlate overwhelmingly with capacity (r between −0.72 and −0.84 on all six runs)."
    source: "§4.4, Table 4"
    experiment: hasfl-cifar10
    observe: {correlation: [h_tilde, p_max], of: hasfl}
    expect:
      paper: {between: [-0.845, -0.715], of: every_seed}
  - id: test.design.point-mean
    statement: "The average capacity is 0.5."
    source: "§4"
    experiment: hasfl-cifar10
    observe: {metric: mean_capacity, of: hasfl}
    expect:
      smoke: {between: [0.5, 0.5]}
"""

ACCEPTED = """\
paper: hasfl
title: Claims decidable by design
reference: none
claims:
  - id: test.design.pooled-table4
    statement: "The estimates correlate overwhelmingly with capacity (r between −0.72 and −0.84 on all six runs)."
    source: "§4.4, Table 4"
    experiment: hasfl-cifar10
    observe: {correlation: [h_tilde, p_max], of: hasfl}
    expect:
      paper: {between: [-0.845, -0.715]}
      smoke: {between: [-0.845, -0.715]}
  - id: test.design.narrow-mean
    statement: "The average capacity is 0.50 to 0.51."
    source: "§4"
    experiment: hasfl-cifar10
    observe: {metric: mean_capacity, of: hasfl}
    expect:
      smoke: {between: [0.50, 0.51]}
  - id: test.design.narrow-mean-unrecorded
    statement: "The average capacity is 0.49 to 0.50."
    source: "§4"
    experiment: hasfl-cifar10
    observe: {metric: mean_capacity, of: hasfl}
    expect:
      smoke: {between: [0.49, 0.50]}
  - id: test.design.fixed-point
    statement: "This happens at 1.4 for 0.75."
    source: "§3.3"
    experiment: hasfl-allocation-rule
    observe: {metric: cap_reached_at, of: tier-0.75}
    expect:
      smoke: {between: [1.4, 1.4]}
      standard: {between: [1.4, 1.4], of: every_seed}
  - id: test.design.above-on-every-seed
    statement: "Above chance on every seed."
    source: "§4"
    experiment: hasfl-cifar10
    observe: {metric: final_accuracy, of: hasfl}
    expect:
      smoke: {above: 10.0, of: every_seed}
"""

STORED_SD = 0.05
"""The seed spread of test.design.narrow-mean in the temporary project's smoke baseline."""


def _project(root: Path, claims: str) -> Path:
    shutil.copytree(REPO / "claims", root / "claims")
    shutil.copytree(REPO / "specs", root / "specs")
    (root / "claims" / "zz_design.yaml").write_text(claims, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def refused(tmp_path_factory) -> Path:
    return _project(tmp_path_factory.mktemp("refused"), REFUSED)


@pytest.fixture(scope="module")
def accepted(tmp_path_factory) -> Path:
    root = _project(tmp_path_factory.mktemp("accepted"), ACCEPTED)
    values = {"0": 0.455, "1": 0.505, "2": 0.555}
    numbers = {"HAS-FL (mean_capacity)": {"mean": 0.505, "std": STORED_SD, "n": 3, "values": values}}
    (root / "baselines").mkdir()
    (root / "baselines" / "smoke.json").write_text(json.dumps(
        {"profile": "smoke", "claims": {"test.design.narrow-mean": {"status": "INCONCLUSIVE", "numbers": numbers}}}),
        encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def catalog(accepted: Path):
    return load_catalog(accepted / "claims", accepted / "specs", accepted)


# --- validation ------------------------------------------------------------------------

def test_the_per_run_table4_encoding_is_refused_at_its_file_line_and_field(refused: Path, tmp_path: Path) -> None:
    with pytest.raises(SpecError) as raised:
        check_design(load_catalog(refused / "claims", refused / "specs", refused), tmp_path)
    problems = {p.field: p for p in raised.value.problems if Path(p.file).name == "zz_design.yaml"}
    assert set(problems) == {"claims[0].expect.paper", "claims[1].expect.smoke"}, raised.value.problems
    per_run = problems["claims[0].expect.paper"]
    assert (Path(per_run.file), per_run.line) == (Path("claims/zz_design.yaml"), 11)
    assert "PASS unreachable at any number of seeds" in per_run.message
    assert "0.879 wide in z" in per_run.message and "only 0.341" in per_run.message
    assert "116 clients per run" in per_run.message and "`of: mean`" in per_run.message
    point = problems["claims[1].expect.smoke"]
    assert point.line == 18 and "a t-interval is never a single point" in point.message


@pytest.mark.parametrize("command", [["validate"], ["design"], ["plan", "--profile", "smoke"]])
def test_the_commands_that_check_the_design_fail_naming_file_line_and_field(refused: Path, command: list[str],
                                                                             capsys) -> None:
    assert cli.main(["--root", str(refused), *command]) == 2
    err = capsys.readouterr().err
    assert "claims/zz_design.yaml:11: claims[0].expect.paper: PASS unreachable" in err


def test_loading_a_catalog_integrates_nothing(refused: Path, monkeypatch) -> None:
    """The design check is the commands' that tell of undecidable claims, not every catalog load's."""
    def no_design(*args, **kwargs):
        raise AssertionError("load_catalog ran the design check")
    monkeypatch.setattr(design_module, "design_of", no_design)
    catalog = load_catalog(refused / "claims", refused / "specs", refused)
    assert "test.design.per-run-table4" in {c.id for c in catalog.claims}


def _problems(catalog, cache: Path) -> list[str]:
    with pytest.raises(SpecError) as raised:
        check_design(catalog, cache)
    return [str(problem) for problem in raised.value.problems]


def test_the_design_check_is_remembered_by_the_files_and_the_code(refused: Path, tmp_path: Path,
                                                                  monkeypatch) -> None:
    catalog = load_catalog(refused / "claims", refused / "specs", refused)
    checked = _problems(catalog, tmp_path)
    assert len(checked) == 2 and "claims/zz_design.yaml:11: claims[0].expect.paper" in checked[0]
    [remembered] = (tmp_path / CACHE_FOLDER).glob("*.json")
    assert remembered.stem == design_key(catalog)
    assert [entry["line"] for entry in json.loads(remembered.read_text(encoding="utf-8"))["problems"]] == [11, 18]

    monkeypatch.setattr(design_check, "design_problems", lambda catalog: [])  # read back, not checked again
    assert _problems(catalog, tmp_path) == checked
    remembered.write_text("{not json", encoding="utf-8")  # a damaged cache file is checked again
    assert design_check.cached_design_problems(catalog, tmp_path) == []
    monkeypatch.undo()

    moved = tmp_path / "moved"
    shutil.copytree(refused, moved)
    claims = moved / "claims" / "zz_design.yaml"
    claims.write_text("# one line more\n" + claims.read_text(encoding="utf-8"), encoding="utf-8")
    shifted = load_catalog(moved / "claims", moved / "specs", moved)
    assert design_key(shifted) != design_key(catalog)
    assert "claims/zz_design.yaml:12: claims[0].expect.paper" in _problems(shifted, tmp_path)[0]

    real = design_check.code_fingerprint
    monkeypatch.setattr(design_check, "code_fingerprint",
                        lambda module: {**real(module), "harness.loading.design": "edited"})
    assert design_key(catalog) != remembered.stem
    assert "harness.kinds.federated" in design_check._extension_modules(catalog)  # the kinds' code is keyed too


def test_the_pooled_encoding_is_accepted_with_the_seeds_it_needs(catalog) -> None:
    at_paper = design_of(catalog, "test.design.pooled-table4", "paper")
    at_smoke = design_of(catalog, "test.design.pooled-table4", "smoke")
    for design in (at_paper, at_smoke):
        assert design.pass_reachable and design.fail_reachable
        assert design.seeds_needed == 10, design  # τ = 0.1 planning spread over 20 clients, at 0.7 α
    assert at_paper.seeds == 10 and not at_paper.short_of_seeds
    assert at_smoke.seeds == 3 and at_smoke.short_of_seeds


def test_a_mean_range_narrower_than_the_stored_spread_allows_is_listed_with_its_seeds(catalog, accepted) -> None:
    expected = next(n for n in range(2, 1000)
                    if 2 * stats.t.isf(LEVEL, n - 1) * STORED_SD / math.sqrt(n) <= 0.01 + 1e-12)
    found = designs(catalog, baseline_spreads(accepted / "baselines", catalog))
    narrow = next(d for d in found if d.claim == "test.design.narrow-mean")
    assert narrow.decidable and narrow.seeds_needed == expected > narrow.seeds == 3
    assert narrow in short_of_seeds(found) and "from 3 stored seeds" in narrow.spread
    without_records = design_of(catalog, "test.design.narrow-mean", "smoke")
    assert without_records.seeds_needed == 2 and not without_records.short_of_seeds


def test_a_printed_seed_count_comes_with_its_power(catalog, accepted) -> None:
    """The first k at which PASS is possible decides with small chance; the line gives the seeds at which a
    PASS comes with 80% chance, with the truth at the range's centre (checked by simulation here)."""
    import re
    found = designs(catalog, baseline_spreads(accepted / "baselines", catalog))
    narrow = next(d for d in found if d.claim == "test.design.narrow-mean")
    seeds = int(re.search(r"80% power at (\d+) seeds \(effect assumed: the true mean at the range's centre",
                          narrow.text()).group(1))
    assert seeds > narrow.seeds_needed
    rng = np.random.default_rng(3)
    draws = rng.normal(0.505, STORED_SD, size=(20000, seeds))
    half = stats.t.isf(LEVEL, seeds - 1) * draws.std(axis=1, ddof=1) / math.sqrt(seeds)
    chance = np.mean((draws.mean(axis=1) - half >= 0.50) & (draws.mean(axis=1) + half <= 0.51))
    assert 0.8 - 0.008 <= chance < 0.84  # 20,000 draws: 99% margin 0.007
    pooled = next(d for d in found if d.claim == "test.design.pooled-table4" and d.profile == "smoke")
    assert "80% power at" in pooled.text() and "PASS and FAIL possible from 10 seeds" in pooled.text()


def test_a_new_claim_on_a_recorded_series_is_planned_from_that_series(catalog, accepted) -> None:
    """test.design.narrow-mean-unrecorded has no recording of its own; it reads the series
    test.design.narrow-mean's baseline recorded (HAS-FL's mean_capacity at smoke)."""
    found = designs(catalog, baseline_spreads(accepted / "baselines", catalog))
    recorded = next(d for d in found if d.claim == "test.design.narrow-mean")
    new = next(d for d in found if d.claim == "test.design.narrow-mean-unrecorded")
    assert new.seeds_needed == recorded.seeds_needed > 2
    assert "from 3 stored seeds" in new.spread
    assert "test.design.narrow-mean's smoke baseline recorded it, 3 seeds" in new.spread
    assert "this claim's smoke baseline" in recorded.spread


def test_fedclaims_validate_passes_and_lists_the_claims_short_of_seeds(accepted: Path, capsys) -> None:
    assert cli.main(["--root", str(accepted), "validate"]) == 0
    out = capsys.readouterr().out
    assert "test.design.pooled-table4 at smoke: PASS and FAIL possible from 10 seeds; 80% power at" in out
    assert "test.design.narrow-mean at smoke: PASS and FAIL possible from" in out
    assert "test.design.pooled-table4 at paper" not in out


def test_a_deterministic_metric_is_always_decidable_on_one_seed(catalog) -> None:
    for profile in ("smoke", "standard"):
        design = design_of(catalog, "test.design.fixed-point", profile)
        assert design.decidable and design.seeds_needed == 1 and not design.short_of_seeds, design


def test_a_bound_on_every_seed_of_a_varying_metric_is_a_sign_count(catalog) -> None:
    design = design_of(catalog, "test.design.above-on-every-seed", "smoke")
    assert (design.pass_seeds, design.fail_seeds, design.seeds) == (5, 1, 3) and design.short_of_seeds


def test_the_shipped_claims_are_all_decidable_by_design() -> None:
    shipped = load_catalog(REPO / "claims", REPO / "specs", REPO)
    table4 = [design_of(shipped, c.id, "paper") for c in shipped.claims if c.id.startswith("hasfl.table4.")]
    assert len(table4) == 8 and all(d.decidable and not d.short_of_seeds for d in table4), table4


# --- the design's figures against the verifier ---------------------------------------

CORRELATION = CorrelationObservation(correlation=["h_tilde", "p_max"], of="hasfl")
METRIC = MetricObservation(metric="m", of="v")


def _correlations(r: float, seeds: int, clients: int = 20) -> Observed:
    per_seed = {seed: Correlation(r, 0.0, math.nan, math.nan, clients) for seed in range(seeds)}
    return Observed([Series("r", {seed: r for seed in per_seed}, correlations=per_seed)])


def _values(mean: float, sd: float, seeds: int) -> Observed:
    unit = np.linspace(-1.0, 1.0, seeds)
    unit = (unit - unit.mean()) / unit.std(ddof=1)
    return Observed([Series("m", dict(enumerate(mean + sd * unit)))])


def _centre_r(low: float, high: float) -> float:
    return math.tanh((math.atanh(low) + math.atanh(high)) / 2)


def _expected_r(truth: float, clients: int = 20) -> float:
    """The r whose Fisher z is the one a run of `clients` clients at correlation `truth` expects (atanh r is
    biased away from 0): what the pool, which removes that bias, reads as `truth`."""
    return math.tanh(math.atanh(truth) + fisher_z_bias(truth, clients - 1))


def test_a_pooled_correlation_passes_from_the_seeds_the_design_names() -> None:
    width = math.atanh(TABLE4[1]) - math.atanh(TABLE4[0])
    seeds = pooled_range_seeds(width, 17, 0.0, 0.05)
    assert seeds == 8 and pooled_range_seeds(width, 17, DEFAULT_TAU ** 2, 0.05) == 9
    between = Between(between=TABLE4)
    centre = _expected_r(_centre_r(*TABLE4))
    assert evaluate(between, CORRELATION, _correlations(centre, seeds)).status == PASS
    assert evaluate(between, CORRELATION, _correlations(centre, seeds - 1)).status == INCONCLUSIVE


def test_a_per_seed_correlation_never_passes_where_the_design_refuses_it() -> None:
    every = Between(between=TABLE4, of="every_seed")
    centre = _centre_r(*TABLE4)
    assert evaluate(every, CORRELATION, _correlations(centre, 50)).status == INCONCLUSIVE
    assert evaluate(every, CORRELATION, _correlations(centre, 3, clients=97)).status == PASS


def test_a_mean_range_passes_from_the_seeds_the_design_names() -> None:
    low, high, sd = 0.50, 0.56, 0.05
    seeds = mean_range_seeds(high - low, sd, 0.05)
    between = Between(between=(low, high))
    assert evaluate(between, METRIC, _values((low + high) / 2, sd, seeds)).status == PASS
    assert evaluate(between, METRIC, _values((low + high) / 2, sd, seeds - 1)).status == INCONCLUSIVE


def test_the_sign_count_decides_from_the_seeds_the_design_names() -> None:
    above = Above(above=0.0, of="every_seed")
    assert evaluate(above, METRIC, _values(1.0, 0.1, 5)).status == PASS
    assert evaluate(above, METRIC, _values(1.0, 0.1, 4)).status == INCONCLUSIVE
