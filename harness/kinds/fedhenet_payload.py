"""FedHENet's upload payload with and without encryption, by client sample count and feature dimension."""
from __future__ import annotations

from pydantic import Field

from harness.kinds.base import ExperimentKind, KindExample, Metric, NotApplicable, Plot
from harness.kinds.fedhenet import CIPHERTEXT_AGREEMENT
from harness.schema.base import StrictModel


class ShapeArg(StrictModel):
    feature_dim: int = Field(ge=1, description="backbone feature dimension D")
    client_samples: int = Field(ge=1, description="samples one client holds, n_k")


def _row(result, args: ShapeArg) -> dict:
    for row in result["rows"]:
        if row["feature_dim"] == args.feature_dim and row["client_samples"] == args.client_samples:
            return row
    measured = sorted({(r["feature_dim"], r["client_samples"]) for r in result["rows"]})
    raise NotApplicable(f"(D, n_k) = ({args.feature_dim}, {args.client_samples}) was not measured; "
                        f"measured: {measured}")


def _field(key: str):
    return lambda result, args: float(_row(result, args)[key])


def _draw_ratio_curves(ax, results_by_variant, labels):
    for variant, results in results_by_variant.items():
        rows = results[0]["rows"]
        for dim in sorted({r["feature_dim"] for r in rows}):
            curve = sorted((r["client_samples"], r["ratio"]) for r in rows if r["feature_dim"] == dim)
            ax.plot([n for n, _ in curve], [v for _, v in curve], "o-", label=f"{labels[variant]}, D = {dim}")
    ax.axhline(2.25, color="grey", linestyle=":", label="paper: 2.25x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("samples per client n_k")
    ax.set_ylabel("encrypted / plaintext upload")
    ax.legend(fontsize=6)


# Ciphertext sizes are measured from real, compressed serializations: they move by ~0.05%
# between runs with the encryption's own randomness (not the seed), hence varies=True.
FEDHENET_PAYLOAD = ExperimentKind(
    name="fedhenet_payload",
    evidence="analytic",
    description="One FedHENet client upload with M in plaintext or CKKS-encrypted (real ciphertexts), U S "
                "counted as (D+1) x min(n_k, D+1) values, over feature dimensions D and sample counts n_k.",
    runner="harness.runners.fedhenet_payload",
    metrics={
        "payload_ratio": Metric("client upload with encrypted M / with plaintext M, at (D, n_k)",
                                _field("ratio"), args=ShapeArg, varies=True, deterministic=True,
                                agreement=CIPHERTEXT_AGREEMENT, numerics_invariant=True),
        "upload_bytes_encrypted": Metric("client upload with encrypted M, at (D, n_k)", _field("upload_encrypted"),
                                         args=ShapeArg, unit="bytes", varies=True, deterministic=True,
                                         agreement=CIPHERTEXT_AGREEMENT, numerics_invariant=True),
        "upload_bytes_plain": Metric("client upload with plaintext M, at (D, n_k)", _field("upload_plain"),
                                     args=ShapeArg, unit="bytes", deterministic=True, numerics_invariant=True),
        "us_bytes": Metric("bytes of the plaintext U S in one client upload, at (D, n_k)", _field("us_bytes"),
                           args=ShapeArg, unit="bytes", deterministic=True, numerics_invariant=True),
    },
    plots={"payload_ratio_curves": Plot("encrypted / plaintext upload against n_k, per D and layout",
                                        _draw_ratio_curves)},
    example=KindExample({"feature_dims": [16], "client_samples": [8], "num_classes": 10, "us_per_class": True,
                         "float_bytes": 4,
                         "ckks": {"poly_modulus_degree": 8192, "coeff_mod_bit_sizes": [60, 40, 40, 60],
                                  "global_scale_bits": 40}},
                        args=dict.fromkeys(("payload_ratio", "upload_bytes_encrypted", "upload_bytes_plain",
                                            "us_bytes"), {"feature_dim": 16, "client_samples": 8})),
)
