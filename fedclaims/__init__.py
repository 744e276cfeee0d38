"""fedclaims' public API: what a paper's own pieces are built from.

An experiment kind, a metric, an allocation policy, a local objective or a round hook written
outside this project imports these names from `fedclaims`, not from the project's internal
packages (`harness`, `methods`), whose layout may change. docs/adding-a-paper.md has a template of
each piece.
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
    Federation,
    TrainedFederation,
    build_federation,
    draw_caps,
    train_federation,
)
from harness.runners.federated import Config as FederatedTrainingConfig
from harness.runners.model_config import build_model_family
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
from methods.seeding import derive_seed, numpy_rng, setup_seed, torch_generator

__all__ = ["FEDERATED_TRAINING", "AllocationPolicy", "BuiltFederation", "Choice", "ClientData", "ClientQuantity",
           "ExperimentKind", "ExtensionMetric", "FederatedDataset", "FederatedTrainingConfig", "Federation",
           "FederationConfig", "FederationResult", "KindExample", "Learning", "LocalObjective", "LocalResult",
           "LocalSettings", "Metric", "NoSettings", "NotApplicable", "ObjectiveContext", "Plot", "PolicyContext",
           "RoundContext", "RoundHook", "RoundRecord", "RunContext", "Settings", "SliceableFamily", "StrictModel",
           "SubmodelView",
           "TrainedFederation", "build_federation", "build_model_family", "default_init_", "derive_seed",
           "draw_capacity_caps", "draw_caps", "equal_share_caps", "evaluate", "evaluations", "kept_units",
           "load_params", "numpy_rng", "run_federation", "setup_seed", "torch_generator", "train_federation",
           "train_local"]
