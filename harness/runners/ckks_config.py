"""The CKKS context settings a FedHENet config names (the authors' by default)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from methods.fedhenet.secure import CkksParams


class CkksConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    poly_modulus_degree: int = 32768
    coeff_mod_bit_sizes: list[int] = Field(default=[60, 40, 40, 60], min_length=2)
    global_scale_bits: int = 40

    def params(self) -> CkksParams:
        return CkksParams(self.poly_modulus_degree, tuple(self.coeff_mod_bit_sizes), 2.0 ** self.global_scale_bits)
