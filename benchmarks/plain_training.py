"""The reference the training benchmarks compare with: a plain per-client PyTorch loop.

One round of FedAvg over width-p sub-models written the way a PyTorch user would: for every
client a module of the sub-model's size (textbook layer order, ``nn.LSTM``), loaded with the
leading units of the global model, ``torch.optim.SGD`` with momentum and weight decay,
``clip_grad_norm_``, shuffled mini-batches; then the sample-weighted mean of the clients'
sub-models written back into the global model, and the test accuracy of the new global model (a
full-width module in eval mode), as the engine's round ends with. It uses fedclaims only for what defines the
arithmetic being compared (initial weights, random streams, which units a sub-model keeps),
so that fedclaims' round must give the same parameters.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from methods.extraction import prefix_indices
from methods.federated.data import ClientData
from methods.models.slicing import SliceableFamily, embed, extract
from methods.seeding import torch_generator


@dataclass(frozen=True)
class PlainSettings:
    epochs: int
    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    clip_norm: float


class PlainConvNet(nn.Module):
    """HeteroFL's Conv in textbook order: conv -> BN -> ReLU -> max-pool, channels-last."""

    def __init__(self, in_channels: int, num_classes: int, hidden: Sequence[int]) -> None:
        super().__init__()
        blocks = []
        widths = [in_channels, *hidden]
        for i, (c_in, c_out) in enumerate(zip(widths[:-1], widths[1:])):
            layers = OrderedDict(conv=nn.Conv2d(c_in, c_out, 3, padding=1),
                                 bn=nn.BatchNorm2d(c_out, momentum=None), relu=nn.ReLU())
            if i < len(hidden) - 1:
                layers["pool"] = nn.MaxPool2d(2)
            blocks.append(nn.Sequential(layers))
        self.blocks = nn.Sequential(*blocks)
        self.classifier = nn.Linear(hidden[-1], num_classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.blocks(x.contiguous(memory_format=torch.channels_last))
        return self.classifier(F.adaptive_avg_pool2d(x, 1).flatten(1))


class PlainCharLSTM(nn.Module):
    def __init__(self, vocab: int, embed_dim: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.lstm(self.embedding(x))[0][:, -1])


def prefix_selection(family: SliceableFamily, width: float) -> dict[str, Tensor]:
    return {group: prefix_indices(n, width) for group, n in family.groups.items()}


def train_client(model: nn.Module, data: ClientData, settings: PlainSettings,
                 generator: torch.Generator) -> None:
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=settings.lr, momentum=settings.momentum,
                                weight_decay=settings.weight_decay)
    for _ in range(settings.epochs):
        for batch in torch.randperm(len(data), generator=generator).split(settings.batch_size):
            optimizer.zero_grad()
            F.cross_entropy(model(data.x[batch]), data.y[batch]).backward()
            nn.utils.clip_grad_norm_(model.parameters(), settings.clip_norm)
            optimizer.step()


def plain_round(family: SliceableFamily, build_plain, global_params: dict[str, Tensor],
                clients: Sequence[ClientData], width: float, settings: PlainSettings,
                seed: int) -> dict[str, Tensor]:
    """The global parameters after round 0 of the clients training at ``width`` (prefix)."""
    selection = prefix_selection(family, width)
    start = extract(global_params, family, selection)
    total = sum(len(c) for c in clients)
    mean = {name: torch.zeros_like(t) for name, t in start.items()}
    model = build_plain({g: len(u) for g, u in selection.items()})
    for i, data in enumerate(clients):
        model.load_state_dict(start, strict=False)
        train_client(model, data, settings, torch_generator(seed, "batches", 0, i))
        with torch.no_grad():
            for name, p in model.named_parameters():
                mean[name].add_(p, alpha=len(data) / total)
    inside = embed(mean, family, selection, global_params)
    kept = embed({n: torch.ones_like(t) for n, t in mean.items()}, family, selection, global_params)
    return {name: torch.where(kept[name] > 0, inside[name], t) for name, t in global_params.items()}


@torch.no_grad()
def plain_accuracy(build_plain, family: SliceableFamily, params: dict[str, Tensor], test: ClientData,
                   batch_size: int) -> float:
    """Test accuracy of the global model: a full-width module loaded with ``params``, in eval mode."""
    model = build_plain(dict(family.groups))
    model.load_state_dict(params, strict=False)
    model.eval()
    correct = sum(int((model(x).argmax(dim=1) == y).sum())
                  for x, y in zip(test.x.split(batch_size), test.y.split(batch_size)))
    return correct / max(len(test), 1)
