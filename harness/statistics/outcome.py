"""What a test gives back: a status, its reason, the comparisons it rests on and its power figures."""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.statistics.evidence import Evidence
from harness.statistics.power import Power

PASS, FAIL, INCONCLUSIVE, SKIPPED, ERROR = "PASS", "FAIL", "INCONCLUSIVE", "SKIPPED", "ERROR"
STATUSES = (PASS, FAIL, INCONCLUSIVE, SKIPPED, ERROR)
SEVERITY = {PASS: 0, INCONCLUSIVE: 1, FAIL: 2, ERROR: 3}


@dataclass
class Decision:
    """The outcome of one expectation on one observation, and the comparisons it rests on."""

    status: str
    reason: str
    power: Power | None = None
    evidence: list[Evidence] = field(default_factory=list)


def fmt(value: float) -> str:
    return f"{value:.4g}"


def most_needed(powers: list[Power]) -> Power | None:
    """Of several power figures, the one needing the most units to decide (else the first, if any)."""
    decided = [(p.needed, p) for p in powers if p.needed is not None]
    if decided:
        return max(decided, key=lambda needed_and_power: needed_and_power[0])[1]
    return powers[0] if powers else None


def level_text(fail_alpha: float, alpha: float) -> str:
    """Where a contradiction is tested below α (several variants, Holm), say so."""
    return f"; a contradiction is tested at α = {fail_alpha:.3g} (Holm over the variants)" if fail_alpha < alpha else ""
