"""One field of a message read at a position: the step every field-by-field byte reader takes.

`field` answers ``(number, wire_type, a, after)`` with the checks the full scan makes
(tags, lengths, varints, groups, a field running past its message), reading the common
cases inline and the rest through `wirefmt.reader.read_field`, the generic validating
reader.  Varints are `wirefmt.varint`'s: no reader keeps a varint decoder of its own.
"""

from __future__ import annotations

from wirefmt.errors import DecodeError
from wirefmt.reader import read_field
from wirefmt.schema import LEN as _LEN, VARINT as _VARINT
from wirefmt.varint import read_short_varint, read_varint


def field(src, pos: int, end: int, depth: int) -> tuple:
    """``(number, wire_type, a, after)`` of the field at ``pos``; raises DecodeError or IndexError.

    ``a`` is the payload's start for a length-delimited field (it ends at ``after``) and
    the value for a varint.  One- and two-byte tags, lengths and varints are read inline;
    everything else through `wirefmt.reader.read_field`.
    """
    tag = src[pos]
    q = pos + 1
    if tag > 127:
        b = src[q]
        if b > 127:
            return _generic(src, pos, end, depth)
        tag = (tag & 127) | (b << 7)
        q += 1
    wt = tag & 7
    if tag > 7:  # field number 0 is an error: the generic reader says which
        if wt == _LEN:
            n = src[q]
            if n < 128:
                a = q + 1
            else:
                n, a = read_short_varint(src, q, end)
            after = a + n
            if after > end:
                raise DecodeError("length past the end of the message", q)
            return tag >> 3, _LEN, a, after
        if wt == _VARINT:
            v = src[q]
            if v < 128:
                return tag >> 3, _VARINT, v, q + 1
            v, after = read_varint(src, q, end)
            return tag >> 3, _VARINT, v, after
    return _generic(src, pos, end, depth)


def _generic(src, pos: int, end: int, depth: int) -> tuple:
    f, after = read_field(src, pos, end, depth)
    return f.number, f.wire_type, f.start, after


def after_varint(src, q: int, end: int) -> int:
    """The position after the varint at ``q`` (`wirefmt.varint.read_varint`'s checks)."""
    return read_varint(src, q, end)[1]
