"""The project's FedRolex client training held to the authors' (issue 54, item 3): the committed fixture
`conformance/fedrolex_client.{json,npz}`, written by `conformance/write_fedrolex_fixtures.py` from
AIoT-MLSys-Lab/FedRolex's own `ResnetClient.step` (its optimizer factory, masked loss and clipping, on its
`models/conv.py` CNN), gives a client's weights after one local epoch of fixed batches under both recipes the
project runs (the stated SGD and the authors' code's Adam) at widths 1, 1/2 and 1/16. The project trains the
same client through `round_training.train_round`, as its runs do (batched: SGD's sub-models through the
stacked cohort, `cohort.train_cohort`; Adam, and sequential execution, through `objectives.train_local`), on
a `ClientData` placed so that its own shuffle takes the fixture's batches in their order.

It reproduces the authors' step to float rounding with the authors' Scaler off (`control` scale 0, where
their model is the project's); as the authors ran it (Scaler on), sub-models below width 1 differ, by batch
norm's eps alone: the project's model with `batchnorm_eps_exponent` 2 (eps 1e-5 x width^2) reproduces that run
too, through both execution paths (docs/conformance.md).
Masking with -inf, dropping the clipping and dropping the weight decay are caught."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import methods.federated.cohort as cohort
import methods.federated.objectives as objectives
import methods.models.conv as conv
from conformance.fedrolex_client_fixtures import AS_RUN_VARIANT, as_float, batches, in_float64, recipes, starts
from harness.loading.catalog import load_catalog
from harness.runners.model_config import ConvModel, build_model_family
from methods.federated.config import ClientExecution
from methods.federated.data import ClientData
from methods.federated.local import LocalSettings
from methods.federated.objectives import LocalObjective
from methods.federated.optimizers import ClientOptimizer
from methods.federated.round_training import STACKED_UP_TO_PARAMETERS, train_round
from methods.federated.submodel import ModuleCache, SubmodelView
from methods.models.conv import ConvFamily

ROOT = Path(__file__).resolve().parents[1]
META = json.loads((ROOT / "conformance" / "fedrolex_client.json").read_text(encoding="utf-8"))
with np.load(ROOT / "conformance" / "fedrolex_client.npz", allow_pickle=False) as _arrays:
    ARRAYS = {name: _arrays[name] for name in _arrays.files}
FAMILY = ConvFamily(META["model"]["in_channels"], META["model"]["num_classes"], META["model"]["hidden"])
AS_RAN = ConvFamily(META["model"]["in_channels"], META["model"]["num_classes"], META["model"]["hidden"],
                    batchnorm_eps_exponent=2)
"""The project's CNN with the authors' Scaler's batch-norm eps (`model.batchnorm_eps_exponent: 2`)."""
RECIPES, RATES = META["recipes"], META["rates"]
TOLERANCE = 2.0 ** -23
"""Float rounding: both steps run in float64 (the reference's in the writer, the project's here), whose
rounding (about 1e-15 here) is far below the float32 the reference's weights are stored in, which rounds
them by at most half an ulp: below 2 (`test_the_fixture_is_the_references_client_on_the_writers_inputs`),
2^-24 = 6e-8. One ulp at 2, 2^-23 = 1.2e-7, allows that and nothing of substance (measured: at most 5.9e-8,
both recipes, every width). In float32 the comparison would be ill-conditioned under Adam: its step
lr * m / (sqrt(v) + 1e-8) turns rounding differences into differences of up to lr where a coordinate's
clipped gradient and weight decay nearly cancel (measured 2.5e-4 after three steps at width 1)."""
CAUGHT = 20
"""A mutation is caught where it moves the weights by more than this many times the recipe's tolerance."""
EXECUTIONS = [ClientExecution.BATCHED, ClientExecution.SEQUENTIAL]


def client_data(recipe: str, generator: torch.Generator) -> ClientData:
    """The recipe's batches as one client's data holding its own labels (as a run's client with
    `label_split`), each sample placed where the first permutation ``generator`` will draw puts it at the
    fixture's position: the project's shuffle takes the fixture's batches in their order."""
    images, labels = as_float(ARRAYS[f"images/{recipe}"]), torch.from_numpy(ARRAYS[f"labels/{recipe}"])
    probe = torch.Generator()
    probe.set_state(generator.get_state())
    order = torch.randperm(len(labels), generator=probe)
    x, y = torch.empty_like(images), torch.empty_like(labels)
    x[order], y[order] = images, labels
    return ClientData(x, y).holding_own_labels(FAMILY.num_classes)


def local_settings(recipe: str) -> LocalSettings:
    r = RECIPES[recipe]
    return LocalSettings(r["local_epochs"], r["batch_size"], r["lr"], r["momentum"], r["weight_decay"],
                         r["clip_norm"], optimizer=ClientOptimizer(r["optimizer"]))


def _start(rate: float) -> dict[str, torch.Tensor]:
    prefix = f"start/r{rate}/"
    return {name[len(prefix):]: torch.from_numpy(a) for name, a in ARRAYS.items() if name.startswith(prefix)}


def trained(recipe: str, rate: float, execution: ClientExecution,
            family: ConvFamily = FAMILY) -> dict[str, torch.Tensor]:
    """The client's weights after the project's round training from the fixture's start."""
    start, generator = {name: t.to(torch.float64) for name, t in _start(rate).items()}, torch.Generator()
    generator.manual_seed(7)
    view = SubmodelView.for_width(family, {}, rate, "prefix", 0, None)
    with in_float64():
        results = train_round(execution, LocalObjective(), family, ModuleCache(family, torch.device("cpu")), [0],
                              {0: view}, {0: start}, [client_data(recipe, generator)], {0: local_settings(recipe)},
                              {0: generator})
    assert results[0].steps == META["images"]["full_batches"] + 1
    return {name: start[name] + update for name, update in results[0].update.items()}


def difference(recipe: str, rate: float, run: str, execution: ClientExecution = ClientExecution.BATCHED,
               family: ConvFamily = FAMILY) -> float:
    """The largest absolute difference between the project's weights and the reference's ``run``."""
    ours = trained(recipe, rate, execution, family)
    return max(float((t - torch.from_numpy(ARRAYS[f"{run}/{recipe}/r{rate}/{name}"])).abs().max())
               for name, t in ours.items())


def test_the_fixture_is_the_references_client_on_the_writers_inputs() -> None:
    assert META["reference"]["repository"] == "AIoT-MLSys-Lab/FedRolex"
    assert META["reference"]["commit"].startswith("8135109")
    assert META["reference"]["imported"] == "resnet_client.py"
    assert (ROOT / "conformance" / "fedrolex_client.npz").stat().st_size < 1_000_000
    assert max(float(np.abs(a).max()) for name, a in ARRAYS.items() if name.split("/")[0] in META["scaled"]) < 2
    for recipe, r in RECIPES.items():
        images, labels = batches(recipe, r["batch_size"])
        assert np.array_equal(images, ARRAYS[f"images/{recipe}"]) and np.array_equal(labels, ARRAYS[f"labels/{recipe}"])
        assert set(labels.tolist()) == set(META["labels"]) and len(labels) % r["batch_size"] > 0  # a ragged last batch
    for rate, start in starts().items():
        assert all(torch.equal(t, _start(rate)[name]) for name, t in start.items())
    assert {r["reference_optimizer"]["optimizer_name"] for r in RECIPES.values()} == {"Adam", "SGD"}


RECIPE_KEYS = ("optimizer", "lr", "momentum", "weight_decay", "batch_size", "clip_norm", "local_epochs")


def test_the_recipes_are_the_ones_the_projects_fedrolex_runs_train_with() -> None:
    """The stated variants train with the SGD recipe, the as-run ones with the Adam recipe, at every profile
    (with label split, in float32 arithmetic: the fixture's masked loss; its float64 is the comparison's)."""
    spec = load_catalog(ROOT / "claims", ROOT / "specs", ROOT).specs["fedrolex-cifar10"]
    assert recipes().keys() == RECIPES.keys()
    for variant, recipe in (("fedrolex-l2", "sgd"), (AS_RUN_VARIANT, "adam")):
        for profile in spec.spec.profiles:
            federation = spec.resolve(variant, profile).federation
            assert {key: getattr(federation, key) for key in RECIPE_KEYS} == {
                key: RECIPES[recipe][key] for key in RECIPE_KEYS}, (variant, profile)
            assert federation.label_split and federation.precision == "fp32", (variant, profile)
    assert RECIPES["adam"]["reference_optimizer"]["weight_decay"] == RECIPES["adam"]["weight_decay"]


@pytest.mark.parametrize("execution", EXECUTIONS)
@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("recipe", ["sgd", "adam"])
def test_the_client_step_reproduces_the_authors_with_their_scaler_off(recipe: str, rate: float,
                                                                      execution: ClientExecution) -> None:
    assert difference(recipe, rate, "unscaled", execution) <= TOLERANCE


def test_batched_sgd_clients_train_through_the_stacked_cohort(monkeypatch) -> None:
    calls = []
    stacked = objectives.train_cohort
    monkeypatch.setattr(objectives, "train_cohort", lambda *args, **kwargs: calls.append(1) or stacked(*args,
                                                                                                        **kwargs))
    assert sum(t.numel() for t in _start(1.0).values()) <= STACKED_UP_TO_PARAMETERS
    trained("sgd", RATES[0], ClientExecution.BATCHED)
    assert calls == [1]
    trained("adam", RATES[0], ClientExecution.BATCHED)
    assert calls == [1]  # Adam trains one client at a time (the stacked form steps SGD)


@pytest.mark.parametrize("execution", EXECUTIONS)
@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("recipe", ["sgd", "adam"])
def test_as_run_the_authors_scaler_is_batch_norms_eps_times_the_width_squared(recipe: str, rate: float,
                                                                                execution: ClientExecution) -> None:
    """The authors' Scaler divides a sub-model's activations by its width r before batch norm, so the norm
    divides by sqrt(var + eps r^2): the project's model with that eps (`batchnorm_eps_exponent` 2) reproduces
    their run as it ran."""
    assert difference(recipe, rate, "after", execution, AS_RAN) <= TOLERANCE


def test_the_eps_exponent_moves_only_the_sub_models_below_width_1() -> None:
    """A run's config at exponent 2 builds the family above; the full model's eps is the project's 1e-5 (the
    authors' Scaler is 1 at width 1 and off in evaluation), a sub-model's 1e-5 times its width squared; at
    exponent 0 the setting is left out of the config, so no record's key changes."""
    fields = {"arch": "conv", "in_channels": 3, "num_classes": 10, "image_size": 32, "hidden": [16, 32, 64]}
    as_ran = build_model_family(ConvModel(**fields, batchnorm_eps_exponent=2))
    full, sixteenth = dict(as_ran.groups), {g: w // 16 for g, w in as_ran.groups.items()}
    assert as_ran.batchnorm_eps(full) == [conv.BATCHNORM_EPS] * 3
    assert as_ran.batchnorm_eps(sixteenth) == [conv.BATCHNORM_EPS / 256] * 3
    assert [m.eps for m in as_ran.build(sixteenth).modules() if isinstance(m, torch.nn.BatchNorm2d)] == [
        conv.BATCHNORM_EPS / 256] * 3
    assert build_model_family(ConvModel(**fields)).batchnorm_eps(sixteenth) == [conv.BATCHNORM_EPS] * 3
    assert "batchnorm_eps_exponent" not in ConvModel(**fields).model_dump()


@pytest.mark.xfail(strict=True, reason=(
    "the project omits HeteroFL's Scaler (methods/models/conv.py: 'it cancels' with batch norm), which cancels "
    "only up to batch norm's eps: the authors' sub-models below width 1 normalise with eps 1e-5 x width^2; "
    "after one epoch the weights differ by up to 7.5e-6 (SGD, width 1/16) and 1.9e-5 (Adam, width 1/2); "
    "the project's default is kept (changing it re-keys every record); `model.batchnorm_eps_exponent` 2 takes "
    "theirs (docs/conformance.md)"))
def test_as_run_the_client_step_reproduces_the_authors() -> None:
    assert max(difference(recipe, rate, "after") for recipe in RECIPES for rate in RATES) <= TOLERANCE


def _mask_with_minus_infinity(monkeypatch) -> None:
    def kept(logits, classes):
        return logits if classes is None else logits.masked_fill(~classes, float("-inf"))

    def kept_stacked(logits, classes):
        return logits.masked_fill(~torch.stack(list(classes))[:, None, :], float("-inf"))

    for module in (objectives, cohort):
        monkeypatch.setattr(module, "kept_logits", kept)
    monkeypatch.setattr(cohort, "kept_logits_stacked", kept_stacked)


def _no_clipping(monkeypatch) -> None:
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", lambda *args, **kwargs: None)
    monkeypatch.setattr(cohort, "clip_per_client_", lambda *args, **kwargs: None)


def _no_weight_decay(monkeypatch) -> None:
    optimizer, stacked = objectives.client_optimizer, cohort.StackedSGD
    monkeypatch.setattr(objectives, "client_optimizer",
                        lambda kind, params, lr, momentum, weight_decay: optimizer(kind, params, lr, momentum, 0.0))
    monkeypatch.setattr(cohort, "StackedSGD", lambda params, lr, momentum, weight_decay: stacked(params, lr,
                                                                                                 momentum, 0.0))


MUTATIONS = {"masking with -inf": _mask_with_minus_infinity, "no clipping": _no_clipping,
             "no weight decay": _no_weight_decay}


@pytest.mark.parametrize("mutation", MUTATIONS)
@pytest.mark.parametrize("recipe", ["sgd", "adam"])
def test_a_mutated_client_step_is_caught(recipe: str, mutation: str, monkeypatch) -> None:
    MUTATIONS[mutation](monkeypatch)
    assert difference(recipe, RATES[1], "unscaled") > CAUGHT * TOLERANCE
