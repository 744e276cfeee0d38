"""Malformed claim and spec files: each problem names its file, line, field and, for a
misspelling, the closest valid name.

Every case copies the shipped claims/ and specs/ into a temporary project, adds the
malformed file(s) from tests/data/malformed/, loads the catalog and checks the exact set
of problems reported.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import cli
from harness.errors import SpecError
from harness.loading.catalog import load_catalog

REPO = Path(__file__).resolve().parents[1]
MALFORMED = Path(__file__).resolve().parent / "data" / "malformed"


@dataclass(frozen=True)
class Expect:
    """One problem: its file (relative to the project), line, field path and message parts."""

    file: str
    line: int | None
    field: str
    message: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    files: tuple[tuple[str, str], ...]  # (directory, file name in tests/data/malformed)
    problems: tuple[Expect, ...]

    @property
    def id(self) -> str:
        return self.files[0][1].removesuffix(".yaml")


def C(directory: str, name: str, *problems: Expect, extra: tuple[tuple[str, str], ...] = ()) -> Case:
    return Case(((directory, name), *extra), problems)


def S(name: str, *problems: Expect) -> Case:
    """A malformed study spec with the claim it observes."""
    return C("specs", name, *problems, extra=(("claims", "claim_for_study.yaml"),))


def E(file: str, line: int | None, field: str, *message: str) -> Expect:
    return Expect(file, line, field, message)


NOT_A_NUMBER = "Input should be a valid number"

CASES = [
    # --- claim files: keys and types ----------------------------------------------------
    C("claims", "claim_unknown_key.yaml",
      E("claims/claim_unknown_key.yaml", 6, "claims[0].statment", "unknown field", "did you mean 'statement'?")),
    C("claims", "claim_expect_unknown_key.yaml",
      E("claims/claim_expect_unknown_key.yaml", 11, "claims[0].expect.smoke.betwen",
        "an expectation needs exactly one of the keys", "found 'betwen'", "did you mean 'between'?")),
    C("claims", "claim_unknown_observation_key.yaml",
      E("claims/claim_unknown_observation_key.yaml", 9, "claims[0].observe.metrc",
        "an observation needs exactly one of the keys", "did you mean 'metric'?")),
    C("claims", "claim_wrong_type.yaml",
      E("claims/claim_wrong_type.yaml", 12, "claims[0].expect.smoke.equals", NOT_A_NUMBER)),
    C("claims", "claim_missing_field.yaml",
      E("claims/claim_missing_field.yaml", 5, "claims[0].source", "required field is missing")),
    C("claims", "claim_bad_aggregate.yaml",
      E("claims/claim_bad_aggregate.yaml", 11, "claims[0].expect.smoke.of", "'mean' or 'every_seed'")),
    # --- claim files: cross-references ---------------------------------------------------
    C("claims", "claim_unknown_experiment.yaml",
      E("claims/claim_unknown_experiment.yaml", 8, "claims[0].experiment",
        "unknown experiment 'hasfl-allocation-rules'", "did you mean 'hasfl-allocation-rule'?")),
    C("claims", "claim_broken_experiment.yaml",
      E("specs/spec_broken_for_claim.yaml", 6, "variants.tier-0.25.config.p_max", NOT_A_NUMBER,
        "(variant 'tier-0.25', profile 'smoke')"),
      E("claims/claim_broken_experiment.yaml", 8, "claims[0].experiment",
        "experiment 'test-broken-experiment' has errors of its own"),
      extra=(("specs", "spec_broken_for_claim.yaml"),)),
    C("claims", "claim_wrong_paper.yaml",
      E("claims/claim_wrong_paper.yaml", 8, "claims[0].experiment",
        "belongs to paper 'hasfl', not 'fedrolex'")),
    C("claims", "claim_unknown_variant.yaml",
      E("claims/claim_unknown_variant.yaml", 9, "claims[0].observe.of[1]",
        "unknown variant 'tier-0.33' of experiment 'hasfl-allocation-rule'", "did you mean 'tier-0.5'?")),
    C("claims", "claim_unknown_metric.yaml",
      E("claims/claim_unknown_metric.yaml", 10, "claims[0].observe.metric",
        "unknown metric 'max_alocation' for kind 'allocation_rule'", "did you mean 'max_allocation'?")),
    C("claims", "claim_bad_metric_args.yaml",
      E("claims/claim_bad_metric_args.yaml", 13, "claims[0].observe.args.width", "less than or equal to 1")),
    C("claims", "claim_misspelt_metric_arg.yaml",
      E("claims/claim_misspelt_metric_arg.yaml", 13, "claims[0].observe.args.widht", "unknown field 'widht'",
        "did you mean 'width'?")),
    C("claims", "claim_unknown_profile.yaml",
      E("claims/claim_unknown_profile.yaml", 12, "claims[0].expect.papr",
        "unknown profile 'papr' of experiment 'hasfl-allocation-rule'", "did you mean 'paper'?")),
    C("claims", "claim_within_spread_unknown_variant.yaml",
      E("claims/claim_within_spread_unknown_variant.yaml", 11, "claims[0].expect.smoke",
        "unknown variant 'tier-0.3'", "did you mean 'tier-0.5'?")),
    # --- claim files: expectations -------------------------------------------------------
    C("claims", "claim_negative_tolerance.yaml",
      E("claims/claim_negative_tolerance.yaml", 13, "claims[0].expect.smoke.tolerance",
        "greater than or equal to 0")),
    C("claims", "claim_both_tolerances.yaml",
      E("claims/claim_both_tolerances.yaml", 11, "claims[0].expect.smoke",
        "approx needs exactly one of tolerance, relative_tolerance")),
    # --- claim files: labels -------------------------------------------------------------
    C("claims", "claim_diagnostic_without_note.yaml",
      E("claims/claim_diagnostic_without_note.yaml", 5, "claims[0]",
        "a diagnostic claim needs a note", "which claim is the paper's")),
    C("claims", "claim_readme_quote_without_source.yaml",
      E("claims/claim_readme_quote_without_source.yaml", 5, "claims[0]",
        "quoted from the authors' README needs a source naming that README", "'§4 Experimental Results'")),
    C("claims", "claim_unknown_role.yaml",
      E("claims/claim_unknown_role.yaml", 12, "claims[0].role", "'paper', 'diagnostic', 'probe' or 'implementation'")),
    C("claims", "claim_range_reversed.yaml",
      E("claims/claim_range_reversed.yaml", 11, "claims[0].expect.smoke",
        "range [0.3, 0.1] has its lower bound above its upper bound")),
    # Correlations need a kind with per-client quantities: federated_training (hasfl-cifar10).
    C("claims", "claim_correlation_bound.yaml",
      E("claims/claim_correlation_bound.yaml", 11, "claims[0].expect.smoke",
        "a correlation lies in [-1, 1]", "[-1.5, 0.5]")),
    C("claims", "claim_unknown_client_quantity.yaml",
      E("claims/claim_unknown_client_quantity.yaml", 11, "claims[0].observe.given",
        "unknown per-client quantity 'p_maxx' for kind 'federated_training'", "did you mean 'p_max'?")),
    C("claims", "claim_order_not_compare.yaml",
      E("claims/claim_order_not_compare.yaml", 11, "claims[0].expect.smoke",
        "'order' needs a 'compare' observation")),
    C("claims", "claim_compare_value_test.yaml",
      E("claims/claim_compare_value_test.yaml", 11, "claims[0].expect.smoke",
        "a 'compare' observation needs an 'order' expectation, not above")),
    # --- claim files: ids and documents --------------------------------------------------
    C("claims", "claim_duplicate_id.yaml",
      E("claims/claim_duplicate_id.yaml", 12, "claims[1].id",
        "duplicate claim id 'test.malformed'", "first at claims/claim_duplicate_id.yaml:5")),
    C("claims", "claim_repeats_another_observation.yaml",
      E("claims/claim_repeats_another_observation.yaml", 13, "claims[1].repeats",
        "repeats 'test.first-reading', whose observation differs")),
    C("claims", "claim_repeats_unknown.yaml",
      E("claims/claim_repeats_unknown.yaml", 13, "claims[1].repeats",
        "repeats 'test.first-readin': no other claim of this file has that id", "did you mean 'test.first-reading'?")),
    C("claims", "claim_as_run_of_unknown.yaml",
      E("claims/claim_as_run_of_unknown.yaml", 13, "claims[1].as_run_of",
        "as_run_of 'test.as-state': no other claim of this file has that id", "did you mean 'test.as-stated'?")),
    C("claims", "claim_as_run_of_a_claim_as_run.yaml",
      E("claims/claim_as_run_of_a_claim_as_run.yaml", 21, "claims[2].as_run_of",
        "as_run_of 'test.as-run', which is itself run as the authors' code ran 'test.as-stated'")),
    C("claims", "claim_duplicate_id_across_a.yaml",
      E("claims/claim_duplicate_id_across_b.yaml", 5, "claims[0].id",
        "duplicate claim id 'test.duplicate-across-files'", "first at claims/claim_duplicate_id_across_a.yaml:5"),
      extra=(("claims", "claim_duplicate_id_across_b.yaml"),)),
    C("claims", "claim_syntax_error.yaml",
      E("claims/claim_syntax_error.yaml", 6, "<document>", "YAML syntax error", "expected ',' or ']'")),
    C("claims", "claim_empty.yaml",
      E("claims/claim_empty.yaml", 1, "<document>", "file is empty")),
    C("claims", "claim_duplicate_yaml_key.yaml",
      E("claims/claim_duplicate_yaml_key.yaml", 12, "claims[0].source",
        "duplicate key 'source' (first defined on line 7)")),
    C("claims", "claim_is_list.yaml",
      E("claims/claim_is_list.yaml", 1, "<document>", "a claim file must be a mapping")),
    # --- spec files ----------------------------------------------------------------------
    C("specs", "spec_unknown_kind.yaml",
      E("specs/spec_unknown_kind.yaml", 4, "kind",
        "unknown experiment kind 'allocation_rules'", "did you mean 'allocation_rule'?")),
    C("specs", "spec_unknown_key.yaml",
      E("specs/spec_unknown_key.yaml", 5, "varients", "unknown field", "did you mean 'variants'?")),
    # federation_size is 20 in the base config (line 7); the variant sets it on line 13.
    C("specs", "spec_variant_wrong_type.yaml",
      E("specs/spec_variant_wrong_type.yaml", 13, "variants.tier-0.75.config.federation_size",
        "valid integer", "(variant 'tier-0.75', profile 'smoke')")),
    C("specs", "spec_profile_override_wrong_type.yaml",
      E("specs/spec_profile_override_wrong_type.yaml", 14, "profiles.smoke.overrides.ratio_step",
        NOT_A_NUMBER, "(variant 'tier-0.5', profile 'smoke')")),
    C("specs", "spec_config_unknown_key.yaml",
      E("specs/spec_config_unknown_key.yaml", 6, "config.p_mn", "unknown setting 'p_mn'",
        "did you mean 'p_min'?")),
    C("specs", "spec_unknown_override_variant.yaml",
      E("specs/spec_unknown_override_variant.yaml", 11, "profiles.smoke.variant_overrides.tier-0.75",
        "unknown variant 'tier-0.75'", "did you mean 'tier-0.5'?")),
    C("specs", "spec_unknown_plot.yaml",
      E("specs/spec_unknown_plot.yaml", 10, "figures[0].plot",
        "unknown plot 'allocation_curve' for kind 'allocation_rule'", "did you mean 'allocation_curves'?")),
    C("specs", "spec_figure_unknown_variant.yaml",
      E("specs/spec_figure_unknown_variant.yaml", 12, "figures[0].variants[1]",
        "unknown variant 'tier-05'", "did you mean 'tier-0.5'?")),
    C("specs", "spec_empty_seeds.yaml",
      E("specs/spec_empty_seeds.yaml", 9, "profiles.smoke.seeds", "at least 1 item")),
    C("specs", "spec_duplicate_experiment.yaml",
      E("specs/spec_duplicate_experiment.yaml", 1, "experiment",
        "duplicate experiment id 'hasfl-allocation-rule'", "also in specs/hasfl-allocation-rule.yaml")),
    C("specs", "spec_is_list.yaml",
      E("specs/spec_is_list.yaml", 1, "<document>", "a spec file must be a mapping")),
    C("specs", "spec_syntax_error.yaml",
      E("specs/spec_syntax_error.yaml", 7, "<document>", "YAML syntax error", "expected ',' or '}'")),
    # --- expectations that could never fail ------------------------------------------------
    C("claims", "claim_nan_bound.yaml",
      E("claims/claim_nan_bound.yaml", 12, "claims[0].expect.smoke.not_above", "non-finite number '.nan'")),
    C("claims", "claim_inf_tolerance.yaml",
      E("claims/claim_inf_tolerance.yaml", 13, "claims[0].expect.smoke.tolerance", "non-finite number '.inf'")),
    C("claims", "claim_string_nan.yaml",
      E("claims/claim_string_nan.yaml", 12, "claims[0].expect.smoke.below", "finite number")),
    C("claims", "claim_self_difference.yaml",
      E("claims/claim_self_difference.yaml", 9, "claims[0].observe",
        "a difference of 'fedrolex-l2' with itself", "cannot fail")),
    C("claims", "claim_equals_varying_mean.yaml",
      E("claims/claim_equals_varying_mean.yaml", 11, "claims[0].expect.smoke",
        "equals 20.0 without a tolerance", "can never PASS")),
    C("claims", "claim_spread_negative_bound.yaml",
      E("claims/claim_spread_negative_bound.yaml", 11, "claims[0].expect.smoke",
        "a ratio of standard deviations is positive")),
    C("claims", "claim_spread_deterministic.yaml",
      E("claims/claim_spread_deterministic.yaml", 11, "claims[0].expect.smoke",
        "the spread of 'chance_accuracy' over seeds", "declared deterministic", "0/0")),
    C("claims", "claim_family_alone.yaml",
      E("claims/claim_family_alone.yaml", 12, "claims[0].family",
        "family 'lonely' has one claim", "names at least two")),
    C("claims", "claim_correlation_cannot_fail.yaml",
      E("claims/claim_correlation_cannot_fail.yaml", 11, "claims[0].expect.smoke",
        "holds for every correlation in [-1, 1]", "cannot fail")),
    C("claims", "claim_compare_repeated.yaml",
      E("claims/claim_compare_repeated.yaml", 9, "claims[0].observe", "the comparison names hasfl more than once"),
      E("claims/claim_compare_repeated.yaml", 11, "claims[0].expect.smoke", "the order names hasfl more than once")),
    C("specs", "spec_nan_config.yaml",
      E("specs/spec_nan_config.yaml", 13, "variants.fast.config.federation.lr", "non-finite number '.nan'")),
    C("specs", "spec_string_inf_config.yaml",
      E("specs/spec_string_inf_config.yaml", 13, "variants.fast.config.federation.lr",
        "non-finite number inf", "(variant 'fast', profile 'smoke')")),
    # --- a variant's paper figure ---------------------------------------------------------
    C("specs", "spec_variant_paper_figure_above_100.yaml",
      E("specs/spec_variant_paper_figure_above_100.yaml", 14, "variants.hasfl.paper.accuracy",
        "less than or equal to 100")),
    C("specs", "spec_variant_paper_figure_without_accuracy.yaml",
      E("specs/spec_variant_paper_figure_without_accuracy.yaml", 10, "variants.conv.paper",
        "kind 'submodel_cost' measures no accuracy to read a paper figure against")),
    # --- references to another variant's record ------------------------------------------
    C("specs", "spec_reference_unknown_variant.yaml",
      E("specs/spec_reference_unknown_variant.yaml", 15, "variants.random-budget.config.federation.policy.budget.match",
        "unknown variant 'hasfll' in a config reference", "did you mean 'hasfl'?")),
    C("specs", "spec_reference_unknown_metric.yaml",
      E("specs/spec_reference_unknown_metric.yaml", 15, "variants.random-budget.config.federation.policy.budget.metric",
        "unknown metric 'mean_capacty'", "did you mean 'mean_capacity'?")),
    C("specs", "spec_reference_cycle.yaml",
      E("specs/spec_reference_cycle.yaml", 15, "variants.first.config.federation.policy.budget.match",
        "config references form a cycle: first -> second -> first")),
    C("specs", "spec_reference_self.yaml",
      E("specs/spec_reference_self.yaml", 15, "variants.random-budget.config.federation.policy.budget.match",
        "cycle: random-budget -> random-budget")),
    # --- scale studies (a spec's `studies`; the claim they observe is claim_for_study.yaml) ---
    S("spec_study_unknown_axis.yaml",
      E("specs/spec_study_unknown_axis.yaml", 13, "studies.steps.axis",
        "unknown config path 'ratio_stp'", "did you mean 'ratio_step'?")),
    S("spec_study_bad_point.yaml",
      E("specs/spec_study_bad_point.yaml", 14, "studies.steps.points[1]",
        "ratio_step = -0.5 does not make a valid config", "greater than 0", "(variant 'tier-0.5')")),
    S("spec_study_bad_fixed.yaml",
      E("specs/spec_study_bad_fixed.yaml", 15, "studies.steps.fixed.gama",
        "unknown config path 'gama'", "did you mean 'gamma'?")),
    S("spec_study_bad_fixed_value.yaml",
      E("specs/spec_study_bad_fixed_value.yaml", 15, "studies.steps.fixed.gamma", "greater than or equal to 0",
        "(variant 'tier-0.5')")),
    S("spec_study_unknown_claim.yaml",
      E("specs/spec_study_unknown_claim.yaml", 16, "studies.steps.claims[0]",
        "unknown claim 'test.study-clam'", "did you mean 'test.study-claim'?")),
    S("spec_study_other_experiment_claim.yaml",
      E("specs/spec_study_other_experiment_claim.yaml", 16, "studies.steps.claims[0]",
        "claim 'hasfl.alloc.tier-0.25-fixed' measures experiment 'hasfl-allocation-rule', not 'test-study'")),
    S("spec_study_unknown_profile.yaml",
      E("specs/spec_study_unknown_profile.yaml", 12, "studies.steps.profile",
        "unknown profile 'smok'", "did you mean 'smoke'?")),
    S("spec_study_variant_sets_axis.yaml",
      E("specs/spec_study_variant_sets_axis.yaml", 13, "studies.steps.axis",
        "variant 'tier-0.5' sets p_max itself")),
    S("spec_study_repeated_points.yaml",
      E("specs/spec_study_repeated_points.yaml", 14, "studies.steps.points", "the points repeat [0.01]"),
      E("claims/claim_for_study.yaml", 8, "claims[0].experiment", "experiment 'test-study' has errors of its own")),
    S("spec_study_unknown_key.yaml",
      E("specs/spec_study_unknown_key.yaml", 13, "studies.steps.axes", "unknown field 'axes'", "did you mean 'axis'?"),
      E("claims/claim_for_study.yaml", 8, "claims[0].experiment", "experiment 'test-study' has errors of its own")),
    # --- YAML that a plain safe load would choke on or expand without bound ---------------
    C("claims", "claim_recursive_alias.yaml",
      E("claims/claim_recursive_alias.yaml", 4, "<document>", "recursive alias")),
    C("claims", "claim_alias_bomb.yaml",
      E("claims/claim_alias_bomb.yaml", 8, "<document>",
        "aliases expand this document by more than 100,000 nodes beyond those it spells out")),
    C("claims", "claim_python_tag_on_list.yaml",
      E("claims/claim_python_tag_on_list.yaml", 9, "claims[0].observe",
        "tag 'tag:yaml.org,2002:python/tuple' is not allowed")),
    C("claims", "claim_not_utf8.yaml",
      E("claims/claim_not_utf8.yaml", 6, "<document>", "not valid UTF-8", "byte 0xe9")),
]

# Problems inside union members, model-level validators and quoted ids.
POSITION_CASES = [
    pytest.param(
        C("claims", "claim_expect_extra_key.yaml",
          E("claims/claim_expect_extra_key.yaml", 13, "claims[0].expect.smoke.tolerence",
            "unknown field 'tolerence'", "did you mean 'tolerance'?")),
        id="claim_expect_extra_key"),
    pytest.param(
        C("claims", "claim_observation_extra_key.yaml",
          E("claims/claim_observation_extra_key.yaml", 12, "claims[0].observe.arg",
            "did you mean 'args'?")),
        id="claim_observation_extra_key"),
    pytest.param(
        C("claims", "claim_broken_quoted_experiment.yaml",
          E("specs/spec_broken_quoted_id.yaml", 6, "variants.tier-0.25.config.p_max", NOT_A_NUMBER),
          E("claims/claim_broken_quoted_experiment.yaml", 8, "claims[0].experiment",
            "experiment 'test-broken-quoted' has errors of its own"),
          extra=(("specs", "spec_broken_quoted_id.yaml"),)),
        id="claim_broken_quoted_experiment"),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the shipped claims/ and specs/ to add malformed files to."""
    shutil.copytree(REPO / "claims", tmp_path / "claims")
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    return tmp_path


def _install(project: Path, case: Case) -> None:
    for directory, name in case.files:
        shutil.copy(MALFORMED / name, project / directory / name)


def _load_problems(project: Path):
    with pytest.raises(SpecError) as raised:
        load_catalog(project / "claims", project / "specs", project)
    return raised.value


def _check(case: Case, project: Path) -> None:
    _install(project, case)
    error = _load_problems(project)
    problems = error.problems
    listing = "\n".join(f"  {p.file}:{p.line}: {p.field}: {p.message}" for p in problems)
    assert len(problems) == len(case.problems), f"expected {len(case.problems)} problem(s), got:\n{listing}"
    text = str(error)
    for expected in case.problems:
        matching = [p for p in problems if Path(p.file) == Path(expected.file) and p.field == expected.field]
        assert matching, f"no problem at {expected.file} / {expected.field}; got:\n{listing}"
        problem = matching[0]
        assert problem.line == expected.line, f"{expected.field}: line {problem.line}, expected {expected.line}"
        for part in expected.message:
            assert part in problem.message, f"{part!r} not in {problem.message!r}"
        assert f"{Path(expected.file)}:{expected.line}: {expected.field}: " in text


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_file_is_reported_precisely(case: Case, project: Path) -> None:
    _check(case, project)


@pytest.mark.parametrize("case", POSITION_CASES)
def test_malformed_file_position_of_nested_problems(case: Case, project: Path) -> None:
    _check(case, project)


@pytest.mark.parametrize("name, key", [("claim_unknown_key.yaml", "statment"), ("spec_unknown_key.yaml", "varients")])
def test_unknown_field_message_names_the_key(project: Path, name: str, key: str) -> None:
    directory = "claims" if name.startswith("claim") else "specs"
    _install(project, C(directory, name))
    (problem,) = _load_problems(project).problems
    assert f"unknown field '{key}'" in problem.message


def test_corpus_is_complete_and_every_file_is_used() -> None:
    files = {f.name for f in MALFORMED.glob("*.yaml")}
    used = {name for case in CASES for _, name in case.files}
    used |= {name for param in POSITION_CASES for _, name in param.values[0].files}
    assert len(files) >= 22
    assert files == used, f"unused: {sorted(files - used)}; missing: {sorted(used - files)}"
    for case in CASES:
        for directory, name in case.files:
            assert directory in ("claims", "specs")
            assert name.startswith("claim_" if directory == "claims" else "spec_")


def test_a_long_list_without_aliases_is_not_an_alias_expansion(tmp_path: Path) -> None:
    """Only what aliases add counts against the node budget: a file that spells out more nodes is read."""
    from harness.loading.yamlsource import NODE_BUDGET, load_document
    (tmp_path / "long.yaml").write_text("items: [" + ", ".join(["1"] * (NODE_BUDGET + 20_000)) + "]\n")
    assert len(load_document(tmp_path / "long.yaml").data["items"]) == NODE_BUDGET + 20_000


def test_merge_keys_with_overrides_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "merge.yaml").write_text("base: &base {alpha: 0.05, below: 1.0}\n"
                                         "smoke:\n  <<: *base\n  below: 2.0\n"
                                         "twice:\n  <<: [{x: 1}, {x: 2, y: 2}]\n")
    from harness.loading.yamlsource import load_document
    doc = load_document(tmp_path / "merge.yaml")
    assert doc.data["smoke"] == {"alpha": 0.05, "below": 2.0}
    assert doc.data["twice"] == {"x": 1, "y": 2}  # the first mapping listed wins
    assert doc.line_of(("smoke", "below")) == 4


def test_shipped_files_load_without_problems() -> None:
    catalog = load_catalog(REPO / "claims", REPO / "specs", REPO)
    assert {"hasfl", "fedrolex"} <= set(catalog.papers)
    assert len(catalog.claims) >= 10
    assert len({c.id for c in catalog.claims}) == len(catalog.claims)
    for loaded in catalog.claims:
        spec = catalog.specs[loaded.claim.experiment].spec
        assert spec.paper == loaded.paper
        assert set(loaded.claim.observe.variants) <= set(spec.variants)


def test_copied_project_loads_and_a_malformed_file_breaks_it(project: Path) -> None:
    catalog = load_catalog(project / "claims", project / "specs", project)
    assert len(catalog.claims) == len(load_catalog(REPO / "claims", REPO / "specs", REPO).claims)
    _install(project, C("claims", "claim_unknown_metric.yaml"))
    error = _load_problems(project)
    assert [str(p.file) for p in error.problems] == ["claims/claim_unknown_metric.yaml"]


def test_all_problems_of_all_files_are_collected(project: Path) -> None:
    for name in ("claim_unknown_metric.yaml", "claim_range_reversed.yaml"):
        _install(project, C("claims", name))
    _install(project, C("specs", "spec_unknown_plot.yaml"))
    files = sorted(str(p.file) for p in _load_problems(project).problems)
    assert files == ["claims/claim_range_reversed.yaml", "claims/claim_unknown_metric.yaml",
                     "specs/spec_unknown_plot.yaml"]


def test_cli_validate_ok(project: Path, capsys) -> None:
    catalog = load_catalog(project / "claims", project / "specs", project)
    assert cli.main(["--root", str(project), "validate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: {len(catalog.specs)} experiment specs and {len(catalog.claims)} claims")


def test_cli_validate_reports_file_and_line(project: Path, capsys) -> None:
    _install(project, C("claims", "claim_unknown_metric.yaml"))
    assert cli.main(["--root", str(project), "validate"]) == 2
    err = capsys.readouterr().err
    assert "claims/claim_unknown_metric.yaml:10: claims[0].observe.metric: unknown metric" in err
    assert "did you mean 'max_allocation'?" in err


def test_fedclaims_command_exits_2_with_file_and_line(project: Path) -> None:
    _install(project, C("specs", "spec_variant_wrong_type.yaml"))
    command = Path(sys.executable).with_name("fedclaims")
    argv = [str(command)] if command.exists() else [sys.executable, "-m", "harness.cli"]
    done = subprocess.run([*argv, "--root", str(project), "validate"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "specs/spec_variant_wrong_type.yaml:13: variants.tier-0.75.config.federation_size" in done.stderr


@pytest.mark.parametrize("replace, field, limit", [
    ("points: [0.01, 0.001, 0.01]", "points", "at most 100 items"),
    ("smoke: {seeds: [0]}", "seeds", "at most 1000 items"),
])
def test_a_list_far_beyond_any_design_is_refused_at_once(project: Path, replace, field, limit) -> None:
    """10^5 study points took 97 s before a limit (a quadratic repeat check); now refused as they load."""
    text = (MALFORMED / "spec_study_repeated_points.yaml").read_text()
    huge = "[" + ", ".join(str(i) for i in range(100_000)) + "]"
    big = text.replace(replace, replace.replace("[0.01, 0.001, 0.01]", huge).replace("[0]", huge))
    (project / "specs" / "spec_study_huge.yaml").write_text(big)
    shutil.copy(MALFORMED / "claim_for_study.yaml", project / "claims" / "claim_for_study.yaml")
    problems = _load_problems(project).problems
    assert any(p.field.endswith(field) and limit in p.message for p in problems), \
        "\n".join(f"{p.field}: {p.message[:200]}" for p in problems)
