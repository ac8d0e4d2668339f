"""Inlining function calls (``onnx.inliner``): a call node replaced by the callee's body.

`inline_local_functions` and `inline_selected_functions` take onnx's arguments and give
onnx's result (the same nodes, in the same order, with the same names: `naming`), with
two fixes:

* an attribute reference (``ref_attr_name``) that the call node does not set takes the
  default the function declares (``attribute_proto``); onnx drops the attribute, so the
  operator's own default applies (a LeakyRelu with ``alpha`` defaulting to 0.25 in the
  function computes with 0.01 once onnx inlined it);
* ``convert_version=True`` inlines a function whose ai.onnx opset differs from the model's
  as it is when none of the operators it uses changed between the two versions (nothing
  to convert); otherwise it converts the body as onnx does, with
  `irmodel.version_converter` once the package has one (found at call time), and until
  then raises `SurgeryError` saying that the converter is needed.

Calls are inlined in the main graph, in the graphs of If/Loop/Scan nodes at any depth,
in the bodies of inlined functions (recursively) and, for `inline_selected_functions`,
in the bodies of the functions kept.  ``inline_schema_functions=True`` also expands
operators that have a function body in their schema (static, or built for the node by
`irmodel.defs.bodies`).  A cycle of calls raises `irmodel.ValidationError`, as onnx's
checker does.
"""

from __future__ import annotations

from wirefmt import adopt_items, encode_varint, shared_copy
from wirefmt.schema import LEN

from .._wireview.fields import tag as field_tag

from .errors import SurgeryError
from .naming import CallRenamer, NameGenerator
from .opsets import changed_operators, opset_map
from .scope import call_key, has_subgraphs, own_key, subgraphs
from .share import adopt_origin
from .stamp import BodyTemplate, records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

#: onnx.checker's bound on the number of model-local functions (kMaxModelLocalFunctions).
MAX_FUNCTIONS = 100_000


def check_call_cycles(model: Any) -> None:
    """Raise `irmodel.ValidationError` when model-local functions call each other in a
    cycle, or two functions share an identity (onnx's ``check_function_call_cycles``)."""
    from ..errors import ValidationError  # noqa: PLC0415
    functions = list(model.functions)
    if len(functions) > MAX_FUNCTIONS:
        raise ValidationError(f"Model contains {len(functions)} local functions, exceeding the limit "
                              f"of {MAX_FUNCTIONS}. The model may be malformed or malicious.")
    by_key: dict = {}
    for f in functions:
        key = own_key(f)
        if key in by_key:
            raise ValidationError(f"Model contains multiple local functions with the same "
                                  f"implementation id '{_key_text(key)}'.")
        by_key[key] = f
    callees = {key: [k for k in _calls(f.node) if k in by_key] for key, f in by_key.items()}
    state: dict = dict.fromkeys(by_key, 0)
    for root in by_key:
        if state[root]:
            continue
        path, stack = [root], [iter(callees[root])]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                state[path.pop()] = 2
            elif state[nxt] == 1:
                cycle = path[path.index(nxt):] + [nxt]
                raise ValidationError("Cycle detected in model-local function references: "
                                      + " -> ".join(_key_text(k) for k in cycle)
                                      + ". Model-local functions must not be recursive.")
            elif state[nxt] == 0:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(callees[nxt]))


def _calls(nodes: Any) -> list:
    out, pending = [], [nodes]
    while pending:
        for node in pending.pop():
            out.append(call_key(node))
            pending.extend(g.node for g in subgraphs(node))
    return list(dict.fromkeys(out))


def _key_text(key: tuple) -> str:
    domain, name, overload = key
    return f"{domain}::{name}::{overload}" if overload else f"{domain}::{name}"


# -- binding attributes ------------------------------------------------------------------------

def bind_attributes(call: Any, function: Any) -> None:
    """Replace every attribute reference in ``function``'s body (sub-graphs included) by
    the call's attribute of that name, else the function's default, else remove it."""
    given = {a.name: a for a in call.attribute}
    for a in function.attribute_proto:
        given.setdefault(a.name, a)
    pending = [function.node]
    while pending:
        for node in pending.pop():
            attrs = node.attribute
            if any(a.ref_attr_name for a in attrs):
                kept = []
                for a in attrs:
                    if a.ref_attr_name:
                        value = given.get(a.ref_attr_name)
                        if value is None:
                            continue
                        new = type(a).FromString(value.SerializeToString())
                        new.name = a.name
                        kept.append(new)
                    else:
                        kept.append(a)
                node.ClearField("attribute")
                node.attribute.extend(kept)
            for a in node.attribute:
                if a.HasField("g"):
                    pending.append(a.g.node)
                pending.extend(g.node for g in a.graphs)


# -- the inliner ---------------------------------------------------------------------------------

def _node_tag(holder: Any) -> bytes:
    """The tag of ``holder``'s ``node`` field (a GraphProto's or a FunctionProto's)."""
    return encode_varint(field_tag(holder._type_name, "node", LEN))


class _Inliner:
    """One run over a model: which calls to inline, with what, and the names in use."""

    def __init__(self, model: Any, wanted: Callable[[str, str], bool], functions: dict,
                 schemas: bool) -> None:
        self.model = model
        self.wanted = wanted
        self.functions = functions  # key -> (FunctionProto, target onnx version or None)
        self.schemas = schemas
        self.names = NameGenerator(model.graph)
        self.count = 0
        self.templates: dict = {}  # function key -> BodyTemplate, or None: not plain

    def _template(self, node: Any) -> BodyTemplate | None:
        """The plain body `stamp` can stamp out for a call of a local function (not when
        schema functions are inlined too, nor when the body must be converted)."""
        if self.schemas or not self.wanted(node.domain, node.op_type):
            return None
        key = call_key(node)
        if key not in self.templates:
            entry = self.functions.get(key)
            self.templates[key] = None if entry is None or entry[1] is not None else BodyTemplate.make(
                entry[0], self._inlined)
        return self.templates[key]

    def callee(self, node: Any) -> Any:
        if not self.wanted(node.domain, node.op_type):
            return None
        entry = self.functions.get(call_key(node))
        if entry is not None:
            return shared_copy(entry[0])
        if self.schemas:
            return self._schema_body(node)
        return None

    def _schema_body(self, node: Any) -> Any:
        from .. import defs  # noqa: PLC0415
        version = next((o.version for o in self.model.opset_import if o.domain == node.domain), 0)
        if not version or not defs.has_schema(node.op_type, version, node.domain):
            return None
        schema = defs.get_schema(node.op_type, version, node.domain)
        if schema.has_function:
            body = schema.get_function_with_opset_version(version)
            if body is not None:
                return body
        if schema.has_context_dependent_function:
            from ..defs.bodies import build_function_body  # noqa: PLC0415
            versions = [v for v in schema.context_dependent_function_opset_versions if v <= version]
            if not versions:
                return None
            types = self._value_types()
            return build_function_body(schema, node, [types.get(n) for n in node.input], max(versions))
        return None

    def _value_types(self) -> dict:
        """Types of the main graph's values as the model stands now (nodes inlined so far).

        As onnx, which runs shape inference on the model whenever it builds a body, and
        keeps what inference added: the new value_info entries of the main graph stay in
        the result.
        """
        from ..inference import infer_shapes  # noqa: PLC0415
        g = infer_shapes(self.model).graph
        mine = self.model.graph
        if g.node != mine.node:  # types written into sub-graphs (copies: ``g`` is let go)
            mine.ClearField("node")
            mine.node.extend(type(n).FromString(n.SerializeToString()) for n in g.node)
        have = {v.name for v in mine.value_info}
        for v in g.value_info:
            if v.name not in have:
                mine.value_info.append(type(v).FromString(v.SerializeToString()))
        for old, new in zip(mine.output, g.output):
            if new.HasField("type") and new.type != old.type:
                old.type.CopyFrom(new.type)
        types: dict = {}
        for v in list(g.value_info) + list(g.input) + list(g.output):
            if v.HasField("type"):
                types.setdefault(v.name, v.type)
        return types

    def process(self, holder: Any) -> None:
        """Inline the calls among ``holder``'s nodes (a graph or a function), in place.

        The nodes are appended to ``holder`` as they are made, so that a body built
        meanwhile sees the model as onnx's inliner has it at that point."""
        nodes = list(holder.node)
        if self._stamp_all(holder, nodes):
            return
        holder.ClearField("node")
        for node in nodes:
            self._append(node, holder)

    def _stamp_all(self, holder: Any, nodes: list) -> bool:
        """Inline ``holder``'s calls as bytes when every call has a plain body and no other
        node needs anything (no sub-graph, no call of a function without a template);
        False when not, nothing done then.

        The new node list is one buffer (`wirefmt.adopt_items`): the kept nodes' bytes and
        the stamped ones, each read as a message only when somebody reads it, and a save
        copies them as one run.  Made one by one, 75,000 stamped nodes cost a scan each
        (`stamp`'s module).  The names are given in the general way's order: the same
        result.  A holder without a call is left as it is.
        """
        if self.schemas:
            return False
        templates = []
        for node in nodes:
            template = self._template(node)
            if template is None and (self._inlined(node) or has_subgraphs(node)):
                return False
            templates.append(template)
        if not any(templates):
            return True
        depth = holder._depth
        parts: list = []
        tag = _node_tag(holder)
        kept: list = []
        for node, template in zip(nodes, templates):
            if template is None:
                kept.append(node.SerializeToString())
                continue
            if kept:
                parts += records(tag, kept)
                kept = []
            self.count += 1
            renamer = CallRenamer(f"__{self.count}", self.names)
            renamer.bind(node, template.function)
            parts += records(tag, template.node_bytes(renamer))
            depth = min(depth, template.function._depth)
        parts += records(tag, kept)
        adopt_items(holder, "node", b"".join(parts), depth)
        return True

    def _inlined(self, node: Any) -> bool:
        """Whether ``node`` is a call this run inlines (schema functions aside)."""
        return self.wanted(node.domain, node.op_type) and call_key(node) in self.functions

    def _append(self, node: Any, holder: Any) -> None:
        template = self._template(node)
        if template is not None:
            self.count += 1
            renamer = CallRenamer(f"__{self.count}", self.names)
            renamer.bind(node, template.function)
            holder.node.extend(template.stamp(renamer))
            return
        body = self.callee(node)
        if body is None:
            for g in subgraphs(node):
                self.process(g)
            holder.node.append(node)
            return
        bind_attributes(node, body)
        self.count += 1
        renamer = CallRenamer(f"__{self.count}", self.names)
        renamer.bind(node, body)
        renamer.function(body)
        entry = self.functions.get(call_key(node))
        if entry is not None and entry[1] is not None:
            self._convert(node, body, entry[1])
        actual = set(node.input) | set(node.output)
        for v in body.value_info:
            if v.name not in actual:
                holder.value_info.append(shared_copy(v))
        for inner in list(body.node):
            self._append(inner, holder)


    def _convert(self, call: Any, body: Any, target: int) -> None:
        """Bring the (renamed) body of ``call`` to ai.onnx opset ``target``, as onnx does.

        Nothing to do when its operators did not change in between.  Otherwise the body
        becomes a model (inputs: what the call reads, typed by inference over the model;
        outputs: the call's outputs) for `irmodel.version_converter`, when the package has
        one, and its converted nodes replace the body's; without it `SurgeryError`.
        """
        source = opset_map(body.opset_import).get("")
        if source is None:  # the function uses no ai.onnx operator: nothing to convert
            return
        changed = changed_operators(body.node, source, target)
        if not changed:
            return
        try:
            from ..version_converter import convert_version  # noqa: PLC0415
        except ImportError:
            raise SurgeryError(f"function {body.name!r} imports ai.onnx opset {source} and the model "
                               f"{target}; its operators {', '.join(changed)} changed between them, "
                               "and converting them needs the version converter "
                               "(irmodel.version_converter, not available yet)") from None
        from .. import GraphProto, ModelProto, ValueInfoProto  # noqa: PLC0415
        from .scope import outer_names  # noqa: PLC0415
        types = self._value_types()
        g = GraphProto(name=body.name)
        for name in outer_names(call):
            vi = ValueInfoProto(name=name)
            if name in types:
                vi.type.CopyFrom(types[name])
            g.input.append(vi)
        for name in call.output:
            if name:
                vi = ValueInfoProto(name=name)
                if name in types:
                    vi.type.CopyFrom(types[name])
                g.output.append(vi)
        g.node.extend(list(body.node))
        m = ModelProto(ir_version=self.model.ir_version)
        m.graph = g
        m.opset_import.extend(shared_copy(o) for o in body.opset_import)
        converted = convert_version(m, target)
        body.ClearField("node")
        body.node.extend(shared_copy(n) for n in converted.graph.node)
        self.model.graph.initializer.extend(shared_copy(t) for t in converted.graph.initializer)


def _start(model: Any) -> Any:
    from .. import ModelProto  # noqa: PLC0415
    if not isinstance(model, ModelProto):
        raise TypeError(f"expected a ModelProto, got {type(model).__name__}")
    m = shared_copy(model)
    adopt_origin(m, model)
    return m


def _remove(model: Any, inlined: dict) -> None:
    kept = [f for f in model.functions if own_key(f) not in inlined]
    if len(kept) != len(model.functions):
        model.ClearField("functions")
        model.functions.extend(kept)


def inline_local_functions(model: Any, convert_version: bool = False) -> Any:
    """A copy of ``model`` with every call of a model-local function inlined (recursively).

    A function whose opsets differ from the model's is left alone, unless
    ``convert_version`` and only its ai.onnx opset differs (see the module docstring).
    """
    m = _start(model)
    check_call_cycles(m)
    imports = opset_map(m.opset_import)
    chosen: dict = {}
    for f in m.functions:
        mismatched = {d: imports[d] for d, v in opset_map(f.opset_import).items() if d in imports and imports[d] != v}
        target = None
        if convert_version and "" in mismatched:
            target = mismatched.pop("")
        if not mismatched:
            chosen[own_key(f)] = (f, target)
    inliner = _Inliner(m, lambda domain, name: True, chosen, False)
    inliner.process(m.graph)
    _remove(m, chosen)
    return m


def inline_selected_functions(model: Any, function_ids: list, exclude: bool = False,
                              inline_schema_functions: bool = False) -> Any:
    """A copy of ``model`` with the calls of the functions ``function_ids`` names inlined
    (every other one with ``exclude``).  Each id is ``(domain, name)``.  Calls are inlined in
    the main graph and in the bodies of the functions kept; ``inline_schema_functions``
    expands schema-defined functions too.  Raises `SurgeryError` when the functions' opsets
    disagree with each other or the model (as onnx)."""
    ids = {tuple(i) for i in function_ids}
    for i in ids:
        if len(i) != 2 or not all(isinstance(x, str) for x in i):
            raise TypeError(f"a function id is a (domain, name) pair of strings, not {i!r}")
    m = _start(model)
    check_call_cycles(m)
    imports = opset_map(m.opset_import)

    def wanted(domain: str, name: str) -> bool:
        return ((domain, name) in ids) != exclude

    chosen: dict = {}
    kept = []
    for f in m.functions:
        for d, v in opset_map(f.opset_import).items():
            if imports.setdefault(d, v) != v:
                raise SurgeryError("Model has functions with incompatible opset versions.")
        if wanted(f.domain, f.name):
            chosen[own_key(f)] = (f, None)
        else:
            kept.append(f)
    inliner = _Inliner(m, wanted, chosen, inline_schema_functions)
    inliner.process(m.graph)
    for f in kept:
        inliner.process(f)
    _remove(m, chosen)
    return m
