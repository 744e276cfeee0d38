"""Registry of experiment kinds. A new kind: a runner module, a declaration, one entry here."""
from __future__ import annotations

from harness.kinds.aggregates import with_client_aggregates
from harness.kinds.analytic import ALLOCATION_EXAMPLE, ALLOCATION_RULE, MASK_COVERAGE, SUBMODEL_COST
from harness.kinds.base import ExperimentKind
from harness.kinds.fedhenet import FEDHENET
from harness.kinds.fedhenet_payload import FEDHENET_PAYLOAD
from harness.kinds.federated import FEDERATED_TRAINING

KINDS: dict[str, ExperimentKind] = {
    kind.name: with_client_aggregates(kind)
    for kind in (ALLOCATION_RULE, ALLOCATION_EXAMPLE, SUBMODEL_COST, MASK_COVERAGE, FEDERATED_TRAINING, FEDHENET,
                 FEDHENET_PAYLOAD)
}
