"""What an operator's inference function sees of one node: `InferenceContext`.

The contract is the reference's ``InferenceContext``: input types (None when unknown or
absent), constant input values, values computed by data propagation, attributes,
output types being built, and an inferencer for each graph attribute.  Reading an
input or output index the node does not have is a `HardError`, as it is a runtime
error in the reference (raised whatever the mode).
"""

from __future__ import annotations

from typing import Any

from .errors import HardError, fail_type

# AttributeProto.AttributeType codes.
A_FLOAT, A_INT, A_STRING, A_TENSOR, A_GRAPH, A_FLOATS, A_INTS, A_STRINGS = 1, 2, 3, 4, 5, 6, 7, 8
A_TENSORS, A_GRAPHS, A_SPARSE_TENSOR, A_SPARSE_TENSORS, A_TYPE_PROTO, A_TYPE_PROTOS = 9, 10, 11, 12, 13, 14


def text(v) -> str:
    """A string field as text: one holding invalid UTF-8 (the decoder gives ``bytes``) keeps
    its bytes as surrogate escapes, so it names nothing known and round-trips unchanged."""
    return v.decode("utf-8", "surrogateescape") if type(v) is bytes else v


class NodeView:
    """A node as inference reads it: names, inputs, outputs, attributes by name.

    ``binding`` (for nodes of a function body) maps the function's attribute names to
    the caller's attributes: an attribute that refers to one (``ref_attr_name``) takes
    its value, or is dropped when the caller gives none -- the reference's
    AttributeBinder.  Graph attributes keep the binding for their own nodes.
    """

    __slots__ = ("proto", "op_type", "domain", "name", "overload", "inputs", "outputs", "attrs", "index",
                 "binding")

    def __init__(self, proto, index: int, binding=None):
        self.proto = proto
        self.op_type = text(proto.op_type)
        self.domain = text(proto.domain)
        self.name = text(proto.name)
        self.overload = text(proto.overload)
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.index = index
        self.binding = binding
        attrs = {}
        for a in proto.attribute:
            ref = a.ref_attr_name
            if ref and binding is not None:
                value = binding.get(ref)
                if value is None:
                    continue
                attrs[a.name] = value
            else:
                attrs[a.name] = a
        self.attrs = attrs

    def describe(self) -> str:
        """``node 3 (op_type:Relu, node name: n1)``: the reference's prefix of a node's error, with its index."""
        name = f", node name: {self.name}" if self.name else ""
        return f"node {self.index} (op_type:{self.op_type}{name})"

    def display_name(self) -> str:
        dom = f"[{self.domain}]" if self.domain else ""
        name = f" ({self.name})" if self.name else ""
        return f"node {self.op_type}{dom}{name}"


class InferenceContext:
    """One node's inference state (see the module docstring)."""

    __slots__ = ("node", "input_types", "input_data_", "sparse_data_", "symbolic_", "outputs", "scope",
                 "unbound", "_inferencers", "opset_version")

    def __init__(self, node: NodeView, input_types: list, input_data: list, sparse_data: list, symbolic: list,
                 scope=None, unbound=None, opset_version: int = 0):
        self.node = node
        self.input_types = input_types
        self.input_data_ = input_data
        self.sparse_data_ = sparse_data
        self.symbolic_ = symbolic
        self.outputs = [None] * len(node.outputs)
        self.scope = scope
        self.unbound = unbound
        self._inferencers: dict[str, Any] | None = None  # attribute name -> GraphInferencer
        self.opset_version = opset_version

    # -- inputs ---------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self.input_types)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def input_type(self, i: int):
        """The input's type, None when unknown; an index past the inputs is a hard error."""
        if i >= len(self.input_types):
            raise HardError(f"Input {i} is out of bounds.")
        return self.input_types[i]

    def has_input(self, i: int) -> bool:
        """Structural presence: the node names a (non-empty, bound) input at ``i``."""
        inputs = self.node.inputs
        if i >= len(inputs) or not inputs[i]:
            return False
        return not (self.unbound and inputs[i] in self.unbound)

    def has_output(self, i: int) -> bool:
        outputs = self.node.outputs
        return i < len(outputs) and bool(outputs[i])

    def input_data(self, i: int):
        """The input's constant value (`ConstTensor`), if it is a small constant."""
        if i >= len(self.input_data_):
            raise HardError(f"Input {i} is out of bounds.")
        return self.input_data_[i]

    def input_sparse_data(self, i: int):
        if i >= len(self.sparse_data_):
            raise HardError(f"Input {i} is out of bounds.")
        return self.sparse_data_[i]

    def symbolic_input(self, i: int):
        """The input's value as computed by data propagation (a tuple of dims), or None."""
        if i >= len(self.symbolic_):
            raise HardError(f"Input {i} is out of bounds.")
        return self.symbolic_[i]

    # -- attributes -------------------------------------------------------------------
    def attr(self, name: str):
        """The node's `AttributeProto` called ``name``, or None."""
        return self.node.attrs.get(name)

    # -- outputs ----------------------------------------------------------------------
    def output(self, i: int):
        if i >= len(self.outputs):
            raise HardError(f"Output {i} is out of bounds.")
        return self.outputs[i]

    def set_output(self, i: int, t) -> None:
        if i >= len(self.outputs):
            raise HardError(f"Output {i} is out of bounds.")
        self.outputs[i] = t

    # -- graph attributes -------------------------------------------------------------
    def graph_inferencer(self, attr_name: str):
        """The inferencer of the graph held by attribute ``attr_name`` (one per attribute)."""
        if self.scope is None:
            raise fail_type("GraphProto attribute inferencing is not enabled in this InferenceContextImpl "
                            "instance.")
        if self._inferencers is None:
            self._inferencers = {}
        inf = self._inferencers.get(attr_name)
        if inf is None:
            a = self.node.attrs.get(attr_name)
            if a is None or not a.HasField("g"):
                raise fail_type("Attribute ", attr_name, " does not contain a graph.")
            inf = self._inferencers[attr_name] = self.scope.graph_inferencer(a.g, self.node.binding)
        return inf

    def display_name(self) -> str:
        return self.node.display_name()
