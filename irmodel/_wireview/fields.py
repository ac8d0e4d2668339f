"""Field numbers and tags of the ONNX messages the byte readers read, from `irmodel.proto`.

Every reader of wire bytes in the tree takes its numbers from here; none writes one in
hex.  A tag is ``number << 3 | wire type`` (`wirefmt.schema`'s wire types); the readers
compare one-byte tags (fields 1 to 15) with a byte of the input, so those are asserted to
fit in one byte, and the two two-byte tags they read inline (an attribute's ``type`` and
``ref_attr_name``) are given as their two bytes.
"""

from __future__ import annotations

from wirefmt.schema import I32, LEN, VARINT
from wirefmt.varint import encode_varint

from ..proto import field_number, field_numbers


def number(type_name: str, field: str) -> int:
    """The field number of ``type_name``'s ``field`` (a KeyError names a typo)."""
    return field_number(type_name, field)


def tag(type_name: str, field: str, wire_type: int) -> int:
    return number(type_name, field) << 3 | wire_type


def _byte_tag(type_name: str, field: str, wire_type: int) -> int:
    t = tag(type_name, field, wire_type)
    assert t < 128, (type_name, field)  # read as one byte
    return t


# -- GraphProto ------------------------------------------------------------------------------
GRAPH_NODE = _byte_tag("GraphProto", "node", LEN)
GRAPH_VALUE_INFO_NUMBER = number("GraphProto", "value_info")
#: GraphProto's singular strings (a canonical graph has each at most once).
GRAPH_SINGULAR_NUMBERS = frozenset(number("GraphProto", f) for f in ("name", "doc_string"))
#: Every GraphProto field number (all of them length-delimited).
GRAPH_NUMBERS = field_numbers("GraphProto")

# -- NodeProto -------------------------------------------------------------------------------
NODE_INPUT, NODE_OUTPUT, NODE_NAME, NODE_OP_TYPE, NODE_ATTRIBUTE, NODE_DOC_STRING, NODE_DOMAIN = (
    _byte_tag("NodeProto", f, LEN) for f in ("input", "output", "name", "op_type", "attribute", "doc_string",
                                             "domain"))
NODE_OP_TYPE_NUMBER, NODE_DOMAIN_NUMBER, NODE_ATTRIBUTE_NUMBER = (
    number("NodeProto", f) for f in ("op_type", "domain", "attribute"))
#: Every one-byte tag of a length-delimited field.
SHORT_LEN_TAGS = tuple(n << 3 | LEN for n in range(1, 16))

# -- AttributeProto --------------------------------------------------------------------------
ATTR_NAME, ATTR_S, ATTR_T, ATTR_FLOATS_PACKED, ATTR_INTS_PACKED, ATTR_STRINGS, ATTR_TENSORS, ATTR_DOC_STRING = (
    _byte_tag("AttributeProto", f, LEN) for f in ("name", "s", "t", "floats", "ints", "strings", "tensors",
                                                  "doc_string"))
ATTR_F = _byte_tag("AttributeProto", "f", I32)
ATTR_FLOATS_ONE = _byte_tag("AttributeProto", "floats", I32)
ATTR_I = _byte_tag("AttributeProto", "i", VARINT)
ATTR_INTS_ONE = _byte_tag("AttributeProto", "ints", VARINT)
ATTR_T_NUMBER, ATTR_TENSORS_NUMBER = number("AttributeProto", "t"), number("AttributeProto", "tensors")
#: Attribute fields whose presence makes a node not *plain* (graphs, sparse tensors).
ATTR_GRAPH_NUMBERS = frozenset(number("AttributeProto", f) for f in ("g", "graphs", "sparse_tensor",
                                                                      "sparse_tensors"))
#: The two bytes of the (two-byte) tags of ``type`` (a varint) and ``ref_attr_name``.
ATTR_TYPE_BYTES = encode_varint(tag("AttributeProto", "type", VARINT))
ATTR_REF_BYTES = encode_varint(tag("AttributeProto", "ref_attr_name", LEN))
assert len(ATTR_TYPE_BYTES) == len(ATTR_REF_BYTES) == 2 and ATTR_TYPE_BYTES[1] == ATTR_REF_BYTES[1]

# -- TensorProto -----------------------------------------------------------------------------
TENSOR_DIMS, TENSOR_DATA_TYPE, TENSOR_SEGMENT, TENSOR_INT64_DATA, TENSOR_NAME, TENSOR_RAW_DATA, \
    TENSOR_DOC_STRING, TENSOR_DATA_LOCATION = (
        number("TensorProto", f) for f in ("dims", "data_type", "segment", "int64_data", "name", "raw_data",
                                           "doc_string", "data_location"))
TENSOR_DIMS_PACKED_TAG = _byte_tag("TensorProto", "dims", LEN)
TENSOR_DIMS_ONE_TAG = _byte_tag("TensorProto", "dims", VARINT)
TENSOR_DATA_TYPE_TAG = _byte_tag("TensorProto", "data_type", VARINT)
TENSOR_NAME_TAG = _byte_tag("TensorProto", "name", LEN)
TENSOR_RAW_DATA_TAG = _byte_tag("TensorProto", "raw_data", LEN)
TENSOR_DATA_LOCATION_TAG = _byte_tag("TensorProto", "data_location", VARINT)

# -- ModelProto ------------------------------------------------------------------------------
MODEL_GRAPH = _byte_tag("ModelProto", "graph", LEN)

# -- TypeProto and ValueInfoProto (inference writes them: `inference.types`, `denotation`) ---
TYPE_TENSOR, TYPE_SEQUENCE, TYPE_MAP, TYPE_OPAQUE, TYPE_SPARSE_TENSOR, TYPE_OPTIONAL, TYPE_DENOTATION = (
    number("TypeProto", f) for f in ("tensor_type", "sequence_type", "map_type", "opaque_type",
                                     "sparse_tensor_type", "optional_type", "denotation"))
#: The elem_type tag (a varint) of TypeProto.Tensor and TypeProto.SparseTensor, as bytes.
ELEM_TYPE_TAG = bytes((_byte_tag("TypeProto.Tensor", "elem_type", VARINT),))
SHAPE = number("TypeProto.Tensor", "shape")
assert (tag("TypeProto.SparseTensor", "elem_type", VARINT), number("TypeProto.SparseTensor", "shape")) == (
    ELEM_TYPE_TAG[0], SHAPE)
DIM = number("TensorShapeProto", "dim")
DIM_VALUE_TAG = bytes((_byte_tag("TensorShapeProto.Dimension", "dim_value", VARINT),))
DIM_PARAM, DIM_DENOTATION = (number("TensorShapeProto.Dimension", f) for f in ("dim_param", "denotation"))
#: The element type field of TypeProto.Sequence and TypeProto.Optional (the same number).
SEQUENCE_ELEM = number("TypeProto.Sequence", "elem_type")
assert number("TypeProto.Optional", "elem_type") == SEQUENCE_ELEM
MAP_KEY_TAG = bytes((_byte_tag("TypeProto.Map", "key_type", VARINT),))
MAP_VALUE = number("TypeProto.Map", "value_type")
OPAQUE_DOMAIN, OPAQUE_NAME = number("TypeProto.Opaque", "domain"), number("TypeProto.Opaque", "name")
VALUE_INFO_NAME, VALUE_INFO_TYPE = number("ValueInfoProto", "name"), number("ValueInfoProto", "type")
VALUE_INFO_NAME_TAG = bytes((_byte_tag("ValueInfoProto", "name", LEN),))
VALUE_INFO_TYPE_TAG = bytes((_byte_tag("ValueInfoProto", "type", LEN),))
GRAPH_VALUE_INFO_TAG = bytes((_byte_tag("GraphProto", "value_info", LEN),))
MODEL_GRAPH_NUMBER = number("ModelProto", "graph")
