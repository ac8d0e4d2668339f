"""Checking a node's types against its schema's type constraints (``check_type``).

The reference's ``CheckInputOutputType``: input and output counts within the schema's
bounds; each typed input's type among its parameter's allowed types, and the inputs
and outputs that share a homogeneous type variable of one type.  An output still
untyped gets its type from the constraint when that decides it (a single allowed
type, or the type an input bound the variable to).  Failures are hard errors, as
they are (checker errors) in the reference.
"""

from __future__ import annotations

from ..defs.typestrings import normalize_type_str
from .errors import FatalError, HardError
from .typestr import parse_type_string, type_string
from .types import UNSET

SINGLE, OPTIONAL, VARIADIC = 0, 1, 2


def _allowed(schema, param) -> frozenset:
    """The normalised types ``param`` allows: a schema may write ``seq(map(int64, float))``
    (ZipMap) where a value's type reads ``seq(map(int64,tensor(float)))``; the reference
    compares normalised types (``FormalParameter.types``)."""
    types = getattr(param, "type_set", None)
    if types is not None:
        return types
    tc = schema.type_constraint(param.type_str) if hasattr(schema, "type_constraint") else None
    declared = tc.allowed_type_strs if tc is not None else (param.type_str,)
    try:
        return frozenset(normalize_type_str(s) for s in declared)
    except ValueError as exc:
        raise FatalError(str(exc)) from None


# Schemas that allow only some counts inside [min, max] (the reference's NumOutputs({...})).
# Not part of the schema data yet: the facts, from onnx/defs/nn.
_ALLOWED_OUTPUT_COUNTS = {("", "BatchNormalization", v): c for v, c in
                          ((1, {1, 5}), (6, {1, 5}), (7, {1, 5}), (9, {1, 5}), (14, {1, 3}), (15, {1, 3}))}


def _verify_count(schema, n: int, what: str, node_name: str = "") -> None:
    lo, hi = (schema.min_input, schema.max_input) if what == "input" else (schema.min_output, schema.max_output)
    prefix = f"Node ({node_name})" if node_name else "Node"
    if n < lo or n > hi:
        raise HardError(f"{prefix} has {what} size {n} not in range [min={lo}, max={hi}].")
    if what == "output":
        allowed = _ALLOWED_OUTPUT_COUNTS.get((schema.domain, schema.name, schema.since_version))
        if allowed is not None and n not in allowed:
            raise HardError(f"{prefix} has output size {n} not in allowed output sizes.")


def _bind_homogeneous(bound: dict[str, str], param, ts: str) -> None:
    """A homogeneous parameter binds its type string on first sight; later inputs and outputs must match."""
    if param.is_homogeneous:
        prev = bound.setdefault(param.type_str, ts)
        if prev != ts:
            raise HardError(f"{param.name} has inconsistent type {ts}")


def check_input_output_types(schema, ctx) -> None:
    _verify_count(schema, ctx.num_inputs, "input")
    _verify_count(schema, ctx.num_outputs, "output")
    bound: dict[str, str] = {}  # type parameter -> the type string bound to it
    formal_in = schema.inputs
    for i in range(ctx.num_inputs):
        param = formal_in[i] if i < len(formal_in) else formal_in[-1]
        t = ctx.input_type(i)
        if t is None or t is UNSET:
            continue
        allowed = _allowed(schema, param)
        ts = type_string(t)
        if allowed and ts not in allowed:
            raise HardError(f"{param.name} typestr: {param.type_str}, has unsupported type: {ts}")
        _bind_homogeneous(bound, param, ts)
    formal_out = schema.outputs
    for o in range(ctx.num_outputs):
        param = formal_out[o] if o < len(formal_out) else formal_out[-1]
        allowed = _allowed(schema, param)
        t = ctx.outputs[o]
        if t is None or t is UNSET:
            if len(allowed) == 1:
                t = parse_type_string(next(iter(allowed)))
            elif param.type_str in bound:
                t = parse_type_string(bound[param.type_str])
            else:
                continue
            ctx.outputs[o] = t
        ts = type_string(t)
        if allowed and ts not in allowed:
            raise HardError(f"{param.name} has unsupported type {ts}")
        _bind_homogeneous(bound, param, ts)


def verify_node(schema, node) -> None:
    """``OpSchema::Verify``: the node's arity fits the schema (for ``infer_node_outputs``)."""
    if schema.deprecated:
        raise HardError(f"Operator '{schema.name}' has been deprecated since version {schema.since_version}")
    inputs = list(node.input)
    outputs = list(node.output)
    _verify_count(schema, len(inputs), "input", node.name)
    _verify_count(schema, len(outputs), "output", node.name)
    for i, name in enumerate(inputs):
        if i >= len(schema.inputs):
            if schema.inputs and schema.inputs[-1].option == VARIADIC:
                break
            raise HardError(f"Node ({node.name}) has more inputs ({len(inputs)}) than declared "
                            f"({len(schema.inputs)}) in op definition.")
        if not name and schema.inputs[i].option == SINGLE:
            raise HardError(f"Node ({node.name})'s input {i} is marked single but has an empty string in the graph")
    for i, name in enumerate(outputs):
        if i >= len(schema.outputs):
            if schema.outputs and schema.outputs[-1].option == VARIADIC:
                break
            raise HardError(f"Node ({node.name}) has more outputs ({len(outputs)}) than declared "
                            f"({len(schema.outputs)}) in op definition.")
        if not name and schema.outputs[i].option == SINGLE:
            raise HardError(f"Node ({node.name})'s output {i} is marked single but has an empty string in the "
                            "graph")
