"""pytest plugin: every claim x profile is a test item; verdicts become outcomes.

Where claims come from: every `claims/*.yaml` pytest collects whose folder has a `specs/` folder beside it
(the project's own `claims/`, or a paper package's own claims folder given as an argument), and, in a session
that collects any claim, the claims of every installed paper (`fedclaims.papers` entry points): `pytest claims
-m <paper>` from the project runs a paper that lives in a package. Markers: `claim`, one per paper, one per
profile.

Node ids paste back: `claims/hasfl.yaml::<claim id>[<profile>]` for a project file, the claims file's path
relative to the rootdir (`../site-packages/<package>/claims/<file>.yaml::...`) for an installed paper's;
`pytest <node id>` runs that one claim. After collection the plugin prints one line counting the claim items
it will run (pytest's own count leaves out the installed papers' items, which join after it). The first claim
item verifies every collected claim of its project at once (one plan, one execution): the plugin says so, then
prints a line per finished run, as `fedclaims verify` does when its stderr is not a terminal, and the runs'
summary. At smoke, with the committed records read, it first retrains one golden run of every experiment the
claims read (`harness.running.sample`) and compares it with its committed record: a sample that differs fails
its experiment's claim items.

Options: --claims-profile (default smoke), --claims-baseline (default baselines/<profile>.json when it
exists; 'none' disables), --claims-workers, --claims-store. Outcomes: PASS passes, FAIL fails with the
reason, SKIPPED and INCONCLUSIVE skip with the reason, ERROR always errors (raised in setup). With a
baseline (which must be recorded for the same profile), the session's claims are checked
against it together (`harness.regression.baseline.check`: exactly under the baseline's numerics, as
distributions under other numerics, with one Holm correction over the session's series) and
every failure it reports for a claim fails its item: a changed verdict, numbers beyond the
tolerance or the measured drift, series or seeds it has not recorded. A fragile verdict (moved
under other numerics from near its boundary) passes with a warning. A FAIL the baseline records
is an expected failure (xfail). With --claims-against REV the session's claims are verified at the
git revision REV too, on this machine and into the same store, and each item fails where its
numbers or verdict differ from REV's, bit for bit (`harness.regression.against`), instead of being checked
against the baseline.
"""
from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path
from typing import IO, cast

import pytest

from harness.regression import baseline as baseline_io
from harness.verdicts.verify import Verdict

_STATE_KEY = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fedclaims", "claim verification")
    group.addoption("--claims-profile", action="append", default=[], help="profile(s) to verify (default smoke)")
    group.addoption("--claims-baseline", default=None,
                    help="regression baseline JSON (default baselines/<profile>.json if present; 'none' to disable)")
    group.addoption("--claims-workers", type=int, default=None, help="worker processes for the runs")
    group.addoption("--claims-store", default=None, help="results store folder")
    group.addoption("--claims-against", default=None, metavar="REV",
                    help="compare with the git revision REV computed on this machine, bit for bit, instead of "
                         "with the baseline")


def _profiles(config: pytest.Config) -> list[str]:
    return config.getoption("--claims-profile") or ["smoke"]


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STATE_KEY] = {}
    config.addinivalue_line("markers", "claim: a claim of a paper verified at a profile")


def _register_marker(config: pytest.Config, name: str, what: str) -> None:
    """A marker per paper (from its claim file) and per profile, registered as they are collected."""
    if name not in config.stash[_STATE_KEY].setdefault("markers", set()):
        config.stash[_STATE_KEY]["markers"].add(name)
        config.addinivalue_line("markers", f"{name}: claims of {what} '{name}'")


def _is_claims_file(path: Path) -> bool:
    return path.suffix == ".yaml" and path.parent.name == "claims" and (path.parent.parent / "specs").is_dir()


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if _is_claims_file(file_path):
        return ClaimsFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m` and `-k` deselect
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    """Where a session collects claims, the claims of installed papers (`fedclaims.papers`) join them:
    `pytest -m <paper>` from the project runs a paper that lives in a package."""
    collected = {item.path.resolve() for item in items if isinstance(item, ClaimItem)}
    if not collected:
        return
    from harness.loading.catalog import installed_papers
    for folder in installed_papers():
        for file in sorted((folder / "claims").glob("*.yaml")):
            if file.resolve() not in collected:
                joining = list(ClaimsFile.from_parent(session, path=file, nodeid=_pasteable(file, config)).collect())
                for item in joining:
                    item.joined = True
                items.extend(joining)


def _pasteable(file: Path, config: pytest.Config) -> str:
    """A file's node id that `pytest <node id>` collects again from the rootdir: its path relative to the
    rootdir (`..` where it lies outside), as pytest names a file given by a path outside the rootdir."""
    return Path(os.path.relpath(file, config.rootpath)).as_posix()


@pytest.hookimpl(trylast=True)  # first among the lines after pytest's own "collected N items"
def pytest_report_collectionfinish(config: pytest.Config, items: list) -> list[str]:
    """One line counting the claim items this session will run, since pytest's count leaves out those of
    the installed papers (they join after it)."""
    claims = [item for item in items if isinstance(item, ClaimItem)]
    if not claims:
        return []
    papers = sorted({item.paper for item in claims})
    joined = sum(item.joined for item in claims)
    profiles = sorted({item.profile for item in claims})
    distinct = len({item.claim_id for item in claims})
    return [f"fedclaims: {len(claims)} claim item{'s' if len(claims) != 1 else ''} to run "
            f"({distinct} claim{'s' if distinct != 1 else ''} of {', '.join(papers)} at {', '.join(profiles)}"
            + (f"; {joined} from installed papers, not in pytest's count above" if joined else "")
            + "); the first verifies them all, training what the store lacks"]


def _catalog(config: pytest.Config, root: Path):
    """The catalog of the project at `root`, loaded once per session (not once per claims file)."""
    state = config.stash[_STATE_KEY]
    key = ("catalog", root)
    if key not in state:
        from harness.loading.catalog import load_catalog
        catalog = load_catalog(root / "claims", root / "specs", root)
        catalog.check_profiles(_profiles(config))
        state[key] = catalog
    return state[key]


class ClaimsFile(pytest.File):
    def collect(self):
        root = self.path.parent.parent
        catalog = _catalog(self.config, root)
        for profile in _profiles(self.config):
            _register_marker(self.config, profile, "profile")
        for loaded in catalog.claims:
            if loaded.doc.file.name != self.path.name:
                continue
            _register_marker(self.config, loaded.paper, "paper")
            for profile in _profiles(self.config):
                item = ClaimItem.from_parent(self, name=f"{loaded.id}[{profile}]", claim_id=loaded.id,
                                             profile=profile, root=root, paper=loaded.paper)
                item.add_marker(pytest.mark.claim)
                item.add_marker(getattr(pytest.mark, loaded.paper))
                item.add_marker(getattr(pytest.mark, profile))
                yield item


class FragileVerdict(UserWarning):
    """A verdict that moved under other numerics from near its decision boundary (not a failure)."""


class ClaimFailure(Exception):
    """A claim did not hold, or moved away from its baseline."""


class ClaimError(Exception):
    """A run or an observation behind a claim failed."""


def _settings(item: ClaimItem):
    from harness.settings import Settings
    workers = item.config.getoption("--claims-workers")
    store = item.config.getoption("--claims-store")
    return Settings.from_env(item.root, workers=workers, store_dir=Path(store) if store else None)


def _session_claims(item: ClaimItem) -> list[str]:
    """The claims the session collected from the item's project (its own and the installed papers')."""
    return sorted({i.claim_id for i in item.session.items if isinstance(i, ClaimItem) and i.root == item.root})


def _verdicts(item: ClaimItem) -> dict[tuple[str, str], Verdict]:
    """Verify the collected claim items of each project once per session (one plan, one execution)."""
    state = item.config.stash[_STATE_KEY]
    key = ("verdicts", item.root)
    if key not in state:
        from harness.pipeline import verify
        claims, console = _session_claims(item), _session_console(item.config)
        console.print(f"fedclaims: verifying {len(claims)} claim{'s' if len(claims) != 1 else ''} of {item.root} "
                      f"at {', '.join(_profiles(item.config))}; a line per finished run")
        state[("sample", item.root)] = _retrained_sample(item, console)
        outcome = verify(_settings(item), profiles=_profiles(item.config), claim_ids=claims, console=console)
        console.print(f"fedclaims: {outcome.execution.text()}")
        if outcome.execution.ran and _settings(item).committed_records:
            console.print(f"fedclaims: {outcome.execution.ran} run(s) retrained: no committed record holds their key "
                          "today (a change re-keyed them, or they were never committed)")
        state[key] = {(v.claim, v.profile): v for v in outcome.verdicts}
    return state[key]


def _retrained_sample(item: ClaimItem, console) -> dict[str, str]:
    """At smoke, with the committed records read, one golden run of every experiment the session's claims read
    is retrained first (`harness.running.sample`), so the claims read it from the store instead of its committed
    record; the experiments whose sample differs from its record, each with why."""
    settings = _settings(item)
    if "smoke" not in _profiles(item.config) or not settings.committed_records:
        return {}
    from harness.running import sample
    from harness.running.bundle import store_for
    catalog, claims = _catalog(item.config, item.root), set(_session_claims(item))
    experiments = sorted({loaded.claim.experiment for loaded in catalog.claims if loaded.id in claims})
    outcomes, ran = sample.retrain(catalog, settings, store_for(settings), console, experiments)
    console.print(f"fedclaims: retrained a sample of {len(outcomes)} committed run{'s' if len(outcomes) != 1 else ''} "
                  f"(seed 0 of one variant of every experiment the claims read; {ran} now"
                  + (", the rest by an earlier session into this store" if ran < len(outcomes) else "")
                  + ") and compared each with its record: "
                  + ("; ".join(map(_sample_text, outcomes)) or "none"))
    return {o.request.experiment: o.text() for o in outcomes if o.failed}


def _sample_text(outcome) -> str:
    """A sample run's outcome, with the numerics it was compared across where they are not its record's."""
    across = [d.split(":")[0] for d in outcome.details if d.startswith("made under numerics")]
    return f"{outcome.run} {outcome.state}" + (f" ({across[0]})" if across else "")


class _TerminalLines(io.TextIOBase):
    """A text stream onto pytest's terminal, past its output capture, a whole line at a time."""

    def __init__(self, config: pytest.Config) -> None:
        self._config, self._pending = config, ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        reporter = self._config.pluginmanager.get_plugin("terminalreporter")
        capture = self._config.pluginmanager.get_plugin("capturemanager")
        if lines and reporter is not None:
            with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
                for line in lines:
                    reporter.write_line(line)
        return len(text)


def _session_console(config: pytest.Config):
    """What the session's runs say on the way (a line per finished run): pytest's terminal, not a terminal to
    rich, so no progress bar, and no line wrapped."""
    from rich.console import Console
    return Console(file=cast(IO[str], _TerminalLines(config)), highlight=False, color_system=None, soft_wrap=True)


def _baseline_check(item: ClaimItem, baseline: dict) -> baseline_io.Check:
    """One check per profile over every claim item of the session (the drift tests share one Holm)."""
    state = item.config.stash[_STATE_KEY]
    key = ("check", item.profile)
    if key not in state:
        verdicts = [v for (claim, profile), v in _verdicts(item).items() if profile == item.profile]
        state[key] = baseline_io.check(verdicts, baseline, complete=False, widen_unrecorded=True)
    return state[key]


def _against(item: ClaimItem):
    """The session's claims at the revision of --claims-against, compared with this tree's (per profile)."""
    from harness.regression import against
    state = item.config.stash[_STATE_KEY]
    key = ("against", item.profile)
    if key not in state:
        import re
        revision = item.config.getoption("--claims-against")
        pattern = "^(" + "|".join(re.escape(claim) for claim in _session_claims(item)) + ")$"
        commit, recorded, _ = against.revision_numbers(_settings(item), revision, item.profile, [], pattern)
        verdicts = [v for (claim, profile), v in _verdicts(item).items() if profile == item.profile]
        state[key] = against.compare(verdicts, recorded, commit)
    return state[key]


def _baseline(item: ClaimItem) -> dict | None:
    state = item.config.stash[_STATE_KEY]
    key = ("baseline", item.profile)
    if key not in state:
        option = item.config.getoption("--claims-baseline")
        path = Path(option) if option else item.root / "baselines" / f"{item.profile}.json"
        state[key] = None if option == "none" or not path.exists() else baseline_io.load(path)
        if state[key] is not None and state[key].get("profile") != item.profile:
            raise ClaimError(f"{path} records profile {state[key].get('profile')!r}, not {item.profile!r}")
    return state[key]


class ClaimItem(pytest.Item):
    def __init__(self, *, claim_id: str, profile: str, root: Path, paper: str, **kwargs):
        super().__init__(**kwargs)
        self.claim_id, self.profile, self.root, self.paper = claim_id, profile, root, paper
        self.joined = False
        """Whether the item joined the session after pytest counted what it collected (an installed paper's)."""
        self.verdict: Verdict | None = None

    def setup(self) -> None:
        self.verdict = _verdicts(self)[(self.claim_id, self.profile)]
        if self.verdict.status == "ERROR":
            raise ClaimError(self.verdict.reason)

    def runtest(self) -> None:
        verdict = self.verdict
        assert verdict is not None  # setup() set it
        self.user_properties.append(("verdict", verdict.status))
        differing = self.config.stash[_STATE_KEY].get(("sample", self.root), {})
        moved = differing and differing.get(_catalog(self.config, self.root).claim(self.claim_id).claim.experiment)
        if moved:
            raise ClaimFailure(f"its experiment's retrained sample differs from the committed record: {moved}")
        if self.config.getoption("--claims-against"):
            change = _against(self).claims.get(self.claim_id)
            if change is not None and change.moved:
                raise ClaimFailure(f"moved against {self.config.getoption('--claims-against')} (same numerics, bit "
                                   f"for bit): {change.text()}")
            if verdict.status == "FAIL":
                pytest.xfail(f"does not reproduce, as at {self.config.getoption('--claims-against')}: {verdict.reason}")
            baseline = None
        else:
            baseline = _baseline(self)
        if baseline is not None:
            result = _baseline_check(self, baseline).claims[self.claim_id]
            self.user_properties.append(("numerics", result.path))
            self.user_properties.append(("detects", result.detects))
            if result.failures:
                raise ClaimFailure(f"regression against the baseline ({result.path}): " + "; ".join(result.failures)
                                   + f"\nobserved: {verdict.observed}")
            for note in result.fragile:
                warnings.warn(FragileVerdict(f"{self.claim_id} [{self.profile}]: {note}"), stacklevel=1)
            if verdict.status == "FAIL":
                why = "; ".join(result.fragile) or "recorded in the baseline"
                pytest.xfail(f"does not reproduce ({why}): {verdict.reason}")
        if verdict.status == "FAIL":
            raise ClaimFailure(f"{verdict.reason}\nexpected: {verdict.expectation}\nobserved: {verdict.observed}")
        if verdict.status in ("SKIPPED", "INCONCLUSIVE"):
            pytest.skip(f"{verdict.status}: {verdict.reason}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (ClaimFailure, ClaimError)):
            return f"{self.claim_id} [{self.profile}]: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"claim {self.claim_id} [{self.profile}]"
