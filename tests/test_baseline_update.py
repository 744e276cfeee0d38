"""`baseline update` of a selection rewrites the selected claims' entries and nothing else: every
other entry and section keeps its text byte for byte, hand-made formatting included."""
from __future__ import annotations

import difflib
import json
import random
import shutil
from pathlib import Path

import pytest

from harness import cli
from harness import numerics as numerics_module
from harness.regression import baseline, baseline_update
from harness.regression.jsonedit import edited

REPO = Path(__file__).resolve().parents[1]
SELECTED = ["hasfl.alloc.cap-at-0.4-for-tier-0.5", "hasfl.alloc.cap-at-1.4-for-tier-0.75",
            "hasfl.alloc.cap-at-2.4-for-tier-1.0"]  # three one-seed analytic runs
HAND_MADE = "hasfl.alloc.constant-at-the-cap"  # an entry someone reformatted by hand


def _span(lines: list[str], key: str, indent: str) -> range:
    """The lines of one member of an indent=1 JSON object: its key's line to its closing brace."""
    start = lines.index(f'{indent}"{key}": {{')
    end = next(i for i in range(start + 1, len(lines)) if lines[i] in (f"{indent}}}", f"{indent}}},"))
    return range(start, end + 1)


def _changed_lines(old: list[str], new: list[str]) -> tuple[set[int], set[int]]:
    """The line numbers of `old` a line diff removes and of `new` it adds."""
    removed, added = set(), set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed.update(range(i1, i2))
            added.update(range(j1, j2))
    return removed, added


def _hand_edited_copy(path: Path) -> tuple[dict, str]:
    """The committed smoke baseline with the selected entries stale, one other entry on one line and a
    section of someone's own: what a file that people edit and merge looks like."""
    data = json.loads((REPO / "baselines" / "smoke.json").read_text(encoding="utf-8"))
    assert set(SELECTED) | {HAND_MADE} <= set(data["claims"])
    for claim in SELECTED:
        data["claims"][claim]["status"] = "FAIL"
        data["claims"][claim]["reason"] = "stale: recorded before the change under review"
    text = json.dumps(data, indent=1, allow_nan=False) + "\n"
    lines = text.splitlines()
    hand = _span(lines, HAND_MADE, "  ")
    one_line = json.dumps(data["claims"][HAND_MADE], separators=(", ", ": "))
    lines[hand.start:hand.stop] = [f'  "{HAND_MADE}":  {one_line},']
    lines.insert(1, ' "review": "entries of hasfl.alloc re-recorded in PR 42",')
    text = "\n".join(lines) + "\n"
    path.write_text(text, encoding="utf-8")
    return json.loads(text), text


def _without_members(lines: list[str], keys: set[str], indent: str) -> list[str]:
    """`lines` with the members `keys` of an indent=1 JSON object taken out, as if never added: where the
    last member is taken out, the one before it loses the comma it gained."""
    lines = list(lines)
    for key in sorted(keys):
        member = _span(lines, key, indent)
        was_last = not lines[member.stop - 1].endswith(",")
        del lines[member.start:member.stop]
        if was_last:
            lines[member.start - 1] = lines[member.start - 1].removesuffix(",")
    return lines


def test_update_of_a_selection_changes_only_the_selected_entries_lines(tmp_path: Path, capsys) -> None:
    _update_changes_only_the_selected_entries_lines(tmp_path, capsys)


def _unrecorded_fingerprints() -> dict[str, str]:
    """Fingerprints no committed smoke baseline holds, at each place a new one can take among the recorded
    (sorted) ones: first, right after the first, last."""
    recorded = sorted(json.loads((REPO / "baselines" / "smoke.json").read_text(encoding="utf-8"))["numerics"])
    places = {"first": "0" * 16, "after-the-first": f"{int(recorded[0], 16) + 1:016x}", "last": "f" * 16}
    assert not set(places.values()) & set(recorded)
    return places


@pytest.mark.parametrize("place", ["first", "after-the-first", "last"])
def test_update_on_a_machine_no_baseline_records_changes_only_the_selected_entries_lines(
        tmp_path: Path, capsys, monkeypatch, place: str) -> None:
    """This machine's numerics under a fingerprint the baseline does not hold: the update adds its
    description beside the recorded ones, and nothing else moves."""
    fingerprint = _unrecorded_fingerprints()[place]
    described = numerics_module._numerics

    def unrecorded(*args) -> dict:
        return {**described(*args), "fingerprint": fingerprint}
    monkeypatch.setattr(numerics_module, "_numerics", unrecorded)
    after = _update_changes_only_the_selected_entries_lines(tmp_path, capsys)
    assert fingerprint in after["numerics"]


def _update_changes_only_the_selected_entries_lines(tmp_path: Path, capsys) -> dict:
    """Update the selection in a hand-edited copy of the smoke baseline and check its text line by line."""
    path = tmp_path / "smoke.json"
    before, text = _hand_edited_copy(path)
    assert cli.main(["--root", str(REPO), "baseline", "update", "--claim", "hasfl.alloc.cap-at-*", "--baseline",
                     str(path), "--store", str(tmp_path / "store"), "--executor", "local"]) == 0
    after_text = path.read_text(encoding="utf-8")
    after = json.loads(after_text)
    for claim in SELECTED:
        assert after["claims"][claim]["status"] == "PASS"  # the stale entries were re-recorded

    # This machine's numerics, where the baseline did not hold them, are a member of their own: taken out
    # before the line diff, which would otherwise match their lines with those of the recorded members.
    added_numerics = set(after["numerics"]) - set(before["numerics"])
    old, new = text.splitlines(), _without_members(after_text.splitlines(), added_numerics, "  ")
    removed, added = _changed_lines(old, new)
    assert removed and added
    allowed_old = {i for claim in SELECTED for i in _span(old, claim, "  ")}
    allowed_new = {i for claim in SELECTED for i in _span(new, claim, "  ")}
    assert removed <= allowed_old, [old[i] for i in sorted(removed - allowed_old)]
    assert added <= allowed_new, [new[i] for i in sorted(added - allowed_new)]
    assert {k: v for k, v in after.items() if k != "claims" and k != "numerics"} == \
        {k: v for k, v in before.items() if k != "claims" and k != "numerics"}
    assert all(after["numerics"][fp] == description for fp, description in before["numerics"].items())
    assert f'  "{HAND_MADE}":  {{' in after_text  # the hand-made line, byte for byte
    assert capsys.readouterr().err.count("wrote") == 1
    return after


# --- the text edit itself -----------------------------------------------------------------


def _canonical(data) -> str:
    return json.dumps(data, indent=1) + "\n"


def test_an_unchanged_document_keeps_its_text_whatever_its_formatting() -> None:
    old = '{"a":  1,\n   "b": {"c": [1, 2],   "d": "x"}, "e": true}'
    assert edited(old, _canonical(json.loads(old))) == old


def test_only_changed_members_take_the_new_text() -> None:
    old = '{"a":  1,\n   "b": {"c": [1, 2],   "d": "x"}, "e": true}'
    data = {"a": 1, "b": {"c": [1, 2], "d": "y"}, "e": True, "f": None}
    text = edited(old, _canonical(data))
    assert json.loads(text) == data
    assert text.startswith('{"a":  1,\n   "b": {"c": [1, 2],   "d": "y"}')  # d's value only, in place


@pytest.mark.parametrize("value", [1.0, True, "1", [1], {"1": 1}])
def test_a_value_that_equals_the_old_only_in_python_is_rewritten(value) -> None:
    assert json.loads(edited('{"a": 1}', _canonical({"a": value})))["a"] == value
    assert type(json.loads(edited('{"a": 1}', _canonical({"a": value})))["a"]) is type(value)


def test_reordered_inserted_and_removed_members_read_back_as_the_new_document() -> None:
    generator = random.Random(7)
    old_data = {f"k{i}": {"v": i, "list": list(range(i % 4)), "nested": {"x": i, "y": [i, {"z": i}]}}
                for i in range(30)}
    old = _canonical(old_data)
    for _ in range(200):
        data = json.loads(old)
        for key in generator.sample(sorted(data), 5):
            match generator.randrange(4):
                case 0:
                    del data[key]
                case 1:
                    data[key]["nested"]["y"][1]["z"] = "changed"
                case 2:
                    data[key]["list"] = []
                case 3:
                    data[f"{key}-new"] = {"fresh": [1, {"a": None}]}
        if generator.random() < 0.3:
            data = dict(sorted(data.items(), reverse=True))
        text = edited(old, _canonical(data))
        assert json.dumps(json.loads(text)) == json.dumps(data)
        if list(data) == [k for k in old_data if k in data]:  # same order: removals and changes only
            removed, _ = _changed_lines(old.splitlines(), text.splitlines())
            changed = {k for k in old_data if k not in data or data[k] != old_data[k]}
            assert len(removed) <= sum(len(_canonical(old_data[k]).splitlines()) + 1 for k in changed)


def test_writing_a_baseline_over_a_file_keeps_the_text_of_what_did_not_change(tmp_path: Path) -> None:
    path = tmp_path / "smoke.json"
    shutil.copy(REPO / "baselines" / "smoke.json", path)
    data = baseline.load(path)
    text = path.read_text(encoding="utf-8")
    baseline_update.write(path, data)
    assert path.read_text(encoding="utf-8") == text
    data["claims"][SELECTED[0]]["reason"] = "moved"
    baseline_update.write(path, data)
    removed, added = _changed_lines(text.splitlines(), path.read_text(encoding="utf-8").splitlines())
    assert len(removed) == len(added) == 1
