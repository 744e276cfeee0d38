"""The federated round loop composed of allocation policy, local objective and aggregator."""
from methods.federated.capacity import draw_capacity_caps, equal_share_caps
from methods.federated.config import FederationConfig
from methods.federated.data import ClientData, FederatedDataset
from methods.federated.loop import initial_params, run_federation
from methods.federated.results import FederationResult, RoundRecord

__all__ = ["ClientData", "FederatedDataset", "FederationConfig", "FederationResult",
           "RoundRecord", "draw_capacity_caps", "equal_share_caps", "initial_params", "run_federation"]
