"""The first screen of REPORT.md says only what its evidence holds (issue 59): its counts recount from
REPORT.json, implementation checks stay out of the central-claim tables, a PASS against a weaker bound than
the paper's says so, no verdict counts where the models learn while a variant it reads is below the level,
the header names the commit whose code produced the verdicts and every profile REPORT.json holds, study
points without records here say so rather than SKIPPED, and no line repeats the one before it.
`screen_problems` reads a REPORT.md, its REPORT.json and its study pages; the committed files are checked by
it, and forged copies show each check can fail."""
from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from harness.loading.catalog import load_catalog
from harness.verdicts.levels import LEARNED, paper_figure

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
CODE = ("harness", "methods", "claims", "specs")
"""What produces the verdicts: a report's commit must hold the same as HEAD in these paths."""

GROUP_TITLES = {"where the models learn": "learned", "weak": "weak", "no learning level": "unleveled",
                "independent of learning": "independent", "costs": "cost", "analytic": "analytic",
                "implementation checks": "implementation", "diagnostics": "diagnostic",
                "repeats of another claim, counted under it": "repeat",
                "data set not available here": "unavailable", "not tested here": "not tested"}
HELD = ("analytic", "implementation")
"""Groups a counts line shows as 'k of n hold'."""


def _claim_of(anchor: str) -> str:
    return next(c.id for c in CATALOG.claims if c.id.replace(".", "-") == anchor)


def _digest(text: str) -> dict[str, list[str]]:
    """The digest's lines per paper id (from its '### title' to the next heading)."""
    lines = text.splitlines()
    start = lines.index("## Digest")
    end = next(i for i, line in enumerate(lines) if line.startswith("## ") and i > start)
    titles = {claim_file.title: paper for paper, claim_file in CATALOG.papers.items()}
    papers: dict[str, list[str]] = {}
    paper = None
    for line in lines[start:end]:
        if line.startswith("### "):
            paper = titles[line[4:]]
            papers[paper] = []
        elif paper is not None:
            papers[paper].append(line)
    return papers


def _central_table(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The central-claim table's profiles and, per claim, its cells (one per profile)."""
    header = next(line for line in lines if line.startswith("| central claim |"))
    profiles = [cell.strip(" `") for cell in header.strip("|").split("|")[1:-1]]
    rows: dict[str, list[str]] = {}
    for line in lines[lines.index(header) + 2:]:
        if not line.startswith("| "):
            break
        anchor = re.search(r"#claim-([a-z0-9-]+)\)", line)[1]
        cells = [cell.strip() for cell in line.split(") | ", 1)[1].split(" | ")]
        rows[_claim_of(anchor)] = cells[:len(profiles)]
    return profiles, rows


def _said(verdict: dict) -> str:
    """The verdict's last word as REPORT.json records it (a report from before issue 59: its fixed-n status)."""
    return verdict.get("last_word", verdict["status"])


def _recount(verdicts: list[dict]) -> dict[str, Counter]:
    counts: dict[str, Counter] = {}
    for v in verdicts:
        if v["status"] == "SKIPPED":
            counts.setdefault("unavailable" if v["data_unavailable"] else "not tested", Counter())["all"] += 1
            continue
        group = v["level"]["group"]
        said = _said(v)
        if group in HELD:
            counts.setdefault(group, Counter())["of"] += 1
            counts[group]["hold"] += said == "PASS"
        elif group in ("diagnostic", "repeat"):
            counts.setdefault(group, Counter())["all"] += 1
        else:
            counts.setdefault(group, Counter())[said] += 1
    return counts


def _parsed_counts(line: str) -> dict[str, Counter]:
    """'where the models learn: 4 PASS, 3 INCONCLUSIVE · … · analytic: 5 of 6 hold · diagnostics: 6' as counts."""
    counts: dict[str, Counter] = {}
    for part in line.split(" · "):
        title, shown = part.split(": ", 1)
        group = GROUP_TITLES[title]
        if group in HELD:
            held, total = re.fullmatch(r"(\d+) of (\d+) hold", shown).groups()
            counts[group] = Counter({"hold": int(held), "of": int(total)})
        elif shown.isdigit():
            counts[group] = Counter({"all": int(shown)})
        elif shown != "none":
            counts[group] = Counter({status: int(n) for n, status in (p.split(" ") for p in shown.split(", "))})
    return counts


def count_problems(text: str, report: dict) -> list[str]:
    """The per-profile lines and the central line count the same verdicts, by their last word (a central claim
    also by its confirmatory test, decided where its models learn), as REPORT.json."""
    problems = []
    for paper, lines in _digest(text).items():
        verdicts = [v for v in report["verdicts"] if v["paper"] == paper]
        profiles, _ = _central_table(lines)
        for line in lines:
            if match := re.match(r"^- `([^`]+)`: (where the models learn: .*)$", line):
                profile = match[1]
                shown = _parsed_counts(match[2])
                want = {g: c for g, c in _recount([v for v in verdicts if v["profile"] == profile]).items() if c}
                if shown != want:
                    problems.append(f"{paper} at {profile}: the line counts {dict(shown)}, REPORT.json {dict(want)}")
        checks = {v["claim"] for v in verdicts if v["status"] != "SKIPPED" and v["level"]["group"] == "implementation"}
        central = [c for c in CATALOG.papers[paper].central if c not in checks]
        by_key = {(v["claim"], v["profile"]): v for v in verdicts}
        confirmed = {r["claim"] for r in report.get("confirmatory", []) if r.get("status") in ("PASS", "FAIL")
                     and (r.get("level") or {}).get("group") == "learned"}
        decided = [c for c in central if c in confirmed or any(
            (v := by_key.get((c, p))) is not None and v["level"]["group"] == "learned" and _said(v) in ("PASS", "FAIL")
            for p in profiles)]
        line = next(line for line in lines if "Central claims decided where the models learn" in line)
        shown_decided, shown_central = map(int, re.search(r"learn: (\d+) of (\d+)\*\*", line).groups())
        if (shown_decided, shown_central) != (len(decided), len(central)):
            problems.append(f"{paper}: the central line says {shown_decided} of {shown_central}, REPORT.json's last "
                            f"words decide {len(decided)} of {len(central)} where the models learn")
    return problems


def _weaker(claim_id: str, profile: str, verdict: dict) -> bool:
    """Whether a PASS of the claim at the profile met a weaker bound than the paper's, or a proxy's."""
    claim = CATALOG.claim(claim_id).claim
    variants = CATALOG.specs[claim.experiment].spec.variants
    labels = {name: v.label or name for name, v in variants.items()}
    tested, paper = claim.expect.get(profile), claim.expect.get("paper")
    differs = (profile != "paper" and tested is not None and paper is not None
               and tested.brief(labels) != paper.brief(labels))
    return bool(claim.paper_bound or differs or verdict.get("proxy"))


def table_problems(text: str, report: dict) -> list[str]:
    """No implementation check in a central-claim table; every PASS there against a weaker bound or on a
    proxy labelled so."""
    problems = []
    by_key = {(v["claim"], v["profile"]): v for v in report["verdicts"]}
    for paper, lines in _digest(text).items():
        profiles, rows = _central_table(lines)
        for claim, cells in rows.items():
            groups = {v["level"]["group"] for p in profiles
                      if (v := by_key.get((claim, p))) is not None and v["status"] != "SKIPPED"}
            if "implementation" in groups:
                problems.append(f"{paper}: implementation check {claim} in the central-claim table")
            for profile, cell in zip(profiles, cells, strict=True):
                verdict = by_key.get((claim, profile))
                if (verdict is not None and _said(verdict) == "PASS" and _weaker(claim, profile, verdict)
                        and ": not tested)" not in cell and "a proxy" not in cell):
                    problems.append(f"{paper}: {claim} at {profile}: '{cell}' reads as a reproduction; it met a "
                                    "weaker bound than the paper's")
    return problems


def _variant_levels(report: dict, verdict: dict) -> dict[str, float | None]:
    """Each variant the verdict's claim reads, with its level recomputed from REPORT.json: from the seeds'
    accuracy and chance and the paper figure its level records (`level.variants`), or, in a report from before
    issue 59, from REPORT.json's mean accuracy and chance against the figure the catalog gives the variant. None:
    no level (not measured, no chance recorded, or a paper figure not above chance)."""
    claim = CATALOG.claim(verdict["claim"]).claim
    recorded = {v["variant"]: v for v in verdict["level"].get("variants") or ()}
    measured = {(a["variant"], a["profile"]): a for a in report["accuracies"] if a["experiment"] == claim.experiment}
    levels: dict[str, float | None] = {}
    for variant in claim.observe.variants:
        if variant in recorded:
            read = recorded[variant]
            paper, seeds = read["paper"], read["seeds"] or [(read["accuracy"], read["chance"])]
        else:
            found = measured.get((variant, verdict["profile"]), {})
            paper, seeds = paper_figure(CATALOG.specs[claim.experiment], variant)[0], [(found.get("mean"),
                                                                                        found.get("chance"))]
        known = all(a is not None and c is not None for a, c in seeds)
        levels[variant] = (sum((a - c) / (paper - c) for a, c in seeds) / len(seeds)
                           if known and paper > max(c for _, c in seeds) else None)
    return levels


def level_problems(report: dict) -> list[str]:
    """No verdict counted where the models learn reads a variant below `LEARNED` or one without a level, and
    every verdict's level is the lowest of its variants' levels as REPORT.json records them."""
    problems = []
    for verdict in report["verdicts"]:
        level = verdict["level"]
        if verdict["status"] == "SKIPPED" or level["fraction"] is None:
            continue
        where = f"{verdict['claim']} at {verdict['profile']}"
        levels = _variant_levels(report, verdict)
        low = [f"{v} at {f:.2f}" if f is not None else f"{v} without a level" for v, f in levels.items()
               if f is None or f < LEARNED]
        if level["group"] == "learned" and low:
            problems.append(f"{where} counts where the models learn (level {level['fraction']:.2f}) while it reads "
                            f"{', '.join(low)}")
        known = [f for f in levels.values() if f is not None]
        if level.get("variants") and known and abs(min(known) - level["fraction"]) > 1e-9:
            problems.append(f"{where}: level {level['fraction']:.4f}, not the lowest of its variants' "
                            f"{min(known):.4f}")
    return problems


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def header_problems(text: str, report: dict) -> list[str]:
    """The header names REPORT.json's commit, a committed one whose code (`CODE`) is HEAD's, and every
    profile REPORT.json holds."""
    header = "\n".join(text.splitlines()[:text.splitlines().index("## Digest")])
    problems = []
    commit = re.search(r"at commit `([0-9a-f]+)([^`]*)`", header)
    if commit is None or commit[2] or not report["commit"].startswith(commit[1]):
        problems.append(f"the header's commit {commit and commit.group(0)!r} is not REPORT.json's committed "
                        f"{report['commit']!r}")
    elif _git("diff", "--quiet", report["commit"], "HEAD", "--", *CODE).returncode != 0:
        problems.append(f"the code behind the verdicts changed since {report['commit'][:12]}: "
                        f"{_git('diff', '--stat', report['commit'], 'HEAD', '--', *CODE).stdout.strip()[-300:]}")
    held = dict.fromkeys([*report["profiles"], *report["archived"]])
    problems += [f"the header does not name profile {p}, which REPORT.json holds" for p in held
                 if not re.search(rf"\b{re.escape(p)}\b", header)]
    return problems


def study_problems(text: str, report: dict, pages: dict[str, str]) -> list[str]:
    """A study point whose runs have no records here never reads SKIPPED (REPORT.md or the study's page), and
    the page states the interval its points' tests used (the one their reasons name)."""
    problems = []
    for study in report["studies"]:
        page = pages.get(study["study"], "")
        for claim in study["claims"]:
            section = page.split(f"# `{claim['claim']}`", 1)[-1].split("\n### ")[0]
            used = {found for point in claim["points"] for found in re.findall(r"\b(\d+)% interval", point["reason"])}
            problems += [f"study {study['study']}, {claim['claim']}: its page does not state the {pct}% interval its "
                         "test used" for pct in sorted(used) if f"{pct}% interval" not in section]
            for point in claim["points"]:
                unrecorded = (point["runs_recorded"] < point["runs_planned"] if "runs_planned" in point
                              else "no record for" in point["reason"])  # a REPORT.json from before issue 59
                if point["verdict"] != "SKIPPED" or not unrecorded:
                    continue
                shown = [line for line in text.splitlines() if f"`{claim['claim']}`" in line
                         and f"study `{study['study']}`" in line and f"{point['value']}: SKIPPED" in line]
                shown += [line for line in section.splitlines()
                          if line.startswith(f"| {point['value']} |") and line.endswith("| SKIPPED |")]
                problems += [f"study {study['study']}, {claim['claim']} at {point['value']}: SKIPPED where no records "
                             f"are here: {line[:120]!r}" for line in shown]
    return problems


def repeat_problems(text: str) -> list[str]:
    lines = text.splitlines()
    return [f"line {n}: repeats line {n - 1}: {line[:100]!r}" for n, (before, line) in enumerate(
        zip(lines, lines[1:], strict=False), 2) if line.strip() and line == before]


def screen_problems(text: str, report: dict, pages: dict[str, str]) -> list[str]:
    return (count_problems(text, report) + table_problems(text, report) + level_problems(report)
            + header_problems(text, report) + study_problems(text, report, pages) + repeat_problems(text))


def _committed() -> tuple[str, dict, dict[str, str]]:
    text = (ROOT / "REPORT.md").read_text(encoding="utf-8")
    report = json.loads((ROOT / "REPORT.json").read_text(encoding="utf-8"))
    pages = {path.stem.removeprefix("study-"): path.read_text(encoding="utf-8")
             for path in (ROOT / "report").glob("study-*.md")}
    return text, report, pages


def test_the_committed_first_screen_says_only_what_its_evidence_holds() -> None:
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: the header's commit cannot be compared with HEAD")
    assert screen_problems(*_committed()) == []


def test_counts_that_disagree_with_the_last_words_are_found() -> None:
    text, report, _ = _committed()
    before = set(count_problems(text, report))
    sequential = next((v for v in report["verdicts"] if v.get("last_word", v["status"]) != v["status"]
                       and v["level"]["group"] == "learned"), None)
    if sequential is None:  # a report from before last words were recorded: forge one
        sequential = next(v for v in report["verdicts"] if v["status"] == "INCONCLUSIVE"
                          and v["level"]["group"] == "learned" and v["claim"] in CATALOG.papers[v["paper"]].central)
        sequential["last_word"] = "PASS"
    else:
        sequential["last_word"] = sequential["status"]  # as if the per-profile line counted look 1 only
    assert any(sequential["paper"] in problem for problem in set(count_problems(text, report)) - before)


def test_an_implementation_check_in_the_central_table_and_an_unlabelled_weaker_pass_are_found() -> None:
    text, report, _ = _committed()
    shown = {claim for lines in _digest(text).values() for claim in _central_table(lines)[1]}
    check = next(v for v in report["verdicts"] if v["level"]["group"] == "implementation" and v["status"] == "PASS"
                 and v["claim"] not in shown)
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| central claim |")
                  and any(t.startswith("### " + CATALOG.papers[check["paper"]].title) for t in lines[i - 1:i]))
    profiles = [cell.strip(" `") for cell in lines[header].strip("|").split("|")[1:-1]]
    row = (f"| [a check](report/x.md#claim-{check['claim'].replace('.', '-')}) | "
           + " | ".join("PASS" if p == check["profile"] else "—" for p in profiles) + " | 1 |")
    forged = "\n".join([*lines[:header + 2], row, *lines[header + 2:]])
    before = set(table_problems(text, report))
    assert any(f"implementation check {check['claim']}" in p for p in set(table_problems(forged, report)) - before)
    energy = "fedhenet-energy-about-70-percent-saved"
    row = next(line for line in lines if f"#claim-{energy})" in line)
    link, cells = row.split(") | ", 1)

    def marked(label: str) -> str:
        return link + ") | " + " | ".join(label if "PASS" in cell else cell for cell in cells.split(" | "))

    labelled = text.replace(row, marked("PASS (a proxy, > 0; the paper's in [0.63, 0.77]: not tested)"))
    assert not any(energy.replace("-", ".", 2) in p for p in table_problems(labelled, report))
    assert any("reads as a reproduction" in p for p in table_problems(text.replace(row, marked("PASS")), report))


def test_a_learned_verdict_reading_a_variant_below_the_level_is_found() -> None:
    _, report, _ = _committed()
    before = set(level_problems(report))
    verdict = next(v for v in report["verdicts"] if v["level"]["group"] == "learned"
                   and len(CATALOG.claim(v["claim"]).claim.observe.variants) > 1
                   and not any(p.startswith(f"{v['claim']} at {v['profile']} ") for p in before))
    first, *rest = CATALOG.claim(verdict["claim"]).claim.observe.variants
    levels = _variant_levels(report, verdict)
    spec = CATALOG.specs[verdict["experiment"]]

    def at(variant: str, accuracy: float, fraction: float | None) -> dict:
        paper, source, own = paper_figure(spec, variant)
        return {"variant": variant, "label": variant, "paper": paper, "source": source, "own": own,
                "accuracy": accuracy, "chance": 10.0, "seeds": [], "fraction": fraction, "text": ""}

    others = [at(v, 10.0 + (paper_figure(spec, v)[0] - 10.0) * LEARNED, LEARNED) for v in rest]
    forged = {**verdict, "level": {**verdict["level"], "fraction": LEARNED,
                                   "variants": [at(first, 10.0 + (paper_figure(spec, first)[0] - 10.0) * 0.3, 0.3),
                                                *others]}}
    found = level_problems({**report, "verdicts": [forged]})
    assert any(f"while it reads {first} at 0.30" in p for p in found), found
    assert any("not the lowest of its variants' 0.3000" in p for p in found), found
    assert all(f is not None and f >= LEARNED for f in levels.values())  # the verdict as committed was not one


def test_a_header_of_other_code_or_fewer_profiles_is_found() -> None:
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    text, report, _ = _committed()
    first = _git("rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    old = {**report, "commit": first}
    forged = re.sub(r"at commit `[0-9a-f]+[^`]*`", f"at commit `{first[:12]}`", text, count=1)
    assert any("changed since" in p for p in header_problems(forged, old))
    dirty = re.sub(r"at commit `([0-9a-f]+)[^`]*`", r"at commit `\1+uncommitted changes`", text, count=1)
    assert any("is not REPORT.json's" in p for p in header_problems(dirty, report))
    assert any("profile extra" in p for p in header_problems(text, {**report, "archived": {
        **report["archived"], "extra": "x"}}))


def test_a_study_point_without_records_shown_as_skipped_and_a_repeated_line_are_found() -> None:
    text, report, pages = _committed()
    study = next(s for s in report["studies"] if any(p["verdict"] == "SKIPPED" for c in s["claims"]
                                                      for p in c["points"]))
    claim = next(c for c in study["claims"] if any(p["verdict"] == "SKIPPED" for p in c["points"]))
    point = next(p for p in claim["points"] if p["verdict"] == "SKIPPED")
    point.update(runs_recorded=0, runs_planned=4)
    page = f"### `{claim['claim']}`\n\n| {point['value']} | no observation | SKIPPED |\n"
    assert any(f"at {point['value']}: SKIPPED" in p for p in study_problems("", report, {study["study"]: page}))
    shown = page.replace("| SKIPPED |", "| no records here (0 of 4 runs) |")
    assert not any("SKIPPED" in p for p in study_problems("", report, {study["study"]: shown}))
    lines = text.splitlines()
    assert repeat_problems("\n".join([*lines[:5], lines[5], *lines[5:]]))


def test_a_paper_bound_too_long_for_a_cell_is_refused_naming_its_file_line_and_field(tmp_path: Path) -> None:
    import shutil

    from harness.loading.yamlsource import SpecError

    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    shutil.copytree(ROOT / "claims", tmp_path / "claims")
    text = (ROOT / "claims" / "hasfl.yaml").read_text(encoding="utf-8")
    old = '    paper_bound: "34.1 ± 10.2 points lower (Table 3)"'
    assert text.count(old) == 1
    (tmp_path / "claims" / "hasfl.yaml").write_text(text.replace(old, f'    paper_bound: "{"x" * 51}"'),
                                                    encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        load_catalog(tmp_path / "claims", tmp_path / "specs", tmp_path)
    (problem,) = [p for p in raised.value.problems if str(p.file) == "claims/hasfl.yaml"]
    assert str(problem.file) == "claims/hasfl.yaml" and problem.field.endswith("].paper_bound")
    assert problem.line == text[:text.index(old)].count("\n") + 1
    assert "5 to 50 characters" in problem.message and "(51)" in problem.message


def test_a_spread_of_rounding_noise_reads_zero_and_a_real_one_keeps_its_digits() -> None:
    from harness.statistics.series import Series

    equal = Series("FedHENet (accuracy)", {0: 59.8, 1: 59.8 + 1e-14, 2: 59.8})
    assert "59.8 ± 0 (n=3" in equal.text()
    spread = Series("FedAvg (accuracy)", {0: 40.8, 1: 40.7, 2: 38.1})
    assert "39.87 ± 1.531 (n=3" in spread.text()


def test_a_study_page_stating_another_interval_than_its_test_used_is_found() -> None:
    _, report, _ = _committed()
    study, claim, pct = next((s, c, found[0]) for s in report["studies"] for c in s["claims"] for p in c["points"]
                             if (found := re.findall(r"\b(\d+)% interval", p["reason"])))
    other = "90" if pct != "90" else "95"
    page = f"### `{claim['claim']}`\n\nEach point's verdict tested it (pooled, {{}}% interval).\n"
    assert any("does not state" in p for p in study_problems("", {"studies": [{**study, "claims": [claim]}]},
                                                             {study["study"]: page.format(other)}))
    assert not any("does not state" in p for p in study_problems("", {"studies": [{**study, "claims": [claim]}]},
                                                                 {study["study"]: page.format(pct)}))
