"""Write the FedRolex conformance fixtures from the authors' own server (issue 54, item 3).

    python conformance/write_fedrolex_fixtures.py /path/to/FedRolex-checkout

The checkout must be AIoT-MLSys-Lab/FedRolex at `REFERENCE_COMMIT` (checked when it is a git work tree).
Its `resnet_server.py` is imported unchanged; only its transport is bypassed: `ray.get` on the values it
would fetch from the object store becomes the identity, so its `__init__` takes the config and the label
split directly. Nothing is fetched and nothing trains: on the project's HeteroFL CNN at 4-8-16 channels
(the family's own initial weights, seed 0), eight clients of widths 1, 1/2, 1/4, 1/8, 1/16, 1, 1/2, 1/4
with two labels each, five a round for four rounds, every client's update a fixed small random tensor, the
reference's `distribute` and `step` (which `combine`s) run for rolling (`ResnetServerRoll`), static
(`ResnetServerStatic`) and random (`ResnetServerRandom`) extraction, rolling also under the four weightings
of its `combine`. The fixtures: the inputs (initial weights, rates, label split, clients per round, the
updates in the reference's local order), and per run the units each client's sub-model kept in every layer
and the global model after every round. `tests/test_fedrolex_conformance.py` holds `methods` to them.

Not run in CI (it needs the authors' checkout); its output, `conformance/fedrolex.json` and
`conformance/fedrolex.npz` (numpy arrays, no pickle), is committed.
"""
from __future__ import annotations

import argparse
import copy
import importlib
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import torch
from torch import nn

REFERENCE_REPOSITORY = "AIoT-MLSys-Lab/FedRolex"
REFERENCE_COMMIT = "8135109"
HIDDEN = (4, 8, 16)
IN_CHANNELS, NUM_CLASSES = 3, 10
RATES = (1.0, 0.5, 0.25, 0.125, 0.0625, 1.0, 0.5, 0.25)
LABELS = ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9), (1, 3), (5, 7), (0, 9))
CLIENTS_PER_ROUND = ((3, 0, 6, 1, 4), (7, 2, 5, 0, 3), (1, 4, 6, 7, 2), (5, 3, 0, 2, 1))
"""Each round's clients in the order the server combines them (not ascending: the update counts grow in it)."""
UPDATE_SCALE = 0.05
RUNS = (("rolling", "ResnetServerRoll", "avg"), ("rolling", "ResnetServerRoll", "width"),
        ("rolling", "ResnetServerRoll", "updates"), ("rolling", "ResnetServerRoll", "updates_width"),
        ("static", "ResnetServerStatic", "avg"), ("random", "ResnetServerRandom", "avg"))
OUT = Path(__file__).resolve().parent


def reference_names() -> dict[str, str]:
    """The project's CNN parameter names -> the names the reference's server slices by: a hidden conv's
    name holds `conv1` (its output units roll), a batch norm's and a bias follow that conv's units, and the
    classifier is `linear` (its rows split by label)."""
    names = {}
    for i in range(len(HIDDEN)):
        names.update({f"blocks.{i}.conv.weight": f"blocks.{i}.conv1.weight",
                      f"blocks.{i}.conv.bias": f"blocks.{i}.conv1.bias",
                      f"blocks.{i}.bn.weight": f"blocks.{i}.n1.weight",
                      f"blocks.{i}.bn.bias": f"blocks.{i}.n1.bias"})
    return {**names, "classifier.weight": "linear.weight", "classifier.bias": "linear.bias"}


class Named(nn.Module):
    """Parameters under the reference's names, in the project's order (the state dict's order is the
    reference's loop order: its first tensor is the stem conv's weight)."""

    def __init__(self, params: dict[str, torch.Tensor]) -> None:
        super().__init__()
        for name, tensor in params.items():
            *path, leaf = name.split(".")
            module: nn.Module = self
            for part in path:
                if not hasattr(module, part):
                    module.add_module(part, nn.Module())
                module = getattr(module, part)
            module.register_parameter(leaf, nn.Parameter(tensor.clone(), requires_grad=False))


def initial_params() -> dict[str, torch.Tensor]:
    from methods.models.conv import ConvFamily

    generator = torch.Generator()
    generator.manual_seed(0)
    model = ConvFamily(IN_CHANNELS, NUM_CLASSES, HIDDEN).build(generator=generator)
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def import_reference(root: Path) -> types.ModuleType:
    """`resnet_server` from the checkout, unchanged; `ray.get` (its object-store fetch) made the identity."""
    sys.path.insert(0, str(root))
    server = importlib.import_module("resnet_server")
    server.ray = types.SimpleNamespace(get=lambda value: value)  # type: ignore[attr-defined]
    return server


def checked_commit(root: Path) -> str:
    try:
        found = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{REFERENCE_COMMIT} (not a git work tree: taken as given)"
    if not found.startswith(REFERENCE_COMMIT):
        raise SystemExit(f"{root} is at {found}, not {REFERENCE_REPOSITORY} {REFERENCE_COMMIT}")
    return found


def updates(initial: dict[str, torch.Tensor], server_module: types.ModuleType) -> dict[tuple[int, int], dict]:
    """Every (round, client)'s update, shaped as its sub-model (the same shapes under every extraction)."""
    shapes = {}
    back = {ref: project for project, ref in reference_names().items()}
    probe = _server(server_module, "ResnetServerStatic", "avg", initial)
    for t, clients in enumerate(CLIENTS_PER_ROUND):
        local, _ = probe.distribute(list(clients))
        for m, client in enumerate(clients):
            shapes[(t, client)] = {back[name]: local[m][name].shape for name in local[m]}
    generator = torch.Generator()
    generator.manual_seed(1)
    return {key: {name: UPDATE_SCALE * torch.randn(shape, generator=generator) for name, shape in by_name.items()}
            for key, by_name in shapes.items()}


def _server(server_module: types.ModuleType, cls: str, weighting: str, initial: dict[str, torch.Tensor]):
    names = reference_names()
    model = Named({names[n]: t for n, t in initial.items()})
    cfg = {"model_split_mode": "fix", "global_model_rate": 1.0, "overlap": None, "weighting": weighting,
           "num_users": len(RATES), "active_user": len(CLIENTS_PER_ROUND[0])}
    label_split = {client: list(labels) for client, labels in enumerate(LABELS)}
    return getattr(server_module, cls)(model, list(RATES), {"label_split": label_split}, cfg)


def run(server_module: types.ModuleType, cls: str, weighting: str, initial: dict[str, torch.Tensor],
        deltas: dict[tuple[int, int], dict], arrays: dict[str, np.ndarray], prefix: str) -> None:
    """Four rounds of the reference's server: its kept units and its global model after every round."""
    names = reference_names()
    back = {ref: project for project, ref in names.items()}
    server = _server(server_module, cls, weighting, initial)
    for t, clients in enumerate(CLIENTS_PER_ROUND):
        local, param_idx = server.distribute(list(clients))
        for m, client in enumerate(clients):
            for i in range(len(HIDDEN)):
                units = param_idx[m][names[f"blocks.{i}.conv.weight"]][0]
                arrays[f"{prefix}/units/r{t}/c{client}/block{i}"] = units.numpy().astype(np.int64)
            for name in local[m]:
                local[m][name] = local[m][name] + deltas[(t, client)][back[name]]
        server.step(local, copy.deepcopy(param_idx), list(clients))
        for name, tensor in server.global_model.state_dict().items():
            arrays[f"{prefix}/global/r{t}/{back[name]}"] = tensor.numpy().astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help=f"a checkout of {REFERENCE_REPOSITORY} at {REFERENCE_COMMIT}")
    root = parser.parse_args().checkout.resolve()
    commit = checked_commit(root)
    torch.manual_seed(0)  # the reference's own draws (random extraction, its reshuffles) read the global stream
    server_module = import_reference(root)
    initial = initial_params()
    deltas = updates(initial, server_module)
    arrays: dict[str, np.ndarray] = {f"initial/{n}": t.numpy().astype(np.float32) for n, t in initial.items()}
    for (t, client), by_name in deltas.items():
        arrays.update({f"update/r{t}/c{client}/{n}": d.numpy().astype(np.float32) for n, d in by_name.items()})
    runs = []
    for mode, cls, weighting in RUNS:
        prefix = f"{mode}-{weighting}"
        run(server_module, cls, weighting, initial, deltas, arrays, prefix)
        runs.append({"prefix": prefix, "extraction": mode, "server": cls, "weighting": weighting})
    np.savez_compressed(OUT / "fedrolex.npz", **arrays)
    (OUT / "fedrolex.json").write_text(json.dumps(_metadata(commit, runs), indent=1) + "\n", encoding="utf-8")


def _metadata(commit: str, runs: list[dict]) -> dict:
    return {
        "reference": {"repository": REFERENCE_REPOSITORY, "commit": commit, "imported": "resnet_server.py",
                      "written_by": "conformance/write_fedrolex_fixtures.py"},
        "covers": {
            "kind": "federated_training",
            "text": (f"conformance fixtures reproduce the authors' server (FedRolex resnet_server.py at "
                     f"{REFERENCE_COMMIT}: extraction, aggregation) to float rounding; client training not covered"),
            "settings": {"federation.extraction": ["rolling", "prefix", "random"],
                         "federation.weighting": ["equal", "size"], "federation.label_split": [True],
                         "federation.count_weighted": [True]}},
        "model": {"arch": "conv", "hidden": list(HIDDEN), "in_channels": IN_CHANNELS, "num_classes": NUM_CLASSES},
        "rates": list(RATES), "labels": [list(labels) for labels in LABELS],
        "clients_per_round": [list(clients) for clients in CLIENTS_PER_ROUND],
        "weightings": {"avg": "equal", "width": "size", "updates": "update", "updates_width": "hybrid"},
        "extractions": {"rolling": "rolling", "static": "prefix", "random": "random"},
        "runs": runs,
        "arrays": ("fedrolex.npz: initial/<param>, update/r<t>/c<client>/<param> (the sub-model's shape, the "
                   "reference's local order), <run>/units/r<t>/c<client>/block<i> (the reference's kept units, "
                   "in its local order), <run>/global/r<t>/<param> (the reference's global model after round t)")}


if __name__ == "__main__":
    main()
