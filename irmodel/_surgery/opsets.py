"""Whether a model's or a function's ai.onnx operators mean the same at two opset versions.

Moving nodes from one ai.onnx opset to another needs the version converter only when an
operator they use changed in between; when none did (the same schema, the same
since_version, at both), the nodes are already valid at the other version.  The inliner
(a function importing another opset than its model) and composition (two models of
different opsets) use this to go ahead without a converter, and say which operators need
one otherwise.
"""

from __future__ import annotations

from .scope import normalized, subgraphs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable


def opset_map(imports: Iterable[Any]) -> dict:
    """domain (normalized) -> version, the first entry of a domain winning (onnx's OpsetMap)."""
    out: dict = {}
    for o in imports:
        out.setdefault(normalized(o.domain), o.version)
    return out


def changed_operators(nodes: Iterable[Any], source: int, target: int) -> list:
    """The ai.onnx operators among ``nodes`` (sub-graphs included) whose schema differs
    between opset ``source`` and ``target``, sorted; empty when the nodes can move as they are."""
    from .. import defs  # noqa: PLC0415
    changed: set = set()
    pending = [nodes]
    seen: set = set()
    while pending:
        for node in pending.pop():
            pending.extend(g.node for g in subgraphs(node))
            op = node.op_type
            if normalized(node.domain) != "" or op in seen:
                continue
            seen.add(op)
            old = defs.get_schema(op, source) if defs.has_schema(op, source) else None
            new = defs.get_schema(op, target) if defs.has_schema(op, target) else None
            if old is None or new is None or not _same_signature(old, new, widening=source < target):
                changed.add(op)
    return sorted(changed)


def _same_signature(old: Any, new: Any, widening: bool) -> bool:
    """True when ``new`` takes every node ``old`` takes and reads it the same way: the same
    inputs, outputs and attributes (types, required flags, defaults) and, going up, type
    constraints that only grew (Identity-13 adding bfloat16); going down, equal ones.

    A signature, not the semantics: an operator whose meaning changed with its signature
    unchanged would pass, and none in onnx's changelog does so without a new attribute
    default or parameter that this compares.
    """
    if old.since_version == new.since_version:
        return True

    def params(ps) -> list:
        return [(p.name, p.type_str, p.option) for p in ps]

    def attrs(s) -> dict:
        return {a.name: (a.type, a.required, a.default_value.SerializeToString()) for a in s.attributes.values()}

    if params(old.inputs) != params(new.inputs) or params(old.outputs) != params(new.outputs):
        return False
    if attrs(old) != attrs(new):
        return False
    new_types = {c.type_param_str: set(c.allowed_type_strs) for c in new.type_constraints}
    for c in old.type_constraints:
        allowed = new_types.get(c.type_param_str)
        if allowed is None or not (set(c.allowed_type_strs) <= allowed if widening
                                   else set(c.allowed_type_strs) == allowed):
            return False
    return len(new_types) == len(old.type_constraints)
