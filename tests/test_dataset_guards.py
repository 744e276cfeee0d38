"""Guards on what the loaders read and fetch: zip and image bombs, oversized members, and the
CIFAR-10 and EMNIST downloads routed through the checked downloader into torchvision's layout."""
from __future__ import annotations

import gzip
import hashlib
import io
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from harness.datasets import cifar10 as cifar10_module
from harness.datasets import cifar10_source, emnist_source
from harness.datasets import shakespeare as shakespeare_module
from harness.datasets.downloads import SOURCES, Source
from harness.datasets.emnist_source import load as load_emnist
from harness.datasets.errors import DataCheckFailed, DatasetUnavailable
from harness.datasets.locations import DataLocations
from harness.datasets.registry import dataset_fingerprint, fetch_dataset
from harness.datasets.shakespeare_source import load as load_shakespeare
from tests.loopback import Served, loopback_server
from tests.test_datasets import pin


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


def _failure(error: DatasetUnavailable) -> str:
    return "\n".join(error.tried)


# --- the Gutenberg zip ----------------------------------------------------------------------

def test_a_zip_member_above_the_limit_is_refused_unread(tmp_path: Path, monkeypatch) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    with zipfile.ZipFile(data_dir / "1994-01-100.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("100.txt", b" " * 5000)  # compresses to a few dozen bytes
    monkeypatch.setattr(shakespeare_module, "MAX_TEXT_BYTES", 4096)
    monkeypatch.setattr(zipfile.ZipFile, "read", lambda *a: pytest.fail("read a member before checking it"))
    with pytest.raises(DatasetUnavailable) as caught:
        load_shakespeare(DataLocations(data_dir, tmp_path / "cache", download=False))
    failure = _failure(caught.value)
    assert str(data_dir / "1994-01-100.zip") in failure and "DataCheckFailed" in failure
    assert "member 100.txt declares 5000 bytes, above the limit of 4096" in failure


# --- the CIFAR-10 JPEG archive --------------------------------------------------------------

def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares a size but holds no pixels: decoding it would fail."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def _jpeg(size: tuple[int, int] = (32, 32)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (90, 90, 90)).save(buffer, format="JPEG")
    return buffer.getvalue()


def _jpeg_archive(path: Path, odd_member: bytes, odd_name: str = "0001.png") -> None:
    members = {f"cifar10-jpeg/{split}/cat/0000.jpg": _jpeg() for split in ("train", "test")}
    members[f"cifar10-jpeg/train/cat/{odd_name}"] = odd_member
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("member, message", [
    (_png_header(100_000, 100_000), "is a decompression bomb"),
    (_png_header(64, 32), "is 64x32 pixels, not CIFAR-10's 32x32"),
], ids=["decompression-bomb", "wrong-size"])
def test_an_image_that_is_not_cifar_is_a_failed_source(tmp_path: Path, member: bytes, message: str,
                                                        monkeypatch) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    _jpeg_archive(data_dir / "cifar10-jpeg.tar.gz", member)
    pin(monkeypatch, data_dir / "cifar10-jpeg.tar.gz")  # its images, not its structure, are what is tested
    with pytest.raises(DatasetUnavailable) as caught:
        cifar10_source.load(DataLocations(data_dir, tmp_path / "cache", download=False))
    failure = _failure(caught.value)
    assert "DataCheckFailed" in failure and "member cifar10-jpeg/train/cat/0001.png" in failure and message in failure
    assert not list((tmp_path / "cache").glob("cifar10/jpeg-*"))  # nothing cached from a bad archive


def test_an_image_member_above_the_limit_is_refused(tmp_path: Path, monkeypatch) -> None:
    archive = tmp_path / "cifar10-jpeg.tar.gz"
    _jpeg_archive(archive, _jpeg() + b"\0" * 4096, odd_name="0001.jpg")
    monkeypatch.setattr(cifar10_module, "MAX_IMAGE_BYTES", 4096)
    with pytest.raises(DataCheckFailed, match=r"member cifar10-jpeg/train/cat/0001.jpg has \d+ bytes, above the limit"):
        cifar10_module.decode_jpeg_archive(archive)


# --- CIFAR-10 download, into torchvision's layout --------------------------------------------

def _tar(members: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    return buffer.getvalue()


BATCHES = {f"cifar-10-batches-py/{name}": f"not the real {name}".encode()
           for name in cifar10_module.TORCHVISION_FILES}


def _serve_cifar(monkeypatch, server, body: bytes) -> None:
    monkeypatch.setitem(SOURCES, "cifar10", Source("cifar-10-python.tar.gz", server.url("c.tgz"),
                                                   hashlib.sha256(body).hexdigest(), len(body)))


def test_cifar_download_extracts_only_the_batch_folder_for_torchvision(tmp_path: Path, monkeypatch) -> None:
    body = _tar({**BATCHES, "../escaped": b"x", "cifar-10-batches-py/../../escaped": b"x", "elsewhere/file": b"x"},
                links=("cifar-10-batches-py/link",))
    loc = DataLocations(None, tmp_path / "cache", download=True)
    with loopback_server({"c.tgz": Served(body)}) as server:
        _serve_cifar(monkeypatch, server, body)
        assert dataset_fingerprint("cifar10", loc) == "unavailable"
        fingerprint = fetch_dataset("cifar10", loc)
        with pytest.raises(DatasetUnavailable) as caught:  # torchvision checks the md5 of every batch
            cifar10_source.load(loc)
        assert server.requests == ["c.tgz"]  # the load found the fetched copy and did not download again
    root = tmp_path / "cache" / "torchvision"
    assert sorted(p.name for p in root.iterdir()) == ["cifar-10-batches-py"]  # the tarball is gone
    extracted = root / "cifar-10-batches-py"
    assert sorted(p.name for p in extracted.iterdir()) == sorted(cifar10_module.TORCHVISION_FILES)
    assert (extracted / "test_batch").read_bytes() == b"not the real test_batch"
    assert not list(tmp_path.rglob("escaped"))
    assert fingerprint == dataset_fingerprint("cifar10", loc) != "unavailable"
    assert "corrupted" in _failure(caught.value) and str(extracted) in _failure(caught.value)


def test_a_cifar_batch_above_the_limit_stops_the_fetch(tmp_path: Path, monkeypatch) -> None:
    body = _tar({**BATCHES, "cifar-10-batches-py/data_batch_1": b"\0" * 5000})
    monkeypatch.setattr(cifar10_source, "MAX_BATCH_BYTES", 4096)
    loc = DataLocations(None, tmp_path / "cache", download=True)
    with loopback_server({"c.tgz": Served(body)}) as server:
        _serve_cifar(monkeypatch, server, body)
        with pytest.raises(DatasetUnavailable) as caught:
            fetch_dataset("cifar10", loc)
    failure = _failure(caught.value)
    assert server.url("c.tgz") in failure and "data_batch_1 has 5000 bytes, above the limit of 4096" in failure
    assert list((tmp_path / "cache" / "torchvision").iterdir()) == []  # no tarball, no half folder


def test_a_cifar_archive_without_the_batches_is_a_failed_download(tmp_path: Path, monkeypatch) -> None:
    body = _tar({"cifar-10-batches-py/readme.html": b"no batches here"})
    loc = DataLocations(None, tmp_path / "cache", download=True)
    with loopback_server({"c.tgz": Served(body)}) as server:
        _serve_cifar(monkeypatch, server, body)
        with pytest.raises(DatasetUnavailable, match="holds no data_batch_1"):
            fetch_dataset("cifar10", loc)
    assert list((tmp_path / "cache" / "torchvision").iterdir()) == []


# --- EMNIST download, into torchvision's layout ----------------------------------------------

def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def _emnist_zip(images: dict[str, np.ndarray], labels: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for part in ("train", "test"):
            bundle.writestr(f"gzip/emnist-byclass-{part}-images-idx3-ubyte.gz", gzip.compress(_idx(images[part])))
            bundle.writestr(f"gzip/emnist-byclass-{part}-labels-idx1-ubyte.gz", gzip.compress(_idx(labels[part])))
        bundle.writestr("gzip/emnist-letters-train-images-idx3-ubyte.gz", gzip.compress(b"another split"))
    return buffer.getvalue()


def _serve_emnist(monkeypatch, server, body: bytes) -> None:
    monkeypatch.setitem(SOURCES, "emnist", Source("gzip.zip", server.url("gzip.zip"),
                                                  hashlib.sha256(body).hexdigest(), len(body)))


def test_emnist_download_decompresses_the_byclass_files_for_torchvision(tmp_path: Path, monkeypatch) -> None:
    rng = np.random.default_rng(0)
    images = {"train": rng.integers(0, 256, (3, 28, 28)), "test": rng.integers(0, 256, (2, 28, 28))}
    labels = {"train": np.array([0, 61, 7]), "test": np.array([5, 36])}
    body = _emnist_zip(images, labels)
    loc = DataLocations(None, tmp_path / "cache", download=True)
    with loopback_server({"gzip.zip": Served(body)}) as server:
        _serve_emnist(monkeypatch, server, body)
        data = load_emnist(loc)
        assert server.requests == ["gzip.zip"]
    raw = tmp_path / "cache" / "torchvision" / "EMNIST" / "raw"
    assert sorted(p.name for p in raw.iterdir()) == sorted(emnist_source.RAW_FILES)  # gzip.zip removed
    assert data.train_x.shape == (3, 28, 28, 1) and data.test_x.shape == (2, 28, 28, 1)
    np.testing.assert_array_equal(data.train_x[1, :, :, 0], images["train"][1].T)  # turned upright
    np.testing.assert_array_equal(data.test_y, labels["test"])
    assert len(data.classes) == 62 and data.fingerprint == dataset_fingerprint("emnist", loc)


def test_an_emnist_member_expanding_above_the_limit_is_refused(tmp_path: Path, monkeypatch) -> None:
    images = {part: np.zeros((60, 28, 28)) for part in ("train", "test")}  # 47 KB of zeros: a tiny gzip
    body = _emnist_zip(images, {part: np.zeros(60) for part in ("train", "test")})
    monkeypatch.setattr(emnist_source, "MAX_RAW_BYTES", 40_000)
    loc = DataLocations(None, tmp_path / "cache", download=True)
    with loopback_server({"gzip.zip": Served(body)}) as server:
        _serve_emnist(monkeypatch, server, body)
        with pytest.raises(DatasetUnavailable) as caught:
            load_emnist(loc)
    failure = _failure(caught.value)
    assert "gzip/emnist-byclass-train-images-idx3-ubyte.gz expands to more than the limit of 40000 bytes" in failure
    raw = tmp_path / "cache" / "torchvision" / "EMNIST" / "raw"
    assert list(raw.iterdir()) == []  # neither the archive nor a partial file is left
    assert dataset_fingerprint("emnist", loc) == "unavailable"
