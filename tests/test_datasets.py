"""Dataset loaders: parsers on inline text, the JPEG loader on a tiny tar, and clear failures."""
from __future__ import annotations

import hashlib
import io
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from harness import provenance
from harness.datasets import cifar10 as cifar10_module
from harness.datasets import local_copies
from harness.datasets.cifar10_source import load as load_cifar10
from harness.datasets.emnist import upright
from harness.datasets.emnist_source import load as load_emnist
from harness.datasets.errors import DatasetUnavailable
from harness.datasets.locations import DataLocations
from harness.datasets.registry import dataset_fingerprint, load_dataset
from harness.datasets.shakespeare import VOCAB, build_text_data, encode, parse_gutenberg, parse_role_text, role_samples
from harness.datasets.shakespeare_source import load as load_shakespeare

ROLE_TEXT = """First Citizen:
Before we proceed any further,
hear me speak.

All:
Speak, speak.

First Citizen:
You are all resolved\trather to die?


MENENIUS:
Why, masters — my good friends.
"""


def decode(codes: np.ndarray) -> str:
    return "".join(VOCAB[int(c)] for c in codes)


# --- Shakespeare ---------------------------------------------------------------------------

def test_role_parser_joins_lines_and_normalises() -> None:
    roles = parse_role_text(ROLE_TEXT)
    assert list(roles) == ["First Citizen", "All", "MENENIUS"]
    assert roles["First Citizen"] == ("Before we proceed any further, hear me speak. "
                                      "You are all resolved rather to die?")
    assert roles["All"] == "Speak, speak."
    # the non-ASCII dash becomes a space, and the spaces around it collapse to one
    assert roles["MENENIUS"] == "Why, masters my good friends."


def test_vocab_and_encoding() -> None:
    assert len(VOCAB) == 95 and VOCAB[0] == " " and VOCAB[-1] == "~"
    np.testing.assert_array_equal(encode("a\nb"), [65, 0, 66])


def test_windows_and_temporal_split() -> None:
    text = "".join(VOCAB[i % 95] for i in range(105))
    role = role_samples("R", text, seq_len=5)
    n = 105 - 5
    n_train = int(0.8 * n)
    assert role.train_x.shape == (n_train, 5) and role.train_y.shape == (n_train,)
    assert role.test_x.shape == (n - n_train - 5, 5)
    assert role.train_x.dtype == np.int64 and role.test_y.dtype == np.int64
    for i in (0, 17, n_train - 1):
        assert decode(role.train_x[i]) == text[i:i + 5]
        assert decode([role.train_y[i]]) == text[i + 5]
    assert decode(role.test_x[0]) == text[n_train + 5:n_train + 10]
    assert decode(role.test_x[-1]) + decode([role.test_y[-1]]) == text[-6:]
    last_train_char = n_train - 1 + 5  # the target of the last training window
    assert last_train_char < n_train + 5  # first character of the first test window


def test_build_keeps_longest_roles_in_order() -> None:
    roles = {"short": "a" * 30, "long": "b" * 60, "mid": "c" * 45, "mid2": "d" * 45}
    data = build_text_data(roles, num_roles=3, seq_len=4, fingerprint="f")
    assert data.role_names == ("long", "mid", "mid2")
    assert [len(r.train_y) + len(r.test_y) + 4 for r in data.roles] == [56, 41, 41]
    with pytest.raises(ValueError, match="only 4"):
        build_text_data(roles, num_roles=5, seq_len=4, fingerprint="f")


def test_gutenberg_parser_follows_leaf_layout() -> None:
    text = "\n".join([
        "THE SONNETS", "", "by William Shakespeare", "", "  From fairest creatures we desire increase,",
        "", "THE TRAGEDY OF TESTING", "", "by William Shakespeare", "",
        "  HAMLET. To be, or not to be:", "    that is the question.", "",
        "  Enter OPHELIA.", "  OPHELIA. Good my lord,", "    How does your honour?",
        "  Hamlet. I humbly thank you.", "", "THE POEM", "", "by William Shakespeare", "",
        "  LOVER. Only one speaker here.",
    ])
    roles = parse_gutenberg(text)
    assert roles == {
        "THE_TRAGEDY_OF_TESTING_HAMLET": "To be, or not to be: that is the question. I humbly thank you.",
        "THE_TRAGEDY_OF_TESTING_OPHELIA": "Good my lord, How does your honour?",
    }


def pin(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Take the small local copy at `path` as its data set (its digest pinned), as the real one is."""
    monkeypatch.setitem(local_copies.PINNED, path.name, hashlib.sha256(path.read_bytes()).hexdigest())


def test_shakespeare_from_local_role_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "tinyshakespeare.txt").write_text(ROLE_TEXT)
    pin(monkeypatch, data_dir / "tinyshakespeare.txt")
    loc = DataLocations(data_dir, tmp_path / "cache", download=False)
    data = load_shakespeare(loc, num_roles=2, seq_len=8)
    assert data.role_names == ("First Citizen", "MENENIUS")
    expected = hashlib.sha256(ROLE_TEXT.encode()).hexdigest()
    assert data.fingerprint == expected == dataset_fingerprint("shakespeare", loc)


# --- CIFAR-10 JPEG archive -------------------------------------------------------------------

CLASSES = ("bird", "airplane")  # written unsorted; the loader must sort them


def write_jpeg_tar(path: Path) -> None:
    """Solid-colour 32x32 JPEGs whose grey level encodes (split, class, file index)."""
    with tarfile.open(path, "w:gz") as tar:
        for split, count in (("test", 2), ("train", 3)):
            for c, cls in enumerate(CLASSES):
                for k in reversed(range(count)):  # written out of order on purpose
                    level = 40 * k + 120 * c + (10 if split == "test" else 0)
                    buf = io.BytesIO()
                    Image.new("RGB", (32, 32), (level,) * 3).save(buf, format="JPEG", quality=95)
                    info = tarfile.TarInfo(f"cifar10-jpeg/{split}/{cls}/{k:04d}.jpg")
                    info.size = buf.tell()
                    buf.seek(0)
                    tar.addfile(info, buf)


@pytest.fixture
def jpeg_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DataLocations:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    write_jpeg_tar(data_dir / "cifar10-jpeg.tar.gz")
    pin(monkeypatch, data_dir / "cifar10-jpeg.tar.gz")
    return DataLocations(data_dir, tmp_path / "cache", download=False)


def test_jpeg_archive_decodes_in_deterministic_order(jpeg_locations: DataLocations) -> None:
    data = load_cifar10(jpeg_locations)
    assert data.classes == ("airplane", "bird")
    assert data.train_x.shape == (6, 32, 32, 3) and data.train_x.dtype == np.uint8
    assert data.test_x.shape == (4, 32, 32, 3)
    np.testing.assert_array_equal(data.train_y, [0, 0, 0, 1, 1, 1])
    assert data.train_y.dtype == np.int64
    # airplane (written as class 1) first; files within a class by name
    expected = [120, 160, 200, 0, 40, 80]
    np.testing.assert_allclose(data.train_x.mean(axis=(1, 2, 3)), expected, atol=3)
    np.testing.assert_allclose(data.test_x.mean(axis=(1, 2, 3)), [130, 170, 10, 50], atol=3)
    archive = jpeg_locations.data_dir / "cifar10-jpeg.tar.gz"
    assert data.fingerprint == hashlib.sha256(archive.read_bytes()).hexdigest()


def test_jpeg_cache_is_reused(jpeg_locations: DataLocations, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_cifar10(jpeg_locations)
    cached = list((jpeg_locations.cache_dir / "cifar10").glob("jpeg-*/*.npy"))
    assert sorted(p.name for p in cached) == ["test_x.npy", "test_y.npy", "train_x.npy", "train_y.npy"]

    def no_decoding(*_: object) -> None:
        raise AssertionError("decoded again instead of using the cache")
    monkeypatch.setattr(cifar10_module, "decode_jpeg_archive", no_decoding)
    again = load_cifar10(jpeg_locations)
    np.testing.assert_array_equal(first.train_x, again.train_x)
    np.testing.assert_array_equal(first.test_y, again.test_y)
    assert again.classes == first.classes and again.fingerprint == first.fingerprint
    assert dataset_fingerprint("cifar10", jpeg_locations) == first.fingerprint


def test_editing_the_decoder_or_pillow_misses_the_decoded_cache(jpeg_locations: DataLocations, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    load_cifar10(jpeg_locations)
    decoded: list[Path] = []
    real_decode = cifar10_module.decode_jpeg_archive

    def counting(archive: Path):
        decoded.append(archive)
        return real_decode(archive)
    monkeypatch.setattr(cifar10_module, "decode_jpeg_archive", counting)
    load_cifar10(jpeg_locations)
    assert decoded == []  # same archive, same producer: the cache holds

    edited = tmp_path / "cifar10_edited.py"
    edited.write_text(Path(cifar10_module.__file__).read_text() + "\n_EDITED = True  # an edit of the decoder's code\n")
    real_file = provenance._module_file
    monkeypatch.setattr(provenance, "_module_file",
                        lambda name: edited if name == cifar10_module.__name__ else real_file(name))
    load_cifar10(jpeg_locations)
    assert len(decoded) == 1  # the edited decoder decodes again
    load_cifar10(jpeg_locations)
    assert len(decoded) == 1  # and then reuses its own arrays

    real_version = provenance._version
    monkeypatch.setattr(provenance, "_version", lambda name: "0.0-edited" if name == "Pillow" else real_version(name))
    load_cifar10(jpeg_locations)
    assert len(decoded) == 2  # another Pillow decodes again
    assert len(list((jpeg_locations.cache_dir / "cifar10").glob("jpeg-*"))) == 3


# --- failures, locations and the registry ------------------------------------------------------

@pytest.mark.parametrize("name, local_name", [("cifar10", "cifar10-jpeg.tar.gz"),
                                              ("emnist", "EMNIST"),
                                              ("shakespeare", "tinyshakespeare.txt")])
def test_unavailable_lists_what_was_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          name: str, local_name: str) -> None:
    monkeypatch.setenv("FEDCLAIMS_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FEDCLAIMS_DOWNLOAD", "0")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetUnavailable) as caught:
        load_dataset(name)
    error = caught.value
    assert error.dataset == name and len(error.tried) >= 2
    assert any(local_name in attempt and str(tmp_path / "empty") in attempt for attempt in error.tried)
    assert any("skipped" in attempt and "FEDCLAIMS_DOWNLOAD=0" in attempt for attempt in error.tried)
    message = str(error)
    assert message.count("\n  - ") == len(error.tried)
    assert "FEDCLAIMS_DATA" in error.hint and "How to provide it" in message
    assert dataset_fingerprint(name) == "unavailable"


def test_loaders_fail_without_data_dir(tmp_path: Path) -> None:
    loc = DataLocations(None, tmp_path / "cache", download=False)
    for load in (load_cifar10, load_emnist, load_shakespeare):
        with pytest.raises(DatasetUnavailable, match="FEDCLAIMS_DATA not set|not found"):
            load(loc)


def test_unknown_dataset_names_the_valid_ones(tmp_path: Path) -> None:
    loc = DataLocations(None, tmp_path, download=False)
    with pytest.raises(ValueError, match="cifar10, emnist, shakespeare"):
        load_dataset("mnist", loc)
    with pytest.raises(ValueError, match="valid names"):
        dataset_fingerprint("mnist", loc)


def test_locations_from_env(tmp_path: Path) -> None:
    loc = DataLocations.from_env({"FEDCLAIMS_DATA": str(tmp_path), "FEDCLAIMS_DOWNLOAD": "0",
                                  "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert loc == DataLocations(tmp_path, tmp_path / "xdg" / "fedclaims", download=False)
    default = DataLocations.from_env({"FEDCLAIMS_CACHE": str(tmp_path / "c")})
    assert default == DataLocations(None, tmp_path / "c", download=True)
    assert DataLocations.from_env({}).cache_dir == Path.home() / ".cache" / "fedclaims"


def test_emnist_images_are_turned_upright() -> None:
    raw = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    fixed = upright(raw)
    assert fixed.shape == (2, 3, 3, 1)
    np.testing.assert_array_equal(fixed[1, :, :, 0], raw[1].T)


# --- the real local copies (only where FEDCLAIMS_DATA is set) ----------------------------------

real_data = pytest.mark.skipif(not os.environ.get("FEDCLAIMS_DATA"),
                               reason="FEDCLAIMS_DATA is not set")


@real_data
def test_real_cifar10() -> None:
    data = load_cifar10(DataLocations.from_env())
    assert data.train_x.shape == (50_000, 32, 32, 3) and data.test_x.shape == (10_000, 32, 32, 3)
    assert data.classes == ("airplane", "automobile", "bird", "cat", "deer",
                            "dog", "frog", "horse", "ship", "truck")
    assert np.bincount(data.train_y).tolist() == [5000] * 10
    assert np.bincount(data.test_y).tolist() == [1000] * 10


@real_data
def test_real_shakespeare() -> None:
    data = load_shakespeare(DataLocations.from_env())
    assert len(data.roles) == 20 and data.seq_len == 80
    assert all(len(role.train_y) > 4 * len(role.test_y) > 0 for role in data.roles)
