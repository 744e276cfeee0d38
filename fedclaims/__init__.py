"""fedclaims' public API: what a paper's own pieces are built from.

An experiment kind, a metric, an allocation policy, a local objective or a round hook written
outside this project imports these names from `fedclaims`, not from the project's internal
packages (`harness`, `methods`), whose layout may change. docs/adding-a-paper.md has a template of
each piece. `__all__` lists them by what they build; tests/test_public_api.py pins it, so that a name
leaves or joins the API only on purpose.
"""
from harness.kinds.base import (
    ClientQuantity,
    ExperimentKind,
    ExtensionMetric,
    KindExample,
    Learning,
    Metric,
    NotApplicable,
    Plot,
)
from harness.kinds.evaluations import evaluations
from harness.kinds.federated import FEDERATED_TRAINING
from harness.runners.context import RunContext
from harness.runners.federated import (
    BuiltFederation,
    CapsConfig,
    DataConfig,
    Federation,
    PartitionConfig,
    TrainedFederation,
    build_federation,
    draw_caps,
    federated_record,
    train_federation,
)
from harness.runners.federated import Config as FederatedTrainingConfig
from harness.runners.model_config import CharLSTMModel, ConvModel, ModelConfig, PreResNet18Model, build_model_family
from harness.schema.base import StrictModel
from methods.extraction import kept_units
from methods.federated import (
    ClientData,
    FederatedDataset,
    FederationConfig,
    FederationResult,
    RoundRecord,
    draw_capacity_caps,
    equal_share_caps,
    run_federation,
)
from methods.federated.evaluation import evaluate
from methods.federated.local import LocalResult, LocalSettings
from methods.federated.objectives import LocalObjective, ObjectiveContext, train_local
from methods.federated.parts import Choice, NoSettings, Settings
from methods.federated.policies import AllocationPolicy, PolicyContext
from methods.federated.rounds import RoundContext, RoundHook
from methods.federated.submodel import SubmodelView, load_params
from methods.models.slicing import SliceableFamily, default_init_
from methods.partition import majority_accuracy
from methods.seeding import derive_seed, numpy_rng, setup_seed, torch_generator

__all__ = [
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
