"""FedAvg and FedProx training only a linear softmax layer on a frozen backbone.

As in the FedHENet repository's baselines: SGD (lr 0.01, momentum 0.9, a fresh optimizer
each round), R rounds x 1 local epoch, FedProx mu 0.01, every client in every round,
sample-weighted averaging. Batch size is 32 here (the authors' config file uses 128).

The clients' inputs are either precomputed features, or images with an `embed` function
(the frozen backbone) that the training calls on every batch of every local epoch of every
round, and on the test set at every evaluation, as the authors' code does. The same seed
draws the same initial layer and batches in both forms.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import torch
from torch.nn import functional as F

Embed = Callable[[np.ndarray], torch.Tensor]
"""A batch of a client's stored inputs (images) -> float32 features [batch, D]."""
FLOAT32_BYTES = 4


@dataclass(frozen=True)
class LinearFLConfig:
    """Hyperparameters of the last-layer baselines; mu = 0 is FedAvg, mu > 0 is FedProx."""

    rounds: int = 10
    local_epochs: int = 1
    lr: float = 0.01
    momentum: float = 0.9
    batch_size: int = 32
    mu: float = 0.0
    seed: int = 0


@dataclass
class LinearFLResult:
    """Per-round test accuracy, traffic (float32 weights down + up per client per round), time."""

    round_accuracy: list[float]
    bytes_sent: int
    wall_seconds: float
    weight: np.ndarray = field(repr=False)
    bias: np.ndarray = field(repr=False)
    clients_used: int = 0


def _init_layer(dim: int, num_classes: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.nn.Linear's default init (uniform in +-1/sqrt(fan_in)), from an explicit generator."""
    bound = 1.0 / math.sqrt(dim)
    w = (torch.rand(num_classes, dim, generator=gen) * 2 - 1) * bound
    b = (torch.rand(num_classes, generator=gen) * 2 - 1) * bound
    return w, b


def exchanged_bytes(parameters: int, clients: int, rounds: int) -> int:
    """float32 parameters sent down to and up from every client in every round."""
    return 2 * FLOAT32_BYTES * parameters * clients * rounds


@contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Temporarily set torch's intra-op threads (restored afterwards); None leaves them."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _batch(x: torch.Tensor | np.ndarray, idx: torch.Tensor, embed: Embed | None) -> torch.Tensor:
    """Features are a tensor; images for `embed` stay an array (`_inputs`)."""
    return cast(torch.Tensor, x)[idx] if embed is None else embed(cast(np.ndarray, x)[idx.numpy()])


def _local_train(x: torch.Tensor | np.ndarray, y: torch.Tensor, w0: torch.Tensor, b0: torch.Tensor,
                 cfg: LinearFLConfig, gen: torch.Generator,
                 embed: Embed | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Local epochs of SGD with momentum (torch.optim.SGD's rule, fresh buffers each round)."""
    params = [w0.clone().requires_grad_(True), b0.clone().requires_grad_(True)]
    anchors = [w0, b0]
    buffers: list[torch.Tensor | None] = [None, None]
    for _ in range(cfg.local_epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), cfg.batch_size):
            idx = order[start:start + cfg.batch_size]
            loss = F.cross_entropy(F.linear(_batch(x, idx, embed), params[0], params[1]), y[idx])
            if cfg.mu > 0:
                loss = loss + 0.5 * cfg.mu * sum((p - a).square().sum() for p, a in zip(params, anchors))
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for i, (p, g) in enumerate(zip(params, grads)):
                    buffer = buffers[i]
                    buffer = g.clone() if buffer is None else buffer.mul_(cfg.momentum).add_(g)
                    buffers[i] = buffer
                    p.sub_(cfg.lr * buffer)
    return params[0].detach(), params[1].detach()


def _accuracy(x: torch.Tensor | np.ndarray, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
              embed: Embed | None, batch_size: int) -> float:
    if embed is None:
        scores = F.linear(cast(torch.Tensor, x), w, b)
    else:
        images = cast(np.ndarray, x)
        scores = torch.cat([F.linear(embed(images[i:i + batch_size]), w, b) for i in range(0, len(y), batch_size)])
    return float((scores.argmax(1) == y).double().mean())


def _inputs(x: np.ndarray, embed: Embed | None) -> torch.Tensor | np.ndarray:
    return torch.as_tensor(np.asarray(x), dtype=torch.float32) if embed is None else x


def run_linear_fl(client_inputs: Sequence[np.ndarray], client_labels: Sequence[np.ndarray],
                  test_inputs: np.ndarray, test_labels: np.ndarray, num_classes: int,
                  config: LinearFLConfig = LinearFLConfig(), embed: Embed | None = None,
                  feature_dim: int | None = None) -> LinearFLResult:
    """Federated training of a linear layer; clients without data are skipped.

    Without `embed` the inputs are features [n, D]; with it they are images, embedded batch by
    batch (give `feature_dim` then). `wall_seconds` times everything from the inputs on.
    """
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(config.seed)
    clients = [(_inputs(x, embed), torch.as_tensor(np.asarray(y), dtype=torch.long))
               for x, y in zip(client_inputs, client_labels) if len(y) > 0]
    if not clients:
        raise ValueError("no client holds data")
    x_test = _inputs(test_inputs, embed)
    y_test = torch.as_tensor(np.asarray(test_labels), dtype=torch.long)
    if embed is None:
        dim = x_test.shape[1]
    elif feature_dim is None:
        raise ValueError("embedding images needs the feature dimension")
    else:
        dim = feature_dim
    w, b = _init_layer(dim, num_classes, gen)
    sizes = torch.tensor([float(len(y)) for _, y in clients], dtype=torch.float64)
    shares = (sizes / sizes.sum()).float()
    accuracy: list[float] = []
    # On features, one thread: for a layer this small, per-call overhead dominates and threads
    # only add sync. A backbone in the loop runs with the threads the caller set.
    with _torch_threads(1 if embed is None else None):
        for _ in range(config.rounds):
            updates = [_local_train(x, y, w, b, config, gen, embed) for x, y in clients]
            w = sum(s * uw for s, (uw, _) in zip(shares, updates))
            b = sum(s * ub for s, (_, ub) in zip(shares, updates))
            accuracy.append(_accuracy(x_test, y_test, w, b, embed, config.batch_size))
    return LinearFLResult(
        round_accuracy=accuracy, bytes_sent=exchanged_bytes(w.numel() + b.numel(), len(clients), config.rounds),
        wall_seconds=time.perf_counter() - start, weight=w.numpy(), bias=b.numpy(),
        clients_used=len(clients))


def run_fedavg(client_inputs: Sequence[np.ndarray], client_labels: Sequence[np.ndarray],
               test_inputs: np.ndarray, test_labels: np.ndarray, num_classes: int, *,
               rounds: int = 10, batch_size: int = 32, seed: int = 0,
               embed: Embed | None = None, feature_dim: int | None = None) -> LinearFLResult:
    """FedAvg on the last layer (SGD lr 0.01, momentum 0.9, 1 local epoch per round)."""
    cfg = LinearFLConfig(rounds=rounds, batch_size=batch_size, mu=0.0, seed=seed)
    return run_linear_fl(client_inputs, client_labels, test_inputs, test_labels, num_classes, cfg, embed, feature_dim)


def run_fedprox(client_inputs: Sequence[np.ndarray], client_labels: Sequence[np.ndarray],
                test_inputs: np.ndarray, test_labels: np.ndarray, num_classes: int, *,
                mu: float = 0.01, rounds: int = 10, batch_size: int = 32, seed: int = 0,
                embed: Embed | None = None, feature_dim: int | None = None) -> LinearFLResult:
    """FedProx (proximal term mu/2 |w - w_global|^2) on the last layer."""
    cfg = LinearFLConfig(rounds=rounds, batch_size=batch_size, mu=mu, seed=seed)
    return run_linear_fl(client_inputs, client_labels, test_inputs, test_labels, num_classes, cfg, embed, feature_dim)
