"""An image model's width as one numeric axis (`model.width_scale`, the FedRolex model-size and preresnet-size
studies): it scales every hidden width of the model a run builds, and at its default it is left out of a run's
config."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.loading.studies import point_profile
from harness.runners.model_config import ConvModel, PreResNet18Model, WidthScaled, build_model_family

TIER = {"arch": "conv", "hidden": [32, 64, 128, 256], "in_channels": 3, "num_classes": 10, "image_size": 32}
PAPER_RESNET = {"arch": "preresnet18", "hidden": [64, 128, 256, 512], "in_channels": 3, "num_classes": 10,
                "image_size": 32}


def _parameters(config: WidthScaled) -> int:
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


def test_the_preresnet_scales_its_stage_widths_and_keeps_its_keys_at_the_default() -> None:
    assert PreResNet18Model(**PAPER_RESNET).model_dump(mode="json") == PAPER_RESNET
    half = PreResNet18Model(**PAPER_RESNET, width_scale=0.5)
    assert half.widths == [32, 64, 128, 256]
    assert _parameters(half) == _parameters(PreResNet18Model(**{**PAPER_RESNET, "hidden": [32, 64, 128, 256]}))


def test_a_preresnet_size_point_is_the_learning_tier_on_the_authors_model_at_the_scaled_widths(catalog) -> None:
    loaded = catalog.specs["fedrolex-cifar10"]
    study = loaded.spec.studies["preresnet-size"]
    for value, widths in ((0.5, [16, 32, 64, 128]), (1, [32, 64, 128, 256])):
        profile = point_profile(loaded.spec, study, value)
        model = profile.overrides["model"]
        config = PreResNet18Model(**model)
        assert config.widths == widths
        base = loaded.spec.profiles["learning"].overrides
        assert {k: v for k, v in profile.overrides.items() if k != "model"} == \
            {k: v for k, v in base.items() if k != "model"}, "every other setting is the learning tier's"
