"""Many new value_info entries written into a graph without making a message of each.

Appending entries to ``graph.value_info`` makes one ValueInfoProto per entry (75,000 for
the 75,000-node benchmark: most of the write-back's time).  When the graph's bytes are
exactly what our encoder would write for it -- its fields in number order, each length
and tag in its shortest form, nothing unknown, ``name`` and ``doc_string`` at most once
-- the graph with its new entries is the same bytes with the entries' fields inserted
after its last field numbered up to ``value_info`` (13).  So the new graph is opened
over those bytes and replaces the old one: nodes, initializers and all stay spans,
saved as they are, and the result is byte for byte what appending gives.

Only for a graph up to `MAX_SPLICE_BYTES` and `SPLICE_RATIO` times its new entries'
size (the splice copies and re-reads the graph's bytes; a graph holding its weights
inline keeps the append) whose sub-graphs gained nothing (they belong to the old graph's
nodes).
"""

from __future__ import annotations

MAX_SPLICE_BYTES = 64 << 20
#: Splice only a graph at most this many times the size of its new entries: copying and
#: re-reading a large graph for a few entries costs more than making a message of each
#: (measured: the 75,000-node graph, 4.6 MiB for 2 MiB of entries, gains; a decoder of
#: 38 MiB for 0.5 MiB of entries loses).
SPLICE_RATIO = 4
_VALUE_INFO = 13
_ONCE = (2, 10)  # name, doc_string: singular
_GRAPH_FIELDS = frozenset((1, 2, 5, 10, 11, 12, 13, 14, 15, 16))  # GraphProto's, all length-delimited


def _varint(src, pos: int, end: int) -> tuple:
    """``(value, next)`` of a varint in its shortest form, or ``(None, pos)``."""
    result = 0
    shift = 0
    start = pos
    while pos < end and pos - start < 5:
        b = src[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if b == 0 and pos - start > 1:
                return None, start  # padded: not the shortest form
            return result, pos
        shift += 7
    return None, start


def insertion_point(src, start: int, end: int) -> int | None:
    """Where entries of field 13 go in a canonical GraphProto ``src[start:end]``, or None."""
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
            tag, pos = _varint(src, pos, end)
            if tag is None:
                return None
        number = tag >> 3
        if tag & 7 != 2 or number not in _GRAPH_FIELDS or number < last:
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
            n, pos = _varint(src, pos, end)
            if n is None:
                return None
            pos += n
        if number <= _VALUE_INFO:
            at = pos
    return at if pos == end else None


def splice_value_infos(model, entries_bytes: bytes) -> bool:
    """Give ``model.graph`` the value_info fields ``entries_bytes`` (serialized, each with its
    tag) after its own; False (nothing done) when the graph is not one this can do."""
    from wirefmt.message import exact_span  # noqa: PLC0415

    from .. import loads  # noqa: PLC0415

    g = model.graph
    span = exact_span(g)
    if span is None:
        return False
    src, start, end = span
    if end - start > MAX_SPLICE_BYTES or end - start > SPLICE_RATIO * len(entries_bytes):
        return False
    at = insertion_point(src, start, end)
    if at is None:
        return False
    n = end - start + len(entries_bytes)
    head = bytearray([0x3A])  # ModelProto.graph (7): opened at a graph's depth in a model
    while n >= 0x80:
        head.append(n & 0x7F | 0x80)
        n >>= 7
    head.append(n)
    holder = loads(b"".join((head, src[start:at], entries_bytes, src[at:end])), "ModelProto")
    model.graph = holder.graph
    return True
