"""A misspelt argument of an extension's metric is one line naming the argument and the closest valid one,
whatever the base of the metric's `args` model: the public `fedclaims.StrictModel`, or pydantic's own
`BaseModel` forbidding or ignoring unknown keys; never, besides, the field it misspells as missing (issue 60)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_extension_files import _own_scope as _own_scope  # the autouse fixture: no code scope leaks in
from tests.test_extension_files import _problems as catalog_problems

BASES = {
    "fedclaims": ("from fedclaims import StrictModel as Base\n", ""),
    "forbidding": ("from pydantic import BaseModel as Base\nfrom pydantic import ConfigDict\n",
                   "    model_config = ConfigDict(extra='forbid')\n"),
    "ignoring": ("from pydantic import BaseModel as Base\n", ""),
}

METRIC = """\
from fedclaims import ExtensionMetric, Metric


class WidthArgs(Base):
{config}    width: float


METRIC = ExtensionMetric(name="allocation_at", kinds=("allocation_rule",),
                         metric=Metric("the largest allocation, at a width", lambda result, args: args.width,
                                       args=WidthArgs))
"""

SPEC = """\
experiment: rule
paper: test
title: HAS-FL's allocation rule with an extension metric
kind: allocation_rule
metrics: [metrics/width.py:METRIC]
config: {p_min: 0.4, gamma: 0.25, federation_size: 20, ratio_max: 5.0, ratio_step: 0.01, p_max: 1.0}
variants:
  top: {label: "p_max = 1.0"}
profiles:
  smoke: {seeds: [0]}
"""

CLAIMS = """\
paper: test
title: an extension metric's arguments
reference: "a test"
claims:
  - id: test.at-half
    statement: "The largest allocation is half the model."
    source: "§1"
    experiment: rule
    observe: {metric: allocation_at, of: top, args: {ARGS}}
    expect:
      smoke: {approx: 0.5, tolerance: 1.0e-9}
"""


def _project(root: Path, base: str, args: str) -> Path:
    imports, config = BASES[base]
    for relative, text in (("metrics/width.py", imports + METRIC.replace("{config}", config)),
                           ("specs/rule.yaml", SPEC), ("claims/test.yaml", CLAIMS.replace("ARGS", args))):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


@pytest.mark.parametrize("base", BASES)
def test_a_misspelt_metric_argument_is_one_did_you_mean_line(tmp_path, base) -> None:
    (problem,) = catalog_problems(_project(tmp_path, base, "widht: 0.5"))
    assert (str(problem.file), problem.line, problem.field) == ("claims/test.yaml", 9,
                                                                 "claims[0].observe.args.widht")
    assert problem.message == "unknown field 'widht'; did you mean 'width'?"


@pytest.mark.parametrize("base", BASES)
def test_a_well_spelt_metric_argument_validates(tmp_path, base) -> None:
    assert catalog_problems(_project(tmp_path, base, "width: 0.5")) == []
