"""fedclaims' public API, pinned: a name joins or leaves `fedclaims.__all__` only with an edit here, and
every name it lists is importable under the name it is defined with. A package outside the project builds
on these names; a rename in `harness` or `methods` must not move them."""
from __future__ import annotations

import inspect
import types

import fedclaims

SNAPSHOT = [
    # declaring an experiment kind and what claims read of its records
    "ClientQuantity", "ExperimentKind", "ExtensionMetric", "FEDERATED_TRAINING", "KindExample", "Learning", "Metric",
    "NotApplicable", "Plot", "StrictModel", "evaluations",
    # a run: its context and its seeded random streams
    "RunContext", "derive_seed", "numpy_rng", "setup_seed", "torch_generator",
    # the federated_training config and its parts, as a kind built on it reads them
    "CapsConfig", "CharLSTMModel", "ConvModel", "DataConfig", "FederatedTrainingConfig", "Federation", "ModelConfig",
    "PartitionConfig", "PreResNet18Model",
    # training a federation and what it leaves to measure
    "BuiltFederation", "ClientData", "FederatedDataset", "FederationConfig", "FederationResult", "RoundRecord",
    "TrainedFederation", "build_federation", "draw_capacity_caps", "draw_caps", "equal_share_caps",
    "federated_record", "majority_accuracy", "run_federation", "train_federation",
    # models: width-sliceable families, sub-models and their evaluation
    "SliceableFamily", "SubmodelView", "build_model_family", "default_init_", "evaluate", "kept_units", "load_params",
    # a method's parts: allocation policies, local objectives, round hooks and their settings
    "AllocationPolicy", "Choice", "LocalObjective", "LocalResult", "LocalSettings", "NoSettings", "ObjectiveContext",
    "PolicyContext", "RoundContext", "RoundHook", "Settings", "train_local",
]


def test_the_public_names_are_the_snapshot_in_its_order() -> None:
    """Changing the API on purpose means changing SNAPSHOT (and docs/adding-a-paper.md where it names them)."""
    assert fedclaims.__all__ == SNAPSHOT
    assert len(set(SNAPSHOT)) == len(SNAPSHOT)


def test_every_name_the_module_holds_is_listed_and_resolves() -> None:
    held = {name for name, value in vars(fedclaims).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert held == set(fedclaims.__all__)
    for name in fedclaims.__all__:
        value = getattr(fedclaims, name)
        if inspect.isclass(value) or inspect.isfunction(value):  # defined elsewhere, under the same name
            assert value.__name__ == name or name == "FederatedTrainingConfig", name


def test_a_template_kind_reads_the_federated_config_through_the_api() -> None:
    """The config types a kind built on `federated_training` names: its model, data and caps sections."""
    config = fedclaims.FederatedTrainingConfig.model_validate({
        "data": {"name": "cifar10", "partition": {"scheme": "iid"}},
        "model": {"arch": "conv", "hidden": [4], "in_channels": 3, "num_classes": 10, "image_size": 32},
        "federation": {}})
    assert isinstance(config.model, fedclaims.ConvModel) and isinstance(config.data, fedclaims.DataConfig)
    assert isinstance(config.data.partition, fedclaims.PartitionConfig)
    assert isinstance(config.caps, fedclaims.CapsConfig) and isinstance(config.federation, fedclaims.Federation)
    assert fedclaims.majority_accuracy([0, 1, 1, 2]) == 50.0
