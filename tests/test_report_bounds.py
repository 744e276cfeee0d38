"""Every bound REPORT.md shows is the one its verdict tested, with the paper's beside it, labelled,
where they differ (issue 21, item 1); the report is rendered from the observations the committed
REPORT.json recorded, and the committed REPORT.md is checked the same way."""
import re
from pathlib import Path

import pytest

from harness.loading.catalog import load_catalog
from harness.pipeline import verify
from harness.report.digest import MAX_LINES, bound_text
from harness.report.markdown import render
from harness.settings import Settings
from harness.verdicts.archive import load_archive

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "claims", ROOT / "specs", ROOT)
ROW = re.compile(r"^- \[`(?P<claim>[a-z0-9._-]+)`\]")
DIGEST_ROW = re.compile(r"^\| \[.*?\]\([^)]*#claim-[a-z0-9-]+\) \|")
PROFILE = re.compile(r"^\*\*At `(?P<profile>[^`]+)`\*\*")
TESTED = re.compile(r"tested: (?P<tested>.+?)(?: \(the paper's\)|; the paper: (?P<paper>.+?), not tested at this scale)"
                    r"(?: —|\)|;|$)")


def _labels(claim_id: str) -> dict[str, str]:
    experiment = CATALOG.claim(claim_id).claim.experiment
    return {name: v.label or name for name, v in CATALOG.specs[experiment].spec.variants.items()}


def _expected(claim_id: str, profile: str) -> tuple[str, str]:
    expect = CATALOG.claim(claim_id).claim.expect
    return (bound_text(expect.get(profile), _labels(claim_id)),
            bound_text(expect.get("paper"), _labels(claim_id)))


def _items(text: str) -> list[tuple[int, str]]:
    """The report's lines, each list item joined with its indented sub-items, by its first line's number."""
    items: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("  - ") and items and items[-1][1].startswith("- "):
            items[-1] = (items[-1][0], f"{items[-1][1]}; {line[4:]}")
        else:
            items.append((number, line))
    return items


def finding_problems(text: str) -> list[str]:
    """Rows of the findings whose displayed bound is not the tested one, or whose paper bound is
    shown without the label where it differs."""
    problems, profile = [], None
    studies = False
    for number, line in _items(text):
        if match := PROFILE.match(line):
            profile, studies = match["profile"], False
        if line.startswith("**Along the scale studies**"):
            studies = True
        row = ROW.match(line)
        if not row or profile is None:
            continue
        if studies:  # a study's rows test its base profile's bound at every point, and say so
            if "each point tested: " not in line:
                problems.append(f"line {number}: {row['claim']} along a study: no tested bound shown")
            continue
        claim = row["claim"]
        tested = TESTED.search(line)
        want_tested, want_paper = _expected(claim, profile)
        if tested is None:
            problems.append(f"line {number}: {claim} at {profile}: no tested bound shown")
        elif tested["tested"] != want_tested:
            problems.append(f"line {number}: {claim} at {profile}: shows {tested['tested']!r}, tested {want_tested!r}")
        elif want_paper != want_tested and profile != "paper" and tested["paper"] != want_paper:
            problems.append(f"line {number}: {claim} at {profile}: the paper's {want_paper!r} "
                            "is not labelled beside it")
        if "the paper:" in line and "not tested at this scale" not in line:
            problems.append(f"line {number}: {claim} at {profile}: a paper bound without its label")
    return problems


def digest_problems(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index("## Digest")
    end = next(i for i, line in enumerate(lines) if line.startswith("## ") and i > start)
    problems = [] if end <= MAX_LINES else [f"the digest ends at line {end}, past {MAX_LINES}"]
    for number, line in enumerate(lines[start:end], start + 1):
        if not DIGEST_ROW.match(line):
            continue
        anchor = re.search(r"#claim-([a-z0-9-]+)\)", line)[1]
        claim = next(c.id for c in CATALOG.claims if c.id.replace(".", "-") == anchor)
        scale = re.search(r"\| `(?P<profile>[^`]+)`: ", line)
        if scale is None:
            continue
        tested = TESTED.search(line)
        want_tested, _ = _expected(claim, scale["profile"])
        if tested is None or tested["tested"] != want_tested:
            problems.append(f"digest line {number}: {claim}: shows {tested and tested['tested']!r}, "
                            f"tested {want_tested!r}")
    return problems


def detail_problems(text: str, profiles: list[str]) -> list[str]:
    """Each detail table's 'expectation tested' cell is the verdict's tested expectation (at its level)."""
    problems, claim = [], None
    for number, line in enumerate(text.splitlines(), 1):
        if heading := re.match(r"^## `([a-z0-9._-]+)`", line):
            claim = heading[1]
        cells = [c.strip() for c in line.split(" | ")]
        if claim is None or not line.startswith("| ") or cells[0][2:] not in profiles:
            continue
        profile = cells[0][2:]
        loaded = CATALOG.claim(claim).claim
        expectation = loaded.expect.get(profile)
        tested = expectation.at_level() if expectation is not None else None
        want = tested.describe(loaded.observe) if tested else "none"  # at the profile's level, 0.7 α
        if not cells[1].startswith(" ".join(want.split()).replace("|", "\\|")):
            problems.append(f"line {number}: {claim} at {profile}: shows {cells[1][:80]!r}, tested {want!r}")
    return problems


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[Path, str]:
    """REPORT.md and detail files re-verified from the committed REPORT.json's observations."""
    folder = tmp_path_factory.mktemp("report")
    settings = Settings(root=ROOT, store_dir=folder / "store", cache_dir=folder / "cache", data_dir=None)
    archive = load_archive(ROOT / "REPORT.json")
    outcome = verify(settings, profiles=(), run=False, archive=archive, archived=tuple(archive.profiles()))
    return render(outcome, settings, folder / "REPORT.md", folder / "figures")


@pytest.mark.integration
def test_every_bound_shown_is_the_tested_one(rendered) -> None:
    report = next(text for path, text in rendered.items() if path.name == "REPORT.md")
    assert finding_problems(report) == [] and digest_problems(report) == []
    for path, text in rendered.items():
        if path.parent.name == "report" and path.stem in CATALOG.papers:
            assert detail_problems(text, ["smoke", "standard", "learning", "paper"]) == [], path.name


@pytest.mark.integration
def test_the_checker_catches_a_paper_bound_shown_as_tested(rendered) -> None:
    report = next(text for path, text in rendered.items() if path.name == "REPORT.md")
    energy = "fedhenet.energy.about-70-percent-saved"
    shown = "  - tested: > 0; the paper: in [0.63, 0.77], not tested at this scale"
    lines = report.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith(f"- [`{energy}`]"))
    block = lines[row + 1:next(i for i in range(row + 1, len(lines)) if not lines[i].startswith("  "))]
    assert shown in block  # after its observation, and the proxy's line where its energy is one
    forged = report.replace(shown, "  - tested: in [0.63, 0.77] (the paper's)")
    assert forged != report and any(energy in problem for problem in finding_problems(forged))


def test_the_committed_report_shows_only_tested_bounds() -> None:
    report = (ROOT / "REPORT.md").read_text(encoding="utf-8")
    assert finding_problems(report) == [] and digest_problems(report) == []
    assert report.splitlines().index("## Digest") < 10, "the digest opens the report"
    for paper in CATALOG.papers:
        detail = (ROOT / "report" / f"{paper}.md").read_text(encoding="utf-8")
        assert detail_problems(detail, ["smoke", "standard", "learning", "paper"]) == [], paper


@pytest.mark.integration
def test_each_paper_page_lists_what_it_does_not_check(rendered) -> None:
    report = next(text for path, text in rendered.items() if path.name == "REPORT.md")
    for paper, claim_file in CATALOG.papers.items():
        detail = next(text for path, text in rendered.items() if path.name == f"{paper}.md")
        section = detail[detail.index("## Not checked here"):]
        for item in claim_file.unchecked:
            for text in (item.statement, item.reason):
                assert " ".join(text.split())[:60].replace("|", "\\|") in section, text[:60]
        assert f"Not checked here: {len(claim_file.unchecked)} assertion(s)" in report


HEADER_LINES, HEADER_WIDTH, PROSE_WIDTH, DIGEST_CELL = 3, 200, 300, 160


def first_screen_problems(text: str) -> list[str]:
    """The first screen in plain words (issue 39): a header of at most three short lines before the
    digest, no prose line over 300 characters in the first 100, digest cells under 160, and the one
    verdict vocabulary (no 'undecided')."""
    lines = text.splitlines()
    digest = lines.index("## Digest")
    end = next(i for i, line in enumerate(lines) if line.startswith("## ") and i > digest)
    header = [line for line in lines[:digest] if line]
    problems = [f"the header has {len(header)} lines, more than {HEADER_LINES}"] if len(header) > HEADER_LINES else []
    problems += [f"header line {n}: {len(line)} characters" for n, line in enumerate(lines[:digest], 1)
                 if len(line) > HEADER_WIDTH]
    problems += [f"line {n}: {len(line)} characters of prose" for n, line in enumerate(lines[:100], 1)
                 if len(line) > PROSE_WIDTH and not line.startswith("|")]
    for n, line in enumerate(lines[digest:end], digest + 1):
        if line.startswith("| "):
            problems += [f"digest line {n}: a cell of {len(cell)} characters" for cell in line.split(" | ")
                         if len(cell) >= DIGEST_CELL]
        if re.search(r"\bundecided\b", line):
            problems.append(f"digest line {n} says 'undecided' where the verdict is INCONCLUSIVE")
    return problems


@pytest.mark.integration
def test_the_first_screen_reads(rendered) -> None:
    report = next(text for path, text in rendered.items() if path.name == "REPORT.md")
    assert first_screen_problems(report) == []


@pytest.mark.integration
def test_the_first_screen_check_catches_a_long_header_and_an_old_word(rendered) -> None:
    report = next(text for path, text in rendered.items() if path.name == "REPORT.md")
    lines = report.splitlines()
    lines.insert(3, "x" * 201)
    digest_row = next(i for i, line in enumerate(lines) if DIGEST_ROW.match(line))
    lines[digest_row] = lines[digest_row].replace("PASS", "undecided", 1).replace("INCONCLUSIVE", "undecided", 1)
    problems = first_screen_problems("\n".join(lines))
    assert any("header line 4: 201" in p for p in problems) and any("undecided" in p for p in problems)


def test_the_committed_first_screen_reads() -> None:
    assert first_screen_problems((ROOT / "REPORT.md").read_text(encoding="utf-8")) == []
