"""What an operator's inference function sees of one node: `InferenceContext`.

The contract is the reference's ``InferenceContext``: input types (None when unknown or
absent), constant input values, values computed by data propagation, attributes,
output types being built, and an inferencer for each graph attribute.  Reading an
input or output index the node does not have is a `HardError`, as it is a runtime
error in the reference (raised whatever the mode).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
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

    __slots__ = ("proto", "op_type", "domain", "name", "overload", "inputs", "outputs", "_attrs", "index",
                 "binding")

    def __init__(self, proto, index: int, binding=None):
        # Hot (once per node): strings are read as they are unless the decoder kept
        # invalid UTF-8 as bytes; inputs and outputs are the node's own lists (never
        # changed here); attributes are gathered on first use (most rules read none).
        self.proto = proto
        v = proto.op_type
        self.op_type = v if type(v) is str else text(v)
        v = proto.domain
        self.domain = v if type(v) is str else text(v)
        v = proto.name
        self.name = v if type(v) is str else text(v)
        v = proto.overload
        self.overload = v if type(v) is str else text(v)
        self.inputs = proto.input
        self.outputs = proto.output
        self.index = index
        self.binding = binding
        self._attrs: dict | None = None

    @property
    def attrs(self) -> dict:
        """Attribute name -> `AttributeProto` (bound ones through ``binding``), made on first use."""
        attrs = self._attrs
        if attrs is None:
            attrs = {}
            binding = self.binding
            for a in self.proto.attribute:
                ref = a.ref_attr_name
                if ref and binding is not None:
                    value = binding.get(ref)
                    if value is None:
                        continue
                    attrs[a.name] = value
                else:
                    attrs[a.name] = a
            self._attrs = attrs
        return attrs

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

    def __init__(self, node: NodeView, input_types: list, input_data: list | None = None,
                 sparse_data: list | None = None, symbolic: list | None = None, scope=None, unbound=None,
                 opset_version: int = 0):
        # ``input_data``, ``sparse_data`` and ``symbolic`` may be None: each is then read
        # from the scope on first use (most rules read none of them; see `_derive`).
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

    def _derive(self) -> tuple:
        """The inputs' constant values, sparse values and propagated values, from the scope.

        Each input has at most one: a constant hides a sparse value, either hides a
        propagated one (as the scope's tables were read when the context was made).
        """
        scope = self.scope
        const, sparse, shape_data = scope.const_data, scope.sparse_data, scope.shape_data
        in_data, in_sparse, in_sym = [], [], []
        for name in self.node.inputs:
            c = const.get(name)
            in_data.append(c)
            if c is None:
                s = sparse.get(name)
                in_sparse.append(s)
                in_sym.append(shape_data.get(name) if s is None else None)
            else:
                in_sparse.append(None)
                in_sym.append(None)
        if self.input_data_ is None:
            self.input_data_ = in_data
        if self.sparse_data_ is None:
            self.sparse_data_ = in_sparse
        if self.symbolic_ is None:
            self.symbolic_ = in_sym
        return self.input_data_, self.sparse_data_, self.symbolic_

    # -- inputs ---------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self.input_types)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def input_type(self, i: int):
        """The input's type, None when unknown; an index past the inputs is a hard error."""
        types = self.input_types
        if i >= len(types):
            raise HardError(f"Input {i} is out of bounds.")
        return types[i]

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
        data = self.input_data_
        if data is None:
            data = self._derive()[0]
        if i >= len(data):
            raise HardError(f"Input {i} is out of bounds.")
        return data[i]

    def input_sparse_data(self, i: int):
        data = self.sparse_data_
        if data is None:
            data = self._derive()[1]
        if i >= len(data):
            raise HardError(f"Input {i} is out of bounds.")
        return data[i]

    def symbolic_input(self, i: int):
        """The input's value as computed by data propagation (a tuple of dims), or None."""
        data = self.symbolic_
        if data is None:
            data = self._derive()[2]
        if i >= len(data):
            raise HardError(f"Input {i} is out of bounds.")
        return data[i]

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
        if self.input_data_ is None or self.sparse_data_ is None or self.symbolic_ is None:
            self._derive()  # before a sub-graph adds propagated values to the shared table
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
