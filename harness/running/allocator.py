"""The C allocator's settings for a process that trains (glibc only; elsewhere nothing changes).

glibc serves an allocation above its mmap threshold with fresh pages from ``mmap`` and returns
them on free. The threshold moves with what the process has freed so far (from 128 KiB up to
32 MiB), so two processes running the same training step can differ: in one the step's
activation and gradient buffers come from the heap, in the other every step maps them afresh and
faults each page in on first touch. Measured on a 2-core Intel Xeon, one round of the 256-unit
character LSTM at width 0.5: 810 ms in a plain per-client loop and 1,220 ms in fedclaims' round
loop under glibc's defaults; 817 ms and 818 ms with the settings below (benchmarks/README.md).

Fixing the threshold at glibc's own ceiling and keeping up to 256 MiB of freed heap before
trimming makes every step reuse the same memory. Where a buffer lives changes no computed value:
PyTorch aligns its CPU buffers itself, so the same seed gives the same bits either way.
"""
from __future__ import annotations

import ctypes
import functools
import os
import platform

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems
TRIM_THRESHOLD_BYTES = 256 << 20
USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")


def on_glibc() -> bool:
    return platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@functools.cache
def tune_allocator() -> bool:
    """Set glibc's mmap and trim thresholds for this process, once; whether they were set.

    Nothing is set off glibc, or where the user chose either threshold through glibc's own
    environment variables (those win).
    """
    if not on_glibc():
        return False
    if any(name in os.environ for name in USER_SETTINGS):
        return False
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
                and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
