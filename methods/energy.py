"""Energy of a stretch of computation: RAPL where the machine exposes it, else a labelled proxy.

RAPL (`/sys/class/powercap/intel-rapl:N/energy_uj`, one counter per CPU package; AMD's
packages appear there too) counts the whole package, so anything else running on it is
counted as well: meter one run at a time. Where no counter is readable the proxy is the
process's CPU seconds (all its threads) at a stated power per busy core,
`PROXY_WATTS_PER_CORE`: an assumed figure, not a measurement, so only ratios of two proxy
energies mean anything. Neither counts a GPU.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

RAPL_ROOT = Path("/sys/class/powercap")
PROXY_WATTS_PER_CORE = 10.0
"""Assumed power of one busy core for the CPU-time proxy (W); the ratio of two proxies does not depend on it."""
RAPL = "rapl"
CPU_TIME_PROXY = "cpu-time-proxy"


@dataclass(frozen=True)
class EnergyReading:
    joules: float
    source: str
    """`rapl` (measured) or `cpu-time-proxy` (CPU seconds x PROXY_WATTS_PER_CORE)."""
    cpu_seconds: float
    wall_seconds: float


def _packages(root: Path) -> list[Path]:
    """Readable top-level RAPL domains (intel-rapl:N, not their sub-zones intel-rapl:N:M)."""
    if not root.is_dir():
        return []
    zones = [z for z in sorted(root.iterdir()) if re.fullmatch(r"intel-rapl:\d+", z.name)]
    readable = []
    for zone in zones:
        try:
            int((zone / "energy_uj").read_text())
            int((zone / "max_energy_range_uj").read_text())
        except (OSError, ValueError):
            continue
        readable.append(zone)
    return readable


def _counters(zones: list[Path]) -> list[int]:
    return [int((zone / "energy_uj").read_text()) for zone in zones]


class EnergyMeter:
    """`with EnergyMeter() as meter: ...` then `meter.reading`."""

    def __init__(self, rapl_root: Path = RAPL_ROOT) -> None:
        self._zones = _packages(rapl_root)
        self.reading: EnergyReading | None = None

    def __enter__(self) -> EnergyMeter:
        self._start = _counters(self._zones)
        self._cpu, self._wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        cpu, wall = time.process_time() - self._cpu, time.perf_counter() - self._wall
        if self._zones:
            end = _counters(self._zones)
            ranges = [int((zone / "max_energy_range_uj").read_text()) for zone in self._zones]
            micro = sum((e - s) % r if r > 0 else e - s for s, e, r in zip(self._start, end, ranges))
            self.reading = EnergyReading(micro / 1e6, RAPL, cpu, wall)
        else:
            self.reading = EnergyReading(cpu * PROXY_WATTS_PER_CORE, CPU_TIME_PROXY, cpu, wall)
