"""False alarms and power of the cross-numerics regression check (`fedclaims baseline check` on a
machine of other numerics), by simulation of the implemented rule: the figures of
docs/regression.md's power table.

    .venv/bin/python -m benchmarks.regression_power [--draws 400] [--profile smoke --profile standard]

Each draw is a simulated other machine. Every FedRolex end-accuracy series of the committed
baseline moves by the drift of the numerics: per (variant, seed) a normal draw of sd τ_v, τ_v the
variant's own measured drift (`--truth series`) or its group's pooled drift (`--truth pooled`),
with a component shared by the variants of one seed, sized so that the drift of a paired
difference is the measured one (difference drift² = 2 τ² (1 − ρ)). A method change lowers one
variant by Δ points on every seed. The FedRolex claims are decided again from the moved numbers
(`harness.verdicts.archive.reverify`, today's rules), the other papers' claims keep their recorded numbers
under other numerics (they sit in the check's Holm family as drift tests that did not move), and
`harness.regression.baseline.check` compares all of them with the baseline. Reported per Δ: the chance that
the check fails at all (at Δ = 0 a false alarm), that it fails a claim reading the changed
variant, and that the changed variant's claims give only fragile warnings. Not collected by
pytest (its name does not start with test_).
"""
from __future__ import annotations

import argparse
import copy
import math
import re
from pathlib import Path

import numpy as np

from harness.loading.catalog import load_catalog
from harness.regression import baseline
from harness.verdicts.archive import baseline_archive, reverify
from harness.verdicts.verify import apply_families

ROOT = Path(__file__).resolve().parents[1]
LABEL = re.compile(r"(?P<series>.*) \(end_accuracy\)")
GROUP = "fedrolex-cifar10 / end_accuracy"
DIFFERENCE = "fedrolex-cifar10 / difference of end_accuracy"
VARIANTS = ("Federated Dropout, 5% participation", "FedRolex, L=2")
SHIFTS = (0.0, 1.0, 2.0, 3.0)
SEED = 11


class Simulation:
    def __init__(self, profile: str, truth: str):
        self.catalog = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
        self.path = ROOT / "baselines" / f"{profile}.json"
        self.baseline = baseline.load(self.path)
        self.profile = profile
        groups = self.baseline["drift"]["groups"]
        pooled = groups[GROUP]["rms"]
        self.tau = {label[:-len(" (end_accuracy)")]: (own["rms"] if truth == "series" else pooled)
                    for label, own in groups[GROUP]["series"].items()}
        self.pooled = pooled
        self.shared = max(0.0, min(1.0, 1.0 - groups[DIFFERENCE]["rms"] ** 2 / (2.0 * pooled ** 2)))
        archive = baseline_archive(self.path, self.baseline)
        self.fedrolex = [c for c in self.catalog.claims if c.paper == "fedrolex"]
        others = [reverify(self.catalog, c, profile, archive) for c in self.catalog.claims if c.paper != "fedrolex"]
        self.others = [v for v in others if v.numbers]
        for verdict in self.others:
            verdict.numerics = ["simulated other machine"]
        self.seeds = sorted({seed for entry in self.baseline["claims"].values()
                             for label, series in (entry.get("numbers") or {}).items() if LABEL.fullmatch(label)
                             for seed in series["values"]}, key=int)

    def _moved(self, rng: np.random.Generator, variant: str, shift: float) -> dict:
        common = rng.standard_normal(len(self.seeds))
        draws: dict[str, dict[str, float]] = {}

        def moved(name: str) -> dict[str, float]:
            if name not in draws:
                tau = self.tau.get(name, self.pooled)
                own = rng.standard_normal(len(self.seeds))
                values = tau * (math.sqrt(self.shared) * common + math.sqrt(1.0 - self.shared) * own)
                draws[name] = {seed: float(v) - (shift if name == variant else 0.0)
                               for seed, v in zip(self.seeds, values)}
            return draws[name]
        data = copy.deepcopy(self.baseline)
        for entry in data["claims"].values():
            for label, series in (entry.get("numbers") or {}).items():
                match = LABEL.fullmatch(label)
                if not match or entry.get("experiment") != "fedrolex-cifar10":
                    continue
                terms = match["series"].split(" − ")
                for seed, value in series["values"].items():
                    if value is None:
                        continue
                    change = moved(terms[0])[seed] - (moved(terms[1])[seed] if len(terms) == 2 else 0.0)
                    series["values"][seed] = value + change
        return data

    def draw(self, rng: np.random.Generator, variant: str, shift: float) -> tuple[bool, bool, bool]:
        """(the check failed, it failed a claim reading the variant, those claims were only fragile)."""
        data = self._moved(rng, variant, shift)
        archive = baseline_archive(self.path, data)
        verdicts = [reverify(self.catalog, c, self.profile, archive) for c in self.fedrolex]
        verdicts = [v for v in verdicts if v.numbers]
        for verdict in verdicts:
            verdict.numerics = ["simulated other machine"]
        apply_families(verdicts, lambda v: getattr(self.catalog.claim(v.claim).claim.expect.get(v.profile),
                                                   "alpha", 0.05))
        result = baseline.check(verdicts + self.others, self.baseline, complete=False)
        readers = {v.claim for v in verdicts if any(variant in label for label in v.numbers)}
        failed = {d.claim for d in result.differences}
        fragile = {d.claim for d in result.fragile}
        return bool(failed), bool(failed & readers), not (failed & readers) and bool(fragile & readers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--profile", action="append", default=[])
    parser.add_argument("--truth", choices=("series", "pooled"), default="series")
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    print("| profile | changed variant | Δ (points) | check fails | fails a claim reading it | only fragile |")
    print("|---|---|---|---|---|---|")
    for profile in args.profile or ["smoke", "standard"]:
        simulation = Simulation(profile, args.truth)
        for variant in VARIANTS:
            for shift in SHIFTS:
                outcomes = np.array([simulation.draw(rng, variant, shift) for _ in range(args.draws)])
                fails, hits, fragile = outcomes.mean(axis=0)
                print(f"| {profile} ({len(simulation.seeds)} seeds) | {variant} | {shift:g} | {fails:.3f} | "
                      f"{hits:.3f} | {fragile:.3f} |", flush=True)


if __name__ == "__main__":
    main()
