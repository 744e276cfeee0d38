"""The checked downloader against a loopback server: digests, size limits, nothing left behind."""
from __future__ import annotations

import hashlib
import urllib.error
from pathlib import Path

import pytest

from harness.datasets.downloads import SOURCES, Source, download_checked
from harness.datasets.errors import DataCheckFailed
from harness.datasets.registry import DATASETS
from tests.loopback import Served, loopback_server

BODY = b"the official archive, in miniature\n" * 100
DIGEST = hashlib.sha256(BODY).hexdigest()


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_matching_download_takes_its_name(tmp_path: Path) -> None:
    with loopback_server({"a.tgz": Served(BODY)}) as server:
        path = download_checked(Source("a.tgz", server.url("a.tgz"), DIGEST, len(BODY)), tmp_path / "dl")
    assert path == tmp_path / "dl" / "a.tgz" and path.read_bytes() == BODY
    assert _leftovers(tmp_path / "dl") == ["a.tgz"]


def test_a_digest_mismatch_is_discarded_and_named(tmp_path: Path) -> None:
    pinned = "0" * 64
    with loopback_server({"a.tgz": Served(BODY)}) as server:
        url = server.url("a.tgz")
        with pytest.raises(DataCheckFailed) as caught:
            download_checked(Source("a.tgz", url, pinned, 10 * len(BODY)), tmp_path)
    message = str(caught.value)
    assert url in message and pinned in message and DIGEST in message and str(len(BODY)) in message
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("declared", [None, -1], ids=["declared-length", "no-length"])
def test_an_oversized_response_is_cut_off(tmp_path: Path, declared: int | None) -> None:
    limit = len(BODY) - 1
    with loopback_server({"a.tgz": Served(BODY, content_length=declared)}) as server:
        url = server.url("a.tgz")
        with pytest.raises(DataCheckFailed, match="limit") as caught:
            download_checked(Source("a.tgz", url, DIGEST, limit), tmp_path)
    assert url in str(caught.value) and str(limit) in str(caught.value)
    assert _leftovers(tmp_path) == []


def test_a_response_cut_short_fails_its_digest(tmp_path: Path) -> None:
    """A header declaring fewer bytes than the file truncates the read; the digest catches it."""
    with loopback_server({"a.tgz": Served(BODY, content_length=10)}) as server:
        with pytest.raises(DataCheckFailed, match=r"\(10 bytes\) is not the pinned"):
            download_checked(Source("a.tgz", server.url("a.tgz"), DIGEST, len(BODY)), tmp_path)
    assert _leftovers(tmp_path) == []


def test_an_http_error_leaves_nothing(tmp_path: Path) -> None:
    with loopback_server({}) as server:
        with pytest.raises(urllib.error.HTTPError):
            download_checked(Source("a.tgz", server.url("a.tgz"), DIGEST, len(BODY)), tmp_path)
    assert _leftovers(tmp_path) == []


def test_every_source_is_pinned_and_bounded() -> None:
    assert set(SOURCES) == set(DATASETS)  # every data set can be fetched
    for source in SOURCES.values():
        assert source.url.startswith("https://")
        assert len(source.sha256) == 64 and int(source.sha256, 16) >= 0
        assert 0 < source.max_bytes < 1 << 30
