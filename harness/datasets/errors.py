"""The error raised when no source of a dataset works."""
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
