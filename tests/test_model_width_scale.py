"""A conv model's width as one numeric axis (`model.width_scale`, the FedRolex model-size study): it scales
every hidden width of the model a run builds, and at its default it is left out of a run's config."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.runners.model_config import ConvModel, build_model_family

TIER = {"arch": "conv", "hidden": [32, 64, 128, 256], "in_channels": 3, "num_classes": 10, "image_size": 32}


def _parameters(config: ConvModel) -> int:
    return sum(p.numel() for p in build_model_family(config).build().parameters())


def test_the_default_scale_is_left_out_of_a_runs_config_so_every_key_stands() -> None:
    assert ConvModel(**TIER).model_dump(mode="json") == TIER
    assert ConvModel(**TIER, width_scale=2).model_dump(mode="json")["width_scale"] == 2.0


def test_the_scale_builds_the_scaled_widths() -> None:
    assert ConvModel(**TIER, width_scale=2).widths == [64, 128, 256, 512]
    assert ConvModel(**TIER, width_scale=0.5).widths == [16, 32, 64, 128]
    paper_cnn = ConvModel(**{**TIER, "hidden": [64, 128, 256, 512]})
    assert _parameters(ConvModel(**TIER, width_scale=2)) == _parameters(paper_cnn)
    assert _parameters(ConvModel(**TIER, width_scale=0.5)) < _parameters(ConvModel(**TIER))


def test_a_scale_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValidationError, match="width_scale"):
        ConvModel(**TIER, width_scale=0)
