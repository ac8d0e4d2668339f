"""Which function infers which operator schema.

Functions are registered by (domain, op_type, since_version): a registration covers the
schema of that since_version and every later one up to the next registration of the
same operator.  Registering ``None`` says "no inference function from this version"
(the reference has versions without one, e.g. Add-1).  Data-propagation functions have
a table of their own with the same rule.

The operator modules (`irmodel.inference.ops`) register themselves when imported;
`load_all` imports them all once, on the first inference.
"""

from __future__ import annotations

import bisect
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Callable

_INFER: dict = {}  # (domain, op_type) -> ([since, ...], [fn, ...]) sorted by since
_PROPAGATE: dict = {}
_loaded = False


def _add(table: dict, domain: str, op_type: str, since: int, fn) -> None:
    versions, fns = table.setdefault((domain, op_type), ([], []))
    i = bisect.bisect_left(versions, since)
    if i < len(versions) and versions[i] == since:
        raise ValueError(f"{domain or 'ai.onnx'}::{op_type}-{since} registered twice")
    versions.insert(i, since)
    fns.insert(i, fn)


def _find(table: dict, domain: str, op_type: str, since: int):
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
                _add(_INFER, domain, name, v, fn)
        return fn
    return deco


def no_inference(op_type: str, *since_versions: int, domain: str = "") -> None:
    """Record versions of ``op_type`` that have no inference function in the reference."""
    for v in since_versions:
        _add(_INFER, domain, op_type, v, None)


def propagates(op_types, *since_versions: int, domain: str = "") -> Callable:
    """Decorator: ``fn`` is the data-propagation function of ``op_types`` from each version."""
    names = (op_types,) if isinstance(op_types, str) else tuple(op_types)

    def deco(fn):
        for name in names:
            for v in since_versions:
                _add(_PROPAGATE, domain, name, v, fn)
        return fn
    return deco


def no_propagation(op_type: str, *since_versions: int, domain: str = "") -> None:
    for v in since_versions:
        _add(_PROPAGATE, domain, op_type, v, None)


def inference_function(domain: str, op_type: str, since_version: int):
    """The function for the schema ``op_type``-``since_version`` of ``domain``, or None."""
    load_all()
    return _find(_INFER, domain, op_type, since_version)


def rule_for(schema, domain: str, op_type: str):
    """The rule that infers ``schema``: the Python function a program set on it (onnx's
    ``set_type_and_shape_inference_function``, wrapped by `pyrules.PythonRule`), else
    ours.  Asked once per (domain, op, version) of a run (`engine.Run.op_rules`)."""
    get_user = getattr(schema, "get_type_and_shape_inference_function", None)
    user = get_user() if get_user is not None else None
    if user is not None:
        from .pyrules import PythonRule  # noqa: PLC0415
        return PythonRule(user)
    return inference_function(domain, op_type, schema.since_version)


def propagation_function(domain: str, op_type: str, since_version: int):
    load_all()
    return _find(_PROPAGATE, domain, op_type, since_version)


def registered_versions(domain: str, op_type: str) -> list:
    """The since_versions registered for an operator (with or without a function)."""
    load_all()
    entry = _INFER.get((domain, op_type))
    return list(entry[0]) if entry else []


def registered_ops() -> list:
    """``[(domain, op_type)]`` of every registered operator."""
    load_all()
    return sorted(_INFER)


def load_all() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from . import ops  # noqa: F401,PLC0415 (importing registers every family)
