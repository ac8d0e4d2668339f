"""Does a converted node fit the target version's schema?  The last word on every node.

Whatever the steps did, the node the converter emits must be a valid node of the version
in force at the target: its attributes known and the required ones present, its inputs and
outputs within the schema's counts, and the types it is used with allowed.  Type checks
need shape inference; they are made only where the target allows fewer types than the
source did (most downgrades of an operator whose types were widened).
"""

from __future__ import annotations

from .errors import StepRefused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .scope import Scope
    from .work import NodeWork

_VARIADIC = 2


def _formal(params, i: int):
    if i < len(params):
        return params[i]
    if params and params[-1].option == _VARIADIC:
        return params[-1]
    return None


def _allowed(schema, type_str: str) -> frozenset[str]:
    c = schema.type_constraint(type_str)
    return frozenset(c.allowed_type_strs) if c is not None else frozenset((type_str,))


def check_fit(w: NodeWork, s: Scope, source, target) -> None:
    """Raise `StepRefused` when ``w`` does not fit schema ``target`` (it came from ``source``)."""
    for name in w.attrs:
        if name not in target.attributes:
            raise StepRefused("V003", f"attribute {name!r} does not exist in "
                                      f"{target.name}-{target.since_version}")
    for name, a in target.attributes.items():
        if a.required and name not in w.attrs:
            raise StepRefused("V003", f"{target.name}-{target.since_version} requires attribute {name!r}")
    n_in = len(w.inputs)
    if n_in > target.max_input or n_in < target.min_input:
        raise StepRefused("V005", f"{target.name}-{target.since_version} takes {target.min_input} to "
                                  f"{target.max_input} inputs, the node has {n_in}")
    n_out = len(w.outputs)
    if n_out > target.max_output or n_out < target.min_output:
        raise StepRefused("V005", f"{target.name}-{target.since_version} has {target.min_output} to "
                                  f"{target.max_output} outputs, the node uses {n_out}")
    if source is target or not s.typed:
        return
    for kind, names, params, src_params in (("input", w.inputs, target.inputs, source.inputs),
                                            ("output", w.outputs, target.outputs, source.outputs)):
        for i, name in enumerate(names):
            p = _formal(params, i)
            if not name or p is None:
                continue
            allowed = _allowed(target, p.type_str)
            q = _formal(src_params, i) if source.name == target.name else None
            if q is not None and _allowed(source, q.type_str) <= allowed:
                continue  # nothing was narrowed: no need to know the type
            t = s.type_string(name)
            if t is not None and t not in allowed:
                raise StepRefused("V004", f"{kind} {name!r} is {t}, which "
                                          f"{target.name}-{target.since_version} does not allow "
                                          f"({p.type_str}: {', '.join(sorted(allowed))})")
