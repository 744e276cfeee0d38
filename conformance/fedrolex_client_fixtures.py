"""The FedRolex client fixture: the authors' own client step on fixed inputs (issue 54, item 3).

`write_fedrolex_fixtures.py` calls `client_fixture` (and `client_metadata`) after the server's fixtures. It runs
AIoT-MLSys-Lab/FedRolex's `resnet_client.py::ResnetClient` (its `__init__`, `update` and `step`, unchanged:
the model built, the sub-model's state loaded, `utils.make_optimizer(model, lr)` reading the module-level
`cfg`, then per batch `model(input)`, backward, `clip_grad_norm_(..., 1)`, `optimizer.step()`) with its
model, loss and optimizer factory the authors' own: `models/conv.py` `Conv` (its `Scaler(rate)`, its
`BatchNorm2d(momentum=None, track_running_stats=False)`, its logits of labels the client does not hold
`masked_fill(label_mask == 0, 0)` before cross-entropy) and `utils.make_optimizer`.

Stood in, and nothing else:
- `ray`, while `resnet_client` is imported: `ray.remote(...)` returns the class itself and `ray.get` is the
  identity (the object store bypassed, as the server's fixtures bypass it);
- `torch.utils.tensorboard`, where it is not installed: a module whose `SummaryWriter` is None (the
  authors' `Logger` imports it and builds one only when it writes, which `step` never does here);
- the model builder `resnet.resnet18(model_rate, cfg)` -> the authors' `models/conv.py` `conv(model_rate)`
  at the widths of `CLIENT_HIDDEN` (the project's CPU profiles train that CNN, not the ResNet), its `.to`
  the identity (the step hard-codes `'cuda'`; everything runs on the CPU);
- `to_device(input, 'cuda')` -> the identity;
- `make_data_loader` -> the recipe's fixed list of batches, each as the authors' `input_collate` gives it
  (a dict of lists of images and labels), in a fixed order (no shuffling, no augmentation);
- the arithmetic: float64 (the default dtype while the step runs; the start and the images are exact in
  it), its weights stored in float32. In float32, Adam's step lr * m / (sqrt(v) + 1e-8) turns the two codes'
  rounding differences into differences of up to lr where a coordinate's clipped gradient and weight decay
  nearly cancel (measured 2.5e-4 after three steps at width 1): float64 leaves only the storage's rounding.

The configs: the client's own `cfg` (`self.cfg`, what the server process sends) is `config.yml` after the
authors' `process_control` on the README's FedRolex command (`README_CONTROL`, one local epoch) with
`main_resnet.py`'s metric names; the module-level `cfg` that `make_optimizer` and `Conv` read is
`config.yml` as loaded (in the authors' Ray workers `process_control` never ran there: Adam, weight decay
5e-4) plus the keys `Conv` reads, taken from the processed config (`norm` bn, `scale` and `mask` on, the
global rate 1, the CIFAR-10 shape and classes) with the device the CPU. The two recipes: `adam`, that
module `cfg` as it stands, at the README's lr 2e-4 and `config.yml`'s batch 128 (the as-run recipe of the
spec's `-as-run` variants); `sgd`, the same module `cfg` with `optimizer_name: SGD` and the spec's stated
momentum and weight decay, at its lr and batch (read from `specs/fedrolex-cifar10.yaml`).

Inputs (seeded, the same bytes on every run): the project's CNN at `CLIENT_HIDDEN` (the family's initial
weights, seed 0), its rolling sub-model at each rate of `CLIENT_RATES` (round `START_ROUND`), every tensor
moved by `START_JITTER` times a standard normal draw (so batch norm's and the classifier's start are not
the initialisation's ones and zeros); a client holding the labels `CLIENT_LABELS`; per recipe `FULL_BATCHES`
full batches and one partial batch (`PARTIAL` images) of CIFAR-shaped images (random 8 x 8 pixels, each
over a 4 x 4 block), uint8 `u` read as (u - 128) / 64 (exact), labels within the client's labels,
each label held.
"""
from __future__ import annotations

import contextlib
import copy
import importlib
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
import yaml
from torch import nn

CLIENT_HIDDEN = (16, 32, 64)
"""The standard profile's CNN (`specs/fedrolex-cifar10.yaml`)."""
CLIENT_RATES = (1.0, 0.5, 0.0625)
"""At width 1 the authors' Scaler divides by 1: their model is the project's there (see `SCALED`)."""
CLIENT_LABELS = (2, 5, 7)
NUM_CLASSES, IMAGE_SHAPE = 10, (3, 32, 32)
IMAGE_OFFSET, IMAGE_SCALE = 128, 64
IMAGE_BLOCK = 4
"""Each image drawn at 8 x 8 pixels and each pixel repeated over a 4 x 4 block (a fixture of a few hundred
images that compresses to a few tens of kB)."""
START_ROUND = 3
START_JITTER = 0.05
FULL_BATCHES = 2
PARTIAL = {"adam": 45, "sgd": 7}
"""Images in each recipe's last batch (below its batch size: the ragged batch an epoch ends with)."""
README_CONTROL = "1_100_0.1_non-iid-2_dynamic_a1-b1-c1-d1-e1_bn_1_1"
README_GLOBAL_EPOCHS = 3200
METRIC_NAME = {"train": {"Local": ["Local-Loss", "Local-Accuracy"]},
               "test": {"Local": ["Local-Loss", "Local-Accuracy"], "Global": ["Global-Loss", "Global-Accuracy"]}}
"""`main_resnet.py`'s `cfg['metric_name']`, which the client's step logs by."""
SEED = 0
SPEC = Path(__file__).resolve().parents[1] / "specs" / "fedrolex-cifar10.yaml"
AS_RUN_VARIANT = "fedrolex-l2-as-run"


def recipes() -> dict[str, dict]:
    """The two client recipes the project runs, as the spec states them: the stated SGD (its `federation`)
    and the authors' code's Adam (the as-run variant's optimizer, lr and batch; weight decay and clipping
    the spec's)."""
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    stated = spec["config"]["federation"]
    as_run = {**stated, **spec["variants"][AS_RUN_VARIANT]["config"]["federation"]}
    return {name: {"optimizer": f["optimizer"] if "optimizer" in f else "sgd", "lr": f["lr"],
                   "momentum": f["momentum"], "weight_decay": f["weight_decay"], "batch_size": f["batch_size"],
                   "clip_norm": f["clip_norm"], "local_epochs": f["local_epochs"]}
            for name, f in (("adam", as_run), ("sgd", stated))}


def project_names(model: nn.Module) -> dict[str, str]:
    """The authors' `Conv` state's names -> the project's `ConvFamily` names (the k-th conv, batch norm and
    the linear layer, in order)."""
    names, counts = {}, {"conv": 0, "bn": 0}
    for name, module in model.named_modules():
        kind = ("conv" if isinstance(module, nn.Conv2d) else "bn" if isinstance(module, nn.BatchNorm2d)
                else "classifier" if isinstance(module, nn.Linear) else None)
        if kind is None:
            continue
        target = "classifier" if kind == "classifier" else f"blocks.{counts[kind]}.{kind}"
        counts[kind] = counts.get(kind, 0) + 1
        names.update({f"{name}.{leaf}": f"{target}.{leaf}" for leaf, _ in module.named_parameters()})
    return names


def starts() -> dict[float, dict[str, torch.Tensor]]:
    """Each rate's sub-model start, under the project's names."""
    from methods.federated.submodel import SubmodelView
    from methods.models.conv import ConvFamily

    family = ConvFamily(IMAGE_SHAPE[0], NUM_CLASSES, CLIENT_HIDDEN)
    generator = torch.Generator()
    generator.manual_seed(SEED)
    full = {n: p.detach().clone() for n, p in family.build(generator=generator).named_parameters()}
    found = {}
    for rate in CLIENT_RATES:
        sub = SubmodelView.for_width(family, full, rate, "rolling", START_ROUND, None).extract(full)
        found[rate] = {n: t + START_JITTER * torch.randn(t.shape, generator=generator) for n, t in sub.items()}
    return found


def batches(recipe: str, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The recipe's images (uint8) and labels, in the order the step takes them."""
    rng = np.random.default_rng([SEED, len(recipe), batch_size])
    n = FULL_BATCHES * batch_size + PARTIAL[recipe]
    channels, height, width = IMAGE_SHAPE
    coarse = rng.integers(0, 256, size=(n, channels, height // IMAGE_BLOCK, width // IMAGE_BLOCK), dtype=np.uint8)
    images = coarse.repeat(IMAGE_BLOCK, axis=2).repeat(IMAGE_BLOCK, axis=3)
    labels = rng.permutation(np.resize(np.asarray(CLIENT_LABELS, dtype=np.int64), n))
    return images, labels


def as_float(images: np.ndarray) -> torch.Tensor:
    """The images as the step's inputs, in float64 (exact: (u - 128) / 64)."""
    return (torch.from_numpy(images).to(torch.float64) - IMAGE_OFFSET) / IMAGE_SCALE


@contextlib.contextmanager
def in_float64() -> Iterator[None]:
    """Modules built, and tensors made, in float64 (the default dtype), restored after."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


@contextlib.contextmanager
def stood_in_imports() -> Iterator[None]:
    """`ray` (its `remote` returning the class itself, its `get` the identity) and, where it is missing,
    `torch.utils.tensorboard` (its `SummaryWriter` None), while the authors' client is imported."""
    saved = {name: sys.modules.get(name) for name in ("ray", "torch.utils.tensorboard")}
    ray = types.ModuleType("ray")
    ray.remote = lambda *args, **kwargs: (lambda cls: cls)  # type: ignore[attr-defined]
    ray.get = lambda value: value  # type: ignore[attr-defined]
    sys.modules["ray"] = ray
    if importlib.util.find_spec("tensorboard") is None:
        board = types.ModuleType("torch.utils.tensorboard")
        board.SummaryWriter = None  # type: ignore[attr-defined]
        sys.modules["torch.utils.tensorboard"] = board
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def client_configs(root: Path, utils: types.ModuleType, cfg: dict) -> tuple[dict, dict]:
    """(the client's own config as the server process sends it, the worker's module-level config), the
    latter written into the authors' `cfg` dict in place (`make_optimizer` and `Conv` read it)."""
    loaded = yaml.safe_load((root / "config.yml").read_text(encoding="utf-8"))
    cfg.clear()
    cfg.update(copy.deepcopy(loaded))
    cfg["control"] = dict(zip(cfg["control"], README_CONTROL.split("_")))
    utils.process_control()
    sent = {**copy.deepcopy(cfg), "num_epochs": {"global": README_GLOBAL_EPOCHS, "local": 1},
            "metric_name": METRIC_NAME, "device": "cpu"}
    cfg.clear()
    cfg.update(copy.deepcopy(loaded))
    cfg.update({key: copy.deepcopy(sent[key]) for key in ("norm", "scale", "mask", "global_model_rate",
                                                           "data_shape")})
    cfg.update({"classes_size": NUM_CLASSES, "conv": {"hidden_size": list(CLIENT_HIDDEN)}, "device": "cpu"})
    return sent, cfg


def import_reference_client(root: Path) -> tuple[types.ModuleType, types.ModuleType]:
    """`resnet_client` and `models.conv` from the checkout, unchanged; `resnet_client`'s model builder, its
    `to_device` and its data loader stood in (`make_data_loader` is set per run by `reference_step`)."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    with stood_in_imports():
        client = importlib.import_module("resnet_client")
    conv = importlib.import_module("models.conv")
    for module in (client, conv):
        if not Path(str(module.__file__)).resolve().is_relative_to(root):
            raise SystemExit(f"imported {module.__name__} from {module.__file__}, not from {root}")

    def resnet18(model_rate: float, cfg: dict) -> nn.Module:
        model = conv.conv(model_rate=model_rate)
        model.to = lambda *args, **kwargs: model  # the step's `.to('cuda')`: everything stays on the CPU
        return model

    client.resnet = types.SimpleNamespace(resnet18=resnet18)  # type: ignore[attr-defined]
    client.to_device = lambda value, device: value  # type: ignore[attr-defined]
    return client, conv


def reference_step(client_module: types.ModuleType, sent: dict, start: dict[str, torch.Tensor], rate: float,
                   lr: float, images: np.ndarray, labels: np.ndarray, batch_size: int) -> dict[str, torch.Tensor]:
    """The authors' `update` then `step` of one client (id 0, holding `CLIENT_LABELS`) from ``start`` (the
    authors' names) on the batches of ``images`` and ``labels`` in order: its state after the step."""
    x = as_float(images)
    loader = [{"img": list(x[i:i + batch_size]), "label": labels[i:i + batch_size].tolist()}
              for i in range(0, len(labels), batch_size)]
    client_module.make_data_loader = lambda dataset: {"train": loader}  # type: ignore[attr-defined]
    client = client_module.ResnetClient("unused-log-path", [sent])
    client.update(0, {"dataset": None, "split": {0: list(range(len(labels)))},
                      "label_split": {0: list(CLIENT_LABELS)}},
                  {"lr": lr, "model_rate": rate, "local_params": {n: t.to(torch.float64) for n, t in start.items()}})
    # m = 1 of 10 clients: not a round's logging client (m % int(10 * log_interval + 1) != 0)
    return client.step(1, 10, time.time())


SCALED = {"after": True, "unscaled": False}
"""The arrays' prefix of each reference run -> its `Conv`'s `scale`: on as the authors ran it (the README's
control `..._bn_1_1`); off, `control` scale 0, a setting the authors' code offers, where its model is the
project's (the project omits the Scaler, which before batch norm changes only the norm's eps: the reference
normalises by sqrt(var + eps * rate^2))."""


def client_fixture(root: Path, utils: types.ModuleType, cfg: dict, arrays: dict[str, np.ndarray]) -> dict:
    """The reference's client step for every recipe, rate and `SCALED` setting into ``arrays``; the
    fixture's description."""
    sent, worker = client_configs(root, utils, cfg)
    client_module, conv_module = import_reference_client(root)
    loaded = copy.deepcopy(worker)
    by_recipe, by_rate = recipes(), starts()
    for recipe, settings in by_recipe.items():
        images, labels = batches(recipe, settings["batch_size"])
        arrays.update({f"images/{recipe}": images, f"labels/{recipe}": labels})
        worker.clear()
        worker.update(copy.deepcopy(loaded))
        if settings["optimizer"] == "sgd":  # the stated recipe through the authors' own make_optimizer
            worker.update({"optimizer_name": "SGD", "momentum": settings["momentum"],
                           "weight_decay": settings["weight_decay"]})
        settings["reference_optimizer"] = {key: worker[key] for key in ("optimizer_name", "momentum",
                                                                               "weight_decay")}
        for rate, start in by_rate.items():
            names = project_names(conv_module.conv(model_rate=rate))
            back = {project: reference for reference, project in names.items()}
            arrays.update({f"start/r{rate}/{n}": t.numpy().astype(np.float32) for n, t in start.items()})
            for prefix, scale in SCALED.items():
                worker["scale"] = scale
                with in_float64():
                    after = reference_step(client_module, sent, {back[n]: t for n, t in start.items()}, rate,
                                           settings["lr"], images, labels, settings["batch_size"])
                arrays.update({f"{prefix}/{recipe}/r{rate}/{names[n]}": t.numpy().astype(np.float32)
                               for n, t in after.items()})
    return {"recipes": by_recipe, "model": {"arch": "conv", "hidden": list(CLIENT_HIDDEN),
                                            "in_channels": IMAGE_SHAPE[0], "num_classes": NUM_CLASSES},
            "rates": list(CLIENT_RATES), "labels": list(CLIENT_LABELS), "scaled": SCALED,
            "images": {"offset": IMAGE_OFFSET, "scale": IMAGE_SCALE, "full_batches": FULL_BATCHES,
                       "partial": PARTIAL}}


CLIENT_SETTINGS = {"federation.optimizer": ["sgd", "adam"], "federation.label_split": [True],
                   "federation.clip_norm": [1.0], "federation.local_epochs": [1], "federation.precision": ["fp32"],
                   "model.arch": ["conv"]}
"""The settings of a run whose client step the fixture holds to the authors' at every width it covers."""


def client_metadata(commit: str, repository: str, description: dict) -> dict:
    """`fedrolex_client.json`: the reference, what the fixture covers (the attribution rule's input), the
    inputs described and where the arrays are."""
    return {
        "reference": {"repository": repository, "commit": commit, "imported": "resnet_client.py",
                      "written_by": "conformance/write_fedrolex_fixtures.py (conformance/fedrolex_client_fixtures.py)"},
        "covers": {
            "kind": "federated_training",
            "parts": ["client"],
            "text": ("the authors' client step (FedRolex resnet_client.py `ResnetClient.step` at "
                     f"{commit[:7]}: utils.make_optimizer, models/conv.py's masked cross-entropy, clipping at norm "
                     "1) reproduced to float rounding under both recipes, SGD and Adam, on HeteroFL's CNN and fixed "
                     "batches as given; below width 1 as the authors ran it only where the project's CNN takes "
                     "their Scaler's batch-norm eps (`model.batchnorm_eps_exponent` 2): their Scaler divides "
                     "activations by the width before batch norm, which makes the norm's eps 1e-5 times the width "
                     "squared where the project's default is 1e-5 (declared, measured: docs/conformance.md); the "
                     "ResNet not "
                     "covered; the runs' random crops and flips of the batches are the augmentation part's "
                     "(conformance/fedrolex_augmentation.json); inputs as given: the runs normalise each "
                     "channel by the federation's own mean and std, the authors' data.py by fixed constants "
                     "(declared in specs/fedrolex-cifar10.yaml)"),
            # either alternative covers a run: width 1 alone at any eps, or every width at the authors' eps
            "settings": [{**CLIENT_SETTINGS, "caps.tiers": [[1.0]]},
                         {**CLIENT_SETTINGS, "model.batchnorm_eps_exponent": [2.0]}]},
        **description,
        "arrays": ("fedrolex_client.npz: start/r<rate>/<param> (the sub-model's start, the project's names), "
                   "images/<recipe> (uint8 u, the input (u - offset) / scale, in the order the step takes "
                   "them), labels/<recipe>, <run>/<recipe>/r<rate>/<param> (the reference's weights after its "
                   "step; <run> `after`: as the authors ran it, `unscaled`: their Scaler off)"),
    }
