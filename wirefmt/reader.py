"""Schema-free reading: field iteration, skipping (groups included) and packed arrays.

These are the slow, general paths.  The schema-driven scan (`wirefmt.scan` and the loops
`wirefmt.scangen` generates) handles the common cases inline and falls back to
`read_field` for anything unusual; its inline paths only detect that a read overran,
and `iter_fields` re-reads the span to say exactly why, so every error message about
malformed input is produced here, in one place.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from struct import Struct
    from typing import Iterator, NamedTuple

    from .buffer import Buffer

from .errors import DecodeError
from .records import named_tuple
from .limits import MAX_DEPTH, MAX_FIELD_NUMBER
from .schema import (BOOL, EGROUP, ENUM, FIXED_FORMAT, FIXED_WIDTH, FLOAT, I32, I64, INT32, INT64,
                     LEN, SGROUP, SINT32, SINT64, UINT32, UINT64, VARINT)
from .varint import read_short_varint, read_varint, to_int32, to_int64, zigzag_decode, MASK32

WIRE_TYPE_NAMES = {VARINT: "varint", I64: "fixed64", LEN: "length-delimited",
                   SGROUP: "start-group", EGROUP: "end-group", I32: "fixed32"}


if TYPE_CHECKING:
    class _FieldFields(NamedTuple):
        number: int
        wire_type: int
        value: int | None
        start: int
        end: int
        tag_start: int
else:
    _FieldFields = named_tuple("Field", ("number", "wire_type", "value", "start", "end", "tag_start"), __name__)


class Field(_FieldFields):
    """One field occurrence, as found by `iter_fields`: ``(number, wire_type, value, start,
    end, tag_start)``, a named tuple (`wirefmt.records`: no ``typing`` at run time).

    ``value`` is the int for varint/fixed wire types; for length-delimited and group
    fields the value lies in ``buf[start:end]``.  ``tag_start`` is where the field begins,
    so ``buf[tag_start:end_of_field]`` is the whole field as written.
    """

    __slots__ = ()


def read_tag(buf: Buffer, pos: int, end: int) -> tuple[int, int, int]:
    """Read a tag; returns ``(field_number, wire_type, new_pos)`` or raises DecodeError."""
    tag, new = read_short_varint(buf, pos, end, "tag")
    number, wt = tag >> 3, tag & 7
    if tag > MASK32:  # the tag is a uint32, so this is the only way a number can be too big
        raise DecodeError(f"field number {number} is above the maximum {MAX_FIELD_NUMBER}", pos)
    if number == 0:
        raise DecodeError("field number 0 is not allowed", pos)
    if wt > 5:
        raise DecodeError(f"invalid wire type {wt} for field {number}", pos)
    return number, wt, new


def read_length(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    """Read a length prefix and check it against the bytes that remain (before any use)."""
    n, new = read_short_varint(buf, pos, end, "length")
    if n > end - new:
        raise DecodeError(f"length {n} but only {end - new} bytes remain", pos)
    return n, new


def skip_group(buf: Buffer, pos: int, end: int, number: int, depth: int) -> tuple[int, int]:
    """Skip a group body whose start tag (field ``number``) was just read.

    Returns ``(body_end, pos_after_end_tag)``.  Iterative, so a deeply nested group
    raises DecodeError at ``MAX_DEPTH`` rather than exhausting the Python stack.

    ``depth`` is the nesting level of this group itself: its holder's depth plus one,
    as `read_field` passes it.  Levels are counted as protobuf counts them (C++ and upb
    alike): every message and every group, known or unknown, is one level below what
    holds it, the root message is level 0, and level `MAX_DEPTH` is the deepest read.
    So 100 groups nested at the root are read and 101 are refused.
    """
    stack = [number]
    while True:
        if depth + len(stack) - 1 > MAX_DEPTH:  # the innermost open group's level
            raise DecodeError(f"nesting deeper than {MAX_DEPTH}", pos)
        if pos >= end:
            raise DecodeError(f"group {stack[-1]} is not closed", pos)
        tag_start = pos
        num, wt, pos = read_tag(buf, pos, end)
        if wt == EGROUP:
            if num != stack[-1]:
                raise DecodeError(f"end-group tag {num} does not match start-group {stack[-1]}", tag_start)
            stack.pop()
            if not stack:
                return tag_start, pos
        elif wt == SGROUP:
            stack.append(num)
        else:
            pos = _skip_value(buf, pos, end, wt)


def _skip_value(buf, pos: int, end: int, wt: int) -> int:
    if wt == VARINT:
        return read_varint(buf, pos, end)[1]
    if wt == LEN:
        n, pos = read_length(buf, pos, end)
        return pos + n
    width = 8 if wt == I64 else 4
    if end - pos < width:
        raise DecodeError(f"truncated {WIRE_TYPE_NAMES[wt]} value", pos)
    return pos + width


def read_field(buf: Buffer, pos: int, end: int, depth: int = 0) -> tuple[Field, int]:
    """Read one whole field starting at its tag.  Returns ``(field, pos_after)``."""
    tag_start = pos
    number, wt, pos = read_tag(buf, pos, end)
    if wt == VARINT:
        value, after = read_varint(buf, pos, end)
        return Field(number, wt, value, pos, after, tag_start), after
    if wt == LEN:
        n, pos = read_length(buf, pos, end)
        return Field(number, wt, None, pos, pos + n, tag_start), pos + n
    if wt == I32 or wt == I64:
        width = 4 if wt == I32 else 8
        if end - pos < width:
            raise DecodeError(f"truncated {WIRE_TYPE_NAMES[wt]} value", pos)
        value = int.from_bytes(buf[pos:pos + width], "little")
        return Field(number, wt, value, pos, pos + width, tag_start), pos + width
    if wt == SGROUP:
        body_end, after = skip_group(buf, pos, end, number, depth + 1)
        return Field(number, wt, None, pos, body_end, tag_start), after
    raise DecodeError(f"unexpected end-group tag for field {number}", tag_start)


def iter_fields(buf: Buffer, start: int = 0, end: int | None = None, depth: int = 0) -> Iterator[Field]:
    """Yield every field of the message in ``buf[start:end]``, validating as it goes."""
    if end is None:
        end = len(buf)
    pos = start
    while pos < end:
        f, pos = read_field(buf, pos, end, depth)
        yield f


# -- float32 NaN payloads ----------------------------------------------------------------

class Float32NaN(float):
    """A float32 NaN that remembers its bit pattern.

    Widening a float32 to a Python float (a double) quiets a signalling NaN and so
    changes its bits; protobuf copies the bits unchanged.  Decoders return this subclass
    for every float32 NaN, and writers emit ``bits``, so NaN payloads survive a re-encode.
    """

    __slots__ = ("bits",)
    bits: int

    def __new__(cls, bits: int):
        self = float.__new__(cls, "nan" if not bits >> 31 else "-nan")
        self.bits = bits
        return self

    def __reduce__(self):
        return (Float32NaN, (self.bits,))


def float32_nan(buf: Buffer, pos: int) -> Float32NaN:
    return Float32NaN(int.from_bytes(buf[pos:pos + 4], "little"))


# -- packed repeated scalars ----------------------------------------------------------

def convert_varint(kind: int, raw: int) -> int | bool:
    """Turn the raw uint64 of a varint into the value of a field of ``kind``."""
    if kind == INT64:
        return to_int64(raw)
    if kind == INT32 or kind == ENUM:
        return to_int32(raw)
    if kind == UINT64:
        return raw
    if kind == UINT32:
        return raw & MASK32
    if kind == BOOL:
        return raw != 0
    if kind == SINT64:
        return zigzag_decode(raw)
    if kind == SINT32:
        return to_int32(zigzag_decode(raw & MASK32))
    raise TypeError(f"kind {kind} is not a varint kind")


_STRUCTS: dict = {}  # kind -> its `struct.Struct`, made by `fixed_struct`


def fixed_struct(kind: int) -> Struct:
    """The ``struct.Struct`` of one value of the fixed-width ``kind`` (`FIXED_FORMAT`), made
    on first use: `struct` is a shared library to load, and a process that decodes and sets
    no float or fixed-width value (a model's summary) never loads it.  The one home of these
    for the generic scan, the generated scan code (`scangen.float_helpers`) and the value
    checks (`values.to_float32`)."""
    s = _STRUCTS.get(kind)
    if s is None:
        from struct import Struct  # noqa: PLC0415 - see the docstring

        s = _STRUCTS[kind] = Struct(FIXED_FORMAT[kind])
    return s


def unpack_fixed(kind: int, buf: Buffer, start: int, end: int) -> list:
    """Decode packed fixed-width values; the length must be a multiple of the width."""
    width = FIXED_WIDTH[kind]
    if (end - start) % width:
        raise DecodeError(f"packed data of {end - start} bytes is not a multiple of {width}", start)
    from struct import unpack_from  # noqa: PLC0415 - a shared library, loaded by the first packed value

    fmt = "<%d%s" % ((end - start) // width, FIXED_FORMAT[kind][1])
    values = list(unpack_from(fmt, buf, start))
    if kind == FLOAT:
        for i, v in enumerate(values):
            if v != v:
                values[i] = float32_nan(buf, start + 4 * i)
    return values


def unpack_varints(kind: int, buf: Buffer, start: int, end: int) -> list:
    """Decode packed varints.  Tuned: one-byte values (the common case) skip the helper."""
    out: list = []
    append = out.append
    pos = start
    if kind == INT64 or kind == UINT64:
        signed = kind == INT64
        while pos < end:
            b = buf[pos]
            if b < 0x80:
                append(b)
                pos += 1
            else:
                v, pos = read_varint(buf, pos, end)
                append(v - (1 << 64) if signed and v >> 63 else v)
        return out
    while pos < end:
        v, pos = read_varint(buf, pos, end)
        append(convert_varint(kind, v))
    return out
