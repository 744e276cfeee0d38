"""The fetch stage: obtain every data set the planned runs read before any run is keyed.

A record's key holds the fingerprints of the data sets its run reads, and a download turns a
fingerprint from 'unavailable' into the file's digest. So the pipeline fetches first (downloading,
checked, where allowed), then plans, runs and verifies with the fingerprints recorded here, and
runs never download: a data set that could not be fetched is 'unavailable' for all three.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape

from harness.running.planning import data_locations
from harness.settings import Settings


@dataclass(frozen=True)
class DataState:
    """Each data set's fingerprint ('unavailable' where none), and why those are unavailable."""

    fingerprints: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)


def fetch_data(names: list[str], settings: Settings, console: Console | None = None) -> DataState:
    """Obtain each data set (downloading where ``settings.download``); never raises for one
    that cannot be had, which stays 'unavailable' with the reason in ``problems``."""
    from harness.datasets.downloads import SOURCES
    from harness.datasets.errors import DatasetUnavailable
    from harness.datasets.registry import UNAVAILABLE, dataset_fingerprint, fetch_dataset

    console = console or Console(stderr=True)
    locations = data_locations(settings)
    state = DataState()
    for name in names:
        if settings.download and dataset_fingerprint(name, locations) == UNAVAILABLE:
            console.print(f"data: fetching {name} from {escape(SOURCES[name].url)}")
        try:
            state.fingerprints[name] = fetch_dataset(name, locations)
        except DatasetUnavailable as error:
            state.fingerprints[name] = UNAVAILABLE
            state.problems[name] = str(error)
            console.print(f"[yellow]data:[/yellow] {escape(str(error))}\nIts runs are recorded as lacking data.")
    return state


def survey_data(names: list[str], settings: Settings) -> DataState:
    """What is on this machine now, without downloading: for dry listings such as `fedclaims plan`."""
    from harness.datasets.downloads import SOURCES
    from harness.datasets.registry import UNAVAILABLE, dataset_fingerprint

    locations = data_locations(settings)
    state = DataState()
    for name in names:
        state.fingerprints[name] = dataset_fingerprint(name, locations)
        if state.fingerprints[name] == UNAVAILABLE:
            state.problems[name] = (f"not fetched yet; verify and report download it from {SOURCES[name].url}"
                                    if settings.download else
                                    "not on this machine, and downloads are off (FEDCLAIMS_DOWNLOAD=0)")
    return state
