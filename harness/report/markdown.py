"""REPORT.md, a detail file per paper (report/<paper>.md) and REPORT.json.

REPORT.md opens with the findings per paper in plain words, then the counts (empirical claims
apart from analytic and structural checks and from diagnostics), what differs between profiles
and between numerics, the scale studies, the runs a partly run profile still lacks, the seeds
added until decided, and per paper a short table linking to its detail file: every claim with its
expectation, observation, verdict, margin and reason, and every experiment with its figures.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from harness.loading.studies import PAPER_PROFILE
from harness.pipeline import Outcome, numerics_of
from harness.provenance import git_commit, library_versions, machine
from harness.report import confirmatory
from harness.report.attributions import committed_studies, study_evidence, with_attributions
from harness.report.cells import DETAIL_DIR, cell, relative
from harness.report.digest import MAX_LINES, digest, tested_and_paper
from harness.report.figures import draw_figures
from harness.report.findings import evidence_of, findings, profiles_that_ran
from harness.report.json_report import report_json
from harness.report.legend import ICONS, LEGEND, SHORT_LEGEND
from harness.report.missing import missing_runs_section
from harness.report.numerics import across_numerics_lines, committed_baseline, fragility, margin_cell, numerics_lines
from harness.report.performance import performance_section
from harness.report.proxies import proxy_notes
from harness.report.readings import reading_lines, recorded_before_change
from harness.report.sequential import claim_line, extended, sequential_entries, sequential_section
from harness.report.studies import StudyReading, central_along_studies, study_dicts, study_findings
from harness.report.studies_section import studies_section
from harness.running.trial import read_trial, trial_sentence
from harness.sequential import confirmatory_runs
from harness.settings import Settings
from harness.verdicts.levels import (
    GROUPS,
    accuracies_from_records,
    accuracies_from_verdicts,
    level_reader,
    variant_accuracies,
)
from harness.verdicts.verify import Verdict


def _portable(text: str, settings: Settings) -> str:
    """The text with this machine's folders named by the settings that chose them."""
    for folder, name in ((settings.data_dir, "$FEDCLAIMS_DATA"), (settings.store_dir, "$FEDCLAIMS_STORE"),
                         (settings.cache_dir, "$FEDCLAIMS_CACHE"), (Path.home(), "~")):
        if folder is not None:
            text = text.replace(str(Path(folder).resolve()), name).replace(str(folder), name)
    return text


def _anchor(claim: str) -> str:
    return "claim-" + claim.replace(".", "-")


class _Report:
    """The pieces of REPORT.md and of the detail files, rendered from one outcome."""

    def __init__(self, outcome: Outcome, settings: Settings, report_path: Path, figures_dir: Path):
        self.outcome, self.settings, self.catalog = outcome, settings, outcome.catalog
        self.commit = git_commit(settings.root)  # before any figure is written into the tree
        self.base, self.figures_dir = report_path.parent, figures_dir
        self.report_from_details = relative(report_path, report_path.parent / DETAIL_DIR)
        # the records behind archived profiles' claims verified from records count too (levels, chance)
        read: list[Any] = [*outcome.requests, *(SimpleNamespace(**run) for run in outcome.archived_runs)]
        self.records = {r.key: outcome.store.get(r.key) if outcome.store else None for r in read}
        self.runs_read = list({(r.key, r.profile): r for r in read}.values())  # a run requested and archived: once
        self.by_claim: dict[str, dict[str, Verdict]] = {}
        for verdict in outcome.verdicts:
            self.by_claim.setdefault(verdict.claim, {})[verdict.profile] = verdict
        ran = profiles_that_ran(self.catalog, outcome.verdicts)
        self.profiles = [p for p in outcome.profiles if p in ran] or list(outcome.profiles[:1])
        self.not_shown = [p for p in outcome.profiles if p not in self.profiles]
        self.baselines = {profile: committed_baseline(settings.root, profile) for profile in self.profiles}
        self.accuracies = {**accuracies_from_verdicts(self.catalog, outcome.verdicts),
                           **accuracies_from_records(self.catalog, read, self.records),
                           **(variant_accuracies(self.catalog, outcome.lookup, outcome.profiles)
                              if outcome.lookup is not None else {})}
        reader = self.reader = level_reader(self.catalog, self.accuracies)
        self.levels = {(v.claim, v.profile): reader.level(v) for v in outcome.verdicts}
        self.proxies = proxy_notes(self.catalog, outcome.verdicts, self.records)
        self.sequential_folders = [settings.store_dir, *([settings.records_dir] if settings.committed_records else [])]
        self.sequential = sequential_entries(self.sequential_folders, self.profiles, self.alphas)
        self.confirmatory, self.confirmatory_refused = (confirmatory_runs.read(settings, self.catalog)
                                                        if settings.committed_records else ([], []))
        self.confirmatory_whose: dict[str, str] = {}
        """Per claim whose confirmatory test FAILed, whose that FAIL is (set with the attributions)."""

    def alphas(self, profile: str) -> dict[str, float]:
        """The α each claim tests at on `profile` (a recorded sequential plan must be at it)."""
        return {loaded.id: loaded.claim.alpha_at(profile) for loaded in self.catalog.claims}

    def papers(self) -> list[str]:
        return list(dict.fromkeys(v.paper for v in self.outcome.verdicts))

    def verdicts(self, paper: str, profile: str) -> list[Verdict]:
        return [v for v in self.outcome.verdicts if v.paper == paper and v.profile == profile]

    def detail_link(self, claim: str) -> str:
        paper = self.catalog.claim(claim).paper
        return f"{DETAIL_DIR}/{paper}.md#{_anchor(claim)}"

    # --- REPORT.md -------------------------------------------------------------------------

    def header(self) -> list[str]:
        """Three lines: what; when, by which commit's code, and where the rest of the provenance is; the profiles
        shown and any other REPORT.json holds."""
        commit = self.commit.split("+")[0][:12] + ("+uncommitted changes" if "+" in self.commit else "")
        held = [p for p in dict.fromkeys([*self.outcome.profiles, *self.outcome.archived]) if p not in self.profiles]
        also = (f"; REPORT.json also holds {', '.join(f'`{p}`' for p in held)} (no trained run in its records, so "
                "no column)" if held else "")
        return ["# fedclaims reproduction report", "",
                f"Generated by `fedclaims report` on {time.strftime('%Y-%m-%d %H:%M %Z')} by the code at commit "
                f"`{commit}`, which produced every verdict below; details under [Provenance](#provenance).",
                f"Profiles {', '.join(self.profiles)}{also}.", ""]

    def sources(self) -> list[str]:
        """Where each profile's verdicts come from, and the profiles not shown."""
        lines = [f"- `{p}`: {text}." for p, text in self.outcome.archived.items() if p in self.profiles]
        if self.not_shown:
            lines.append(f"- not shown as columns (no trained run in their records): "
                         f"{', '.join(f'`{p}`' for p in self.not_shown)}; their analytic claims share the records "
                         "of the profiles shown.")
        return lines + [f"- generated at commit `{self.commit}`; regenerate with the first command of the README "
                        "(it runs `smoke`; other profiles whose records are in the store or in `records/` are shown "
                        "beside it)."]

    def paper_profile(self) -> list[str]:
        """Where the paper profile has no record here: what its one-round trial showed, if one was written."""
        if PAPER_PROFILE in self.profiles or PAPER_PROFILE not in self.catalog.profiles():
            return []
        trial = read_trial(self.settings.root / DETAIL_DIR, PAPER_PROFILE)
        if trial is None:
            return [f"`{PAPER_PROFILE}` has never run here, not even for one round (`fedclaims trial --profile "
                    f"{PAPER_PROFILE}` tries it).", ""]
        page = f"{DETAIL_DIR}/trial-{PAPER_PROFILE}.md"
        earlier = "" if self.commit.startswith(trial["commit"][:12]) else " It was tried from an earlier commit."
        return [f"{trial_sentence(trial)}{earlier} The runs: [{page}]({page}).", ""]

    def summary(self) -> list[str]:
        lines = ["## Counts", "",
                 "| paper | profile | " + " | ".join(f"{group}: PASS / FAIL / other" for group in GROUPS)
                 + " | SKIPPED | fragile | runs | compute (s) |",
                 "|---|---|" + "---|" * (len(GROUPS) + 4)]
        for paper in self.papers():
            for profile in self.profiles:
                verdicts = self.verdicts(paper, profile)
                decided = [v for v in verdicts if v.status != "SKIPPED"]
                by_group = {group: Counter(v.status for v in decided if self.levels[(v.claim, profile)].group == group)
                            for group in GROUPS}

                def short(counts: Counter) -> str:
                    other = sum(n for s, n in counts.items() if s not in ("PASS", "FAIL"))
                    return f"{counts.get('PASS', 0)} / {counts.get('FAIL', 0)} / {other}"

                fragile = sum(1 for v in verdicts if (f := fragility(v, self.baselines)) is not None and f.fragile)
                runs, seconds = self._compute({v.experiment for v in verdicts}, profile)
                lines.append(f"| {paper} | {profile} | " + " | ".join(short(by_group[g]) for g in GROUPS)
                             + f" | {len(verdicts) - len(decided)} | {fragile} | {runs} | {seconds:.0f} |")
        lines += ["", "Groups by evidence level (`harness.verdicts.levels`): *learned* where every variant the claim "
                  "reads reached at least half of the paper's gain over chance (against its own paper figure, else "
                  "the experiment's reference's); *weak* where the models barely learn or the effect is below its "
                  "metric's smallest of interest; *unleveled* where no level could be read; *independent* "
                  "quantities that do not depend on how well the models learn (coverages, allocated widths, upload "
                  "sizes); *cost* measured costs of real pipelines; *analytic* rules, counts, coverages and exact "
                  "algebra; *diagnostic* labelled measurements; *repeat* a claim that repeats another's observation"
                  " and test, counted once, under it. Compute is the sum of the run times recorded in the store "
                  "(single-threaded runs; `fedclaims report` runs one worker per core). A verdict is *fragile* when "
                  "its statistics lie nearer another verdict than 99% of the moves the drift measured across numerics "
                  "(other CPUs' kernels) makes them, simulated from its recorded seeds: on another machine it may read "
                  "differently (docs/regression.md).", ""]
        return lines

    def disagreements(self) -> list[str]:
        if len(self.profiles) < 2:
            return []
        decided = ("PASS", "FAIL", "INCONCLUSIVE")
        rows = []
        for claim, per_profile in self.by_claim.items():
            expect = self.catalog.claim(claim).claim.expect
            statuses = {p: v.status for p, v in per_profile.items() if p in self.profiles and v.status in decided}
            same_expectation = len({repr(expect.get(p)) for p in statuses}) == 1
            if len(set(statuses.values())) > 1 and same_expectation:
                rows.append(f"| [`{claim}`]({self.detail_link(claim)}) | "
                            + " | ".join(ICONS[per_profile[p].status] if p in per_profile else "—"
                                         for p in self.profiles) + " |")
        lines = ["## Where the profiles disagree", "",
                 "Claims with the same expectation at several profiles, decided (PASS, FAIL or INCONCLUSIVE) "
                 "differently: the scale changed the result. Each claim's note says whether a FAIL is a limit of the "
                 "scale or a result that does not reproduce.", ""]
        if not rows:
            return lines + ["Every claim with one expectation at several profiles has the same verdict at each.", ""]
        return lines + ["| claim | " + " | ".join(self.profiles) + " |", "|---|" + "---|" * len(self.profiles),
                        *rows, ""]

    def paper_table(self, paper: str) -> list[str]:
        claim_file = self.catalog.papers[paper]
        lines = [f"## {claim_file.title}", "", f"Paper id `{paper}`; {claim_file.reference}. Every claim in detail, "
                 f"and the experiments with their figures: [{DETAIL_DIR}/{paper}.md]({DETAIL_DIR}/{paper}.md).", "",
                 "| claim | kind | " + " | ".join(self.profiles) + " |", "|---|---|" + "---|" * len(self.profiles)]
        for claim in dict.fromkeys(v.claim for v in self.outcome.verdicts if v.paper == paper):
            per_profile = self.by_claim[claim]
            cells = [self._status_cell(per_profile.get(p)) for p in self.profiles]
            lines.append(f"| [`{claim}`]({self.detail_link(claim)}) | {evidence_of(self.catalog, claim)} | "
                         + " | ".join(cells) + " |")
        lines.append("")
        if claim_file.unchecked:
            lines += [f"Not checked here: {len(claim_file.unchecked)} assertion(s) of the paper that no claim encodes, "
                      f"each with its reason: [{DETAIL_DIR}/{paper}.md#not-checked-here]"
                      f"({DETAIL_DIR}/{paper}.md#not-checked-here).", ""]
        return lines

    def _status_cell(self, verdict) -> str:
        if verdict is None:
            return "—"
        group = self.levels[(verdict.claim, verdict.profile)].group
        return ICONS[verdict.status] + (" (weak)" if group == "weak" and verdict.status != "SKIPPED" else "")

    def _compute(self, experiments: set[str], profile: str) -> tuple[int, float]:
        """Number of stored runs and their summed run time for some experiments at a profile (an archived
        profile's too, whose verdicts were read from records: their runs are not among the outcome's requests)."""
        runs, seconds = 0, 0.0
        for request in self.runs_read:
            if request.experiment in experiments and request.profile == profile:
                record = self.records[request.key]
                if record is not None:
                    runs += 1
                    seconds += record["provenance"]["wall_seconds"]
        return runs, seconds

    def _numerics_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self.records.values():
            if record is not None:
                fingerprint = ((record.get("provenance") or {}).get("numerics") or {}).get("fingerprint", "unrecorded")
                counts[fingerprint] = counts.get(fingerprint, 0) + 1
        return counts

    def provenance(self) -> list[str]:
        execution = self.outcome.execution
        total = sum(r["provenance"]["wall_seconds"] for r in self.records.values() if r is not None)
        lines = ["## Provenance", "", *self.sources(),
                 f"- machine: {', '.join(f'{k} {v}' for k, v in machine().items())}; device `{self.settings.device}`; "
                 f"{self.settings.threads} thread(s) per run",
                 "- libraries: " + ", ".join(f"{k} {v}" for k, v in library_versions().items()),
                 f"- this invocation: {execution.text()}",
                 *(f"- execution: {cell(note)}" for note in self.outcome.notes),
                 *(["- read-only store: its records were read without taking a lock"]
                   if self.outcome.store is not None and self.outcome.store.read_only() else []),
                 f"- {len([r for r in self.records.values() if r])} records behind this report, {total:.1f} s of "
                 f"compute; every run with its store key: [{DETAIL_DIR}/runs.md]({DETAIL_DIR}/runs.md)", ""]
        lines += [f"- store event: {cell(event)}" for event in execution.events]
        lines += ["", *self.paper_profile()]
        return lines + numerics_lines(numerics_of(self.outcome), self._numerics_counts())

    # --- report/<paper>.md -------------------------------------------------------------------

    def paper_detail(self, paper: str, detail_base: Path) -> list[str]:
        claim_file = self.catalog.papers[paper]
        lines = [f"# {claim_file.title}: every claim", "", f"Paper id `{paper}`; {claim_file.reference}. "
                 "Back to [REPORT.md](../REPORT.md).", "", *LEGEND, ""]
        for claim in dict.fromkeys(v.claim for v in self.outcome.verdicts if v.paper == paper):
            lines += self.claim_detail(claim)
        return lines + self.unchecked(paper) + self.experiments(paper, detail_base)

    def unchecked(self, paper: str) -> list[str]:
        """The paper's assertions no claim encodes, with the reason each cannot be checked here."""
        listed = self.catalog.papers[paper].unchecked
        if not listed:
            return []
        lines = ['<a id="not-checked-here"></a>', "## Not checked here", "",
                 "Assertions of the paper that no claim encodes, and why (the claim file's `unchecked`).", ""]
        for item in listed:
            lines.append(f"- ({cell(item.source)}) \"{cell(item.statement)}\" — {cell(item.reason)}")
        return lines + [""]

    def stale_at(self, profile: str) -> Callable[[Mapping[str, Any]], str | None]:
        """Why a sequential entry at `profile` is no verdict of its claim now (`recorded_before_change`)."""
        ids = {loaded.id for loaded in self.catalog.claims}
        return lambda entry: (recorded_before_change(self.catalog.claim(entry["claim"]).claim, profile, entry)
                              if entry["claim"] in ids else None)

    def claim_detail(self, claim: str) -> list[str]:
        per_profile = self.by_claim[claim]
        first = next(iter(per_profile.values()))
        loaded = self.catalog.claim(claim).claim
        labels = [evidence_of(self.catalog, claim)]
        if getattr(loaded, "quote_from", "paper") != "paper":
            labels.append(f"quoted from the {loaded.quote_from.replace('-', ' ')}")
        lines = [f'<a id="{_anchor(claim)}"></a>', f"## `{claim}` ({cell(first.source)}; {', '.join(labels)})", "",
                 f"> {cell(first.statement)}", "",
                 "| profile | expectation tested | observed | verdict | evidence level | margin | reason |",
                 "|---|---|---|---|---|---|---|"]
        for profile in self.profiles:
            v = per_profile.get(profile)
            if v is not None:
                level = self.levels[(claim, profile)]
                lines.append(f"| {profile} | {cell(v.expectation)} "
                             f"({cell(tested_and_paper(self.catalog, claim, profile))}) "
                             f"| {cell(v.observed) or '—'} | {ICONS[v.status]} "
                             f"| {'—' if v.status == 'SKIPPED' else self._level_cell(level)} "
                             f"| {cell(margin_cell(v, self.baselines))} | {cell(v.reason)} |")
        lines += reading_lines(per_profile, self.profiles)
        for profile in self.profiles:
            entry = self.sequential.get((claim, profile))
            stale = None if entry is None else recorded_before_change(loaded, profile, entry)
            if stale is not None:
                lines += ["", stale]
            elif entry is not None and extended(entry):
                lines += ["", claim_line(entry, profile, self.report_from_details)]
        proxies = [f"`{p}`: {self.proxies[(claim, p)]}" for p in self.profiles if (claim, p) in self.proxies]
        if proxies:
            lines += ["", f"A proxy: {'; '.join(proxies)}."]
        if loaded.note:
            lines += ["", f"Note: {cell(loaded.note)}"]
        return lines + [""]

    def experiments(self, paper: str, detail_base: Path) -> list[str]:
        experiments = list(dict.fromkeys(v.experiment for v in self.outcome.verdicts if v.paper == paper))
        store = self.outcome.store
        if store is None:
            raise ValueError("the experiments' figures are drawn from the records of a store; the outcome has none")
        figures = {profile: draw_figures(self.catalog, experiments, profile, self.settings, store, self.figures_dir)
                   for profile in self.profiles}
        lines = ["# Experiments", ""]
        for experiment in experiments:
            spec = self.catalog.specs[experiment].spec
            lines += [f"## Experiment `{experiment}`: {spec.title}", ""]
            for profile in self.profiles:
                if profile in spec.profiles:
                    lines.append(f"- `{profile}`: {cell(spec.profiles[profile].description)} "
                                 f"(seeds {spec.profiles[profile].seeds}){self._measured_level(experiment, profile)}")
            lines.append("")
            for profile in self.profiles:
                for title, path in figures[profile].get(experiment, []):
                    lines += [f"![{title} ({profile})]({relative(path, detail_base)})", ""]
                if profile in self.outcome.archived and not figures[profile].get(experiment):
                    for path in sorted(self.figures_dir.glob(f"{experiment}-*-{profile}.png")):
                        lines += [f"![{path.stem} ({profile}, drawn from the records behind its archived "
                                  f"observations)]({relative(path, detail_base)})", ""]
            if spec.adopted:
                lines += ["Adopted from the authors' code where the paper is silent:", ""]
                lines += [f"- {cell(d)}" for d in spec.adopted] + [""]
            if spec.departures:
                lines += ["Departures from the paper and choices where it is silent:", ""]
                lines += [f"- {cell(d)}" for d in spec.departures] + [""]
        return lines

    def _measured_level(self, experiment: str, profile: str) -> str:
        """'. Its reference measured here over its seeds (the records): learning level 0.56: …': the reference's
        level, from the records (a figure the description quotes is a pilot's, on the seed it names); each verdict
        reads the lowest level of the variants it reads, which its own row gives."""
        fraction, text = self.reader.learning(experiment, profile)
        if fraction is None:
            return ""
        return (f". Its reference measured here over its seeds (the records): {cell(text)}; each verdict reads the "
                "lowest level of the variants it reads")

    @staticmethod
    def _level_cell(level) -> str:
        whose = f"; whose FAIL: {level.attribution}" if level.attribution else ""
        return f"{level.group}: {cell(level.text + whose)}"

    def runs(self) -> list[str]:
        lines = ["# Runs behind REPORT.md", "", "Back to [REPORT.md](../REPORT.md).", "",
                 "| experiment | variant | seed | profile | store key | numerics | run time (s) |",
                 "|---|---|---|---|---|---|---|"]
        for request in self.outcome.requests:
            record = self.records[request.key]
            seconds = record["provenance"]["wall_seconds"] if record else "—"
            numerics = ((record or {}).get("provenance") or {}).get("numerics") or {}
            lines.append(f"| {request.experiment} | {request.variant} | {request.seed} | {request.profile} | "
                         f"`{request.key[:16]}` | `{numerics.get('fingerprint', '—')}` | {seconds} |")
        return lines + [""]


def render(outcome: Outcome, settings: Settings, report_path: Path, figures_dir: Path,
           studies: Mapping[str, Outcome] | None = None) -> dict[Path, str]:
    """REPORT.md and its detail files: {path: text}; `studies`: each scale study's outcome from its stored
    records (`harness.pipeline.study_outcomes`)."""
    return _rendered(_Report(outcome, settings, report_path, figures_dir), report_path, figures_dir, studies or {})[0]


def _rendered(report: _Report, report_path: Path, figures_dir: Path, studies: Mapping[str, Outcome]
              ) -> tuple[dict[Path, str], list[StudyReading]]:
    outcome, settings = report.outcome, report.settings
    detail_dir = report_path.parent / DETAIL_DIR
    study_lines, study_files, readings = studies_section(studies, report_path, figures_dir)
    studies_read = study_evidence(study_dicts(readings, report_path.parent), committed_studies(settings.root))
    report.levels, report.confirmatory_whose = with_attributions(
        report.catalog, outcome.verdicts, report.levels, studies_read, settings.root,
        [r.to_dict() for r in report.confirmatory])
    shown = [v for v in outcome.verdicts if v.profile in report.profiles]
    lines = report.header()
    lines += digest(report.catalog, shown, report.levels, report.profiles, report.detail_link,
                    central_along_studies(report.catalog, readings), report.sequential,
                    report.proxies, confirmatory.decided(report.confirmatory))
    lines += confirmatory.digest_lines(report.confirmatory, report.confirmatory_refused, report.confirmatory_whose)
    lines += [SHORT_LEGEND, ""]
    if len(lines) > MAX_LINES:
        raise ValueError(f"REPORT.md's digest with its legend runs to {len(lines)} lines, more than {MAX_LINES}: "
                         "name fewer central claims in the claim files")
    lines += findings(report.catalog, shown, report.levels, report.profiles, report.detail_link,
                      study_findings(report.catalog, readings),
                      {name: _portable(text, settings) for name, text in outcome.data.problems.items()}, LEGEND,
                      report.proxies, report.sequential)
    lines += report.summary() + report.disagreements()
    lines += across_numerics_lines(settings.root, report.profiles)
    lines += study_lines
    lines += missing_runs_section(outcome.requests, report.records,
                                  [p for p in report.profiles if p not in outcome.archived], settings.workers)
    for profile in report.profiles:
        lines += sequential_section(report.sequential_folders, profile, report.alphas, report.stale_at(profile))
    lines += confirmatory.section(report.confirmatory, report.confirmatory_refused, report.confirmatory_whose)
    for paper in report.papers():
        lines += report.paper_table(paper)
    lines += performance_section(settings.root)
    lines += report.provenance()
    texts = {report_path: "\n".join(lines) + "\n"}
    for paper in report.papers():
        texts[detail_dir / f"{paper}.md"] = "\n".join(report.paper_detail(paper, detail_dir)) + "\n"
    texts[detail_dir / "runs.md"] = "\n".join(report.runs()) + "\n"
    texts.update(study_files)
    return texts, readings


def write_report(outcome: Outcome, settings: Settings, report_path: Path,
                 studies: Mapping[str, Outcome] | None = None) -> tuple[Path, Path]:
    """Write REPORT.md, its detail files and figures beside it, and REPORT.json; return (markdown, json).
    `studies`: as `render`."""
    figures_dir = report_path.parent / "figures"
    report = _Report(outcome, settings, report_path, figures_dir)
    texts, readings = _rendered(report, report_path, figures_dir, studies or {})
    for path, text in texts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    json_path = report_path.with_suffix(".json")
    json_path.write_text(report_json(outcome, report, readings, json_path.parent), encoding="utf-8")
    return report_path, json_path
