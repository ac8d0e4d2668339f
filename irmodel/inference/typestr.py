"""Type strings of operator schemas (``tensor(float)``, ``seq(tensor(int64))``) and back.

The names are the reference's data-type strings (``data_type_utils``); a code without a
name cannot be written as a type string there, and `type_string` raises for it as the
reference does.
"""

from __future__ import annotations

from ..defs.typestrings import ELEM_CODES, ELEM_NAMES
from ..defs.typestrings import strip_parens as _strip_parens
from .errors import FatalError
from .types import (UNSET, MapType, OpaqueType, OptionalType, SequenceType, SparseTensorType,
                    TensorType)


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
