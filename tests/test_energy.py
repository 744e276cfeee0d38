"""The energy meter: RAPL package counters where readable, else CPU seconds at a stated power."""
from __future__ import annotations

from pathlib import Path

import pytest

from methods.energy import CPU_TIME_PROXY, PROXY_WATTS_PER_CORE, RAPL, EnergyMeter


def _busy(seconds: float) -> None:
    import time
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _zone(root: Path, name: str, energy: int, max_range: int = 2 ** 32) -> Path:
    zone = root / name
    zone.mkdir(parents=True)
    (zone / "energy_uj").write_text(f"{energy}\n")
    (zone / "max_energy_range_uj").write_text(f"{max_range}\n")
    return zone


def test_without_rapl_the_proxy_is_cpu_seconds_at_the_stated_power(tmp_path: Path) -> None:
    with EnergyMeter(tmp_path / "no-powercap") as meter:
        _busy(0.05)
    reading = meter.reading
    assert reading.source == CPU_TIME_PROXY
    assert reading.cpu_seconds >= 0.05
    assert reading.joules == pytest.approx(reading.cpu_seconds * PROXY_WATTS_PER_CORE)


def test_rapl_sums_the_packages_and_survives_a_counter_wrap(tmp_path: Path) -> None:
    first = _zone(tmp_path, "intel-rapl:0", 1_000_000)
    second = _zone(tmp_path, "intel-rapl:1", 2 ** 32 - 500_000)
    _zone(tmp_path, "intel-rapl:0:0", 0)  # a sub-zone (core) is inside its package's count
    (tmp_path / "intel-rapl:2").mkdir()  # unreadable: left out
    with EnergyMeter(tmp_path) as meter:
        (first / "energy_uj").write_text("3500000\n")   # +2.5 J
        (second / "energy_uj").write_text("1500000\n")  # wrapped: +0.5 J + 1.5 J
    assert meter.reading.source == RAPL
    assert meter.reading.joules == pytest.approx(4.5)
