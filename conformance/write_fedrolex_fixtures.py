"""Write the FedRolex conformance fixtures from the authors' own server and client (issue 54, item 3).

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

The draws, whose statistics the fixtures also hold (seeded: the same on every run): the reference's `dynamic`
capacities (its `utils.process_control` parsing the README's FedRolex command, its server's `make_model_rate`
redrawing every client's rate, `DYNAMIC_ROUNDS` rounds), tallied per rate and by whether a client's rate
repeats the round before's; and its non-IID-L split (`data.non_iid`, L = 2 and 5, 100 clients,
`SHARD_DRAWS` partitions of a label vector of uneven classes), tallied by the distinct labels a client holds
and, per class, by the samples a holder holds (the shard sizes taken). `utils` and `data` are imported
unchanged; the reference's `datasets` package (file readers) is stood in for by an empty module.

The client's fixture (`conformance/fedrolex_client.{json,npz}`: the authors' `resnet_client.py` step under
both recipes the project runs, and what is stood in for it) is written by `fedrolex_client_fixtures.py`,
called after the server's; `tests/test_fedrolex_client_conformance.py` holds the project's client training to
it. The augmentation's fixture (`conformance/fedrolex_augmentation.{json,npz}`: the authors' CIFAR-10 training
transform, as their `data.fetch_dataset` builds it, applied thousands of times to fixed images, its outputs'
crop offsets and flips tallied) is written by `fedrolex_augmentation_fixtures.py`, called last;
`tests/test_fedrolex_augmentation_conformance.py` holds the clients' `CropFlip` to it.

Not run in CI (it needs the authors' checkout); run from the repository's root with it on the path
(`PYTHONPATH=. python conformance/write_fedrolex_fixtures.py CHECKOUT`). Its output, `conformance/fedrolex.json`,
`conformance/fedrolex.npz`, `conformance/fedrolex_client.json`, `conformance/fedrolex_client.npz`,
`conformance/fedrolex_augmentation.json` and `conformance/fedrolex_augmentation.npz` (numpy arrays, no pickle),
is committed; every run writes the same bytes.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import json
import subprocess
import sys
import types
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from conformance.fedrolex_augmentation_fixtures import augmentation_fixture, augmentation_metadata
from conformance.fedrolex_client_fixtures import client_fixture, client_metadata

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
DYNAMIC_CONTROL = "1_100_0.1_non-iid-2_dynamic_a1-b1-c1-d1-e1_bn_1_1"
"""The reference README's FedRolex CIFAR-10 command's `control_name`: 100 clients, capacities redrawn every
round (`dynamic`) over the rates 1, 1/2, 1/4, 1/8, 1/16 in proportions 1:1:1:1:1."""
DYNAMIC_ROUNDS = 1000
SHARD_LABELS_PER_CLIENT = (2, 5)
SHARD_CLIENTS = 100
SHARD_CLASS_SIZES = tuple(1000 + 7 * c for c in range(NUM_CLASSES))
"""Samples per class of the label vector the shards cut (class c first, then c + 1, ...): uneven, so most
classes leave a remainder that the reference spreads over their first shards."""
SHARD_DRAWS = 2000
DRAW_SEED = 0


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


def import_reference_draws(root: Path) -> tuple[types.ModuleType, types.ModuleType, dict]:
    """`utils` and `data` from the checkout, unchanged, and the module-level `cfg` of its `config`, which both
    read (`config` loads `config.yml` from the working directory, so it is imported there). The reference's
    own `datasets` package (file readers needing `anytree`; `non_iid` calls none of them) is stood in for by
    an empty module."""
    stand_in, gld = types.ModuleType("datasets"), types.ModuleType("datasets.gld")
    gld.GLD160 = None  # type: ignore[attr-defined]
    sys.modules.update({"datasets": stand_in, "datasets.gld": gld})
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    with contextlib.chdir(root):
        config = importlib.import_module("config")
    utils, data = importlib.import_module("utils"), importlib.import_module("data")
    for module in (config, utils, data):
        if Path(str(module.__file__)).resolve().parent != root:
            raise SystemExit(f"imported {module.__name__} from {module.__file__}, not from {root}")
    return utils, data, config.cfg


def dynamic_draws(server_module: types.ModuleType, utils: types.ModuleType, cfg: dict,
                  initial: dict[str, torch.Tensor]) -> dict:
    """The reference's capacities under `DYNAMIC_CONTROL`, as `process_control` parses it, redrawn by its
    server's `make_model_rate` (what `distribute` calls every round) for `DYNAMIC_ROUNDS` rounds: how often
    each rate was drawn over every (client, round), and how often a client's rate repeated the round
    before's."""
    cfg["control"] = dict(zip(cfg["control"], DYNAMIC_CONTROL.split("_")))
    utils.process_control()
    torch.manual_seed(DRAW_SEED)
    names = reference_names()
    server = server_module.ResnetServerRoll(Named({names[n]: t for n, t in initial.items()}), cfg["model_rate"],
                                            {"label_split": {}}, cfg)
    rates = np.asarray(cfg["model_rate"], dtype=np.float64)
    drawn = []
    for _ in range(DYNAMIC_ROUNDS):
        server.make_model_rate()
        drawn.append(np.searchsorted(-rates, -np.asarray(server.model_rate, dtype=np.float64)))
    tiers = np.stack(drawn)
    return {"control": DYNAMIC_CONTROL, "rates": rates.tolist(), "proportion": list(cfg["proportion"]),
            "clients": int(cfg["num_users"]), "rounds": DYNAMIC_ROUNDS, "seed": DRAW_SEED,
            **capacity_tally(tiers, len(rates))}


def capacity_tally(tiers: np.ndarray, num_tiers: int) -> dict:
    """Of a (rounds, clients) array of tier indices: draws per tier, and how many of the (client, round after
    the first) draws repeat the client's tier of the round before."""
    return {"counts": np.bincount(tiers.ravel(), minlength=num_tiers).tolist(),
            "repeats": int((tiers[1:] == tiers[:-1]).sum()), "pairs": int(tiers[1:].size)}


def shard_labels() -> np.ndarray:
    return np.repeat(np.arange(NUM_CLASSES), SHARD_CLASS_SIZES)


def shard_draws(data: types.ModuleType, cfg: dict) -> list[dict]:
    """`SHARD_DRAWS` of the reference's `non_iid` split of `shard_labels()` among `SHARD_CLIENTS` clients,
    for each L of `SHARD_LABELS_PER_CLIENT`, tallied by `shard_tally`."""
    dataset = types.SimpleNamespace(target=shard_labels().tolist())
    cfg["classes_size"] = NUM_CLASSES
    found = []
    for per_client in SHARD_LABELS_PER_CLIENT:
        cfg["data_split_mode"] = f"non-iid-{per_client}"
        torch.manual_seed(DRAW_SEED)
        splits = (data.non_iid(dataset, SHARD_CLIENTS)[0] for _ in range(SHARD_DRAWS))
        parts = ([np.asarray(split[client], dtype=np.int64) for client in range(SHARD_CLIENTS)] for split in splits)
        found.append({"labels_per_client": per_client, "clients": SHARD_CLIENTS, "draws": SHARD_DRAWS,
                      "seed": DRAW_SEED, **shard_tally(shard_labels(), parts, per_client)})
    return found


def shard_tally(labels: np.ndarray, draws: Iterable[list[np.ndarray]], per_client: int) -> dict:
    """Over every (draw, client) of partitions of ``labels``: how many clients held 1, ..., ``per_client``
    distinct labels (`held`), and, per class and number of its samples a holder held, how many holders
    (`samples`: [class, samples, holders] rows): the shard sizes taken."""
    held = np.zeros(per_client + 1, dtype=np.int64)
    samples: dict[tuple[int, int], int] = {}
    for parts in draws:
        counts = np.stack([np.bincount(labels[part], minlength=NUM_CLASSES) for part in parts])
        held += np.bincount((counts > 0).sum(axis=1), minlength=per_client + 1)[:per_client + 1]
        classes, sizes = np.nonzero(counts)[1], counts[counts > 0]
        for (cls, size), n in zip(*np.unique(np.stack([classes, sizes], axis=1), axis=0, return_counts=True)):
            samples[(int(cls), int(size))] = samples.get((int(cls), int(size)), 0) + int(n)
    return {"held": held[1:].tolist(), "samples": [[cls, size, n] for (cls, size), n in sorted(samples.items())]}


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
    utils, data, cfg = import_reference_draws(root)
    draws = {"dynamic": dynamic_draws(server_module, utils, cfg, initial), "shards": shard_draws(data, cfg)}
    _write("fedrolex", arrays, _metadata(commit, runs, draws))
    client_arrays: dict[str, np.ndarray] = {}
    described = client_fixture(root, utils, cfg, client_arrays)
    _write("fedrolex_client", client_arrays, client_metadata(commit, REFERENCE_REPOSITORY, described))
    augmentation_arrays: dict[str, np.ndarray] = {}
    described = augmentation_fixture(root, data, augmentation_arrays)
    _write("fedrolex_augmentation", augmentation_arrays,
           augmentation_metadata(commit, REFERENCE_REPOSITORY, described))


def _write(name: str, arrays: dict[str, np.ndarray], metadata: dict) -> None:
    np.savez_compressed(OUT / f"{name}.npz", **arrays)
    (OUT / f"{name}.json").write_text(json.dumps(metadata, indent=1) + "\n", encoding="utf-8")


def _metadata(commit: str, runs: list[dict], draws: dict) -> dict:
    return {
        "reference": {"repository": REFERENCE_REPOSITORY, "commit": commit, "imported": "resnet_server.py",
                      "written_by": "conformance/write_fedrolex_fixtures.py"},
        "covers": {
            "kind": "federated_training",
            "parts": ["server"],
            "text": (f"conformance fixtures reproduce the authors' server (FedRolex resnet_server.py at "
                     f"{REFERENCE_COMMIT}: extraction, aggregation) to float rounding, and its dynamic capacities "
                     f"and non-IID shards (resnet_server.py, data.py) in distribution"),
            "settings": {"federation.extraction": ["rolling", "prefix", "random"],
                         "federation.weighting": ["equal", "size"], "federation.label_split": [True],
                         "federation.count_weighted": [True], "federation.policy.name": ["dynamic"],
                         "caps.assignment": ["equal_shares"], "data.partition.scheme": ["shards"],
                         "data.partition.labels_per_client": list(SHARD_LABELS_PER_CLIENT)}},
        "model": {"arch": "conv", "hidden": list(HIDDEN), "in_channels": IN_CHANNELS, "num_classes": NUM_CLASSES},
        "rates": list(RATES), "labels": [list(labels) for labels in LABELS],
        "clients_per_round": [list(clients) for clients in CLIENTS_PER_ROUND],
        "weightings": {"avg": "equal", "width": "size", "updates": "update", "updates_width": "hybrid"},
        "extractions": {"rolling": "rolling", "static": "prefix", "random": "random"},
        "runs": runs,
        "draws": draws,
        "arrays": ("fedrolex.npz: initial/<param>, update/r<t>/c<client>/<param> (the sub-model's shape, the "
                   "reference's local order), <run>/units/r<t>/c<client>/block<i> (the reference's kept units, "
                   "in its local order), <run>/global/r<t>/<param> (the reference's global model after round t)")}


if __name__ == "__main__":
    main()
