"""An operator that does not exist at the target becomes its function body, inlined.

onnx defines many newer operators by a body of older ones (LayerNormalization, Gelu,
Mish, HardSwish, ...): stored bodies in the schema table, and bodies written by code for a
node (`irmodel.defs.bodies`).  `expand` picks the body of the node's schema registered for
the lowest opset (fewest steps left to the target), and inlines it: the formal inputs and
outputs become the node's names, every name made inside becomes a fresh one, attribute
references (``ref_attr_name``) take the node's attribute or the schema's default.  The
body's nodes are then converted from the body's opset by the driver.
"""

from __future__ import annotations

from . import schemas
from ..errors import ValidationError
from .errors import StepRefused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .scope import Scope
    from .work import NodeWork


def _body(w: NodeWork, schema, s: Scope):
    """(FunctionProto, opset of its default-domain ops) for the node, or None."""
    static = sorted(schema.function_opset_versions)
    if static:
        f = schema.get_function_with_opset_version(static[0])
        if f is not None:
            return f
    built = sorted(schema.context_dependent_function_opset_versions)
    if built:
        from ..defs.bodies import build_function_body  # noqa: PLC0415
        from ..inference.types import type_to_proto  # noqa: PLC0415

        types = []
        for name in w.inputs:
            t = s.type_of(name) if name else None
            types.append(type_to_proto(t) if t is not None else None)
        node = w.to_node()
        for version in built:
            try:
                f = build_function_body(schema, node, types, version)
            except ValidationError as exc:  # the node's own attributes make no body (a bad graph, ...)
                raise StepRefused("V001", f"{w.op_type}'s function body cannot be built from this node: "
                                          f"{exc.problems[0].message if exc.problems else exc}") from None
            if f is not None and len(f.node):
                return f
    return None


def expand(w: NodeWork, domain: str, since: int, dst: int, s: Scope) -> tuple[list, int]:
    """The inlined body of ``w`` (an operator first defined at ``since`` > ``dst``), and
    the opset its nodes are written for."""
    schema = schemas.schema(domain, w.op_type, since)
    f = _body(w, schema, s)
    if f is None:
        raise StepRefused("V001", f"{w.op_type} does not exist before opset {since} and has "
                                  f"no function body to expand")
    opset = None
    for entry in f.opset_import:
        if schemas.domain_key(entry.domain) == domain:
            opset = entry.version
    if opset is None:
        opset = since
    if opset > since and opset > dst:
        pass  # converted down by the driver, like any node
    return _inline(w, f, schema, s), opset


def _inline(w: NodeWork, f, schema, s: Scope) -> list:
    from .. import AttributeProto, NodeProto  # noqa: PLC0415

    rename: dict[str, str] = {"": ""}
    for i, formal in enumerate(f.input):
        rename[formal] = w.input(i)
    for i, formal in enumerate(f.output):
        actual = w.output(i)
        rename[formal] = actual if actual else s.fresh(f"{w.op_type}_unused_{formal}")
    base = w.original.name or w.op_type

    def name_of(n: str) -> str:
        if n not in rename:
            rename[n] = s.fresh(f"{base}_{n}")
        return rename[n]

    attrs = w.attrs
    defaults = {name: a.default_value for name, a in schema.attributes.items()
                if a.default_value is not None and a.default_value.name}
    out = []
    for k, bn in enumerate(f.node):
        n = NodeProto()
        n.input.extend(name_of(x) if x else "" for x in bn.input)
        n.output.extend(name_of(x) if x else "" for x in bn.output)
        n.name = s.fresh(f"{base}_{bn.op_type}_{k}")
        n.op_type = bn.op_type
        if bn.domain:
            n.domain = bn.domain
        for a in bn.attribute:
            if a.type in (5, 10) or a.HasField("g") or len(a.graphs):
                b = AttributeProto()
                b.CopyFrom(a)
                for g in ([b.g] if b.HasField("g") else []) + list(b.graphs):
                    _rename_graph(g, name_of)
                n.attribute.append(b)
                continue
            if a.ref_attr_name:
                src = attrs.get(a.ref_attr_name) or defaults.get(a.ref_attr_name)
                if src is None:
                    continue  # an optional attribute the node does not set: the op's default
                b = AttributeProto()
                b.CopyFrom(src)
                b.name = a.name
                n.attribute.append(b)
            else:
                n.attribute.append(a)
        out.append(n)
    return out


def _rename_graph(g, name_of) -> None:
    """Give every name of a body's subgraph (and of its own subgraphs) its inlined name.

    Names a subgraph defines are renamed too: an inlined body may sit in a graph that uses
    the same names, and ONNX does not let a subgraph shadow an outer name."""
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        vi.name = name_of(vi.name)
    for t in g.initializer:
        t.name = name_of(t.name)
    for n in g.node:
        n.input[:] = [name_of(x) if x else "" for x in n.input]
        n.output[:] = [name_of(x) if x else "" for x in n.output]
        for a in n.attribute:
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                _rename_graph(sub, name_of)
