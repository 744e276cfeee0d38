"""Evidence tried as an adversary would (issue 57): an edited or damaged sequential file, an
unexpected error in a command, a revision whose tree reaches outside it, a local data set that is
not the one its name says, and a `--claim` regex that backtracks for ever. Each is refused in one
line naming the input (exit code 2 from the command line), never a traceback, never a verdict."""
from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from PIL import Image

from harness import cli
from harness.cli import inspection
from harness.datasets import cifar10_source, local_copies, shakespeare_source
from harness.datasets.errors import DataCheckFailed
from harness.datasets.locations import DataLocations
from harness.loading.patterns import MAX_LENGTH, claim_matcher
from harness.report.sequential import sequential_entries, sequential_section
from harness.sequential import recorded, results
from harness.statistics import sequential_rule as rule

ROOT = Path(__file__).resolve().parents[1]
COMMITTED_PLAN = ROOT / "records" / "sequential" / "learning.json"


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


# --- the sequential file ---------------------------------------------------------------------

@pytest.fixture()
def plan(tmp_path: Path) -> tuple[Path, dict]:
    """A folder to hold a copy of the committed `learning` plan, and that plan."""
    if not COMMITTED_PLAN.is_file():
        pytest.skip("no committed sequential plan")
    return tmp_path / "records", json.loads(COMMITTED_PLAN.read_text(encoding="utf-8"))


def _refusal(folder: Path, data) -> str:
    """What the report's reader says of `data` written as the folder's plan (it must refuse it)."""
    path = recorded.path_for(folder, "learning")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError) as error:
        sequential_section([folder], "learning")
    message = str(error.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message[len(f"{path}: "):]


def _claim_index(data: dict, stopped: str) -> int:
    return next(i for i, claim in enumerate(data["claims"]) if claim["stopped"] == stopped)


def test_the_committed_plan_reads_as_it_is(plan) -> None:
    folder, data = plan
    path = recorded.path_for(folder, "learning")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    assert sequential_section([folder], "learning")
    read = recorded.read(folder, "learning")
    assert read is not None and read.claimed_seeds() == {e: v["seeds"] for e, v in data["experiments"].items()}


@pytest.mark.parametrize("damage, expected", [
    (lambda d: d["claims"][0]["plan"].update(looks=[]), "claims[0].plan.looks: a plan has at least one look"),
    (lambda d: d["claims"][0].pop("fixed_n"), "claims[0].fixed_n: missing"),
    (lambda d: d.update(claims={c["claim"]: c for c in d["claims"]}), "claims: expected a list, found {"),
    (lambda d: d["claims"][0].update(looks="5"), "claims[0].looks: expected an integer, found '5'"),
    (lambda d: d["claims"][0].update(planned_looks=None), "claims[0].planned_looks: expected a finite number"),
    (lambda d: d.update(budget_minutes="ten"), "budget_minutes: expected a finite number, found 'ten'"),
    (lambda d: d["claims"][0]["fixed_n"].update(status="GREEN"), "claims[0].fixed_n.status: not a verdict"),
], ids=["no-looks", "no-fixed-n", "claims-a-mapping", "look-a-string", "planned-looks-null", "budget-a-string",
        "unknown-status"])
def test_structural_damage_is_refused_by_name(plan, damage, expected) -> None:
    folder, data = plan
    damage(data)
    assert _refusal(folder, data).startswith(expected)


def test_an_alpha_other_than_the_rules_is_refused(plan) -> None:
    folder, data = plan
    edited = copy.deepcopy(data)
    edited["claims"][0]["plan"]["alpha"] = edited["claims"][0]["alpha"] = 0.5
    assert _refusal(folder, edited).startswith("claims[0].plan.looks[0].spent: 0.035 is not the α the rule spends "
                                               "by look 1 at α = 0.5")


def test_a_plan_recomputed_at_another_alpha_is_refused_against_the_claims(plan) -> None:
    """α 0.5 with every level and α spent the rule's at 0.5: the plan is consistent, but not at the α
    the claim tests at, which the report and the driver know."""
    folder, data = plan
    entry = data["claims"][0]
    looks = rule.Looks.plan(0.5, entry["plan"]["looks"][0]["seeds"], len(entry["plan"]["looks"]))
    for look, level, spent in zip(entry["plan"]["looks"], looks.levels, looks.spent):
        look.update(level=level, spent=spent)
    entry["plan"]["alpha"] = entry["alpha"] = 0.5
    entry.update(alpha_at_look=looks.level_at(entry["looks"]), alpha_spent=looks.spent_at(entry["looks"]))
    entry["fixed_n"]["alpha"] = looks.level_at(1)
    path = recorded.path_for(folder, "learning")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    assert recorded.read(folder, "learning") is not None  # consistent in itself
    with pytest.raises(ValueError) as error:
        sequential_entries([folder], ["learning"], lambda profile: {entry["claim"]: 0.05})
    assert str(error.value) == (f"{path}: claims.{entry['claim']}.plan.alpha: the plan is at α = 0.5, but the "
                                "claim tests at α = 0.05 at profile 'learning'")


def test_an_edited_status_is_refused_against_why_the_looks_ended(plan) -> None:
    folder, data = plan
    i = _claim_index(data, "no finite figure of the seeds that would decide it")
    data["claims"][i]["status"] = "FAIL"
    assert _refusal(folder, data) == (f"claims[{i}].status: FAIL where the looks ended as 'no finite figure of the "
                                      "seeds that would decide it', which leaves INCONCLUSIVE")


def test_more_seeds_than_the_look_is_on_are_refused(plan) -> None:
    """'PASS at 20 seeds' where the plan's looks reach 10 and the experiment's seeds are 0-9."""
    folder, data = plan
    i = _claim_index(data, "decided")
    data["claims"][i]["seeds"] = list(range(20))
    look = data["claims"][i]["looks"]
    planned = data["claims"][i]["plan"]["looks"][look - 1]["seeds"]
    assert _refusal(folder, data).startswith(f"claims[{i}].seeds: 20 seeds [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, "
                                             f"12, 13, 14, 15, 16, 17, 18, 19], but look {look} of the plan is on "
                                             f"{planned} distinct seeds")


def test_seeds_outside_the_experiments_are_refused(plan) -> None:
    folder, data = plan
    i = _claim_index(data, "decided")
    data["claims"][i]["seeds"] = [s + 100 for s in data["claims"][i]["seeds"]]
    assert _refusal(folder, data).startswith(f"claims[{i}].seeds: seeds [10")


def test_until_decided_refuses_a_damaged_store_plan_in_one_line(plan, tmp_path: Path, capsys) -> None:
    _, data = plan
    store = tmp_path / "store"
    data["claims"][0]["plan"]["looks"] = []
    path = recorded.path_for(store, "learning")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    code = cli.main(["--root", str(ROOT), "verify", "--profile", "learning", "--until-decided", "--store", str(store)])
    assert code == 2
    assert _one_line(capsys.readouterr().err) == (f"error: {path}: claims[0].plan.looks: a plan has at least one "
                                                  "look")


def test_loading_a_damaged_plan_for_the_terminal_is_refused(plan) -> None:
    folder, data = plan
    data["claims"][0]["fixed_n"] = {"status": "PASS"}
    path = recorded.path_for(folder, "learning")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"claims\[0\]\.fixed_n\.reason: missing"):
        results.load(folder, "learning")


# --- an unexpected error in a command --------------------------------------------------------

def _boom(args) -> int:
    return {"runs": "garbage"}["runs"]["key"]  # TypeError: string indices must be integers


def test_an_unexpected_error_is_one_line_naming_the_command(monkeypatch, capsys) -> None:
    monkeypatch.setattr(inspection, "cmd_validate", _boom)
    assert cli.main(["--root", str(ROOT), "validate"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"error: fedclaims --root {ROOT} validate: TypeError: string indices must be integers")
    assert line.endswith("(an unexpected error; --debug shows its traceback)")


def test_debug_shows_the_traceback(monkeypatch, capsys) -> None:
    monkeypatch.setattr(inspection, "cmd_validate", _boom)
    assert cli.main(["--debug", "--root", str(ROOT), "validate"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "in _boom" in err
    assert err.rstrip().splitlines()[-1].startswith("error: fedclaims --debug --root")


# --- baseline check --against a damaged revision ---------------------------------------------

def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=fedclaims tests", "-c", "user.email=tests@fedclaims.invalid", *args],
                   cwd=folder, check=True, capture_output=True)


@pytest.mark.parametrize("target", ["../../../outside.json", "/etc/passwd"], ids=["relative", "absolute"])
def test_a_revision_linking_out_of_its_tree_is_refused(tmp_path: Path, monkeypatch, capsys, target: str) -> None:
    project = tmp_path / "project"
    (project / "baselines").mkdir(parents=True)
    (project / "baselines" / "smoke.json").write_text("{}\n", encoding="utf-8")
    os.symlink(target, project / "baselines" / "standard.json")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "a revision whose baselines/ link out of the tree")
    cache = tmp_path / "cache"
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(cache))
    assert cli.main(["--root", str(project), "baseline", "check", "--against", "HEAD"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("error: --against HEAD (") and "its tree is refused, not extracted" in line
    assert "baselines/standard.json" in line
    assert not list((cache / "revisions").glob("*")), "nothing may be left in the cache"


# --- local data sets --------------------------------------------------------------------------

def _jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (90, 90, 90)).save(buffer, format="JPEG")
    return buffer.getvalue()


def _cifar_archive(path: Path, classes: tuple[str, ...], per_class: dict[str, int]) -> Path:
    image = _jpeg()
    with tarfile.open(path, "w:gz") as tar:
        for split, count in per_class.items():
            for name in classes:
                for k in range(count):
                    info = tarfile.TarInfo(f"cifar10-jpeg/{split}/{name}/{k:04d}.jpg")
                    info.size = len(image)
                    tar.addfile(info, io.BytesIO(image))
    return path


def _locations(tmp_path: Path) -> DataLocations:
    (tmp_path / "data").mkdir(exist_ok=True)
    return DataLocations(tmp_path / "data", tmp_path / "cache", download=False)


def test_a_fake_cifar10_archive_is_refused_by_name(tmp_path: Path) -> None:
    loc = _locations(tmp_path)
    archive = _cifar_archive(loc.data_dir / "cifar10-jpeg.tar.gz", ("cat", "dog"), {"train": 1, "test": 1})
    for read in (cifar10_source.fingerprint, cifar10_source.load):
        with pytest.raises(DataCheckFailed) as error:
            read(loc)
        message = str(error.value)
        assert message.startswith(f"{archive}: refused: its sha256 ") and "\n" not in message
        assert "train/ holds 2 classes (cat, dog), where CIFAR-10 has 10" in message
        assert "train/ holds 2 images, where CIFAR-10 has 50,000" in message
        assert "test/ holds 2 images, where CIFAR-10 has 10,000" in message
    assert not list(loc.cache_dir.glob("cifar10/jpeg-*")), "nothing decoded from a fake archive"


def test_the_command_line_refuses_a_fake_cifar10_archive(tmp_path: Path, capsys) -> None:
    loc = _locations(tmp_path)
    archive = _cifar_archive(loc.data_dir / "cifar10-jpeg.tar.gz", ("cat", "dog"), {"train": 1, "test": 1})
    code = cli.main(["--root", str(ROOT), "plan", "--profile", "smoke", "--paper", "fedrolex", "--store",
                     str(tmp_path / "store"), "--data", str(loc.data_dir)])
    assert code == 2
    assert _one_line(capsys.readouterr().err).startswith(f"error: {archive}: refused: its sha256 ")


def test_an_unpinned_archive_with_cifar10s_structure_is_read(tmp_path: Path, monkeypatch) -> None:
    """Structure, not bytes, where the digest is not pinned (the counts scaled down for the test)."""
    monkeypatch.setattr(local_copies, "CIFAR10_IMAGES", {"train": 20, "test": 10})
    loc = _locations(tmp_path)
    archive = _cifar_archive(loc.data_dir / "cifar10-jpeg.tar.gz", local_copies.CIFAR10_CLASSES,
                             {"train": 2, "test": 1})
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert cifar10_source.fingerprint(loc) == digest
    assert cifar10_source.load(loc).train_x.shape == (20, 32, 32, 3)
    monkeypatch.setattr(local_copies, "CIFAR10_IMAGES", {"train": 50_000, "test": 10_000})
    assert cifar10_source.fingerprint(loc) == digest, "a copy found good is remembered by its digest"


def test_a_fake_tiny_shakespeare_is_refused_by_name(tmp_path: Path) -> None:
    loc = _locations(tmp_path)
    text = loc.data_dir / "tinyshakespeare.txt"
    text.write_text("ROMEO:\nBut soft.\n\nJULIET:\nAy me.\n", encoding="utf-8")
    with pytest.raises(DataCheckFailed) as error:
        shakespeare_source.fingerprint(loc)
    assert str(error.value).startswith(f"{text}: refused: its sha256 ")
    assert f"{text.stat().st_size} bytes, where the corpus has 1,115,394" in str(error.value)


def test_a_long_text_without_the_corpus_roles_is_refused(tmp_path: Path) -> None:
    loc = _locations(tmp_path)
    text = loc.data_dir / "tinyshakespeare.txt"
    text.write_text("ROMEO:\n" + "But soft, what light. " * 60_000 + "\n", encoding="utf-8")
    with pytest.raises(DataCheckFailed, match="1 roles speak 10,000 characters or more, where the corpus's 20"):
        shakespeare_source.fingerprint(loc)


@pytest.mark.parametrize("name", sorted(local_copies.PINNED))
def test_the_pinned_digests_are_those_of_the_real_files(name: str) -> None:
    folder = os.environ.get("FEDCLAIMS_DATA", "")
    path = Path(folder) / name
    if not folder or not path.is_file():
        pytest.skip(f"no {name} in FEDCLAIMS_DATA")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == local_copies.PINNED[name]


# --- --claim patterns -------------------------------------------------------------------------

def test_nested_quantifiers_answer_at_once_from_the_command_line(tmp_path: Path) -> None:
    pattern = "([a-z.-]+)+!"
    done = subprocess.run([sys.executable, "-m", "harness.cli", "--root", str(ROOT), "verify", "--claim", pattern,
                           "--store", str(tmp_path / "store")], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith(f"error: --claim {pattern!r}: the group before '+' (at character 10) holds a repeat")
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("pattern, why", [
    ("(a|ab)*c", "holds a repeat or an alternation and is itself repeated"),
    ("(?:x+){2,}", "holds a repeat or an alternation and is itself repeated"),
    ("^.*.*.*.*!", "4 repeats (*, +, {m,n}) and 0 optional parts (?), more than the 3 and 8"),
    ("x" * (MAX_LENGTH + 1), f"{MAX_LENGTH + 1} characters, more than the {MAX_LENGTH}"),
])
def test_regexes_that_could_backtrack_for_long_are_refused(pattern: str, why: str) -> None:
    with pytest.raises(ValueError, match=r"^--claim '") as error:
        claim_matcher(pattern)
    assert why in str(error.value)


@pytest.mark.parametrize("pattern, matching, other", [
    ("fedrolex.*", "fedrolex.accuracy.x", "hasfl.fedrolex.x"),
    ("hasfl.table[34].*", "hasfl.table3.cifar10.a", "hasfl.table5.cifar10.a"),
    ("^(fedrolex|hasfl)\\.accuracy\\.(low|high)", "hasfl.accuracy.low-x", "hasfl.accuracies.low"),
    ("(?:table)+6", "hasfl.table6.x", "hasfl.table5.x"),
    ("x\\d{2,3}y?", "ax12b", "ax1b"),
])
def test_ordinary_globs_and_regexes_still_select(pattern: str, matching: str, other: str) -> None:
    matches = claim_matcher(pattern)
    assert matches(matching) and not matches(other)
