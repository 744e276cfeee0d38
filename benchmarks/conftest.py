"""Benchmarks: pytest-benchmark, each figure a ratio against a reference measured in the same run.

`pytest benchmarks` runs the quick form (small sizes, one round each; what CI runs: it checks
that every benchmark still runs and that fedclaims and its reference compute the same thing).
`pytest benchmarks --bench-full --benchmark-json=benchmarks/latest.json` runs the full form whose
figures go into REPORT.md's Performance section.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--bench-full", action="store_true", default=False,
                     help="run the benchmarks at full size with repeated rounds (slow)")


@dataclass(frozen=True)
class BenchScale:
    """How much work a benchmark does: `quick` in CI, `full` for the report's figures."""

    full: bool

    @property
    def rounds(self) -> int:
        return 5 if self.full else 1

    def pick(self, quick: Any, full: Any) -> Any:
        return full if self.full else quick

    def run(self, benchmark, function: Callable[[], Any]) -> Any:
        """Time `function` (pedantic: fixed rounds, one warm-up in the full form)."""
        return benchmark.pedantic(function, rounds=self.rounds, iterations=1,
                                  warmup_rounds=1 if self.full else 0)


@pytest.fixture(scope="session")
def bench_scale(request: pytest.FixtureRequest) -> BenchScale:
    return BenchScale(full=request.config.getoption("--bench-full"))
