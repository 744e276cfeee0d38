"""The clients' optimiser as a federation setting (`methods.federated.optimizers`): SGD by default, keyed as
before; Adam as FedRolex's released code runs its clients (`torch.optim.Adam(lr, weight_decay)` built fresh
every round, clipping at the norm before each step), trained client by client."""
from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness.runners.federated import Federation
from methods.federated import ClientData, run_federation
from methods.federated.labels import kept_logits
from methods.federated.objectives import LocalSettings, train_local
from methods.federated.optimizers import ClientOptimizer
from methods.models.conv import ConvFamily
from tests.test_batched_clients import CAPS, config, conv_family, federation

ADAM = LocalSettings(epochs=2, batch_size=4, lr=2e-4, momentum=0.9, weight_decay=5e-4, clip_norm=1.0,
                     optimizer=ClientOptimizer.ADAM)


def _client(seed: int) -> tuple[nn.Module, dict, ClientData]:
    family = ConvFamily(3, 4, [4, 6])
    model = family.build(generator=torch.Generator().manual_seed(seed))
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    g = torch.Generator().manual_seed(seed + 1)
    data = ClientData(torch.randn(10, 3, 8, 8, generator=g), torch.tensor([0, 2] * 5)).holding_own_labels(4)
    return model, start, data


def test_adam_steps_as_the_authors_client_loop_does() -> None:
    """The reference's client step: zero_grad, masked loss, backward, clip_grad_norm_(·, 1), Adam.step, a fresh
    Adam per round (resnet_client.py `step`, utils.py `make_optimizer`), over the same batches."""
    model, start, data = _client(0)
    result = train_local(model, start, data, ADAM, torch.Generator().manual_seed(5))

    reference, _, _ = _client(0)
    params = dict(reference.named_parameters())
    adam = torch.optim.Adam(params.values(), lr=2e-4, weight_decay=5e-4)
    g = torch.Generator().manual_seed(5)
    for _ in range(ADAM.epochs):
        for batch in torch.randperm(len(data), generator=g).split(ADAM.batch_size):
            adam.zero_grad(set_to_none=True)
            x, y = data.batch(batch, g)
            F.cross_entropy(kept_logits(reference(x), data.classes), y).backward()
            nn.utils.clip_grad_norm_(params.values(), 1.0)
            adam.step()
    assert result.steps == 2 * 3
    for name, parameter in params.items():
        assert torch.equal(result.update[name], parameter.detach() - start[name]), name


def test_adam_is_not_sgd_and_ignores_momentum() -> None:
    model, start, data = _client(0)
    adam = train_local(model, start, data, ADAM, torch.Generator().manual_seed(5))
    no_momentum = train_local(model, start, data, dataclasses.replace(ADAM, momentum=0.0),
                              torch.Generator().manual_seed(5))
    sgd = train_local(model, start, data, dataclasses.replace(ADAM, optimizer=ClientOptimizer.SGD),
                      torch.Generator().manual_seed(5))
    assert all(torch.equal(adam.update[n], no_momentum.update[n]) for n in adam.update)
    assert any(not torch.allclose(adam.update[n], sgd.update[n]) for n in adam.update)


def test_sgd_the_default_is_left_out_of_a_runs_config_so_its_key_stands() -> None:
    assert "optimizer" not in Federation().model_dump(mode="json")
    adam = Federation(optimizer="adam")
    assert adam.model_dump(mode="json")["optimizer"] == "adam" and adam.method().optimizer == "adam"
    with pytest.raises(ValueError, match="optimizer"):
        Federation(optimizer="adamw")


def test_a_batched_adam_run_trains_client_by_client_and_equals_the_sequential_one() -> None:
    """The stacked form steps SGD only: Adam clients train one after another, whatever the execution."""
    family = conv_family()
    data = federation(family)
    cfg = dataclasses.replace(config(policy="heterofl", rounds=2), optimizer="adam", lr=1e-3)
    runs = [run_federation(family, data, dataclasses.replace(cfg, client_execution=mode), CAPS, 3)
            for mode in ("sequential", "batched")]
    for name, value in runs[0].final_params.items():
        assert torch.equal(runs[1].final_params[name], value), name
    sgd = run_federation(family, data, dataclasses.replace(cfg, optimizer="sgd"), CAPS, 3)
    assert not torch.allclose(sgd.final_params["classifier.weight"], runs[0].final_params["classifier.weight"])
