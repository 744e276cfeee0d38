"""The floating-point numerics a run computes under: what decides the last bits of its results.

The same code, config and seed give the same bits only under the same numerics: the library
builds (torch with its MKL and oneDNN, numpy's and scipy's OpenBLAS), the kernels they select
for this CPU (ATen's capability level, oneDNN's ISA, MKL's code path, OpenBLAS's core type,
chosen by CPU model, flags and cache sizes), any environment setting that pins those choices,
the device and the thread count. `numerics()` describes all of it; its `fingerprint` is equal
on two machines only when each of those is equal, so two records with one fingerprint are
expected to be bit-identical and a regression check may compare them exactly.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
from pathlib import Path
from typing import Any

PIN_VARIABLES = (
    "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ONEDNN_DEFAULT_FPMATH_MODE",
    "DNNL_DEFAULT_FPMATH_MODE", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE",
    "OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "KMP_DETERMINISTIC_REDUCTION", "CUBLAS_WORKSPACE_CONFIG",
)
"""Environment settings that change which floating-point kernels run (or how they reduce)."""

ISA_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
             "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "avx_vnni", "neon", "asimd", "sve")
"""CPU features the kernels dispatch on, listed in the summary (every flag enters the fingerprint)."""

FINGERPRINT_LENGTH = 16


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo (empty where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
    return fields


def _caches() -> list[str]:
    """Level, type and size of each cache of the first CPU (kernels block their loops by these)."""
    caches = []
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level, kind, size = ((index / name).read_text().strip() for name in ("level", "type", "size"))
        except OSError:
            continue
        caches.append(f"L{level} {kind} {size}")
    return caches


def _cpu() -> dict[str, Any]:
    info = _cpuinfo()
    flags = sorted((info.get("flags") or info.get("Features") or "").split())
    return {
        "model": info.get("model name") or info.get("Model") or platform.processor() or platform.machine(),
        "vendor": info.get("vendor_id", ""),
        "family": info.get("cpu family", ""),
        "model_number": info.get("model", ""),
        "stepping": info.get("stepping", ""),
        "architecture": platform.machine(),
        "isa": [flag for flag in ISA_FLAGS if flag in flags],
        "flags_sha256": hashlib.sha256(" ".join(flags).encode()).hexdigest()[:16],
        "caches": _caches(),
    }


def _torch_build() -> dict[str, str]:
    """torch's version and those of the MKL and oneDNN it was built with."""
    import torch
    config = torch.__config__.show()
    mkl = re.search(r"Math Kernel Library Version ([^\s]+)", config)
    onednn = re.search(r"MKL-DNN v([^\s]+)", config)
    return {"torch": torch.__version__, "mkl": mkl.group(1) if mkl else "absent",
            "onednn": onednn.group(1) if onednn else "absent",
            "aten_cpu_capability": torch.backends.cpu.get_cpu_capability()}


def _blas() -> list[dict[str, str]]:
    """numpy's and scipy's BLAS builds and the core type each selected for this CPU."""
    import numpy  # noqa: F401 - loads numpy's BLAS so that it is listed
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS so that it is listed
    from threadpoolctl import threadpool_info
    found = {}
    for library in threadpool_info():
        if library.get("user_api") != "blas":
            continue
        entry = {name: str(library.get(name)) for name in ("internal_api", "version", "architecture")}
        entry["library"] = Path(library.get("filepath", "")).name
        found[entry["library"]] = entry
    return [found[name] for name in sorted(found)]


def _gpu(device: str) -> dict[str, Any]:
    import torch
    if not device.startswith("cuda") or not torch.cuda.is_available():
        return {}
    index = torch.device(device).index or 0
    return {"name": torch.cuda.get_device_name(index),
            "capability": ".".join(map(str, torch.cuda.get_device_capability(index))),
            "cuda": str(torch.version.cuda), "cudnn": str(torch.backends.cudnn.version()),
            "tf32_matmul": torch.backends.cuda.matmul.allow_tf32, "tf32_cudnn": torch.backends.cudnn.allow_tf32}


def fingerprint_of(description: dict[str, Any]) -> str:
    body = {k: v for k, v in description.items() if k != "fingerprint"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:FINGERPRINT_LENGTH]


@functools.cache
def _numerics(device: str, threads: int, pins: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    import numpy
    description = {**_torch_build(), "numpy": numpy.__version__, "blas": _blas(), "cpu": _cpu(),
                   "pins": dict(pins), "device": device, "gpu": _gpu(device), "threads": threads}
    description["fingerprint"] = fingerprint_of(description)
    return description


def current_pins() -> dict[str, str]:
    return {name: os.environ[name] for name in PIN_VARIABLES if name in os.environ}


def numerics(device: str = "cpu", threads: int | None = None) -> dict[str, Any]:
    """The numerics this process computes under on `device` with `threads` torch threads."""
    import torch
    threads = torch.get_num_threads() if threads is None else threads
    return dict(_numerics(device, threads, tuple(sorted(current_pins().items()))))


def summary(description: dict[str, Any] | None) -> str:
    """One line a reader can compare across machines."""
    if not description:
        return "not recorded"
    cpu = description.get("cpu", {})
    pins = description.get("pins") or {}
    blas = "; ".join(f"{b['internal_api']} {b['version']} {b['architecture']}" for b in description.get("blas", []))
    parts = [f"{cpu.get('model', '?')} (family {cpu.get('family', '?')}, model {cpu.get('model_number', '?')}, "
             f"{', '.join(cpu.get('caches', []))})",
             f"torch {description.get('torch')} (ATen {description.get('aten_cpu_capability')}, "
             f"MKL {description.get('mkl')}, oneDNN {description.get('onednn')})",
             f"BLAS {blas}" if blas else "",
             "pins " + ", ".join(f"{k}={v}" for k, v in sorted(pins.items())) if pins else "no pins",
             f"{description.get('device')}, {description.get('threads')} thread(s)"]
    gpu = description.get("gpu") or {}
    if gpu:
        parts.append(f"GPU {gpu['name']} (CUDA {gpu['cuda']}, cuDNN {gpu['cudnn']})")
    return f"`{description.get('fingerprint')}`: " + "; ".join(p for p in parts if p)


def fingerprint(record: dict[str, Any] | None) -> str:
    """The numerics fingerprint of a run record ('unrecorded' for records made before it was kept)."""
    if not record:
        return "unrecorded"
    return ((record.get("provenance") or {}).get("numerics") or {}).get("fingerprint", "unrecorded")


SIMULATED_MACHINES = {
    "AVX512": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2",
               "OPENBLAS_CORETYPE": "Haswell"},
    "AVX2": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41", "MKL_CBWR": "SSE4_2",
             "OPENBLAS_CORETYPE": "Nehalem"},
}
"""Kernel pins that make this process compute like an older x86 machine: an AVX-512 machine
simulates an AVX2 one, an AVX2 machine an SSE4 one (keyed by ATen's capability without pins)."""


def simulated_machine(description: dict[str, Any]) -> dict[str, str] | None:
    """Pins under which this machine computes with other kernels than by default (None: none known,
    e.g. on ARM). They take effect in a new process (the libraries read them when they load)."""
    return SIMULATED_MACHINES.get(str(description.get("aten_cpu_capability", "")).upper())
