"""Training-time augmentation of image mini-batches, as the HeteroFL/FedRolex reference code trains
CIFAR-10: ``RandomCrop(32, padding=4)`` then ``RandomHorizontalFlip()`` (torchvision)."""
from __future__ import annotations

from enum import StrEnum

import torch
from torch import Tensor


class AugmentationMode(StrEnum):
    """What a client does to each training mini-batch."""

    NONE = "none"
    CROP_FLIP = "crop_flip"


class CropFlip:
    """Each image padded by ``padding`` pixels of ``blank`` (a black pixel, normalised, as torchvision
    pads the image before normalising it), cropped back to its size at an offset drawn uniformly from
    0..2·padding in each direction, and mirrored left-right with probability 1/2. Offsets and flips
    come from the generator a batch is given (CPU), three draws a batch: rows, columns, flips."""

    def __init__(self, blank: Tensor, padding: int = 4) -> None:
        if padding < 0:
            raise ValueError(f"padding must be >= 0, got {padding}")
        self.blank = blank
        self.padding = padding

    def __call__(self, x: Tensor, generator: torch.Generator) -> Tensor:
        n, channels, height, width = x.shape
        p = self.padding
        padded = self.blank.to(x.dtype).view(1, channels, 1, 1).expand(n, channels, height + 2 * p,
                                                                       width + 2 * p).clone()
        padded[:, :, p:p + height, p:p + width] = x
        top = torch.randint(0, 2 * p + 1, (n,), generator=generator)
        left = torch.randint(0, 2 * p + 1, (n,), generator=generator)
        flip = torch.rand(n, generator=generator) < 0.5
        rows = top[:, None] + torch.arange(height)
        cols = left[:, None] + torch.arange(width)
        cols = torch.where(flip[:, None], cols.flip(1), cols)
        device = x.device
        return padded[torch.arange(n, device=device)[:, None, None, None],
                      torch.arange(channels, device=device)[None, :, None, None],
                      rows.to(device)[:, None, :, None], cols.to(device)[:, None, None, :]]
