"""Decidable by design, over the catalog: each claim's design at each profile it states an expectation at
(`harness.design.readings` says, per test, what PASS and FAIL need), and the claims no number of seeds
can decide, refused at their file, line and field."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.design.readings import Reading, correlation_design, spread_design
from harness.errors import Problem
from harness.loading.planning_spread import SpreadSource, no_stored_spreads
from harness.loading.studies import generated_profiles
from harness.schema.observations.base import Shape
from harness.statistics.power import PRACTICAL_UNITS

if TYPE_CHECKING:
    from harness.loading.catalog import Catalog
    from harness.loading.loaded import LoadedClaim, LoadedSpec


@dataclass(frozen=True)
class Design:
    """What a claim's test can decide at a profile, before any run.

    `pass_seeds` / `fail_seeds`: the fewest seeds at which that verdict is reachable at the
    planning spread (None where it is unreachable, or needs more than PRACTICAL_UNITS seeds).
    """

    claim: str
    profile: str
    seeds: int
    pass_reachable: bool
    fail_reachable: bool
    pass_seeds: int | None
    fail_seeds: int | None
    reason: str
    spread: str = ""
    power: str = ""
    """At how many seeds PASS comes with 80% chance, under which assumed effect ('' where the test has none
    to assume: a value read directly)."""

    @property
    def decidable(self) -> bool:
        return self.pass_reachable and self.fail_reachable

    @property
    def seeds_needed(self) -> int | None:
        """Seeds at which both PASS and FAIL are reachable (None: not at any practical number)."""
        if self.pass_seeds is None or self.fail_seeds is None:
            return None
        return max(self.pass_seeds, self.fail_seeds)

    @property
    def short_of_seeds(self) -> bool:
        """Decidable, but not at the profile's seeds: more seeds would decide it."""
        return self.decidable and (self.seeds_needed is None or self.seeds_needed > self.seeds)

    def text(self) -> str:
        """The first number of seeds at which PASS and FAIL are both possible is not one that decides: the
        line says so, with the seeds for 80% power where the design can state them."""
        needed = (f"PASS and FAIL possible from {self.seeds_needed} seeds" if self.seeds_needed is not None
                  else f"needs more than {PRACTICAL_UNITS} seeds")
        power = f"; {self.power}" if self.power else ""
        spread = f"; planning spread: {self.spread}" if self.spread else ""
        return f"{self.claim} at {self.profile}: {needed}{power}, the profile has {self.seeds} ({self.reason}{spread})"


def clients_per_run(config: Any) -> int | None:
    """The `num_clients` a resolved config sets (anywhere in it), if any."""
    if isinstance(config, Mapping):
        if isinstance(config.get("num_clients"), int):
            return config["num_clients"]
        for value in config.values():
            found = clients_per_run(value)
            if found is not None:
                return found
    return None


def _configs(target: LoadedSpec, variants: list[str], profile: str) -> list[dict]:
    return [target.resolve(variant, profile).model_dump(mode="json") for variant in variants]


def _fixed_by_config(target: LoadedSpec, obs, configs: list[dict]) -> bool:
    """Every value the claim reads is fixed by its run's config (one seed decides)."""
    if obs.shape in (Shape.CORRELATION, Shape.SPREAD):
        return False
    metric = target.kind.metrics.get(obs.metric)
    return metric is not None and all(metric.is_deterministic(config) for config in configs)


def _structural(target: LoadedSpec, obs) -> bool:
    metric = target.kind.metrics.get(getattr(obs, "metric", ""))
    return metric is not None and metric.structural


def design_of(catalog: Catalog, claim_id: str, profile: str,
              spreads: SpreadSource = no_stored_spreads) -> Design | None:
    """The design of one claim at one profile (None where it states no expectation or skips)."""
    loaded = catalog.claim(claim_id)
    claim = loaded.claim
    expectation = claim.expect.get(profile)
    target = catalog.specs[claim.experiment]
    if expectation is None or expectation.skips or profile not in target.spec.profiles:
        return None
    expectation = expectation.at_level()
    seeds = len(target.spec.profiles[profile].seeds)
    obs = claim.observe
    configs = _configs(target, list(obs.variants), profile)
    stored = spreads(claim, profile)
    numbers = stored.numbers if stored is not None else None

    def made(found: Reading) -> Design:
        spread = found[5]
        if stored is not None and spread and spread != "none stored":
            spread = f"{spread}, from {stored.source}"
        return Design(claim_id, profile, seeds, *found[:5], spread=spread, power=found[6] if len(found) > 6 else "")

    if _fixed_by_config(target, obs, configs):
        return made((True, True, 1, 1, "fixed by the config: compared directly", ""))
    if expectation.every_seed and _structural(target, obs):
        return made((True, True, 1, 1, "fixed by the protocol's structure or exact algebra: each seed is read "
                                       "directly", ""))
    if obs.shape is Shape.CORRELATION:
        counts = [clients_per_run(config) for config in configs]
        known = [c for c in counts if c is not None]
        clients = min(known) if len(known) == len(counts) else None
        controls = 1 if getattr(obs, "given", None) else 0
        return made(correlation_design(controls, expectation, clients, numbers))
    if obs.shape is Shape.SPREAD:
        return made(spread_design(expectation))
    return made(expectation.design(numbers))


def _declared_profiles(catalog: Catalog, loaded: LoadedClaim) -> list[str]:
    """The profiles a claim states expectations at in its file (a study's points inherit their base's)."""
    points = generated_profiles(catalog.studies.values())
    return [profile for profile in loaded.claim.expect if profile not in points]


def designs(catalog: Catalog, spreads: SpreadSource = no_stored_spreads) -> list[Design]:
    """The design of every claim at every profile it states an expectation at."""
    found = []
    for loaded in catalog.claims:
        for profile in _declared_profiles(catalog, loaded):
            design = design_of(catalog, loaded.id, profile, spreads)
            if design is not None:
                found.append(design)
    return found


def design_problems(catalog: Catalog) -> list[Problem]:
    """Each expectation whose PASS or FAIL no number of seeds can reach, at its file, line and field.

    Reachability does not depend on a planning spread, so no stored numbers are read."""
    problems = []
    for design in designs(catalog):
        if design.decidable:
            continue
        loaded = catalog.claim(design.claim)
        missing = " and ".join(v for v, ok in (("PASS", design.pass_reachable), ("FAIL", design.fail_reachable))
                               if not ok)
        problems.append(loaded.doc.problem((*loaded.path, "expect", design.profile),
                                           f"{missing} unreachable at any number of seeds: {design.reason}"))
    return problems


def short_of_seeds(found: list[Design]) -> list[Design]:
    """The decidable designs whose profile has fewer seeds than they need."""
    return [design for design in found if design.short_of_seeds]
