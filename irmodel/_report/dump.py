"""The text form of `irmodel dump`: a whole message as an indented tree, one field a line.

Every present field is shown, in field-number order, under its proto name; the common
messages get a one-line header (a node as ``Conv conv1 (x, w) -> (y)``, a value as
``x FLOAT[batch, 3]``) and the fields the header does not say come below it.  Unknown
fields are shown schema-less, as `wirefmt.raw` sees them.

Tensors are summarised, never printed: dtype, shape, where the data is, and the first
`PREVIEW_VALUES` values, decoded with `struct` from the first few bytes of ``raw_data``
or of a typed field (packed typed fields are read straight from the buffer, so a
tensor's data is never decoded into a list).  Long strings, byte strings and repeated
numbers are cut too, so no field can flood the output with raw bytes.  The JSON form
(``dump --json``) is the complete one.
"""

from __future__ import annotations

import codecs
import math
import struct
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Iterator

from wirefmt import raw as _raw
from wirefmt.limits import MAX_DEPTH
from wirefmt.reader import convert_varint
from wirefmt.safetext import as_text
from wirefmt.schema import BYTES, DOUBLE, ENUM, FLOAT, INT32, INT64, MESSAGE, STRING, UINT64
from wirefmt.varint import read_varint

from wirefmt.values import shortest_float32
from .._dtypes.rows import (BITS6, BITS8, BITS16, COMPLEX, ELEM_TYPES, FLOATING, I32, INTEGER, NAN_FN,
                            NAN_IEEE, NAN_UZ, NIB2, NIB4, ElemType, Minifloat)
from .._wireview.patterns import compiled
from ..messages import ENUMS
from ..limits import element_count, size_text
from .shown import MAX_STRING_CHARS, name_text, quote
from .entries import type_text
from .summary import EXTERNAL, dtype_name, external_entries, tensor_nbytes, type_info

#: Values of a tensor shown (decoded from at most 8 x 16 bytes of its data).
PREVIEW_VALUES = 8
#: Items of a repeated scalar field shown before the rest is counted.
MAX_LIST_ITEMS = 16
#: Bytes of a non-text byte string shown, in hex.
MAX_HEX_BYTES = 16
INDENT = "  "

# -- element values ----------------------------------------------------------------------

_DT = ENUMS["TensorProto.DataType"]
_TYPED_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
_FIXED = {"float_data": struct.Struct("<f"), "double_data": struct.Struct("<d")}
_VARINT_KIND = {"int32_data": INT32, "int64_data": INT64, "uint64_data": UINT64}


def _minifloat(bits: int, layout: Minifloat) -> float:
    """The value of the bit pattern ``bits`` of a small float format."""
    ebits, mbits, bias, nan_rule = layout
    sign_bit = 1 << (ebits + mbits)
    if nan_rule == NAN_UZ and bits == sign_bit:
        return math.nan
    sign = -1.0 if bits & sign_bit else 1.0
    e = (bits >> mbits) & ((1 << ebits) - 1)
    m = bits & ((1 << mbits) - 1)
    if e == (1 << ebits) - 1:
        if nan_rule == NAN_IEEE:
            return sign * math.inf if m == 0 else math.nan
        if nan_rule == NAN_FN and m == (1 << mbits) - 1:
            return math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - mbits)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def _holds_bit_pattern(et: ElemType) -> bool:
    """Whether a stored integer is a float element's bit pattern (in its low ``et.bits``)."""
    return et.family == FLOATING and et.kind in (BITS16, BITS8, BITS6)


def _from_bits(et: ElemType, bits: int):
    """The value of one element of type ``et`` stored as the unsigned bit pattern ``bits``."""
    code = et.code
    if code == _DT.FLOAT16:
        return struct.unpack("<e", (bits & 0xFFFF).to_bytes(2, "little"))[0]
    if code == _DT.BFLOAT16:
        return struct.unpack("<f", ((bits & 0xFFFF) << 16).to_bytes(4, "little"))[0]
    if code == _DT.FLOAT8E8M0:
        return math.nan if bits & 0xFF == 0xFF else 2.0 ** ((bits & 0xFF) - 127)
    if et.minifloat is not None:
        return _minifloat(bits, et.minifloat)
    if et.sub_byte and et.signed and bits >> (et.bits - 1):
        return bits - (1 << et.bits)
    return bits


def _unpack_subbyte(et: ElemType, data: bytes, n: int) -> list:
    """The first ``n`` elements of a packed sub-byte type, first element in the low bits."""
    width = et.bits
    stream = int.from_bytes(data, "little")  # LSB-first bit stream (a few bytes at most)
    mask = (1 << width) - 1
    count = min(n, len(data) * 8 // width)
    return [_from_bits(et, (stream >> (i * width)) & mask) for i in range(count)]


def _raw_values(dtype: int, raw, n: int) -> list:
    """The first ``n`` elements of ``raw_data`` (reads at most ~``16 n`` bytes)."""
    et = ELEM_TYPES.get(dtype)
    if et is None:
        return []
    if et.sub_byte:
        nbytes = (n * et.bits + 7) // 8
        return _unpack_subbyte(et, bytes(raw[:nbytes]), n)
    fmt = et.raw_format
    if not fmt:
        return []
    per = 2 if et.family == COMPLEX else 1
    size = struct.calcsize("<" + fmt)
    k = min(n * per, len(raw) // size) // per * per
    vals = list(struct.unpack_from("<%d%s" % (k, fmt), raw, 0))
    if per == 2:
        return [complex(vals[i], vals[i + 1]) for i in range(0, k, 2)]
    if dtype == _DT.BOOL:
        return [v != 0 for v in vals]
    if _holds_bit_pattern(et) and dtype != _DT.FLOAT16:  # FLOAT16 is read by struct ("e")
        return [_from_bits(et, v) for v in vals]
    return vals


def _first_stored(t, name: str, k: int) -> tuple[list, int | None]:
    """The first ``k`` stored items of a typed data field and the item count (if known cheaply).

    A packed field not decoded yet is read from its chunks in the buffer: ``k`` values
    decoded, the count derived from the byte length for fixed-width fields.
    """
    chunks = t._raw_chunks(name)
    fixed = _FIXED.get(name)
    if chunks is not None and not all(_well_formed(c, fixed) for c in chunks):
        chunks = None  # malformed: decoding the field raises the codec's DecodeError
    if chunks is None:
        values = getattr(t, name)
        return list(values[:k]), len(values)
    out: list = []
    for c in chunks:
        if fixed is not None:
            m = min(k - len(out), len(c) // fixed.size)
            out.extend(v[0] for v in fixed.iter_unpack(c[:m * fixed.size]))
        else:
            pos, end, kind = 0, len(c), _VARINT_KIND[name]
            while pos < end and len(out) < k:
                v, pos = read_varint(c, pos, end)
                out.append(convert_varint(kind, v))
        if len(out) >= k:
            break
    count = sum(len(c) for c in chunks) // fixed.size if fixed is not None else None
    return out, count


def _typed_values(dtype: int, name: str, stored: list, n: int) -> list:
    """Elements from the first stored items of a typed field, as the reference reads them."""
    et = ELEM_TYPES.get(dtype)
    if et is None:
        return stored[:n]
    if name in ("float_data", "double_data") and et.family == COMPLEX:
        return [complex(stored[i], stored[i + 1]) for i in range(0, len(stored) - 1, 2)][:n]
    if name != "int32_data":
        if dtype == _DT.UINT32 and name == "uint64_data":
            return [v & 0xFFFFFFFF for v in stored[:n]]
        return stored[:n]
    if et.kind in (NIB4, NIB2):  # several elements in the low byte of each entry
        per = 8 // et.bits
        out = []
        for v in stored:
            out.extend(_unpack_subbyte(et, bytes((v & 0xFF,)), per))
        return out[:n]
    if _holds_bit_pattern(et):
        return [_from_bits(et, v & ((1 << et.bits) - 1)) for v in stored[:n]]
    if dtype == _DT.BOOL:
        return [v != 0 for v in stored[:n]]
    if et.family != INTEGER or et.kind not in (I32, BITS16):  # not C-cast from int32_data
        return stored[:n]
    bits, signed = et.bits, et.signed
    out = []
    for v in stored[:n]:
        v &= (1 << bits) - 1
        out.append(v - (1 << bits) if signed and v >> (bits - 1) else v)
    return out


def _well_formed(chunk: memoryview, fixed: struct.Struct | None) -> bool:
    """Whether a packed chunk decodes: a whole number of fixed-width values, or varints
    that end in the chunk and are at most 10 bytes long.  A dump must not show the first
    values of a field that every reader refuses (C-speed checks, no decoding)."""
    if fixed is not None:
        return len(chunk) % fixed.size == 0
    return not chunk or (chunk[-1] < 0x80 and compiled("overlong-varint").search(chunk) is None)


def preview_values(t: Any, limit: int = PREVIEW_VALUES) -> tuple[str, list]:
    """``(source, values)``: where the tensor's data is and its first ``limit`` elements.

    ``source`` is ``"raw_data"``, a typed field name, ``"external"`` (nothing is read)
    or ``""`` (no data).  Values are Python numbers (``complex`` for complex types,
    ``bool`` for BOOL), or ``bytes`` for STRING.
    """
    if t.data_location == EXTERNAL:
        return "external", []
    dtype = t.data_type
    n = element_count(t.dims)
    n = limit if n is None else min(limit, n)
    if t.HasField("raw_data"):
        return "raw_data", _raw_values(dtype, t.raw_data, n)
    for name in _TYPED_FIELDS:
        stored, count = _first_stored(t, name, 2 * n + 1)
        if stored or count:
            if name == "string_data":
                return name, [bytes(s) for s in stored[:n]]
            return name, _typed_values(dtype, name, stored, n)
    return "", []


# -- formatting ----------------------------------------------------------------------------

_WHITESPACE = {9: None, 10: None, 13: None}


def bytes_text(b: bytes | memoryview) -> str:
    """A byte string as quoted text when it is printable UTF-8, else length and hex preview.

    Reads at most the bytes it could show: a long text is judged by its head.
    """
    n = len(b)
    if not n:
        return '""'
    head = bytes(b[:MAX_STRING_CHARS * 4])  # UTF-8 needs at most 4 bytes a character
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=n == len(head))
    except UnicodeDecodeError:
        text = None
    if text and text.translate(_WHITESPACE).isprintable():
        if n == len(head):
            return quote(text)
        return quote(text[:MAX_STRING_CHARS]) + f"... ({n} bytes)"
    hexed = bytes(b[:MAX_HEX_BYTES]).hex(" ")
    return f"<{n} bytes: {hexed}{' ...' if n > MAX_HEX_BYTES else ''}>"


def value_text(v: Any, exact: bool = False) -> str:
    """One element or scalar value; floats to 6 significant digits unless ``exact``."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if exact else "%.6g" % v
    if isinstance(v, complex):
        sign = "" if str(v.imag)[0] == "-" else "+"
        return f"({value_text(v.real, exact)}{sign}{value_text(v.imag, exact)}j)"
    if isinstance(v, (bytes, memoryview)):
        return bytes_text(v)
    if isinstance(v, str):
        return quote(v)
    return str(v)


def _list_text(values, exact: bool = True, strings: bool = False) -> str:
    """A repeated field: the first `MAX_LIST_ITEMS` items, then the count of all.

    ``strings``: the items are of a string field (a bytes item is invalid UTF-8, shown
    with escapes, not as a byte string)."""
    total = len(values)
    shown = ", ".join(quote(v) if strings else value_text(v, exact) for v in values[:MAX_LIST_ITEMS])
    if total > MAX_LIST_ITEMS:
        return f"[{shown}, ...] ({total} values)"
    return f"[{shown}]"


def _dims_text(t) -> str:
    dims = t.dims
    shown = ", ".join(str(d) for d in dims[:MAX_LIST_ITEMS])
    if len(dims) > MAX_LIST_ITEMS:
        return f"[{shown}, ...] ({len(dims)} dims)"
    return f"[{shown}]"


def tensor_text(t: Any) -> str:
    """The one-line summary of a TensorProto: name, type, shape, data source, first values."""
    parts = [name_text(t.name)] if t.name else []
    parts.append(dtype_name(t.data_type) + _dims_text(t))
    source, values = preview_values(t)
    n = element_count(t.dims)
    if source == "external":
        ext = external_entries(t)
        loc = ext.pop("location", None)
        where = "external " + (name_text(loc) if loc is not None else "(no location)")
        where += "".join(f", {name_text(k)} {name_text(v)}" for k, v in ext.items())
        parts.append(where)
        return " ".join(parts)
    if source == "raw_data":
        have, need = len(t.raw_data), tensor_nbytes(t)
        parts.append(f"raw_data {have} bytes" + (f" (dims need {size_text(need)})" if have != need else ""))
    elif source:
        parts.append(source)
    else:
        parts.append("no data")
    if source:
        shown = ", ".join(value_text(v) for v in values)
        if n is None or n > len(values):
            shown = shown + ", ..." if shown else "..."
        parts.append(f"[{shown}]")
    return " ".join(parts)


# -- headers of the common messages -------------------------------------------------------

_TENSOR_FIELDS = frozenset(("name", "dims", "data_type", "raw_data", "external_data") + _TYPED_FIELDS)
_SCALAR_ATTR = {1: "f", 2: "i", 3: "s", 6: "floats", 7: "ints", 8: "strings"}
_ATTR_TYPES = ENUMS["AttributeProto.AttributeType"]


def _plain_type(tp) -> bool:
    """True when a TypeProto carries no denotation, so `type_text` says all of it."""
    stack = [tp]
    while stack:
        tp = stack.pop()
        if tp.denotation:
            return False
        which = tp.WhichOneof("value")
        if which in ("tensor_type", "sparse_tensor_type"):
            t = getattr(tp, which)
            if t.HasField("shape") and any(d.denotation for d in t.shape.dim):
                return False
        elif which in ("sequence_type", "optional_type"):
            stack.append(getattr(tp, which).elem_type)
        elif which == "map_type":
            stack.append(tp.map_type.value_type)
    return True


def _tensor_header(t):
    skip = _TENSOR_FIELDS | ({"data_location"} if t.data_location == EXTERNAL else set())
    return tensor_text(t), skip


def _qualified(domain, name) -> str:
    """``domain::name`` (or ``name`` when the domain is empty) as safe text."""
    return name_text((as_text(domain) + "::" if domain else "") + as_text(name))


def _node_header(n):
    op = _qualified(n.domain, n.op_type)
    name = f" {name_text(n.name)}" if n.name else ""
    ins = ", ".join(name_text(s) for s in n.input)
    outs = ", ".join(name_text(s) for s in n.output)
    return f"{op}{name} ({ins}) -> ({outs})", {"op_type", "domain", "name", "input", "output"}


def _attribute_header(a):
    skip = {"name"}
    head = name_text(a.name)
    if a.HasField("type"):
        skip.add("type")
        try:
            head += " = " + _ATTR_TYPES.Name(a.type)
        except ValueError:
            head += f" = <unknown type {a.type}>"
        field = _SCALAR_ATTR.get(a.type)
        if field is not None and (a.type in (6, 7, 8) or a.HasField(field)):
            skip.add(field)
            value = getattr(a, field)
            if a.type == 6:
                value = _Float32List(value)
            elif a.type == 1:
                value = shortest_float32(value)
            head += " " + (_list_text(value) if a.type in (6, 7, 8) else value_text(value, exact=True))
    if a.ref_attr_name:
        skip.add("ref_attr_name")
        head += f" (ref {name_text(a.ref_attr_name)})"
    return head, skip


def _value_info_header(v):
    skip = {"name"}
    head = name_text(v.name)
    if v.HasField("type") and _plain_type(v.type):
        skip.add("type")
        head += " " + type_text(type_info(v.type))
    return head, skip


def _opset_header(o):
    domain = name_text(o.domain) if o.domain else '"" (ai.onnx)'
    return f"{domain} version {o.version}", {"domain", "version"}


def _entry_header(e):
    return f"{name_text(e.key)} = {quote(e.value)}", \
        {"key", "value"}


def _function_header(f):
    head = _qualified(f.domain, f.name) + (f":{name_text(f.overload)}" if f.overload else "")
    return head, {"domain", "name", "overload"}


_HEADERS = {
    "TensorProto": _tensor_header,
    "NodeProto": _node_header,
    "AttributeProto": _attribute_header,
    "ValueInfoProto": _value_info_header,
    "OperatorSetIdProto": _opset_header,
    "StringStringEntryProto": _entry_header,
    "FunctionProto": _function_header,
    "GraphProto": lambda g: (name_text(g.name) if g.name else "", {"name"}),
    "SparseTensorProto": lambda s: (f"dims {_list_text(list(s.dims))}", {"dims"}),
}

# -- the tree ------------------------------------------------------------------------------

_DTYPE_FIELDS = frozenset(("elem_type", "data_type", "key_type"))


class _Float32List:
    """A float32 field's values as the shortest decimals that read back the same."""

    def __init__(self, values):
        self._values = values

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, index):
        return [shortest_float32(x) for x in self._values[index]]


def _scalar_text(f, v) -> str:
    if f.repeated:
        return _list_text(_Float32List(v) if f.kind == FLOAT else v, strings=f.kind == STRING)
    if f.kind == ENUM:
        try:
            return ENUMS[f.type_name].Name(v)
        except (KeyError, ValueError):
            return str(v)
    if f.kind == FLOAT:
        return value_text(shortest_float32(v), exact=True)
    if f.kind == DOUBLE:
        return repr(v)
    if f.kind == STRING:  # bytes when the file holds invalid UTF-8: shown with escapes
        return quote(v)
    if f.kind == BYTES:
        return bytes_text(v)
    if f.name in _DTYPE_FIELDS and isinstance(v, int):
        return f"{v} ({dtype_name(v)})"
    return value_text(v)


def _present(msg, skip) -> list:
    """``(FieldSpec, value)`` of the present fields not in ``skip``, without decoding skipped ones."""
    out = []
    for f in msg._spec.fields:
        if f.name in skip:
            continue
        if f.repeated:
            v = getattr(msg, f.name)
            if len(v):
                out.append((f, v))
        elif msg.HasField(f.name):
            out.append((f, getattr(msg, f.name)))
    return out


def _unknown_lines(msg, pad: str, depth: int) -> Iterator[str]:
    spans = msg.__dict__.get("_unknown")
    if not spans or msg._buf is None:
        return
    yield f"{pad}(unknown fields)"
    limit = max(0, min(MAX_DEPTH, MAX_DEPTH - depth))
    for i in range(0, len(spans), 2):
        start, end = spans[i], spans[i + 1]
        buf = msg._buf[0]
        if not isinstance(start, int):  # a field kept as bytes rather than as a span
            buf, start, end = start, 0, len(start)  # type: ignore[arg-type]  # a non-int start is the bytes of a synthetic unknown field
        for item in _raw.walk(buf, start, end, max_depth=limit):
            yield pad + INDENT + _raw.format_item(item, buf)


def _message_lines(msg, label: str, depth: int) -> Iterator[str]:
    pad = INDENT * depth
    header = _HEADERS.get(msg._type_name)
    head, skip = header(msg) if header is not None else ("", ())
    fields = _present(msg, skip)
    if not fields and not head and not msg.__dict__.get("_unknown"):
        head = "{}"
    yield f"{pad}{label}: {head}" if head else f"{pad}{label}"
    inner = pad + INDENT
    for f, v in fields:
        if f.kind != MESSAGE:
            yield f"{inner}{f.name}: {_scalar_text(f, v)}"
        elif f.repeated:
            for i, item in enumerate(v):
                yield from _message_lines(item, f"{f.name}[{i}]", depth + 1)
        else:
            yield from _message_lines(v, f.name, depth + 1)
    yield from _unknown_lines(msg, inner, depth + 1)


def dump_lines(msg: Any) -> Iterator[str]:
    """The text form of ``msg`` (any message), one line at a time.

    Recursion follows message nesting, which the message layer bounds at `MAX_DEPTH`.
    """
    return _message_lines(msg, msg._type_name, 0)


__all__ = ["dump_lines", "tensor_text", "preview_values", "value_text", "bytes_text", "quote",
           "name_text", "PREVIEW_VALUES"]
