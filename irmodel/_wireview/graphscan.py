"""The GraphProto reader of inference's splice: where new value_info entries go.

A graph whose bytes are exactly what our encoder writes for it (its fields in number
order, each tag and length in its shortest form, nothing unknown, ``name`` and
``doc_string`` at most once) takes new ``value_info`` entries right after its last field
numbered up to ``value_info``: `insertion_point` finds that place, or declines (None).
"""

from __future__ import annotations

from wirefmt.errors import DecodeError
from wirefmt.schema import LEN
from wirefmt.varint import read_short_varint

from . import fields as F

_VALUE_INFO, _ONCE, _GRAPH_FIELDS = F.GRAPH_VALUE_INFO_NUMBER, F.GRAPH_SINGULAR_NUMBERS, F.GRAPH_NUMBERS


def _shortest(src, pos: int, end: int) -> tuple:
    """``(value, next)`` of a tag or length in its shortest form (`read_short_varint`), or
    ``(None, pos)``."""
    try:
        value, after = read_short_varint(src, pos, end)
    except DecodeError:
        return None, pos
    if after - pos > 1 and src[after - 1] == 0:
        return None, pos  # padded: not the shortest form
    return value, after


def insertion_point(src, start: int, end: int) -> int | None:
    """Where entries of ``value_info`` go in a canonical GraphProto ``src[start:end]``, or None."""
    pos = start
    last = 0
    at = start
    seen = set()
    while pos < end:
        b = src[pos]
        if b < 0x80:  # one-byte tags: fields 1 to 15
            tag = b
            pos += 1
        else:
            tag, pos = _shortest(src, pos, end)
            if tag is None:
                return None
        number = tag >> 3
        if tag & 7 != LEN or number not in _GRAPH_FIELDS or number < last:
            return None
        if number in _ONCE:
            if number in seen:
                return None
            seen.add(number)
        last = number
        b = src[pos] if pos < end else 0x80
        if b < 0x80:
            pos += 1 + b
        else:
            n, pos = _shortest(src, pos, end)
            if n is None:
                return None
            pos += n
        if number <= _VALUE_INFO:
            at = pos
    return at if pos == end else None
