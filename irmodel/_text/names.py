"""The syntax's keyword tables (onnx's ``PrimitiveTypeNameMap``, ``AttributeTypeNameMap``
and ``KeyWordMap`` in onnx/defs/parser.h), and how a tensor type's values are held.
"""

from __future__ import annotations

#: Element type name -> TensorProto.DataType.
TYPE_CODES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8,
    "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "complex64": 14,
    "complex128": 15, "bfloat16": 16, "float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19,
    "float8e5m2fnuz": 20, "uint4": 21, "int4": 22, "float4e2m1": 23, "float8e8m0": 24, "uint2": 25,
    "int2": 26, "float6e2m3": 27, "float6e3m2": 28,
}
TYPE_NAMES = {v: k for k, v in TYPE_CODES.items()}

#: Attribute type name -> AttributeProto.AttributeType.
ATTR_CODES = {
    "float": 1, "int": 2, "string": 3, "tensor": 4, "graph": 5, "floats": 6, "ints": 7, "strings": 8,
    "tensors": 9, "graphs": 10, "sparse_tensor": 11, "sparse_tensors": 12, "type_proto": 13,
    "type_protos": 14,
}
ATTR_NAMES = {v: k for k, v in ATTR_CODES.items()}
#: A list type -> the type of its elements, and back.
ELEMENT_TYPE = {6: 1, 7: 2, 8: 3, 9: 4, 10: 5, 12: 11, 14: 13}
LIST_TYPE = {v: k for k, v in ELEMENT_TYPE.items()}

#: Words that start a type besides the element type names.
TYPE_WORDS = frozenset(("seq", "map", "optional", "sparse_tensor", "opaque"))
#: Names a value-info position would read as the start of a type: printed quoted there.
TYPE_START = frozenset(TYPE_CODES) | TYPE_WORDS

#: The repeated field of TensorProto that holds a type's values when not raw (onnx's
#: printer and parser agree on these).
INT32_TYPES = frozenset((2, 3, 4, 5, 6, 9, 10, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28))
TYPED_FIELD = {**dict.fromkeys(INT32_TYPES, "int32_data"), 7: "int64_data", 12: "uint64_data",
               13: "uint64_data", 1: "float_data", 14: "float_data", 11: "double_data",
               15: "double_data", 8: "string_data"}
#: Every field that can hold values (a tensor whose values sit in another field than
#: its type's keeps them through an ``@{...}`` block).
DATA_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "raw_data", "double_data",
               "uint64_data")
#: The int32_data types whose values onnx reads back only in a narrower range.
INT32_RANGE = (-(1 << 31), (1 << 31) - 1)
