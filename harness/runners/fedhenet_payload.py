"""FedHENet's encrypted-to-plaintext upload ratio over client sample counts and feature dimensions.

No training: for each feature dimension D, one client's M ((D+1) x C) is encrypted for real
with the configured CKKS context (one vector per class) and the serialized ciphertexts are
measured; U S is counted as (D+1) x min(n_k, D+1) values in the configured layout
(methods.fedhenet.payload). One row per (D, n_k).
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from harness.runners.ckks_config import CkksConfig
from harness.runners.context import RunContext
from methods.fedhenet.payload import Layout, ciphertext_bytes, upload
from methods.fedhenet.secure import check_fits, create_context
from methods.seeding import setup_seed

# fedclaims behaviour version: 1


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    feature_dims: list[int] = Field(min_length=1, description="backbone feature dimensions D")
    client_samples: list[int] = Field(min_length=1, description="samples per client n_k")
    num_classes: int = Field(10, ge=1)
    us_per_class: bool = Field(description="one U S per class (the FedHENet code) or one per client")
    float_bytes: Literal[4, 8] = Field(description="bytes per plaintext value: 4 (float32) or 8 (float64)")
    ckks: CkksConfig = CkksConfig()

    def layout(self) -> Layout:
        return Layout(us_per_class=self.us_per_class, float_bytes=self.float_bytes)


def run(config: Config, seed: int, context: RunContext) -> dict:
    layout = config.layout()
    params = config.ckks.params()
    for dim in config.feature_dims:
        check_fits(params, dim + 1)
    ctx = create_context(params)
    rng = np.random.default_rng(setup_seed(seed, "payload-m"))
    rows, ciphertexts = [], {}
    for i, dim in enumerate(config.feature_dims):
        context.progress(i / len(config.feature_dims), f"encrypting M for D = {dim}")
        sizes = ciphertext_bytes(ctx, dim, config.num_classes, params, rng)
        ciphertexts[str(dim)] = sizes
        for n in config.client_samples:
            up = upload(dim, n, config.num_classes, layout, sum(sizes))
            rows.append({"feature_dim": dim, "client_samples": n, "us_bytes": up.us_bytes,
                         "m_plain_bytes": up.m_plain_bytes, "m_encrypted_bytes": up.m_encrypted_bytes,
                         "upload_plain": up.plain, "upload_encrypted": up.encrypted, "ratio": up.ratio})
    return {"rows": rows, "ciphertext_bytes": ciphertexts, "num_classes": config.num_classes,
            "us_per_class": config.us_per_class, "float_bytes": config.float_bytes,
            "slots": params.slots}
