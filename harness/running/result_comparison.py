"""Whether a re-run gave a record's result, bit for bit, in everything its kind declares (what the golden guard,
`harness.running.golden`, checks of a golden run whose code changed)."""
from __future__ import annotations

import math
import struct
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from harness.kinds.base import ExperimentKind
from harness.loading.loaded import LoadedClaim
from harness.running.store import canonical

NOTHING_TO_COMPARE = "nothing to compare"


def claimed_arguments(claims: list[LoadedClaim], experiment: str) -> dict[str, list[dict]]:
    """The arguments the claims on `experiment` give each metric they read."""
    found: dict[str, list[dict]] = defaultdict(list)
    for loaded in claims:
        observe = loaded.claim.observe
        metric = getattr(observe, "metric", None)
        if loaded.claim.experiment == experiment and metric is not None:
            found[metric].append(dict(getattr(observe, "args", None) or {}))
    return found


def differences(kind: ExperimentKind, arguments: dict[str, list[dict]], old: dict[str, Any],
                new: dict[str, Any], config: Mapping[str, Any] | None = None) -> list[str]:
    """Where two results of one run differ, bit for bit, in what the kind declares: every metric not
    declared `varies` (with no arguments where it takes none, else with each set the claims give)
    and every per-client quantity; and in the fields the result holds (an older record lacking a field
    today's runner records, such as the test set's chance, would carry a result no run of this code
    gives). With the run's `config`, a metric drawn by randomness no seed reaches (`Metric.unseeded`) is
    left out too. Comparing nothing is a difference: it would vouch for nothing."""
    found, compared = [], 0
    if isinstance(old, dict) and isinstance(new, dict) and set(old) != set(new):
        missing, extra = sorted(set(new) - set(old)), sorted(set(old) - set(new))
        found.append("result fields: " + "; ".join(part for part in (
            f"the record lacks {', '.join(missing)}" if missing else "",
            f"the re-run lacks {', '.join(extra)}" if extra else "") if part))
    for name, metric in sorted(kind.metrics.items()):
        if metric.varies or (config is not None and metric.is_unseeded(config)):
            continue
        for args in _argument_sets(metric.args, arguments.get(name, [])):
            shown = f"{name}({canonical(args.model_dump(mode='json'))})" if type(args).model_fields else name
            compared += 1
            found += _differs(shown, _value(metric.compute, old, args), _value(metric.compute, new, args))
    for name, quantity in sorted(kind.client_quantities.items()):
        compared += 1
        found += _differs(f"client quantity {name}", _value(quantity.compute, old), _value(quantity.compute, new))
    return found if compared else [f"{NOTHING_TO_COMPARE}: kind {kind.name} declares no metric a re-run could check"]


def _argument_sets(model, claimed: list[dict]) -> list:
    sets, seen = [], set()
    for args in [{}, *claimed]:
        try:
            parsed = model.model_validate(args)
        except ValidationError:
            continue
        text = canonical(parsed.model_dump(mode="json"))
        if text not in seen:
            seen.add(text)
            sets.append(parsed)
    return sets


def _value(compute: Callable[..., Any], *arguments: Any) -> Any:
    """compute(*arguments), or what it raised (a record neither side can read is compared as such)."""
    try:
        value = compute(*arguments)
    except Exception as error:  # noqa: BLE001 - a metric raising on a record is a value to compare
        return f"raised {type(error).__name__}: {error}"
    return [float(v) for v in value] if isinstance(value, (list, tuple)) else value


def _differs(name: str, old: Any, new: Any) -> list[str]:
    return [] if _same(old, new) else [f"{name}: {old!r} recorded, {new!r} re-run"]


def _same(old: Any, new: Any) -> bool:
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new))
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return _bits(float(old)) == _bits(float(new))
    return old == new


def _bits(value: float) -> bytes:
    return b"nan" if math.isnan(value) else struct.pack("<d", value)
