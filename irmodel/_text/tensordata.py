"""A tensor's values in text: onnx's typed lists, and our raw forms.

onnx prints the values of a tensor's typed field (``{1,2}``) and, for ``raw_data``,
the same list decoded from the bytes; its parser always fills the typed field, so a
raw tensor comes back typed.  We print ``raw_data`` as ``@raw{...}`` (the values, in
onnx's spelling: 16- and 8-bit floats as their bit patterns) when the bytes are exactly
those values, else as ``@raw 0x<hex>`` (sub-byte types, odd lengths, large tensors:
the bytes as they are).  onnx's parser rejects both, so it never reads raw data as
something else.
"""

from __future__ import annotations

import struct

from .numbers import NAN32, NEG_NAN32, format_double, format_float32
from .strings import quote

#: Raw tensors with more elements than this are printed as hex, not as values (a value
#: list is for reading a short vector; hex is what a large tensor can afford: ~2
#: characters a byte, made and read by C code).
VALUES_LIMIT = 256

#: DataType -> struct code of one element of raw_data (complex: one part).
RAW_CODES = {1: "f", 2: "B", 3: "b", 4: "H", 5: "h", 6: "i", 7: "q", 9: "B", 10: "H", 11: "d", 12: "I",
             13: "Q", 14: "f", 15: "d", 16: "H", 17: "B", 18: "B", 19: "B", 20: "B", 24: "B"}
#: Parts of an element (complex: 2).
PARTS = {14: 2, 15: 2}
#: Integer range of each integer struct code.
CODE_RANGE = {"B": (0, 255), "b": (-128, 127), "H": (0, 65535), "h": (-32768, 32767),
              "i": (-(1 << 31), (1 << 31) - 1), "I": (0, (1 << 32) - 1), "q": (-(1 << 63), (1 << 63) - 1),
              "Q": (0, (1 << 64) - 1)}


def typed_text(field: str, values) -> str:
    """The ``{...}`` of a typed field, as onnx prints it (without its leading space)."""
    if field == "float_data":
        return "{" + ",".join(map(format_float32, values)) + "}"
    if field == "double_data":
        return "{" + ",".join(map(format_double, values)) + "}"
    if field == "string_data":
        return "{" + ", ".join(map(quote, values)) + "}"
    return "{" + ",".join(map(str, values)) + "}"


def raw_values_text(dtype: int, raw, count: int | None) -> str | None:
    """``{...}`` for raw bytes that are exactly ``count`` values of ``dtype``, else None."""
    code = RAW_CODES.get(dtype)
    if code is None or count is None or count > VALUES_LIMIT:
        return None
    n = count * PARTS.get(dtype, 1)
    if len(raw) != n * struct.calcsize(code):
        return None
    values = struct.unpack_from(f"<{n}{code}", raw)
    if code == "f":
        # unpack widens to double, which quiets a signalling NaN: read NaN bits from the bytes
        if any(v != v for v in values):
            bits = struct.unpack_from(f"<{n}I", raw)
            return "{" + ",".join(format_float32(v) if v == v else _nan32(b) for v, b in zip(values, bits)) + "}"
        return "{" + ",".join(map(format_float32, values)) + "}"
    if code == "d":
        return "{" + ",".join(map(format_double, values)) + "}"
    return "{" + ",".join(map(str, values)) + "}"


def _nan32(bits: int) -> str:
    if bits == NAN32:
        return "nan"
    if bits == NEG_NAN32:
        return "-nan"
    return f"nan(0x{bits:08x})"


def pack_raw(dtype: int, values: list) -> bytes:
    """The raw bytes of values read from ``@raw{...}`` (floats as float32 bit patterns
    already, see the parser: NaN payloads survive)."""
    code = RAW_CODES[dtype]
    if code == "f":
        return struct.pack(f"<{len(values)}I", *values)
    if code == "d":
        return struct.pack(f"<{len(values)}Q", *values)
    return struct.pack(f"<{len(values)}{code}", *values)

