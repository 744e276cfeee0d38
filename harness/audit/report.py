"""AUDIT.md with its figures, the JSON verdict file, and the terminal summary of an audit."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from rich.console import Console
from rich.table import Table

from harness.audit.analysis import StatisticValidation
from harness.audit.audit import Audit, FederationAudit
from harness.kinds import kind as experiment_kind
from methods.plain import json_safe


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _scatter(validation: StatisticValidation, federation: FederationAudit, path: Path) -> None:
    """The statistic against the capacity cap, every client of every seed, coloured by TV."""
    results = federation.results["audited"]
    caps = np.concatenate([r["caps"] for r in results.values()])
    stat = np.concatenate([r["client_statistics"][validation.statistic] for r in results.values()]).astype(float)
    tv = np.concatenate([r["tv_distance"] for r in results.values()])
    jitter = np.random.default_rng(0).uniform(-0.02, 0.02, size=caps.size)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    points = ax.scatter(caps + jitter, stat, c=tv, cmap="viridis", s=18)
    fig.colorbar(points, ax=ax, label="TV distance to the global label distribution")
    ax.set_xlabel("capacity cap p_max (jittered)")
    ax.set_ylabel(validation.statistic)
    ax.set_title(f"{federation.federation}: {validation.statistic} against capacity ({len(results)} seeds)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _curves(federation: FederationAudit, labels: dict[str, str], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    results = {variant: list(by_seed.values()) for variant, by_seed in federation.results.items() if by_seed}
    experiment_kind("federated_training").plots["accuracy_curves"].draw(ax, results, labels)
    ax.set_title(f"{federation.federation}: test accuracy (mean, band: seed range)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_audit(audit: Audit, out_dir: Path) -> tuple[Path, Path]:
    """AUDIT.md and audit.json in `out_dir`, figures in `out_dir/figures`."""
    figures = out_dir / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    labels = {"audited": audit.policy, "heterofl": "HeteroFL", "fjord": "FjORD",
              "random-budget": "Random-budget (matched to the audited policy's capacity)"}
    lines = [f"# Audit of `{audit.policy}`", "",
             f"`fedclaims audit` at profile `{audit.profile}`, commit `{audit.commit}`. The HAS-FL paper recommends "
             "two practices for any method that sizes sub-models from training signals (§4.7, §5): check every "
             "estimate against an analysis that groups clients by capacity before reading it as data "
             "heterogeneity, and report adaptive allocation against a matched-budget random control. This audit "
             "does both, and checks coverage.", "",
             f"**Outcome: {'findings (exit code 1)' if audit.findings else 'no findings (exit code 0)'}.**", ""]
    lines += [f"- {finding}" for finding in audit.findings] or ["- none"]
    lines.append("")
    for federation in audit.federations:
        lines += [f"## Federation `{federation.federation}` (experiment `{federation.experiment}`)", "",
                  f"Seeds {federation.seeds}; the audited policy, HeteroFL, FjORD and a random control at the "
                  "audited policy's realised mean capacity of the same seed share partitions, caps, sampled "
                  "clients, initial weights and mini-batch order.", ""]
        if federation.unavailable:
            lines += [f"Not audited: {federation.unavailable}", ""]
            continue
        lines += ["### 1. Capacity-stratified validation of the policy's per-client statistics", ""]
        if not federation.validations:
            lines += ["The policy exposes no per-client statistics (`client_statistics()`); nothing to validate.", ""]
        for validation in federation.validations:
            picture = figures / f"{federation.federation}-{validation.statistic}-vs-cap.png"
            _scatter(validation, federation, picture)
            lines += [f"**`{validation.statistic}`: {validation.reading}.**", "",
                      "| association | pooled r [95% interval] |", "|---|---|",
                      f"| with capacity, r(stat, p_max) | {validation.with_capacity.text()} |",
                      f"| with data given capacity, r(stat, TV \\| p_max) | "
                      f"{validation.with_data_given_capacity.text()} |",
                      f"| with data, r(stat, TV) | {validation.with_data.text()} |"]
            lines += [f"| {_cell(a.label)} | {a.text()} |" for a in validation.within_tiers.values()]
            lines += ["", f"![{validation.statistic} against capacity]({os.path.relpath(picture, out_dir)})", ""]
        lines += ["### 2. Matched-budget parity", "",
                  "Accuracy is each run's end-of-training accuracy as the claims read it (`end_accuracy`: the "
                  "mean of the evaluations in the last 10% of rounds); differences are paired by seed.", ""]
        lines += [f"- realised mean capacity: audited {federation.capacity['audited']}, random control "
                  f"{federation.capacity['random-budget']}"]
        for comparison in federation.comparisons:
            power = f" Power: {comparison.power.text()}." if comparison.power is not None else ""
            lines.append(f"- against {comparison.against}: {comparison.reading}.{power}")
        curves = figures / f"{federation.federation}-accuracy.png"
        _curves(federation, labels, curves)
        lines += ["", f"![accuracy curves]({os.path.relpath(curves, out_dir)})", "",
                  "### 3. Coverage", "",
                  "| seed | never-trained coordinates | changed outside the trained union |", "|---|---|---|"]
        cov = federation.coverage
        assert cov is not None  # set by the analysis of an available federation
        lines += [f"| {s} | {cov.never_covered_fraction[s]:.2%} | {cov.changed_outside_union[s]} |"
                  for s in cov.never_covered_fraction]
        lines += [""] + [f"> ⚠️ {w}" for w in cov.warnings] + ([""] if cov.warnings else [])
    markdown = out_dir / "AUDIT.md"
    markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    verdicts = out_dir / "audit.json"
    verdicts.write_text(json.dumps(json_safe(audit.to_dict()), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return markdown, verdicts


def print_audit(audit: Audit, console: Console) -> None:
    table = Table(title=f"audit of {audit.policy} ({audit.profile})")
    for column in ("federation", "check", "result"):
        table.add_column(column, overflow="fold")
    for federation in audit.federations:
        if federation.unavailable:
            table.add_row(federation.federation, "—", f"not audited: {federation.unavailable}")
            continue
        for validation in federation.validations:
            table.add_row(federation.federation, f"statistic {validation.statistic}", validation.reading)
        for comparison in federation.comparisons:
            table.add_row(federation.federation, f"vs {comparison.against}", comparison.reading)
        assert federation.coverage is not None  # set by the analysis of an available federation
        table.add_row(federation.federation, "coverage",
                      "; ".join(federation.coverage.warnings) or "every coordinate trained")
    console.print(table)
    colour = "red" if audit.findings else "green"
    console.print(f"[{colour}]{len(audit.findings)} finding(s)[/]" + "".join(f"\n- {f}" for f in audit.findings))
