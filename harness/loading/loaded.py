"""A spec and a claim as the catalog holds them once loaded: each with the document it was read from."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from pydantic import BaseModel

from harness.kinds.base import ExperimentKind
from harness.loading.configs import resolved_config
from harness.loading.yamlsource import Document
from harness.schema.claim import Claim
from harness.schema.spec import ExperimentSpec


@dataclass
class LoadedSpec:
    spec: ExperimentSpec
    doc: Document
    kind: ExperimentKind

    def resolve(self, variant: str, profile: str) -> BaseModel:
        """The validated config of one variant at one profile (already checked at load)."""
        return self.kind.config_model.model_validate(resolved_config(self.spec, variant, profile))

    def config_digest(self, variant: str, profile: str) -> str:
        """SHA-256 of the config the spec gives a variant at a profile (references to other runs unresolved):
        what REPORT.json records per shown run, so a later report can tell the spec's scale changed since."""
        config = self.resolve(variant, profile).model_dump(mode="json", exclude_none=False)
        return hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass
class LoadedClaim:
    claim: Claim
    paper: str
    doc: Document
    path: tuple[str | int, ...]

    @property
    def id(self) -> str:
        return self.claim.id
