"""The errors of data sets: no source worked, or a source's bytes are not what they must be."""
from __future__ import annotations


class DatasetUnavailable(RuntimeError):
    """No local copy, cache or download produced the dataset.

    ``tried`` lists every location or method attempted with its outcome;
    ``hint`` says how to provide the data.
    """

    def __init__(self, dataset: str, tried: list[str], hint: str) -> None:
        self.dataset = dataset
        self.tried = list(tried)
        self.hint = hint
        super().__init__(self._message())

    def _message(self) -> str:
        lines = [f"dataset {self.dataset!r} is unavailable. Tried:"]
        lines += [f"  - {attempt}" for attempt in self.tried] or ["  (nothing)"]
        lines.append(f"How to provide it: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self._message()


class DataCheckFailed(ValueError):
    """A source failed a check before use: a download whose digest or size is not the pinned one,
    an archive member above its size limit, an image that is not what the data set holds.

    The message names the file or URL, what was expected and what was found. A loader lists it
    as a failed source in its DatasetUnavailable.
    """
