"""Varint and zigzag primitives over ``(buf, pos)``.

Every reader takes the buffer, a position and the end of the region it may read, and
returns ``(value, new_pos)``, in the style of tomli's ``parse_x(src, pos)`` functions.
"""

from __future__ import annotations

TYPE_CHECKING = False

from .errors import DecodeError
from .limits import MAX_TAG_LENGTH_BYTES, MAX_VARINT_BYTES

if TYPE_CHECKING:
    from .buffer import Buffer

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1



# Masks for `read_varint`'s word-at-a-time path (16 bytes wide; a varint has at most 10).
_CONT = int.from_bytes(b"\x80" * 10, "little")
_DATA = int.from_bytes(b"\x7f" * 16, "little")
_PAIRS_LO = int.from_bytes(b"\x7f\x00" * 8, "little")
_PAIRS_HI = int.from_bytes(b"\x00\x7f" * 8, "little")
_QUADS_LO = int.from_bytes(b"\xff\x3f\x00\x00" * 4, "little")
_QUADS_HI = int.from_bytes(b"\x00\x00\xff\x3f" * 4, "little")
_OCTS_LO = int.from_bytes(b"\xff\xff\xff\x0f\x00\x00\x00\x00" * 2, "little")
_OCTS_HI = int.from_bytes(b"\x00\x00\x00\x00\xff\xff\xff\x0f" * 2, "little")
_LOW56 = (1 << 56) - 1


def read_varint(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    """Decode one varint at ``pos``; bits above 64 are dropped, as protobuf does.

    Tuned: varints of three bytes or more (every negative int32/int64 takes ten) are
    decoded as one integer, the continuation bits found and squeezed out with masks
    (a few big-int operations instead of a Python loop step per byte).  Measured in
    benchmarks/RESULTS.md (decoder tuning).
    """
    if end - pos >= 10:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        c = buf[pos + 1]
        if c < 0x80:
            return (b & 0x7F) | (c << 7), pos + 2
        x = int.from_bytes(buf[pos:pos + 10], "little")
        stop = ~x & _CONT
        if not stop:
            raise DecodeError("varint longer than 10 bytes", pos)
        last = stop & -stop  # the high bit of the final byte
        x &= ((last << 1) - 1) & _DATA
        x = (x & _PAIRS_LO) | ((x & _PAIRS_HI) >> 1)
        x = (x & _QUADS_LO) | ((x & _QUADS_HI) >> 2)
        x = (x & _OCTS_LO) | ((x & _OCTS_HI) >> 4)
        x = (x & _LOW56) | ((x >> 64) << 56)
        return x & MASK64, pos + (last.bit_length() >> 3)
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


def read_short_varint(buf: Buffer, pos: int, end: int, what: str = "tag or length") -> tuple[int, int]:
    """Decode a tag or a length prefix: a varint of at most `MAX_TAG_LENGTH_BYTES` (5) bytes.

    protobuf reads tags and lengths as 32-bit varints and its C++ parser and upb refuse
    one written in more than 5 bytes, even when the extra bytes are padding (0x80...0x00);
    refusing them too means we accept the same files.  ``what`` names the varint in the
    error.  The value may still exceed 32 bits (5 bytes hold 35): the caller checks it.
    Callers read one-byte varints inline and come here for the rest; two-byte ones (a
    node or a small tensor of 128 bytes to 16 KiB) are the common case here, answered
    before the loop, exactly as the loop would answer them.
    """
    if pos + 1 < end:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        c = buf[pos + 1]
        if c < 0x80:
            return (b & 0x7F) | (c << 7), pos + 2
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
            return result, pos
        shift += 7
        if shift == 7 * MAX_TAG_LENGTH_BYTES:
            raise DecodeError(f"{what} varint longer than {MAX_TAG_LENGTH_BYTES} bytes", start)


def zigzag_decode(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def zigzag_encode(n: int) -> int:
    return (n << 1) ^ (n >> 63) if n < 0 else n << 1


def to_int64(n: int) -> int:
    return n - (1 << 64) if n >> 63 else n


def to_int32(n: int) -> int:
    n &= MASK32
    return n - (1 << 32) if n >> 31 else n


# Precomputed encodings of the 128 one-byte varints: most tags, lengths and small ints in
# ONNX.  Two-byte ones are built directly (a table of all 16,384 would cost every import).
_SMALL = [bytes((i,)) for i in range(128)]


def encode_varint(n: int) -> bytes:
    """Encode a non-negative int (< 2**64), or a negative one as its 64-bit two's complement."""
    if 0 <= n < 128:
        return _SMALL[n]
    if 0 < n < 16384:
        return bytes(((n & 0x7F) | 0x80, n >> 7))
    if n < 0:
        n &= MASK64
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)
