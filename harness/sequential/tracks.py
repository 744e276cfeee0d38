"""Where each claim's sequential test stands (`Track`), and a profile's sequential verdicts with what the
added seeds cost (`Sequential`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.loading.loaded import LoadedClaim
from harness.pipeline import Outcome
from harness.running.execution import ExecutionSummary
from harness.sequential.recorded import Recorded
from harness.statistics.sequential_rule import Looks
from harness.verdicts.verify import Verdict


@dataclass
class Track:
    """One claim's sequential test: where its looks stand, and why they ended."""

    loaded: LoadedClaim
    experiment: str
    experiments: tuple[str, ...]
    """The experiments its test reads: its own, and those of the other claims of its family."""
    looks: Looks
    """Its plan: each look's seeds, level α_j and α spent by it."""
    fixed: Verdict
    """The profile's fixed-n verdict (its seeds, at the plan's first level α_1): look 1."""
    verdict: Verdict | None = None
    seeds: list[int] = field(default_factory=list)
    look: int = 1
    stopped: str = ""
    seen: tuple[int, ...] = ()
    """Seeds run before its expectation changed (`harness.schema.changes`): its looks read only the others,
    and count only them."""
    change: dict | None = None
    """Where its expectation changed after seeds were run: the change (date, commit, the seeds seen) and
    the verdict of the expectation it replaced, as the sequential file records them."""

    @property
    def claim(self) -> str:
        return self.loaded.id

    @property
    def open(self) -> bool:
        return not self.stopped

    @property
    def level(self) -> float:
        """α_j of the look it stands at."""
        return self.looks.level_at(self.look)

    @property
    def spent(self) -> float:
        """α(t_j): the α its looks have spent by the look it stands at."""
        return self.looks.spent_at(self.look)


@dataclass
class Sequential:
    """The sequential verdicts of a profile's claims and what the added seeds cost."""

    profile: str
    outcome: Outcome
    tracks: list[Track]
    profile_seeds: dict[str, list[int]]
    seeds: dict[str, list[int]]
    limits: dict[str, int]
    max_seeds: int | None
    budget_seconds: float | None
    execution: ExecutionSummary = field(default_factory=ExecutionSummary)
    stop: str = ""
    recorded: Recorded | None = None
    """The plan an earlier invocation recorded, which this one continues (None: a new plan)."""
    selection: dict | None = None
    """The papers and claim pattern of this invocation, as the file records them."""

    @property
    def compute_seconds(self) -> float:
        """Wall seconds of the runs this invocation added (what `--budget` caps)."""
        return self.execution.seconds
