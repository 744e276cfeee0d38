"""FedHENet's derived caches (features, pooled ROLANN solution) miss when their producer changes."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from harness import provenance
from harness.runners import fedhenet_caches as caches
from methods.fedhenet import features
from methods.fedhenet.backbones import get_backbone


@pytest.fixture
def editable(tmp_path, monkeypatch):
    """Make one project module resolve to an editable copy; returns edit(name)."""
    original = provenance._module_file
    copies: dict[str, Path] = {}

    def module_file(name: str):
        return copies.get(name) or original(name)

    def copy(name: str) -> Path:
        target = tmp_path / f"{name}.py"
        shutil.copy(original(name), target)
        copies[name] = target
        return target

    monkeypatch.setattr(provenance, "_module_file", module_file)
    return copy


BACKBONE = get_backbone("efficientnet_lite0", 32)


def _features(images, folder):
    return caches.features(BACKBONE, images, folder, 64, lambda done, total: None)


def _solve(x, y, folder):
    return caches.centralised(x, y, 4, folder, weighting="logistic", lam=0.0, rcond=None)


def test_feature_cache_misses_when_the_extractor_code_or_torch_changes(tmp_path, monkeypatch, editable):
    calls = []

    def fake_extract(backbone, images, batch_size=64, progress=None, model=None):
        calls.append(len(images))
        return np.full((len(images), backbone.feature_dim), float(len(calls)), dtype=np.float32)

    monkeypatch.setattr(features, "extract_features", fake_extract)
    images = np.zeros((3, 4, 4, 3), dtype=np.uint8)
    folder = tmp_path / "features"
    source = editable(caches.FEATURE_PRODUCER)

    first = _features(images, folder)
    again = _features(images, folder)
    assert len(calls) == 1 and np.array_equal(first, again)

    source.write_text(source.read_text() + "\n_EDITED = True  # an edit of the feature extractor's code\n")
    edited = _features(images, folder)
    assert len(calls) == 2 and not np.array_equal(edited, first)

    versions = {"torch": "0.0-other"}
    real_version = provenance._version
    monkeypatch.setattr(provenance, "_version", lambda name: versions.get(name) or real_version(name))
    _features(images, folder)
    assert len(calls) == 3


def test_backbones_module_is_part_of_the_feature_producer():
    assert "methods.fedhenet.backbones" in provenance.import_closure(caches.FEATURE_PRODUCER)


def test_centralised_solve_cache_misses_when_rolann_changes(tmp_path, editable):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6))
    y = np.repeat(np.arange(4), 10)
    source = editable(caches.SOLVE_PRODUCER)

    w, cached = _solve(x, y, tmp_path)
    w_again, cached_again = _solve(x, y, tmp_path)
    assert (cached, cached_again) == (False, True) and np.array_equal(w, w_again)

    source.write_text(source.read_text() + "\n_EDITED = True  # an edit of the solver's code\n")
    _, cached_after_edit = _solve(x, y, tmp_path)
    assert cached_after_edit is False
