"""The sequential file (`<store>/sequential/<profile>.json`) only grows: the seeds and looks it
records are reused and never dropped, a later invocation continues the recorded plan whatever its
budget or selection, and the file is never left half-written or silently replaced."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import tests.synthetic_kind as synthetic_kind
from harness.cli import main
from harness.sequential import recorded, results, schedule
from harness.sequential.driver import AT_LIMIT, BUDGET, DECIDED, INTERRUPTED, NOT_TESTED, until_decided
from harness.verdicts.verify import PASS
from tests.test_sequential import (
    _by_claim,
    _quiet,
    _settings,
    _stop_after_one_added_seed,
    _stored_seeds,
)
from tests.test_sequential import project as project  # the fixture, re-exported for pytest


def _invoke(settings, **options):
    """One `verify --until-decided` invocation, as the CLI makes it: the driver, then the file written."""
    result = until_decided(settings, "smoke", console=_quiet(), **options)
    results.write(result, settings.store_dir)
    return result


def _file(settings) -> Path:
    return recorded.path_for(settings.store_dir, "smoke")


def _entries(settings) -> dict:
    return {c["claim"]: c for c in json.loads(_file(settings).read_text())["claims"]}


def _stand(entry: dict) -> tuple:
    """Where a claim's looks stand in the file: its seeds, look, α spent and why they stopped."""
    return entry["seeds"], entry["looks"], entry["alpha_spent"], entry["stopped"]


def _interrupt_at_the_second_choice(monkeypatch) -> None:
    """The invocation is interrupted (Ctrl-C) once its first added seed has been looked at."""
    choose, calls = schedule.choose, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return choose(*args, **kwargs)

    monkeypatch.setattr(schedule, "choose", interrupted)


def test_seeds_already_in_the_store_cost_nothing_so_a_spent_budget_still_reuses_them(project) -> None:
    """A new plan on a store that holds seeds 3-5 already (its file removed): `--budget 0` takes the
    looks on them, since they run nothing, instead of stopping at look 1 on seeds 0-2."""
    settings = _settings(project)
    _invoke(settings)
    _file(settings).unlink()
    result = _invoke(settings, budget_minutes=0.0)
    tracks = _by_claim(result)
    assert (tracks["syn.slow-above"].stopped, tracks["syn.slow-above"].seeds) == (DECIDED, [0, 1, 2, 3, 4])
    assert (tracks["syn.never-above"].stopped, tracks["syn.never-above"].look) == (AT_LIMIT, 4)
    assert result.execution.ran == 0 and result.stop == schedule.NOTHING_LEFT


def test_an_interrupted_invocation_records_the_looks_it_took(project, monkeypatch) -> None:
    settings = _settings(project)
    with monkeypatch.context() as patch:
        _interrupt_at_the_second_choice(patch)
        with pytest.raises(KeyboardInterrupt):
            until_decided(settings, "smoke", console=_quiet())
    data = json.loads(_file(settings).read_text())
    slow = _entries(settings)["syn.slow-above"]
    assert (slow["seeds"], slow["looks"], slow["stopped"]) == ([0, 1, 2, 3], 2, INTERRUPTED)
    # Seed 3 of slow, never and marginal ran.
    assert data["invocations"] == 1 and data["runs"]["ran"] == 3 and data["compute_seconds"] > 0
    # A later invocation with no budget left goes on from look 2, not from look 1 with a fresh α.
    later = _by_claim(_invoke(settings, budget_minutes=0.0))["syn.slow-above"]
    assert (later.seeds, later.look, later.stopped) == ([0, 1, 2, 3], 2, BUDGET)
    assert json.loads(_file(settings).read_text())["invocations"] == 2


def test_claims_not_selected_keep_their_entries_and_new_claims_join_the_plan(project, monkeypatch) -> None:
    settings = _settings(project)
    with monkeypatch.context() as patch:
        _stop_after_one_added_seed(patch)
        _invoke(settings, pattern="syn.(slow|never)-above")
    before = _entries(settings)
    assert _stand(before["syn.slow-above"])[:2] == ([0, 1, 2, 3], 2)
    clear = _invoke(settings, pattern="syn.clear-above")
    after = _entries(settings)
    assert after["syn.slow-above"] == before["syn.slow-above"] and after["syn.never-above"] == before["syn.never-above"]
    # A claim new to the plan that the profile decided never takes seeds: its one look is on the profile's.
    assert _stand(after["syn.clear-above"])[:2] == ([0, 1, 2], 1) and after["syn.clear-above"]["status"] == PASS
    assert _stored_seeds(clear, "clear") == [0, 1, 2]
    data = json.loads(_file(settings).read_text())
    assert data["experiments"]["noise"]["seeds"] == [0, 1, 2, 3] and data["invocations"] == 2
    # All claims again: the recorded ones go on from look 2.
    tracks = _by_claim(_invoke(settings))
    assert (tracks["syn.slow-above"].stopped, tracks["syn.slow-above"].look) == (DECIDED, 3)
    assert (tracks["syn.never-above"].stopped, tracks["syn.never-above"].seeds) == (AT_LIMIT, [0, 1, 2, 3, 4, 5])
    assert set(_entries(settings)) == {"syn.slow-above", "syn.never-above", "syn.clear-above",
                                       "syn.bystander-below", "syn.marginal-above"}


def test_cli_a_later_invocation_of_other_claims_keeps_the_recorded_ones(project, monkeypatch) -> None:
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(project / "cache"))
    monkeypatch.setenv("FEDCLAIMS_WORKERS", "1")
    monkeypatch.setenv("FEDCLAIMS_DOWNLOAD", "0")
    monkeypatch.delenv("FEDCLAIMS_STORE", raising=False)
    settings = _settings(project)
    verify = ["--root", str(project), "verify", "--profile", "smoke", "--until-decided", "--store",
              str(settings.store_dir)]
    assert main(verify + ["--claim", "syn.slow-above"]) == 0
    slow = _entries(settings)["syn.slow-above"]
    assert main(verify + ["--claim", "syn.never-above", "--budget", "0"]) == 0
    entries = _entries(settings)
    assert entries["syn.slow-above"] == slow and _stand(slow)[:2] == ([0, 1, 2, 3, 4], 3)
    # A claim new to the plan that the profile left INCONCLUSIVE is first looked at on the seeds its
    # experiment has by then (0-4: look 3, its runs of seeds 3 and 4 run to take it); no budget for seed 5.
    assert _stand(entries["syn.never-above"]) == ([0, 1, 2, 3, 4], 3, pytest.approx(_stand(slow)[2]), BUDGET)
    assert json.loads(_file(settings).read_text())["invocations"] == 2


def test_a_look_that_could_not_be_tested_goes_on_in_a_later_invocation(project, monkeypatch) -> None:
    """A run of an added seed that fails leaves the claim untested at that look; the next invocation
    runs it again and continues the claim, instead of keeping the ERROR for good."""
    run = synthetic_kind.run

    def failing_slow_seed_3(config, seed, context):
        if config.values[0] == 0.1 and seed == 3:
            raise RuntimeError("a worker died")
        return run(config, seed, context)

    settings = _settings(project)
    with monkeypatch.context() as patch:
        patch.setattr(synthetic_kind, "run", failing_slow_seed_3)
        _invoke(settings)
    assert (_entries(settings)["syn.slow-above"]["stopped"], _entries(settings)["syn.slow-above"]["looks"]) == (
        NOT_TESTED, 2)
    # Meanwhile the never variant took seeds 4 and 5: slow goes on at the look its experiment stands at.
    slow = _by_claim(_invoke(settings))["syn.slow-above"]
    assert (slow.verdict.status, slow.stopped, slow.seeds, slow.look) == (PASS, DECIDED, [0, 1, 2, 3, 4, 5], 4)


def test_a_write_that_would_lower_the_recorded_plan_is_refused(project, monkeypatch) -> None:
    settings = _settings(project)
    with monkeypatch.context() as patch:
        _stop_after_one_added_seed(patch)
        _invoke(settings)
    result = _invoke(settings, budget_minutes=0.0)
    written = _file(settings).read_text()
    slow = _by_claim(result)["syn.slow-above"]
    slow.seeds, slow.look = [0, 1, 2], 1
    with pytest.raises(ValueError, match=r"smoke\.json: claims: syn\.slow-above: not written, it would be "
                                         r"dropping seeds"):
        results.write(result, settings.store_dir)
    slow.seeds, slow.look = [0, 1, 2, 3], 2
    result.seeds["noise"] = [0, 1, 2]
    with pytest.raises(ValueError, match=r"experiments\.noise\.seeds: not written"):
        results.write(result, settings.store_dir)
    assert _file(settings).read_text() == written


def test_a_write_interrupted_midway_leaves_the_file_as_it_was(project, monkeypatch) -> None:
    settings = _settings(project)
    result = _invoke(settings, budget_minutes=0.0)
    written = _file(settings).read_bytes()
    write_text = Path.write_text

    def disk_full(self, text, *args, **kwargs):
        write_text(self, text[:len(text) // 2], *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", disk_full)
    with pytest.raises(OSError):
        results.write(result, settings.store_dir)
    assert _file(settings).read_bytes() == written
    assert sorted(p.name for p in _file(settings).parent.iterdir()) == ["smoke.json"]


def test_an_unreadable_or_corrupt_file_is_an_error_naming_it_and_is_left_as_it_is(project, monkeypatch) -> None:
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(project / "cache"))
    monkeypatch.setenv("FEDCLAIMS_DOWNLOAD", "0")
    settings = _settings(project)
    path = _file(settings)
    path.mkdir(parents=True)  # a directory where the file should be: it cannot be read
    with pytest.raises(ValueError, match=f"^{path}: <document>: cannot be read"):
        _invoke(settings)
    with pytest.raises(ValueError, match=f"^{path}: <document>: cannot be read"):
        results.load(settings.store_dir, "smoke")
    path.rmdir()
    path.write_text('{"profile": "smoke", "cla')
    verify = ["--root", str(project), "verify", "--profile", "smoke", "--until-decided", "--store",
              str(settings.store_dir)]
    assert main(verify) == 2 and path.read_text() == '{"profile": "smoke", "cla'
    with pytest.raises(ValueError, match=f"^{path}: <document>: not a sequential file"):
        results.load(settings.store_dir, "smoke")
