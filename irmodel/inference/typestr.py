"""Type strings of operator schemas (``tensor(float)``, ``seq(tensor(int64))``) and back.

The names are the reference's data-type strings (``data_type_utils``); a code without a
name cannot be written as a type string there, and `type_string` raises for it as the
reference does.
"""

from __future__ import annotations

from .errors import FatalError
from .types import (UNSET, MapType, OpaqueType, OptionalType, SequenceType, SparseTensorType,
                    TensorType)

ELEM_NAMES = {
    1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
    9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64",
    15: "complex128", 16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
    20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1", 24: "float8e8m0", 25: "uint2",
    26: "int2", 27: "float6e2m3", 28: "float6e3m2",
}
ELEM_CODES = {v: k for k, v in ELEM_NAMES.items()}


def elem_name(code) -> str:
    return ELEM_NAMES.get(code, str(code))


def elem_name_or_code(code) -> str:
    """The enum name the reference prints in merge errors (``FLOAT``), else the number."""
    name = ELEM_NAMES.get(code)
    return name.upper() if name is not None else ("UNDEFINED" if code == 0 else str(code))


def _data_type_string(code) -> str:
    name = ELEM_NAMES.get(code or 0)
    if name is None:
        raise FatalError(f"Invalid tensor data type {code or 0}.")
    return name


def type_string(t) -> str:
    """``DataTypeUtils::ToString``: the schema type string of a value type."""
    kind = type(t)
    if kind is TensorType:
        return f"tensor({_data_type_string(t.elem)})"
    if kind is SparseTensorType:
        return f"sparse_tensor({_data_type_string(t.elem)})"
    if kind is SequenceType:
        return f"seq({type_string(UNSET if t.elem is None else t.elem)})"
    if kind is OptionalType:
        return f"optional({type_string(UNSET if t.elem is None else t.elem)})"
    if kind is MapType:
        return f"map({_data_type_string(t.key)},{type_string(UNSET if t.value is None else t.value)})"
    if kind is OpaqueType:
        inner = ""
        if t.domain:
            inner += t.domain + ","
        if t.name:
            inner += t.name
        return f"opaque({inner})"
    raise FatalError("Unsupported type proto value case:0")


def _strip_parens(s: str) -> str:
    s = s.strip()
    if s.startswith("("):
        s = s[1:]
    s = s.strip()
    if s.endswith(")"):
        s = s[:-1]
    return s.strip()


def parse_type_string(s: str):
    """``DataTypeUtils::FromString``: the type a schema type string stands for."""
    s = s.strip()
    if s.startswith("seq"):
        return SequenceType(parse_type_string(_strip_parens(s[3:])))
    if s.startswith("optional"):
        return OptionalType(parse_type_string(_strip_parens(s[8:])))
    if s.startswith("map"):
        inner = _strip_parens(s[3:])
        key, _, value = inner.partition(",")
        return MapType(_code(key.strip()), parse_type_string(value))
    if s.startswith("opaque"):
        inner = _strip_parens(s[6:])
        dom = name = None
        if inner:
            if "," in inner:
                d, _, inner = inner.partition(",")
                dom = d or None
            if inner:
                name = inner
        return OpaqueType(dom, name)
    if s.startswith("sparse_tensor"):
        return SparseTensorType(_code(_strip_parens(s[13:])), None)
    if s.startswith("tensor"):
        return TensorType(_code(_strip_parens(s[6:])), None)
    return TensorType(_code(s), ())


def _code(name: str) -> int:
    code = ELEM_CODES.get(name)
    if code is None:
        raise FatalError(f"Received invalid data type string '{name}'.")
    return code
