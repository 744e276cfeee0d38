"""Plain JSON values from what runs compute: the one conversion records and stores share."""
from __future__ import annotations

import math
from typing import Any


def json_safe(value: Any) -> Any:
    """Plain JSON types only: non-finite floats become None, tuples, numpy scalars and arrays plain;
    any other type is refused (TypeError), so that nothing is stored that cannot be read back."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return json_safe(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    raise TypeError(f"cannot store a {type(value).__name__} in a JSON record")
