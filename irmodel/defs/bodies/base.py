"""What every body builder shares: the calling node's view and a writer of body nodes.

A builder (one per operator family, in the ``bodies_*`` modules) reads the calling node
through `NodeAttributes` and the input types through `input_type`, and writes nodes into a
`BodyBuilder` the way the reference's ``FunctionBuilder`` and its text form write them:
inputs, outputs, op_type, the attributes in the order written, an explicit empty domain.
`irmodel.defs.bodies` puts the builders together and wraps their nodes in a FunctionProto.
"""

from __future__ import annotations

import math
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# TensorProto.DataType values the builders write
FLOAT, INT32, INT64, BOOL, FLOAT16, DOUBLE, BFLOAT16 = 1, 6, 7, 9, 10, 11, 16
# AttributeProto.AttributeType
FLOAT_KIND, INT_KIND, STRING_KIND, TENSOR_KIND, GRAPH_KIND = 1, 2, 3, 4, 5
FLOATS_KIND, INTS_KIND = 6, 7


class Ref:
    """An attribute that refers to the calling node's attribute ``name`` (text form ``@name``).

    ``kind`` is the declared attribute type (``<x : int = @x>``); None leaves it unset, as
    the text form without a type does.
    """

    __slots__ = ("name", "kind")

    def __init__(self, name: str, kind: int | None):
        self.name = name
        self.kind = kind


class NodeAttributes:
    """The calling node's attributes by name and which inputs it has (``FunctionBodyBuildContext``)."""

    def __init__(self, node):
        self._by_name = {a.name: a for a in node.attribute}
        self._inputs = list(node.input)
        self._outputs = list(node.output)

    def has_output(self, index: int) -> bool:
        return index < len(self._outputs) and self._outputs[index] != ""

    def has_input(self, index: int) -> bool:
        """Input ``index`` is given (present and not the empty name)."""
        return index < len(self._inputs) and self._inputs[index] != ""

    def s(self, name: str, default: bytes) -> bytes:
        a = self._by_name.get(name)
        return a.s if a is not None and a.HasField("s") else default

    def get(self, name: str):
        return self._by_name.get(name)

    def f(self, name: str, default: float) -> float:
        a = self._by_name.get(name)
        return a.f if a is not None else default

    def i(self, name: str, default: int) -> int:
        a = self._by_name.get(name)
        return a.i if a is not None else default

    def i_or_none(self, name: str) -> int | None:
        a = self._by_name.get(name)
        return a.i if a is not None else None


def input_type(input_types: Sequence, index: int):
    """Input ``index``'s TypeProto, or None when absent or empty (the reference's null type)."""
    if index < 0 or index >= len(input_types) or input_types[index] is None:
        return None
    tp = input_types[index]
    return tp if tp.WhichOneof("value") is not None else None


def tensor_elem(input_types: Sequence, index: int) -> int | None:
    """The element type of input ``index`` if it is a tensor type, else None."""
    tp = input_type(input_types, index)
    if tp is None or tp.WhichOneof("value") != "tensor_type":
        return None
    return tp.tensor_type.elem_type


def elem_or_zero(input_types: Sequence, index: int) -> int | None:
    """``tensor_type().elem_type()`` of a present type (0 for a type of another kind), None if absent.

    Builders that only check that a type is given read a sequence's or an optional's
    element type as 0, as protobuf's accessor of an unset message does.
    """
    tp = input_type(input_types, index)
    if tp is None:
        return None
    return tp.tensor_type.elem_type if tp.WhichOneof("value") == "tensor_type" else 0


def int32(v: int) -> int:
    """An attribute's integer as the reference holds it in a C++ ``int32_t`` or enum (wrapped)."""
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def float32(v: float) -> float:
    """An attribute's float as the reference's C++ ``float`` holds it."""
    return struct.unpack("<f", struct.pack("<f", v))[0] if math.isfinite(v) else v


_DATA_FIELD = {FLOAT: "float_data", INT64: "int64_data"}  # every other type the builders write: int32_data


class BodyBuilder:
    """Nodes of one body in order, written as the reference's ``FunctionBuilder`` writes them."""

    def __init__(self) -> None:
        from ...messages import AttributeProto, GraphProto, NodeProto, TensorProto  # noqa: PLC0415
        self._attribute = AttributeProto
        self._graph = GraphProto
        self._node = NodeProto
        self._tensor = TensorProto
        self.nodes: list = []
        # the function's input and output names when not the schema's (SequenceMap numbers them)
        self.function_inputs: list[str] | None = None
        self.function_outputs: list[str] | None = None

    def node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str], attributes: dict,
             domain: str = ""):
        """A NodeProto (not added): attributes in the dict's order."""
        node = self._node()
        node.input.extend(inputs)
        node.output.extend(outputs)
        node.op_type = op_type
        for name, value in attributes.items():
            node.attribute.append(self._make_attribute(name, value))
        node.domain = domain
        return node

    def add(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str], **attributes) -> BodyBuilder:
        self.nodes.append(self.node(op_type, inputs, outputs, attributes))
        return self

    def add_in(self, domain: str, op_type: str, inputs: Sequence[str], outputs: Sequence[str],
               **attributes) -> BodyBuilder:
        """`add` for an operator of another domain."""
        self.nodes.append(self.node(op_type, inputs, outputs, attributes, domain))
        return self

    def _make_attribute(self, name: str, value):
        a = self._attribute()
        a.name = name
        if isinstance(value, Ref):
            if value.kind is not None:  # the text form ``@name`` without a type leaves it unset
                a.type = value.kind
            a.ref_attr_name = value.name
        elif isinstance(value, (bool, int)):
            a.i = int(value)
            a.type = INT_KIND
        elif isinstance(value, float):
            a.f = value
            a.type = FLOAT_KIND
        elif isinstance(value, (str, bytes)):
            a.s = value.encode() if isinstance(value, str) else value
            a.type = STRING_KIND
        elif isinstance(value, list) and value and all(isinstance(v, float) for v in value):
            a.floats.extend(value)
            a.type = FLOATS_KIND
        elif isinstance(value, list):
            a.ints.extend(value)
            a.type = INTS_KIND
        elif isinstance(value, self._graph):
            a.g = value
            a.type = GRAPH_KIND
        else:  # a TensorProto
            a.t = value
            a.type = TENSOR_KIND
        return a

    def graph(self, name: str, inputs: Sequence[tuple[str, int | None]], outputs: Sequence[str],
              nodes: Sequence):
        """A sub-graph as the text form writes ``name (int64 i, bool c, x) => (a, b) { nodes }``.

        ``inputs`` are (name, element type) pairs: a typed one is a tensor of that type with
        an empty shape (the text form's scalar), an untyped one (None) a bare name; outputs
        are bare names.
        """
        from ...messages import TensorShapeProto, ValueInfoProto  # noqa: PLC0415
        g = self._graph()
        g.node.extend(nodes)
        g.name = name
        for value, elem_type in inputs:
            vi = ValueInfoProto()
            vi.name = value
            if elem_type is not None:
                vi.type.tensor_type.elem_type = elem_type
                vi.type.tensor_type.shape = TensorShapeProto()
            g.input.append(vi)
        for value in outputs:
            vi = ValueInfoProto()
            vi.name = value
            g.output.append(vi)
        return g

    def scalar_float(self, name: str, value: float) -> BodyBuilder:
        """``Constant <value = float {v}>``: a rank-0 float tensor (the text form names it "")."""
        t = self._tensor()
        t.name = ""
        t.data_type = FLOAT
        t.float_data.append(value)
        return self.add("Constant", [], [name], value=t)

    def tensor(self, value, elem_type: int, one_d: bool = True):
        """``ToTensor`` of one value, as a 1-D tensor of one element or as a scalar."""
        return self.tensor_of([value], elem_type, [1] if one_d else [])

    def tensor_of(self, values: Sequence, elem_type: int, dims: Sequence[int]):
        """A tensor of ``values`` in the field the reference's ``ToTensor`` fills for the type."""
        t = self._tensor()
        t.dims.extend(dims)
        t.data_type = elem_type
        getattr(t, _DATA_FIELD.get(elem_type, "int32_data")).extend(values)
        return t

    def const_1d(self, name: str, value, elem_type: int) -> BodyBuilder:
        """``Const1D``: a Constant node whose value is a one-element 1-D tensor."""
        return self.add("Constant", [], [name], value=self.tensor(value, elem_type))

    def const(self, name: str, value, elem_type: int) -> BodyBuilder:
        """``Const`` of one value: a Constant node holding a scalar."""
        return self.add("Constant", [], [name], value=self.tensor(value, elem_type, one_d=False))

    def const_list(self, name: str, values: Sequence, elem_type: int) -> BodyBuilder:
        """``Const`` of a vector: a Constant node holding a 1-D tensor of ``values``."""
        return self.add("Constant", [], [name], value=self.tensor_of(list(values), elem_type, [len(values)]))


__all__ = ["BodyBuilder", "NodeAttributes", "Ref", "elem_or_zero", "float32", "input_type", "int32", "tensor_elem"]
