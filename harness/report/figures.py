"""Figures declared in spec files, drawn from the run records with matplotlib (Agg)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from harness.loading.catalog import Catalog
from harness.running.planning import DependencyFailed, PendingDependency, request_for
from harness.running.store import ResultStore
from harness.settings import Settings


def draw_figures(catalog: Catalog, experiments: list[str], profile: str, settings: Settings,
                 store: ResultStore, out_dir: Path) -> dict[str, list[tuple[str, Path]]]:
    """PNG files per experiment: {experiment: [(title, path)]}; figures lacking records are left out."""
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn: dict[str, list[tuple[str, Path]]] = {}
    for experiment in experiments:
        loaded = catalog.specs[experiment]
        spec = loaded.spec
        if profile not in spec.profiles:
            continue
        for index, figure in enumerate(spec.figures):
            variants = figure.variants or list(spec.variants)
            results = {}
            for variant in variants:
                records = []
                for seed in spec.profiles[profile].seeds:
                    try:
                        records.append(store.get(request_for(catalog, experiment, variant, seed, profile,
                                                             settings, store).key))
                    except (PendingDependency, DependencyFailed):
                        records.append(None)
                ok = [r["result"] for r in records if r is not None and r["status"] == "ok"]
                if ok:
                    results[variant] = ok
            if not results:
                continue
            labels = {name: (v.label or name) for name, v in spec.variants.items()}
            fig, ax = plt.subplots(figsize=(6.4, 4.0))
            loaded.kind.plots[figure.plot].draw(ax, results, labels)
            ax.set_title(figure.title, fontsize=10)
            fig.tight_layout()
            path = out_dir / f"{experiment}-{figure.plot}-{index}-{profile}.png"
            fig.savefig(path, dpi=110)
            plt.close(fig)
            drawn.setdefault(experiment, []).append((figure.title, path))
    return drawn
