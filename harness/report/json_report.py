"""REPORT.json: the verdicts with their levels, the accuracies, the studies and the runs behind them, sealed
with its format and a checksum (`harness.verdicts.archive`), so a later report can re-verify from it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.loading.catalog import Catalog
from harness.pipeline import Outcome, numerics_of
from harness.report.studies import StudyReading, study_dicts
from harness.report.tally import last_word
from harness.verdicts.archive import config_id, run_entry, sealed
from methods.plain import json_safe


def shown_configs(catalog: Catalog, runs: list[dict[str, Any]]) -> dict[str, str]:
    """The digest of the config the spec gave each (experiment, variant, profile) the report shows, as
    "experiment/variant/profile": a report re-verifying from this archive refuses an observation of another
    config (`harness.verdicts.reverification`)."""
    found = {}
    for run in runs:
        shown = config_id(run["experiment"], run["variant"], run["profile"])
        loaded = catalog.specs.get(run["experiment"])
        if (shown not in found and loaded is not None and run["variant"] in loaded.spec.variants
                and run["profile"] in loaded.spec.profiles):
            found[shown] = loaded.config_digest(run["variant"], run["profile"])
    return dict(sorted(found.items()))


def report_json(outcome: Outcome, report: Any, readings: list[StudyReading], base: Path) -> str:
    """The text of REPORT.json (`report`: the rendered report's levels, accuracies, proxies and commit; `base`:
    the folder study figures are linked from)."""
    runs = [run_entry(r, outcome.store) for r in outcome.requests if r.profile not in outcome.archived]
    payload = {"commit": report.commit, "profiles": outcome.profiles, "numerics": numerics_of(outcome),
               "archived": outcome.archived,
               "verdicts": [{**v.to_dict(), "level": report.levels[(v.claim, v.profile)].to_dict(),
                             "proxy": report.proxies.get((v.claim, v.profile), ""),
                             "last_word": last_word(v, report.sequential)}
                            for v in outcome.verdicts],
               "accuracies": [{"experiment": e, "variant": v, "profile": p, "mean": m.accuracy, "chance": m.chance,
                               "best": m.best}
                              for (e, v, p), m in sorted(report.accuracies.items())],
               "studies": study_dicts(readings, base),
               "confirmatory": [{**r.to_dict(), "attribution": report.confirmatory_whose.get(r.plan.claim, "")}
                                for r in report.confirmatory] + [{"refused": line}
                                                                 for line in report.confirmatory_refused],
               "runs": runs + outcome.archived_runs,
               "configs": shown_configs(outcome.catalog, runs + outcome.archived_runs)}
    return json.dumps(sealed(json_safe(payload)), indent=1, allow_nan=False) + "\n"
