"""pytest plugin: every claim x profile is a test item; verdicts become outcomes.

Collected from the project's claims/*.yaml. Options: --claims-profile (default smoke),
--claims-baseline (default baselines/<profile>.json when it exists; 'none' disables),
--claims-workers, --claims-store. Outcomes: PASS passes, FAIL fails with the reason,
SKIPPED and INCONCLUSIVE skip with the reason, ERROR always errors (raised in setup). With a
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

import warnings
from pathlib import Path

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
                items.extend(ClaimsFile.from_parent(session, path=file).collect())


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
                                             profile=profile, root=root)
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
        outcome = verify(_settings(item), profiles=_profiles(item.config), claim_ids=_session_claims(item))
        state[key] = {(v.claim, v.profile): v for v in outcome.verdicts}
    return state[key]


def _baseline_check(item: ClaimItem, baseline: dict) -> baseline_io.Check:
    """One check per profile over every claim item of the session (the drift tests share one Holm)."""
    state = item.config.stash[_STATE_KEY]
    key = ("check", item.profile)
    if key not in state:
        verdicts = [v for (claim, profile), v in _verdicts(item).items() if profile == item.profile]
        state[key] = baseline_io.check(verdicts, baseline, complete=False)
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
    def __init__(self, *, claim_id: str, profile: str, root: Path, **kwargs):
        super().__init__(**kwargs)
        self.claim_id, self.profile, self.root = claim_id, profile, root
        self.verdict: Verdict | None = None

    def setup(self) -> None:
        self.verdict = _verdicts(self)[(self.claim_id, self.profile)]
        if self.verdict.status == "ERROR":
            raise ClaimError(self.verdict.reason)

    def runtest(self) -> None:
        verdict = self.verdict
        assert verdict is not None  # setup() set it
        self.user_properties.append(("verdict", verdict.status))
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
