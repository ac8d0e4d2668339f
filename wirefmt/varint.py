"""Varint, zigzag and fixed-width primitives over ``(buf, pos)``.

Every reader takes the buffer, a position and the end of the region it may read, and
returns ``(value, new_pos)``, in the style of tomli's ``parse_x(src, pos)`` functions.
"""

from __future__ import annotations

import struct

from .errors import DecodeError
from .limits import MAX_VARINT_BYTES

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")


def read_varint(buf, pos: int, end: int) -> tuple[int, int]:
    """Decode one varint at ``pos``; bits above 64 are dropped, as protobuf does."""
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise DecodeError("truncated varint", start)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & MASK64, pos
        shift += 7
        if pos - start >= MAX_VARINT_BYTES:
            raise DecodeError("varint longer than 10 bytes", start)


def varint_is_minimal(buf, start: int, end: int) -> bool:
    """True when the varint in ``buf[start:end]`` uses no redundant trailing zero byte."""
    return end - start == 1 or buf[end - 1] != 0


def zigzag_decode(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def zigzag_encode(n: int) -> int:
    return (n << 1) ^ (n >> 63) if n < 0 else n << 1


def to_int64(n: int) -> int:
    return n - (1 << 64) if n >> 63 else n


def to_int32(n: int) -> int:
    n &= MASK32
    return n - (1 << 32) if n >> 31 else n


# Precomputed encodings of the 128 one-byte varints and of common two-byte ones: most
# tags, lengths and small ints in ONNX fall here.  Measured by benchmarks/encode.
_SMALL = [bytes((i,)) for i in range(128)] + [bytes(((i & 0x7F) | 0x80, i >> 7)) for i in range(128, 16384)]


def encode_varint(n: int) -> bytes:
    """Encode a non-negative int (< 2**64), or a negative one as its 64-bit two's complement."""
    if 0 <= n < 16384:
        return _SMALL[n]
    if n < 0:
        n &= MASK64
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def varint_size(n: int) -> int:
    if n < 0:
        return 10
    if n < 128:
        return 1
    return (n.bit_length() + 6) // 7


def float32_round(x: float) -> float:
    """The value a double takes after a round trip through float32."""
    return _F32.unpack(_F32.pack(x))[0]
