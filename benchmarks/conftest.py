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

from harness.running.allocator import tune_allocator


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

    @property
    def warmup_rounds(self) -> int:
        return 1 if self.full else 0

    def run(self, benchmark, function: Callable[[], Any],
            before_each: Callable[[], Any] | None = None, full_rounds: int | None = None) -> Any:
        """Time `function` (pedantic: fixed rounds, `full_rounds` in the full form where given,
        one warm-up in the full form), calling `before_each` untimed before every round, warm-up
        included."""
        rounds = full_rounds if self.full and full_rounds is not None else self.rounds
        return benchmark.pedantic(function, setup=before_each, rounds=rounds, iterations=1,
                                  warmup_rounds=self.warmup_rounds)


@pytest.fixture(scope="session", autouse=True)
def fedclaims_process() -> None:
    """This process set up as fedclaims' workers set theirs up (the C allocator; each benchmark
    sets its threads), so that a benchmark and its reference differ only in their code."""
    tune_allocator()


@pytest.fixture(scope="session")
def bench_scale(request: pytest.FixtureRequest) -> BenchScale:
    return BenchScale(full=request.config.getoption("--bench-full"))
