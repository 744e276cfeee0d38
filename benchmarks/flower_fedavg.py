"""FedAvg of the benchmark federation on Flower's simulation engine (message API, Ray backend).

The client is written the way a Flower user writes one: a plain PyTorch loop with the same
optimiser, clipping and mini-batch order (the fedclaims streams) as `methods.federated`. Each
client process reads the clients' tensors from a file once; every node takes part in every
round, so the sampled clients are those of fedclaims' `clients_per_round = num_clients`.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")
# Ray runs workers at nice 15; on a busy machine that, not Flower, would set the pace, while
# fedclaims' side runs at nice 0.
os.environ.setdefault("RAY_worker_niceness", "0")

from fedavg_federation import FedAvgSetup  # noqa: E402
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict  # noqa: E402
from flwr.clientapp import ClientApp  # noqa: E402
from flwr.serverapp import Grid, ServerApp  # noqa: E402
from flwr.serverapp.strategy import FedAvg  # noqa: E402
from flwr.simulation import run_simulation  # noqa: E402

from methods.federated import FederatedDataset  # noqa: E402
from methods.federated.evaluation import evaluate  # noqa: E402
from methods.models.conv import ConvFamily  # noqa: E402
from methods.seeding import torch_generator  # noqa: E402

client_app = ClientApp()


@functools.cache
def _clients(path: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return torch.load(path, weights_only=True)


@client_app.train()
def train(message: Message, context: Context) -> Message:
    config = message.content["config"]
    client = int(context.node_config["partition-id"])
    x, y = _clients(str(config["data-file"]))[client]
    model = ConvFamily(3, 10, list(config["hidden"])).build()
    model.load_state_dict(message.content["arrays"].to_torch_state_dict(), strict=False)
    model.train()
    round_index = int(config["server-round"]) - 1
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"] * config["lr-decay"] ** round_index,
                                momentum=config["momentum"], weight_decay=config["weight-decay"])
    batches = torch_generator(int(config["seed"]), "batches", round_index, client)
    for _ in range(int(config["local-epochs"])):
        for batch in torch.randperm(len(y), generator=batches).split(int(config["batch-size"])):
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[batch]), y[batch]).backward()
            nn.utils.clip_grad_norm_(model.parameters(), config["clip-norm"])
            optimizer.step()
    params = {name: p.detach() for name, p in model.named_parameters()}
    return Message(RecordDict({"arrays": ArrayRecord(params), "metrics": MetricRecord({"num-examples": len(y)})}),
                   reply_to=message)


def run_flower_fedavg(setup: FedAvgSetup, federation: FederatedDataset, initial: dict[str, torch.Tensor],
                      folder: Path, client_processes: int) -> tuple[dict[str, torch.Tensor], float]:
    """(final global parameters, final test accuracy) of `setup.rounds` FedAvg rounds on Flower,
    with `client_processes` single-thread Ray actors training the clients."""
    data_file = folder / "federation.pt"
    torch.save([(c.x, c.y) for c in federation.clients], data_file)
    outcome: dict[str, object] = {}
    server_app = ServerApp()

    def final_accuracy(server_round: int, arrays: ArrayRecord) -> MetricRecord | None:
        if server_round < setup.rounds:
            return None
        model = setup.family().build()
        model.load_state_dict(arrays.to_torch_state_dict(), strict=False)
        accuracy, _ = evaluate(model, federation.test, federation.calibration, 256)
        outcome["accuracy"] = accuracy
        return MetricRecord({"accuracy": accuracy})

    @server_app.main()
    def main(grid: Grid, context: Context) -> None:
        strategy = FedAvg(fraction_train=1.0, fraction_evaluate=0.0, min_train_nodes=setup.clients,
                          min_available_nodes=setup.clients)
        config = ConfigRecord({"data-file": str(data_file), "hidden": list(setup.hidden), "seed": setup.seed,
                               "lr": setup.lr, "lr-decay": setup.lr_decay, "momentum": setup.momentum,
                               "weight-decay": setup.weight_decay, "clip-norm": setup.clip_norm,
                               "local-epochs": setup.local_epochs, "batch-size": setup.batch_size})
        result = strategy.start(grid=grid, initial_arrays=ArrayRecord(initial), num_rounds=setup.rounds,
                                train_config=config, evaluate_fn=final_accuracy)
        outcome["params"] = result.arrays.to_torch_state_dict()

    run_simulation(server_app=server_app, client_app=client_app, num_supernodes=setup.clients,
                   backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                                   "init_args": {"num_cpus": client_processes, "log_to_driver": False}})
    return outcome["params"], outcome["accuracy"]
