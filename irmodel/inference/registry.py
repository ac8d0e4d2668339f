"""Which function infers which operator schema.

Functions are registered by (domain, op_type, since_version): a registration covers the
schema of that since_version and every later one up to the next registration of the
same operator.  Registering ``None`` says "no inference function from this version"
(the reference has versions without one, e.g. Add-1).  Data-propagation functions have
a table of their own with the same rule.

The operator modules (`irmodel.inference.ops`) register themselves here when imported;
the lookups live one level up, in `irmodel.inference.lookup`, which imports them all, so
that this table never imports its own users.
"""

from __future__ import annotations

import bisect
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Callable

INFER: dict = {}  # (domain, op_type) -> ([since, ...], [fn, ...]) sorted by since
PROPAGATE: dict = {}


def _add(table: dict, domain: str, op_type: str, since: int, fn) -> None:
    versions, fns = table.setdefault((domain, op_type), ([], []))
    i = bisect.bisect_left(versions, since)
    if i < len(versions) and versions[i] == since:
        raise ValueError(f"{domain or 'ai.onnx'}::{op_type}-{since} registered twice")
    versions.insert(i, since)
    fns.insert(i, fn)


def find(table: dict, domain: str, op_type: str, since: int):
    entry = table.get((domain, op_type))
    if entry is None:
        return None
    versions, fns = entry
    i = bisect.bisect_right(versions, since) - 1
    return fns[i] if i >= 0 else None


def infers(op_types, *since_versions: int, domain: str = "") -> Callable:
    """Decorator: ``fn`` infers ``op_types`` (a name or names) from each given since_version."""
    names = (op_types,) if isinstance(op_types, str) else tuple(op_types)

    def deco(fn):
        for name in names:
            for v in since_versions:
                _add(INFER, domain, name, v, fn)
        return fn
    return deco


def no_inference(op_type: str, *since_versions: int, domain: str = "") -> None:
    """Record versions of ``op_type`` that have no inference function in the reference."""
    for v in since_versions:
        _add(INFER, domain, op_type, v, None)


def propagates(op_types, *since_versions: int, domain: str = "") -> Callable:
    """Decorator: ``fn`` is the data-propagation function of ``op_types`` from each version."""
    names = (op_types,) if isinstance(op_types, str) else tuple(op_types)

    def deco(fn):
        for name in names:
            for v in since_versions:
                _add(PROPAGATE, domain, name, v, fn)
        return fn
    return deco


def no_propagation(op_type: str, *since_versions: int, domain: str = "") -> None:
    for v in since_versions:
        _add(PROPAGATE, domain, op_type, v, None)
