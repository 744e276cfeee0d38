"""The expectations a claim can state, one module each (a class with its `key` and `doc`: what it admits, the
tests that decide it, what its design needs), found by `harness.schema.base.discovered`: adding one is adding
its module."""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness.schema.base import discovered, tagged_union
from harness.schema.expectations.base import ExpectationBase

EXPECTATIONS = discovered(__name__, __path__, ExpectationBase)
"""Every expectation class, by the key that names it in a claim file."""
EXPECTATION_KEYS = tuple(EXPECTATIONS)

if TYPE_CHECKING:
    Expectation = ExpectationBase
else:
    Expectation = tagged_union(EXPECTATIONS, "expectation_kind", "an expectation")
