"""The dict form of messages, as protobuf's ``json_format.MessageToDict`` produces it.

Rules (ProtoJSON, proto2 presence): present fields only, in field-number order; 64-bit
integers as decimal strings; bytes as standard base64; enums by name (an unknown value
of an open enum as its int); float fields printed with the fewest digits that round-trip
through float32; NaN and infinities as "NaN", "Infinity", "-Infinity".
"""

from __future__ import annotations

import base64
import math
from typing import TYPE_CHECKING, Any

from .errors import EncodeError, ParseError
from .limits import MAX_DEPTH
from .safetext import MAX_INT_DIGITS, json_bytes
from .schema import BOOL, BYTES, DOUBLE, ENUM, FLOAT, INT64_KINDS, INTEGER_KINDS, MESSAGE, STRING
from .values import shortest_float32

if TYPE_CHECKING:
    from .message import Message


def _special(x: float):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return None


def _scalar_to_json(f, value, enum_names):
    k = f.kind
    if k == STRING:  # bytes: invalid UTF-8, in json_format's form (wirefmt.safetext)
        return value if isinstance(value, str) else json_bytes(value)
    if k == BYTES:
        return base64.b64encode(value).decode("ascii")
    if k in INT64_KINDS:
        return str(value)
    if k == FLOAT or k == DOUBLE:
        special = _special(value)
        if special is not None:
            return special
        return shortest_float32(value) if k == FLOAT else value
    if k == ENUM:
        name = enum_names.get(value)
        return name if name is not None else value
    if k == BOOL:
        return bool(value)
    return value


def to_dict(msg: Message, use_field_names: bool = True, _depth: int = 0) -> dict:
    """``MessageToDict(msg, preserving_proto_field_name=use_field_names)``."""
    if _depth > MAX_DEPTH:  # only a tree built by hand gets here: decoding stops at the limit
        raise EncodeError(f"message nesting deeper than {MAX_DEPTH}")
    registry = msg._registry
    out: dict[str, Any] = {}
    for f, value in msg.ListFields():
        key = f.name if use_field_names else f.camel_name
        enum_names = registry.enum(f.type_name).names if f.kind == ENUM else None
        if f.kind == MESSAGE:
            if f.repeated:
                out[key] = [to_dict(m, use_field_names, _depth + 1) for m in value]
            else:
                out[key] = to_dict(value, use_field_names, _depth + 1)
        elif f.repeated:
            out[key] = [_scalar_to_json(f, v, enum_names) for v in value]
        else:
            out[key] = _scalar_to_json(f, value, enum_names)
    return out


# -- from_dict ------------------------------------------------------------------------

_SPECIALS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}




def _scalar_from_json(f, value, registry, path: str):
    k = f.kind
    try:
        if k == STRING:
            if not isinstance(value, str):
                raise ParseError(f"{path}: expected a string, got {type(value).__name__}")
            return value
        if k == BYTES:
            if not isinstance(value, str):
                raise ParseError(f"{path}: expected base64 text, got {type(value).__name__}")
            padded = value.replace("-", "+").replace("_", "/")
            padded += "=" * (-len(padded) % 4)
            return base64.b64decode(padded, validate=True)
        if k in INTEGER_KINDS:
            if isinstance(value, bool):
                raise ParseError(f"{path}: expected an integer, got a bool")
            if isinstance(value, str):
                digits = value.lstrip("-").lstrip("0")
                if len(digits) > MAX_INT_DIGITS and digits.isdigit():  # (int() refuses 4,300 digits)
                    raise ParseError(f"{path}: a {len(digits):,}-digit number is out of range")
                value = int(value) if value.lstrip("-").isdigit() else float(value)
            if isinstance(value, float):
                if not value.is_integer():
                    raise ParseError(f"{path}: {value} is not an integer")
                value = int(value)
            if not isinstance(value, int):
                raise ParseError(f"{path}: expected an integer, got {type(value).__name__}")
            return value
        if k == FLOAT or k == DOUBLE:
            if isinstance(value, str):
                if value in _SPECIALS:
                    return _SPECIALS[value]
                return float(value)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParseError(f"{path}: expected a number, got {type(value).__name__}")
            return float(value)
        if k == BOOL:
            if not isinstance(value, bool):
                raise ParseError(f"{path}: expected true or false, got {value!r}")
            return value
        if k == ENUM:
            e = registry.enum(f.type_name)
            if isinstance(value, str):
                if value not in e.values:
                    raise ParseError(f"{path}: {value!r} is not a value of {e.name}")
                return e.values[value]
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            raise ParseError(f"{path}: expected an enum name or number, got {value!r}")
    except (ValueError, TypeError) as exc:
        if isinstance(exc, ParseError):
            raise
        raise ParseError(f"{path}: {exc}") from None
    raise ParseError(f"{path}: unsupported field kind {k}")


def from_dict(data: dict, cls: type[Message], path: str | None = None, _level: int = 1) -> Any:
    """Build a message of class ``cls`` from ``MessageToDict`` output (either key style).

    Nesting is limited as ``json_format.ParseDict`` limits it: a chain of more than
    `MAX_DEPTH` messages (the root counted) raises `ParseError`, never RecursionError.
    """
    registry = cls._registry
    path = path or cls._type_name
    if _level > MAX_DEPTH:
        raise ParseError(f"{path}: messages nested more than {MAX_DEPTH} deep")
    if not isinstance(data, dict):
        raise ParseError(f"{path}: expected an object, got {type(data).__name__}")
    by_camel = {f.camel_name: f for f in cls._spec.fields}
    msg = cls()
    seen: set = set()
    for key, value in data.items():
        f = cls._spec.by_name.get(key) or by_camel.get(key)
        if f is None:
            raise ParseError(f"{path}: message {cls._type_name} has no field {key!r}")
        if f.name in seen:
            raise ParseError(f"{path}: field {f.name!r} given twice")
        seen.add(f.name)
        if value is None:
            continue
        fpath = f"{path}.{f.name}"
        if f.repeated:
            if not isinstance(value, list):
                raise ParseError(f"{fpath}: expected a list, got {type(value).__name__}")
            if f.kind == MESSAGE:
                sub = cls._classes[f.name]
                items = [from_dict(v, sub, f"{fpath}[{i}]", _level + 1) for i, v in enumerate(value)]
            else:
                items = [_scalar_from_json(f, v, registry, f"{fpath}[{i}]") for i, v in enumerate(value)]
            try:
                setattr(msg, f.name, items)
            except (TypeError, ValueError) as exc:
                raise ParseError(f"{fpath}: {exc}") from None
        elif f.kind == MESSAGE:
            setattr(msg, f.name, from_dict(value, cls._classes[f.name], fpath, _level + 1))
        else:
            try:
                setattr(msg, f.name, _scalar_from_json(f, value, registry, fpath))
            except (TypeError, ValueError) as exc:
                if isinstance(exc, ParseError):
                    raise
                raise ParseError(f"{fpath}: {exc}") from None
    return msg
