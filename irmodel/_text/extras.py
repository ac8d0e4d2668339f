"""``@{...}`` blocks and ``@Type{...}`` literals: fields onnx's syntax has no form for.

An element of onnx's syntax (a node, a graph, a value info, ...) may be preceded by a
block ``@{field: value, -field, ...}``: after the element is read as onnx reads it,
each ``field: value`` sets that field (a repeated field gets the whole list) and each
``-field`` clears it.  An element that onnx's syntax cannot say at all (an attribute
of an undefined type, a type of an unknown element type) is written whole as a literal,
``@TypeProto{field: value, ...}``.  Values follow the field's kind: integers, floats
(onnx's spelling, ``nan(0x...)`` for a NaN's bits), strings (``"..."`` or ``b"..."``),
lists ``[...]``, messages ``{...}``; graphs, tensors, types, value infos and string
pairs are written in their own syntax.  onnx's parser rejects ``@`` in every place a
block or a literal can stand, so it never drops one silently.

This module prints them; `parser` reads them (the schema tells each value's kind).
"""

from __future__ import annotations

from wirefmt.schema import BOOL, BYTES, DOUBLE, FLOAT, MESSAGE, STRING

from .numbers import format_double, format_float32
from .strings import quote

#: Message types written in their own syntax where a field holds them.
OWN_SYNTAX = frozenset(("GraphProto", "TensorProto", "TypeProto", "ValueInfoProto", "StringStringEntryProto"))


def value_text(f, value, printer, indent: int) -> str:
    """One value of field ``f`` (a FieldSpec)."""
    kind = f.kind
    if kind == MESSAGE:
        return printer.message_text(f.type_name, value, indent)
    if kind == STRING or kind == BYTES:
        return quote(value)
    if kind == FLOAT:
        return format_float32(value)
    if kind == DOUBLE:
        return format_double(value)
    if kind == BOOL:
        return "1" if value else "0"
    return str(int(value))


def entry_text(msg, f, printer, indent: int) -> str:
    """``name: value`` for a field of ``msg`` (a list for a repeated field)."""
    value = getattr(msg, f.name)
    if f.repeated:
        return f"{f.name}: [" + ", ".join(value_text(f, v, printer, indent) for v in value) + "]"
    return f"{f.name}: {value_text(f, value, printer, indent)}"


def unknown_bytes(msg) -> bytes:
    """The wire bytes of the fields of ``msg`` its schema does not know (kept by the
    message classes as spans of the buffer it was read from, or as bytes)."""
    spans = msg.__dict__.get("_unknown")
    if not spans:
        return b""
    buf = msg._buf
    out = []
    for i in range(0, len(spans), 2):
        a = spans[i]
        out.append(a if isinstance(a, bytes) else bytes(buf[1][a:spans[i + 1]]))
    return b"".join(out)


def block(msg, names, clears, printer, indent: int) -> str:
    """The ``@{...}`` block for fields ``names`` of ``msg``, fields ``clears`` to clear
    and its unknown fields (``0x...``: their wire bytes), with a trailing space; ``""``
    when there is nothing to say."""
    unknown = unknown_bytes(msg)
    if not names and not clears and not unknown:
        return ""
    fields = msg._spec.by_name
    parts = [entry_text(msg, fields[n], printer, indent) for n in names]
    parts.extend("-" + n for n in clears)
    if unknown:
        parts.append("0x" + unknown.hex())
    return "@{" + ", ".join(parts) + "} "


def literal(msg, printer, indent: int) -> str:
    """``{...}``: every present field of ``msg``, in field-number order, and its
    unknown fields."""
    parts = [entry_text(msg, f, printer, indent) for f, _ in msg.ListFields()]
    unknown = unknown_bytes(msg)
    if unknown:
        parts.append("0x" + unknown.hex())
    return "{" + ", ".join(parts) + "}"


def typed_literal(type_name: str, msg, printer, indent: int) -> str:
    """``@TypeName{...}``: a whole element onnx's syntax cannot say."""
    return "@" + type_name + literal(msg, printer, indent)
