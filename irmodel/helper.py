"""Builders with the names, arguments and behaviour of ``onnx.helper`` (onnx 1.23.2).

Code written against ``onnx.helper`` should run unchanged with ``from irmodel import
helper`` and produce a message that serializes to the same bytes.  Where the reference
stores a message it *copies* it (protobuf's ``CopyFrom`` and ``extend`` copy), so later
changes to an argument never leak into the result; here a copy is a serialization and a
lazy re-open, which costs what protobuf's copy costs.

numpy is imported only by `make_tensor`, and only for what needs it: data types that the
reference packs through numpy/ml_dtypes (float16, bfloat16, float8, int4, ...), numpy
arrays, and values the plain-Python path cannot convert exactly as numpy would.  FLOAT,
DOUBLE, the integer types, BOOL and STRING from lists of Python values need no numpy.

Values are checked by the message layer (`wirefmt.values`) as protobuf checks them; the
helpers add the one check protobuf makes and the message layer deliberately does not
(``bytes`` fields given a bytearray or memoryview, which messages accept so that loaded
data can be reused without a copy), so they raise where the reference raises.
"""

from __future__ import annotations

import collections.abc
import math
import numbers
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Sequence

from wirefmt.schema import INTEGER_KINDS, MESSAGE

from ._dtypes import rows as _dt
from .io import dumps
from .messages import (AttributeProto, FunctionProto, GraphProto, MapProto, ModelProto, NodeProto,
                       OperatorSetIdProto, OptionalProto, SequenceProto, SparseTensorProto,
                       TensorProto, TensorShapeProto, TrainingInfoProto, TypeProto, ValueInfoProto)
from .proto import IR_VERSION

# onnx.helper's type aliases (for annotations; built once, from builtins alone).
VersionRowType = tuple[str, int, int, int] | tuple[str, int, int, int, int]
VersionTableType = list[VersionRowType]
AssignmentBindingType = list[tuple[str, str]]
VersionMapType = dict[tuple[str, int], int]

# -- IR version of each release --------------------------------------------------------
#: (release, IR version, ai.onnx opset, ai.onnx.ml opset[, ai.onnx.training opset]), as
#: docs/Versioning.md of onnx lists them.  `make_model_gen_version` picks the smallest
#: IR version whose release knew every imported opset.
VERSION_TABLE: list[tuple] = [
    ("1.0", 3, 1, 1), ("1.1", 3, 5, 1), ("1.1.2", 3, 6, 1), ("1.2", 3, 7, 1), ("1.3", 3, 8, 1),
    ("1.4.1", 4, 9, 1), ("1.5.0", 5, 10, 1), ("1.6.0", 6, 11, 2), ("1.7.0", 7, 12, 2, 1),
    ("1.8.0", 7, 13, 2, 1), ("1.8.1", 7, 13, 2, 1), ("1.9.0", 7, 14, 2, 1), ("1.10.0", 8, 15, 2, 1),
    ("1.10.1", 8, 15, 2, 1), ("1.10.2", 8, 15, 2, 1), ("1.11.0", 8, 16, 3, 1),
    ("1.12.0", 8, 17, 3, 1), ("1.13.0", 8, 18, 3, 1), ("1.13.1", 8, 18, 3, 1),
    ("1.14.0", 9, 19, 3, 1), ("1.14.1", 9, 19, 3, 1), ("1.15.0", 9, 20, 4, 1),
    ("1.16.0", 10, 21, 5, 1), ("1.16.1", 10, 21, 5, 1), ("1.16.2", 10, 21, 5, 1),
    ("1.17.0", 10, 22, 5, 1), ("1.18.0", 11, 23, 5, 1), ("1.19.0", 12, 24, 5, 1),
    ("1.19.1", 12, 24, 5, 1), ("1.20.0", 13, 25, 5, 1), ("1.20.1", 13, 25, 5, 1),
    ("1.21.0", 13, 26, 5, 1), ("1.22.0", 13, 27, 5, 1), ("1.23.0", 14, 28, 5, 1),
]

#: The ai.onnx opset `make_model` imports when the caller names none: the newest one the
#: table knows (what ``onnx.defs.onnx_opset_version()`` returns for the same release).
_DEFAULT_OPSET = VERSION_TABLE[-1][2]
_DEFAULT_MIN_IR = 3  # the answer for no opsets, or unknown ones with ignore_unknown
_TABLE_DOMAINS = ("ai.onnx", "ai.onnx.ml", "ai.onnx.training")
# The preview domains share the version numbers of the domain they preview.
_PREVIEW_OF = {"ai.onnx": "ai.onnx.preview", "ai.onnx.training": "ai.onnx.preview.training"}


def _op_set_id_version_map(table: list) -> dict:
    """``(domain, opset version) -> first IR version`` from `VERSION_TABLE`."""
    first: dict = {}
    for row in table:
        ir = row[1]
        for domain, version in zip(_TABLE_DOMAINS, row[2:]):
            if (domain, version) in first:
                continue
            first[domain, version] = ir
            preview = _PREVIEW_OF.get(domain)
            if preview is not None:
                first[preview, version] = ir
    return first


OP_SET_ID_VERSION_MAP: dict = _op_set_id_version_map(VERSION_TABLE)


def find_min_ir_version_for(opsetidlist: Sequence[OperatorSetIdProto], ignore_unknown: bool = False) -> int:
    """The smallest IR version that can carry every opset in ``opsetidlist``.

    An empty domain means ``ai.onnx``.  An opset the table does not know raises
    ValueError unless ``ignore_unknown``, which counts it as IR version 3.
    """
    best = _DEFAULT_MIN_IR
    for opset in opsetidlist or ():
        key = (opset.domain or "ai.onnx", opset.version)
        ir = OP_SET_ID_VERSION_MAP.get(key)
        if ir is None:
            if not ignore_unknown:
                raise ValueError("Unsupported opset-version.")
            ir = _DEFAULT_MIN_IR
        best = max(best, ir)
    return best


# -- small shared checks ---------------------------------------------------------------
def _copy(msg, cls, what: str):
    """A detached copy of ``msg`` (protobuf's CopyFrom/extend semantics)."""
    if not isinstance(msg, cls):
        raise TypeError(f"{what} must be a {cls.__name__}, not {type(msg).__name__}")
    return cls.FromString(dumps(msg))


def _copies(msgs, cls, what: str) -> list:
    return [_copy(m, cls, what) for m in msgs]


def _int(v, what: str):
    # The message layer refuses bool too; checked first to word the error as the helpers always have.
    if isinstance(v, bool):
        raise TypeError(f"{what}: expected an int, got a boolean")
    return v


def _ints(values, what: str) -> list:
    values = list(values)
    for v in values:
        _int(v, what)
    return values


def _bytes_values(values, what: str) -> list:
    # protobuf refuses str (and bytearray, memoryview) for bytes fields.
    values = list(values)
    for v in values:
        if not isinstance(v, bytes):
            raise TypeError(f"{what}: expected bytes, {type(v).__name__} found")
    return values


def _to_bytes(value):
    """UTF-8 for ``str``; anything else unchanged (the field rejects what is not bytes)."""
    return value.encode("utf-8") if isinstance(value, str) else value


# -- graphs, nodes, models -------------------------------------------------------------
def make_node(op_type: str, inputs: Sequence[str], outputs: Sequence[str], name: str | None = None,
              doc_string: str | None = None, domain: str | None = None, overload: str | None = None,
              **kwargs: Any) -> NodeProto:
    """A NodeProto; each keyword argument that is not None becomes an attribute.

    Attributes are added in sorted name order (as the reference does), so a node's bytes
    do not depend on keyword order.  An empty ``name``/``doc_string`` is left unset;
    ``domain=""`` and ``overload=""`` are set (present but empty), as in the reference.
    """
    node = NodeProto()
    node.op_type = op_type
    node.input.extend(inputs)
    node.output.extend(outputs)
    if name:
        node.name = name
    if doc_string:
        node.doc_string = doc_string
    if domain is not None:
        node.domain = domain
    if overload is not None:
        node.overload = overload
    if kwargs:
        node.attribute.extend([make_attribute(k, v) for k, v in sorted(kwargs.items()) if v is not None])
    return node


def make_operatorsetid(domain: str, version: int) -> OperatorSetIdProto:
    """An OperatorSetIdProto with both fields set (an empty domain is ai.onnx)."""
    return OperatorSetIdProto(domain=domain, version=_int(version, "version"))


def make_opsetid(domain: str, version: int) -> OperatorSetIdProto:
    """Same as `make_operatorsetid`; both names exist in the reference."""
    return make_operatorsetid(domain, version)


def make_graph(nodes: Sequence[NodeProto], name: str, inputs: Sequence[ValueInfoProto],
               outputs: Sequence[ValueInfoProto], initializer: Sequence[TensorProto] | None = None,
               doc_string: str | None = None, value_info: Sequence[ValueInfoProto] | None = None,
               sparse_initializer: Sequence[SparseTensorProto] | None = None) -> GraphProto:
    """A GraphProto holding copies of the given nodes, values and initializers."""
    graph = GraphProto()
    graph.node.extend(_copies(nodes, NodeProto, "node"))
    graph.name = name
    graph.input.extend(_copies(inputs, ValueInfoProto, "input"))
    graph.output.extend(_copies(outputs, ValueInfoProto, "output"))
    graph.initializer.extend(_copies(initializer or (), TensorProto, "initializer"))
    graph.sparse_initializer.extend(_copies(sparse_initializer or (), SparseTensorProto, "sparse_initializer"))
    graph.value_info.extend(_copies(value_info or (), ValueInfoProto, "value_info"))
    if doc_string:
        graph.doc_string = doc_string
    return graph


def make_function(domain: str, fname: str, inputs: Sequence[str], outputs: Sequence[str],
                  nodes: Sequence[NodeProto], opset_imports: Sequence[OperatorSetIdProto],
                  attributes: Sequence[str] | None = None,
                  attribute_protos: Sequence[AttributeProto] | None = None,
                  doc_string: str | None = None, overload: str | None = None,
                  value_info: Sequence[ValueInfoProto] | None = None) -> FunctionProto:
    """A model-local FunctionProto.

    ``attributes`` are names of attributes without a default; ``attribute_protos`` are
    attributes with their default value.
    """
    f = FunctionProto()
    f.domain = domain
    f.name = fname
    f.input.extend(inputs)
    f.output.extend(outputs)
    f.node.extend(_copies(nodes, NodeProto, "node"))
    f.opset_import.extend(_copies(opset_imports, OperatorSetIdProto, "opset_import"))
    f.attribute.extend(attributes or ())
    f.attribute_proto.extend(_copies(attribute_protos or (), AttributeProto, "attribute_proto"))
    if doc_string:
        f.doc_string = doc_string
    if overload is not None:
        f.overload = overload
    f.value_info.extend(_copies(value_info or (), ValueInfoProto, "value_info"))
    return f


def make_model(graph: GraphProto, **kwargs: Any) -> ModelProto:
    """A ModelProto around a copy of ``graph``.

    ``ir_version`` defaults to the newest IR version (not the smallest sufficient one:
    that is `make_model_gen_version`).  Without ``opset_imports`` the model imports the
    newest ai.onnx opset (an OperatorSetIdProto with only ``version`` set).  ``functions``
    adds model-local functions; every other keyword sets the ModelProto field of that
    name, and, as with protobuf, assigning a repeated or message field that way raises
    AttributeError.
    """
    model = ModelProto()
    model.ir_version = IR_VERSION  # set explicitly: present even if it equals a default
    model.graph = _copy(graph, GraphProto, "graph")
    opset_imports = kwargs.pop("opset_imports", None)
    if opset_imports is not None:
        model.opset_import.extend(_copies(opset_imports, OperatorSetIdProto, "opset_import"))
    else:
        model.opset_import.add(version=_DEFAULT_OPSET)
    functions = kwargs.pop("functions", None)
    if functions is not None:
        model.functions.extend(_copies(functions, FunctionProto, "function"))
    fields = ModelProto._fields
    for key, value in kwargs.items():
        f = fields.get(key)
        if f is not None and f.repeated:
            raise AttributeError(f'Assignment not allowed to map, or repeated field "{key}" '
                                 "in protocol message object.")
        if f is not None and f.kind == MESSAGE:
            raise AttributeError(f'Assignment not allowed to message field "{key}" in protocol message object.')
        if f is not None and f.kind in INTEGER_KINDS:
            _int(value, key)
        setattr(model, key, value)
    return model


def make_model_gen_version(graph: GraphProto, **kwargs: Any) -> ModelProto:
    """`make_model`, with ``ir_version`` (unless given) the smallest one the opsets allow."""
    if "ir_version" not in kwargs:
        kwargs["ir_version"] = find_min_ir_version_for(kwargs.get("opset_imports", []))
    return make_model(graph, **kwargs)


def set_metadata_props(proto: Any, dict_value: dict) -> None:
    """Replace ``proto.metadata_props`` with the entries of ``dict_value``, in its order."""
    props = proto.metadata_props
    props.clear()
    for key, value in dict_value.items():
        props.add(key=key, value=value)


def set_model_props(model: ModelProto, dict_value: dict) -> None:
    """`set_metadata_props` for a model (the older name)."""
    set_metadata_props(model, dict_value)


def make_training_info(algorithm: GraphProto, algorithm_bindings: Sequence[tuple[str, str]],
                       initialization: GraphProto | None,
                       initialization_bindings: Sequence[tuple[str, str]] | None) -> TrainingInfoProto:
    """A TrainingInfoProto; bindings are ``(key, value)`` pairs.

    ``algorithm_bindings`` become ``update_binding`` (what the algorithm writes back).
    """
    info = TrainingInfoProto()
    info.algorithm = _copy(algorithm, GraphProto, "algorithm")
    for key, value in algorithm_bindings:
        info.update_binding.add(key=key, value=value)
    if initialization:
        info.initialization = _copy(initialization, GraphProto, "initialization")
    for key, value in initialization_bindings or ():
        info.initialization_binding.add(key=key, value=value)
    return info


# -- attributes ------------------------------------------------------------------------
_A = AttributeProto
# Element classes tried in order when inferring the type of a list attribute.
_LIST_KINDS = (
    (numbers.Integral, _A.INTS), (numbers.Real, _A.FLOATS), ((str, bytes), _A.STRINGS),
    (TensorProto, _A.TENSORS), (SparseTensorProto, _A.SPARSE_TENSORS), (GraphProto, _A.GRAPHS),
    (TypeProto, _A.TYPE_PROTOS),
)
_LIST_FIELDS = {
    _A.INTS: "ints", _A.FLOATS: "floats", _A.STRINGS: "strings", _A.TENSORS: "tensors",
    _A.SPARSE_TENSORS: "sparse_tensors", _A.GRAPHS: "graphs", _A.TYPE_PROTOS: "type_protos",
}
_LIST_CLASSES = {_A.TENSORS: TensorProto, _A.SPARSE_TENSORS: SparseTensorProto, _A.GRAPHS: GraphProto,
                 _A.TYPE_PROTOS: TypeProto}
# Message values: class -> (field, attribute type).
_MESSAGE_KINDS = (
    (TensorProto, "t", _A.TENSOR), (SparseTensorProto, "sparse_tensor", _A.SPARSE_TENSOR),
    (GraphProto, "g", _A.GRAPH), (TypeProto, "tp", _A.TYPE_PROTO),
)


def _attr_type_to_str(attr_type) -> str:
    try:
        return _A.AttributeType.Name(attr_type)
    except (ValueError, TypeError):
        return "UNDEFINED"


def make_attribute(key: str, value: Any, doc_string: str | None = None, attr_type: int | None = None) -> AttributeProto:
    """An AttributeProto whose type follows from ``value``.

    int (incl. bool) -> INT, other reals -> FLOAT, str/bytes -> STRING (UTF-8), a
    TensorProto/SparseTensorProto/GraphProto/TypeProto -> that kind, and an iterable
    -> the list kind of its elements (ints before floats, so [1, 2.5] is FLOATS).
    An empty list needs ``attr_type``; when ``attr_type`` is given and the value says
    otherwise, TypeError.
    """
    attr = AttributeProto()
    attr.name = key
    if doc_string:
        attr.doc_string = doc_string
    if isinstance(value, numbers.Integral):
        attr.i = int(value)
        attr.type = _A.INT
    elif isinstance(value, numbers.Real):
        attr.f = float(value)
        attr.type = _A.FLOAT
    elif isinstance(value, (str, bytes)):
        attr.s = _to_bytes(value)
        attr.type = _A.STRING
    elif isinstance(value, (TensorProto, SparseTensorProto, GraphProto, TypeProto)):
        for cls, field, kind in _MESSAGE_KINDS:
            if isinstance(value, cls):
                setattr(attr, field, _copy(value, cls, key))
                attr.type = kind
                break
    elif isinstance(value, collections.abc.Iterable):
        value = list(value)
        if attr_type is None:
            if not value:
                raise ValueError(f"Could not infer attribute `{key}` type from empty iterator")
            types = {type(v) for v in value}
            for classes, kind in _LIST_KINDS:
                if all(issubclass(t, classes) for t in types):
                    attr_type = kind
                    break
            else:
                raise ValueError("Could not infer the attribute type from the elements of the passed Iterable value.")
        field = _LIST_FIELDS.get(attr_type)  # type: ignore[assignment]  # attr_type is set by the loop above or it raised
        if field is None:
            # The reference fails an internal assertion here; a TypeError says what is wrong.
            raise TypeError(f"attribute `{key}`: a list value cannot have type "
                            f"{_attr_type_to_str(attr_type)}({attr_type})")
        if attr_type == _A.INTS:
            value = _ints(value, "ints")
        elif attr_type == _A.STRINGS:
            value = _bytes_values([_to_bytes(v) for v in value], "strings")
        elif attr_type in _LIST_CLASSES:
            value = _copies(value, _LIST_CLASSES[attr_type], field)
        getattr(attr, field).extend(value)
        attr.type = attr_type
    else:
        raise TypeError(f"'{value}' is not an accepted attribute value.")
    if attr_type is not None and attr.type != attr_type:
        raise TypeError(f"Inferred attribute type '{_attr_type_to_str(attr.type)}'({attr.type}) mismatched "
                        f"with specified type '{_attr_type_to_str(attr_type)}'({attr_type})")
    return attr


def make_attribute_ref(name: str, attr_type: int, doc_string: str | None = None, *,
                       ref_attr_name: str | None = None) -> AttributeProto:
    """An attribute of a function body that takes its value from the calling node.

    ``ref_attr_name`` names the function's attribute; it defaults to ``name``.
    """
    if ref_attr_name is None:
        ref_attr_name = name
    if not ref_attr_name:
        raise ValueError("ref_attr_name must be non-empty")
    attr = AttributeProto()
    attr.name = name
    attr.type = _int(attr_type, "type")
    attr.ref_attr_name = ref_attr_name
    if doc_string:
        attr.doc_string = doc_string
    return attr


_VALUE_FIELDS = {
    _A.FLOAT: "f", _A.INT: "i", _A.STRING: "s", _A.TENSOR: "t", _A.SPARSE_TENSOR: "sparse_tensor",
    _A.GRAPH: "g", _A.TYPE_PROTO: "tp",
}


def get_attribute_value(attr: AttributeProto) -> Any:
    """The value of an attribute as the reference returns it (lists as lists, s as bytes)."""
    if attr.ref_attr_name:
        raise ValueError(f"Cannot get value of reference attribute: {attr}")
    t = attr.type
    if t == _A.UNDEFINED:
        return None
    if t == _A.STRING:
        return bytes(attr.s)  # a memoryview when read from a buffer; the reference gives bytes
    if t == _A.STRINGS:
        return [bytes(s) for s in attr.strings]
    field = _VALUE_FIELDS.get(t)
    if field is not None:
        return getattr(attr, field)
    field = _LIST_FIELDS.get(t)
    if field is not None:
        return list(getattr(attr, field))
    raise ValueError(f"Unsupported ONNX attribute: {attr}")


def get_node_attr_value(node: NodeProto, attr_name: str) -> Any:
    """The value of the node's only attribute named ``attr_name``."""
    matching = [a for a in node.attribute if a.name == attr_name]
    if len(matching) > 1:
        raise ValueError(f"Node has multiple attributes with name {attr_name}")
    if not matching:
        raise ValueError(f"Node has no attribute with name {attr_name}")
    return get_attribute_value(matching[0])


# -- types and value infos -------------------------------------------------------------
def _shape(shape: Sequence, shape_denotation: Sequence[str] | None, text: str) -> TensorShapeProto:
    if shape_denotation and len(shape_denotation) != len(shape):
        raise ValueError("Invalid shape_denotation. Must be of the same length as shape.")
    out = TensorShapeProto()
    for i, d in enumerate(shape):
        dim = out.dim.add()
        if d is None:
            pass
        elif isinstance(d, int):
            dim.dim_value = _int(d, "dim_value")
        elif isinstance(d, str):
            dim.dim_param = d
        else:
            raise ValueError(f"Invalid item in shape: {d}. Needs to be of int or {text}.")
        if shape_denotation:
            dim.denotation = shape_denotation[i]
    return out


def make_tensor_type_proto(elem_type: int, shape: Sequence[str | int | None] | None,
                           shape_denotation: list[str] | None = None) -> TypeProto:
    """A tensor TypeProto.  ``shape=None``: rank unknown; ``[]``: a scalar; a dim of None: unknown.

    int dims are ``dim_value``, str dims ``dim_param``.
    """
    tensor = TypeProto.Tensor(elem_type=_int(elem_type, "elem_type"))
    if shape is not None:
        tensor.shape = _shape(shape, shape_denotation, "str")
    return TypeProto(tensor_type=tensor)


def make_sparse_tensor_type_proto(elem_type: int, shape: Sequence[str | int | None] | None,
                                  shape_denotation: list[str] | None = None) -> TypeProto:
    """A sparse tensor TypeProto; ``shape`` as in `make_tensor_type_proto`."""
    sparse = TypeProto.SparseTensor(elem_type=_int(elem_type, "elem_type"))
    if shape is not None:
        sparse.shape = _shape(shape, shape_denotation, "text")
    return TypeProto(sparse_tensor_type=sparse)


def make_sequence_type_proto(inner_type_proto: TypeProto) -> TypeProto:
    """A sequence TypeProto over (a copy of) ``inner_type_proto``."""
    elem = _copy(inner_type_proto, TypeProto, "inner_type_proto")
    return TypeProto(sequence_type=TypeProto.Sequence(elem_type=elem))


def make_optional_type_proto(inner_type_proto: TypeProto) -> TypeProto:
    """An optional TypeProto over (a copy of) ``inner_type_proto``."""
    elem = _copy(inner_type_proto, TypeProto, "inner_type_proto")
    return TypeProto(optional_type=TypeProto.Optional(elem_type=elem))


def make_map_type_proto(key_type: int, value_type: TypeProto) -> TypeProto:
    """A map TypeProto; ``key_type`` is a TensorProto data type (an integer type or STRING)."""
    value = _copy(value_type, TypeProto, "value_type")
    return TypeProto(map_type=TypeProto.Map(key_type=_int(key_type, "key_type"), value_type=value))


def make_value_info(name: str, type_proto: TypeProto, doc_string: str = "") -> ValueInfoProto:
    """A ValueInfoProto of any type."""
    info = ValueInfoProto()
    info.name = name
    if doc_string:
        info.doc_string = doc_string
    info.type = _copy(type_proto, TypeProto, "type_proto")
    return info


def make_empty_tensor_value_info(name: str) -> ValueInfoProto:
    """A ValueInfoProto with a name and no type (an unused optional input or output)."""
    return ValueInfoProto(name=name)


def make_tensor_value_info(name: str, elem_type: int, shape: Sequence[str | int | None] | None,
                           doc_string: str = "", shape_denotation: list[str] | None = None) -> ValueInfoProto:
    """A ValueInfoProto of a tensor type; see `make_tensor_type_proto` for ``shape``."""
    info = ValueInfoProto()
    info.name = name
    if doc_string:
        info.doc_string = doc_string
    info.type = make_tensor_type_proto(elem_type, shape, shape_denotation)
    return info


def make_sparse_tensor_value_info(name: str, elem_type: int, shape: Sequence[str | int | None] | None,
                                  doc_string: str = "", shape_denotation: list[str] | None = None) -> ValueInfoProto:
    """A ValueInfoProto of a sparse tensor type."""
    info = ValueInfoProto()
    info.name = name
    if doc_string:
        info.doc_string = doc_string
    info.type = make_sparse_tensor_type_proto(elem_type, shape, shape_denotation)
    return info


def make_tensor_sequence_value_info(name: str, elem_type: int, shape: Sequence[str | int | None] | None,
                                    doc_string: str = "",
                                    elem_shape_denotation: list[str] | None = None) -> ValueInfoProto:
    """A ValueInfoProto of a sequence of tensors."""
    info = ValueInfoProto()
    info.name = name
    if doc_string:
        info.doc_string = doc_string
    info.type = make_sequence_type_proto(make_tensor_type_proto(elem_type, shape, elem_shape_denotation))
    return info


# -- tensors ---------------------------------------------------------------------------
_T = TensorProto
_EXACT_IN_DOUBLE = 1 << 53  # ints up to this convert to float identically in numpy and Python


class UnknownDataTypeError(KeyError, ValueError):
    """A ``data_type`` that is no TensorProto.DataType (KeyError, as the reference's lookup)."""


def _elem_type(data_type: int) -> _dt.ElemType:
    try:
        return _dt.ELEM_TYPES[data_type]
    except (KeyError, TypeError):
        raise UnknownDataTypeError(data_type) from None


def make_tensor(name: str, data_type: int, dims: Sequence[int], vals: Any, raw: bool = False) -> TensorProto:
    """A TensorProto of shape ``dims``.

    ``raw=False``: ``vals`` are element values (a list, nested lists or an array),
    converted as numpy converts them to the data type and stored in the field the
    format assigns to that type (float8 saturates, 4-bit and 2-bit types are packed,
    float16/bfloat16 go in int32_data as bit patterns).  ``raw=True``: ``vals`` is the
    little-endian content as ``bytes`` (or a numpy array, serialized for you) and must
    have exactly the size the shape needs.  STRING tensors cannot be raw.
    """
    tensor = TensorProto()
    tensor.data_type = _int(data_type, "data_type")
    tensor.name = name
    dims = _ints(dims, "dims")  # a list: the reference would read a generator twice
    tensor.dims.extend(dims)
    if data_type == _T.STRING and raw:
        raise TypeError("Can not use raw_data to store string type.")
    et = _elem_type(data_type)
    np = sys.modules.get("numpy")
    is_array = np is not None and isinstance(vals, np.ndarray)
    if raw:
        expected = -(-math.prod(dims) * et.bits // 8)
        if is_array:
            data = _array_to_raw(et, vals)
        elif isinstance(vals, bytes):
            data = vals
        else:
            raise TypeError(f"Raw data must be bytes or numpy.ndarray, but got {type(vals)}.")
        if len(data) != expected:
            raise ValueError(f"Raw data size does not match tensor's size. Expected {expected} bytes, "
                             f"but got {len(data)} bytes.")
        tensor.raw_data = data
        return tensor
    values = None if is_array else _plain_values(et, vals)
    if values is None:
        values = _numpy_values(et, vals, math.prod(dims))
    elif len(values) != math.prod(dims):
        _count_error(len(values), math.prod(dims))
    getattr(tensor, et.field).extend(values)
    return tensor


def _count_error(got: int, expected: int):
    raise ValueError(f"Number of values ({got}) does not match tensor dimensions requiring "
                     f"{expected} elements.")


def _plain_values(et: _dt.ElemType, vals) -> list | None:
    """The field values for common types without numpy, or None when numpy must decide.

    Only inputs whose conversion is certain to equal numpy's are taken: e.g. floats for
    FLOAT (rounded to float32 by the field, as numpy rounds), ints in range for the
    integer types, and strings numpy would not alter (it drops trailing NULs).
    """
    data_type = et.code
    if isinstance(vals, (list, tuple, range)):
        items = vals
    elif data_type == _T.STRING and isinstance(vals, (str, bytes)):
        items = (vals,)
    elif data_type != _T.STRING and isinstance(vals, (int, float)):
        items = (vals,)
    else:
        return None
    if data_type in (_T.FLOAT, _T.DOUBLE):
        for v in items:
            if not (isinstance(v, float) or (isinstance(v, int) and -_EXACT_IN_DOUBLE <= v <= _EXACT_IN_DOUBLE)):
                return None
        return [float(v) for v in items]
    rng = None if et.sub_byte else et.int_range  # one integer per field entry: no packing
    if rng is not None:
        lo, hi = rng
        for v in items:
            if not isinstance(v, int) or not lo <= v <= hi:
                return None
        return [int(v) for v in items]
    if data_type == _T.BOOL:
        for v in items:
            if not isinstance(v, int) or not -(1 << 63) <= v < (1 << 63):
                return None
        return [1 if v else 0 for v in items]
    if data_type == _T.STRING:
        if not items:
            return []
        kind = str if isinstance(items[0], str) else bytes
        nul = "\x00" if kind is str else b"\x00"
        for v in items:
            if type(v) is not kind or v.endswith(nul):  # type: ignore[arg-type]  # nul has the type of v (kind)
                return None
        return [v.encode("utf-8") for v in items] if kind is str else list(items)  # type: ignore[union-attr]  # kind is str here, so every item is a str
    return None


def _import_numpy():
    try:
        import numpy  # noqa: PLC0415 (numpy is optional: imported on first need)
    except ImportError:
        raise ImportError("make_tensor needs numpy for this data type or these values "
                          "(pip install irmodel[arrays])") from None
    return numpy


def _np_dtype(et: _dt.ElemType):
    try:
        return _dt.np_dtype(et.code)
    except ModuleNotFoundError as exc:
        if exc.name != "ml_dtypes":
            raise
        raise ImportError(f"make_tensor needs ml_dtypes for {et.name} "
                          "(pip install irmodel[arrays])") from None


def _numpy_values(et: _dt.ElemType, vals, expected: int) -> list:
    """Field values converted by numpy, exactly as the reference converts them."""
    np = _import_numpy()
    dtype = _np_dtype(et)
    data_type, kind = et.code, et.kind
    saturating_float8 = kind == _dt.BITS8 and et.minifloat is not None
    if data_type == _T.STRING:
        arr = np.array(vals).flatten()
        if len(arr):
            arr = np.vectorize(_to_bytes)(arr)
    elif saturating_float8:
        import ml_dtypes  # noqa: PLC0415
        info = ml_dtypes.finfo(dtype)  # saturating: out-of-range values clip to +-max
        arr = np.clip(np.asarray(vals), info.min, info.max).astype(dtype).flatten()
    elif data_type == _T.FLOAT8E8M0:
        arr = _float8e8m0_round_up(np, np.asarray(vals)).flatten()
    elif kind == _dt.BITS6:
        arr = np.asarray(vals, dtype=dtype).flatten().view(np.uint8)
    else:
        arr = np.asarray(vals, dtype=dtype).flatten()
    if len(arr) != expected:
        _count_error(len(arr), expected)
    if data_type == _T.COMPLEX128:
        arr = arr.view(np.float64)
    elif data_type == _T.COMPLEX64:
        arr = arr.view(np.float32)
    elif data_type in (_T.BFLOAT16, _T.FLOAT16):
        arr = arr.view(np.uint16)
    elif saturating_float8 or data_type == _T.FLOAT8E8M0:
        arr = arr.view(np.uint8)
    elif kind in (_dt.NIB4, _dt.NIB2):
        from ._dtypes import packing  # noqa: PLC0415 (imports numpy)
        arr = packing.pack(arr, et.bits)
    elif data_type == _T.BOOL:
        arr = arr.astype(np.uint8)
    return arr.tolist()


def _array_to_raw(et: _dt.ElemType, arr) -> bytes:
    """Little-endian bytes of a numpy array for raw_data, packing sub-byte types."""
    np = sys.modules["numpy"]
    if et.sub_byte:
        from ._dtypes import packing  # noqa: PLC0415 (imports numpy)
        if et.kind == _dt.BITS6:
            arr = arr.view(np.uint8)  # 6-bit codes are taken from the array's bytes
        arr = packing.pack(arr, et.bits)
    from .tensors import tobytes_little_endian  # noqa: PLC0415 (imports numpy)
    return tobytes_little_endian(arr)


def _float8e8m0_round_up(np, x):
    """float32 -> float8e8m0 rounding up, saturating, NaN/Inf -> 0xFF (`numpy_helper.to_float8e8m0`)."""
    from .numpy_helper import to_float8e8m0  # noqa: PLC0415 (imports numpy)
    return to_float8e8m0(x, saturate=True, round_mode="up")


def make_sparse_tensor(values: TensorProto, indices: TensorProto, dims: Sequence[int]) -> SparseTensorProto:
    """A SparseTensorProto: non-zero ``values``, their ``indices`` (flat or per dimension), shape ``dims``."""
    sparse = SparseTensorProto()
    sparse.values = _copy(values, TensorProto, "values")
    sparse.indices = _copy(indices, TensorProto, "indices")
    sparse.dims.extend(_ints(dims, "dims"))
    return sparse


# -- sequence, map, optional values (onnx-data.proto) ------------------------------------
_SEQUENCE_FIELDS = {
    SequenceProto.TENSOR: ("tensor_values", TensorProto),
    SequenceProto.SPARSE_TENSOR: ("sparse_tensor_values", SparseTensorProto),
    SequenceProto.SEQUENCE: ("sequence_values", SequenceProto),
    SequenceProto.MAP: ("map_values", MapProto),
    SequenceProto.OPTIONAL: ("optional_values", OptionalProto),
}
_OPTIONAL_FIELDS = {
    OptionalProto.TENSOR: ("tensor_value", TensorProto),
    OptionalProto.SPARSE_TENSOR: ("sparse_tensor_value", SparseTensorProto),
    OptionalProto.SEQUENCE: ("sequence_value", SequenceProto),
    OptionalProto.MAP: ("map_value", MapProto),
    OptionalProto.OPTIONAL: ("optional_value", OptionalProto),
}
_MAP_INT_KEYS = frozenset((_T.INT8, _T.INT16, _T.INT32, _T.INT64, _T.UINT8, _T.UINT16, _T.UINT32, _T.UINT64))


def make_sequence(name: str, elem_type: int, values: Sequence[Any]) -> SequenceProto:
    """A SequenceProto of ``values``, all of the kind ``elem_type`` (a SequenceProto.DataType)."""
    seq = SequenceProto()
    seq.name = name
    seq.elem_type = _int(elem_type, "elem_type")
    if elem_type == SequenceProto.UNDEFINED:
        return seq
    try:
        field, cls = _SEQUENCE_FIELDS[elem_type]
    except KeyError:
        raise TypeError("The element type in the input sequence is not supported.") from None
    getattr(seq, field).extend(_copies(values, cls, field))
    return seq


def make_map(name: str, key_type: int, keys: list[Any], values: SequenceProto) -> MapProto:
    """A MapProto: ``keys`` (bytes for STRING keys, ints for integer key types) and their values.

    Keys of any other ``key_type`` are dropped, as in the reference.
    """
    mp = MapProto()
    mp.name = name
    mp.key_type = _int(key_type, "key_type")
    if key_type == _T.STRING:
        mp.string_keys.extend(_bytes_values(keys, "string_keys"))
    elif key_type in _MAP_INT_KEYS:
        mp.keys.extend(_ints(keys, "keys"))
    mp.values = _copy(values, SequenceProto, "values")
    return mp


def make_optional(name: str, elem_type: int, value: Any) -> OptionalProto:
    """An OptionalProto holding ``value`` of the kind ``elem_type`` (UNDEFINED: empty)."""
    opt = OptionalProto()
    opt.name = name
    opt.elem_type = _int(elem_type, "elem_type")
    if elem_type == OptionalProto.UNDEFINED:
        return opt
    try:
        field, cls = _OPTIONAL_FIELDS[elem_type]
    except KeyError:
        raise TypeError("The element type in the input optional is not supported.") from None
    if value is None:
        # The reference asserts here; ValueError says what is missing.
        raise ValueError(f"make_optional: a value is required for elem_type {elem_type}")
    setattr(opt, field, _copy(value, cls, field))
    return opt




# -- dtype mappings (onnx.helper's, from the one dtype table `irmodel._dtypes.rows`) -------------

_STORAGE_OF_FIELD = {"float_data": _T.FLOAT, "int32_data": _T.INT32, "int64_data": _T.INT64,
                     "double_data": _T.DOUBLE, "uint64_data": _T.UINT64, "string_data": _T.STRING}


def get_all_tensor_dtypes() -> Any:
    """Every TensorProto.DataType but UNDEFINED (a keys view, as onnx's)."""
    return _dt.ELEM_TYPES.keys()


def tensor_dtype_to_np_dtype(tensor_dtype: int) -> Any:
    """The numpy dtype of an element type (ml_dtypes' for bfloat16, float8, int4, ...)."""
    return _dt.np_dtype(_elem_type(tensor_dtype).code)


def tensor_dtype_to_storage_tensor_dtype(tensor_dtype: int) -> int:
    """The element type whose typed field stores this one (FLOAT16 -> INT32, UINT32 -> UINT64)."""
    return _STORAGE_OF_FIELD[_elem_type(tensor_dtype).field]


def tensor_dtype_to_string(tensor_dtype: int) -> str:
    """``"TensorProto.FLOAT"`` for FLOAT, and so on."""
    return f"TensorProto.{_elem_type(tensor_dtype).name}"


def tensor_dtype_to_field(tensor_dtype: int) -> str:
    """The TensorProto field (``float_data``, ``int32_data``, ...) that stores this type."""
    return _elem_type(tensor_dtype).field


def np_dtype_to_tensor_dtype(np_dtype: Any) -> int:
    """The element type of a numpy dtype; ValueError for one ONNX has none for."""
    return _dt.onnx_type_of(np_dtype)


from ._printable import (  # noqa: E402  (onnx.helper's printing helpers, in their own module)
    printable_attribute, printable_dim, printable_graph, printable_node, printable_tensor_proto, printable_type,
    printable_value_info, strip_doc_string)
