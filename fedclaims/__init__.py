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
from harness.runners.federated import Federation
from methods.federated import ClientData, FederatedDataset, FederationConfig, run_federation
from methods.federated.objectives import LocalObjective, ObjectiveContext, train_local
from methods.federated.parts import Choice, NoSettings, Settings
from methods.federated.policies import AllocationPolicy, PolicyContext
from methods.federated.rounds import RoundContext, RoundHook
from methods.models.slicing import SliceableFamily, default_init_
from methods.seeding import derive_seed, numpy_rng, setup_seed, torch_generator

__all__ = ["FEDERATED_TRAINING", "AllocationPolicy", "Choice", "ClientData", "ClientQuantity", "ExperimentKind",
           "ExtensionMetric",
           "FederatedDataset", "Federation", "FederationConfig", "KindExample", "Learning", "LocalObjective", "Metric",
           "NoSettings", "NotApplicable", "ObjectiveContext", "Plot", "PolicyContext", "RoundContext", "RoundHook",
           "RunContext", "Settings", "SliceableFamily", "default_init_", "derive_seed", "evaluations", "numpy_rng",
           "run_federation", "setup_seed", "torch_generator", "train_local"]
