"""Many new value_info entries written into a graph without making a message of each.

Appending entries to ``graph.value_info`` makes one ValueInfoProto per entry (75,000 for
the 75,000-node benchmark: most of the write-back's time).  When the graph's bytes are
exactly what our encoder would write for it -- its fields in number order, each length
and tag in its shortest form, nothing unknown, ``name`` and ``doc_string`` at most once
-- the graph with its new entries is the same bytes with the entries' fields inserted
after its last field numbered up to ``value_info``.  So the new graph is opened
over those bytes and replaces the old one: nodes, initializers and all stay spans,
saved as they are, and the result is byte for byte what appending gives.

The spliced graph is not scanned again when its layout is known (`field_layout`): the
old graph's scan recorded where each item of its repeated fields lies, and those spans
prove it canonical (each field's items back to back, each behind its tag and the shortest
length, the fields in number order, its strings where they belong, no byte left over);
the new graph's spans are then the old ones moved by what was inserted before them, plus
the new entries' (`types.value_info_fields` gives those).  Otherwise (an item list made
already, say) the graph's fields are walked (`insertion_point`) and the new bytes scanned.

Only for a graph up to `MAX_SPLICE_BYTES` and `SPLICE_RATIO` times its new entries'
size (the splice copies and re-reads the graph's bytes; a graph holding its weights
inline keeps the append) whose sub-graphs gained nothing (they belong to the old graph's
nodes).
"""

from __future__ import annotations

from wirefmt import encode_varint
from wirefmt.message import exact_span
from wirefmt.schema import LEN

from .._wireview import fields as F
from .._wireview.graphscan import insertion_point

MAX_SPLICE_BYTES = 64 << 20
#: Splice only a graph at most this many times the size of its new entries: copying and
#: re-reading a large graph for a few entries costs more than making a message of each
#: (measured: the 75,000-node graph, 4.6 MiB for 2 MiB of entries, gains; a decoder of
#: 38 MiB for 0.5 MiB of entries loses).
SPLICE_RATIO = 4
_VALUE_INFO = F.GRAPH_VALUE_INFO_NUMBER


def field_layout(g, start: int, end: int) -> tuple | None:
    """``(insertion point, {repeated field: item spans}, {string field: value})`` of a
    canonical GraphProto ``g`` read from ``[start, end)`` of its buffer, proven from what its
    scan recorded (see the module docstring); None when that does not prove it.

    Per present field in number order: a repeated field's items must start right after
    the end of the field before plus the first item's tag and shortest length, and its
    items, each behind at least its tag and shortest length, must fill exactly the bytes up
    to the last one's end (so nothing else lies between them, and every length is in its
    shortest form); a string field's tag, length and bytes must be where it is expected.
    """
    from operator import sub  # noqa: PLC0415

    from wirefmt.message import item_spans  # noqa: PLC0415
    from wirefmt.schema import MESSAGE, STRING  # noqa: PLC0415

    d = g.__dict__
    if d.get("_lazy") or d.get("_unknown"):
        return None
    src = exact_span(g)
    if src is None:
        return None
    src = src[0]
    pos = start
    at = None
    repeated: dict = {}
    strings: dict = {}
    for f in sorted(type(g)._spec.fields, key=lambda f: f.number):
        name = f.name
        if at is None and f.number > _VALUE_INFO:
            at = pos
        tag = f.number << 3 | LEN
        tag_size = len(encode_varint(tag))
        if f.repeated and f.kind == MESSAGE:
            spans = item_spans(g, name)
            if spans is None:
                if len(getattr(g, name)):
                    return None  # an item list made already: its spans are gone
                continue
            if not spans:
                continue
            lens = list(map(sub, spans[1::2], spans[0::2]))
            if spans[0] != pos + tag_size + len(encode_varint(lens[0])):
                return None
            heads = len(lens) * (tag_size + 1)
            big = max(lens)
            limit = 0x80
            while limit <= big:  # each length from ``limit`` on takes one more byte
                heads += sum(map(limit.__le__, lens))
                limit <<= 7
            if spans[-1] - pos != heads + sum(lens):
                return None
            repeated[name] = spans
            pos = spans[-1]
        elif f.kind == STRING and not f.repeated:
            if name not in d:
                continue  # (the scan stores every string it met)
            value = d[name]
            if type(value) is not str:
                return None
            data = value.encode()
            field = encode_varint(tag) + encode_varint(len(data)) + data
            if src[pos:pos + len(field)] != field:
                return None
            strings[name] = value
            pos += len(field)
        elif name in d:
            return None  # a kind of field this does not place
    if pos != end:
        return None
    return (pos if at is None else at), repeated, strings


def _spliced_graph(g, src, start: int, end: int, layout: tuple, entries_bytes: bytes, entry_spans: list):
    """A GraphProto over ``g``'s bytes with ``entries_bytes`` inserted at the layout's
    insertion point, holding what a scan of those bytes would hold (without the scan)."""
    from wirefmt.containers import new_messages  # noqa: PLC0415
    from wirefmt.scan import new_instance  # noqa: PLC0415

    at, repeated, strings = layout
    data = b"".join((src[start:at], entries_bytes, src[at:end]))
    cls = type(g)
    new = new_instance(cls)
    d = new.__dict__
    d["_buf"] = (data, memoryview(data))
    d["_start"] = 0
    d["_end"] = len(data)
    d["_depth"] = g._depth
    fields = cls._fields
    before, after = -start, len(entries_bytes) - start
    added = list(map((at - start).__add__, entry_spans))
    for name, spans in repeated.items():
        moved = list(map((before if fields[name].number <= _VALUE_INFO else after).__add__, spans))
        if name == "value_info":
            moved += added
            added = []
        d[name] = new_messages(new, name, cls._classes[name], moved)
    if added:
        d["value_info"] = new_messages(new, "value_info", cls._classes["value_info"], added)
    d.update(strings)
    return new


def splice_value_infos(model, entries_bytes: bytes, entry_spans: list | None = None) -> bool:
    """Give ``model.graph`` the value_info fields ``entries_bytes`` (serialized, each with its
    tag) after its own; False (nothing done) when the graph is not one this can do.
    ``entry_spans``: each entry's span in ``entries_bytes`` (`types.value_info_fields`), to
    make the new graph without scanning it."""
    from .. import loads  # noqa: PLC0415

    g = model.graph
    span = exact_span(g)
    if span is None:
        return False
    src, start, end = span
    if end - start > MAX_SPLICE_BYTES or end - start > SPLICE_RATIO * len(entries_bytes):
        return False
    layout = field_layout(g, start, end) if entry_spans is not None else None
    if layout is not None and entry_spans is not None:
        model.graph = _spliced_graph(g, src, start, end, layout, entries_bytes, entry_spans)
        return True
    at = insertion_point(src, start, end)
    if at is None:
        return False
    n = end - start + len(entries_bytes)
    head = bytes((F.MODEL_GRAPH,)) + encode_varint(n)  # ModelProto.graph: opened at a graph's depth in a model
    holder = loads(b"".join((head, src[start:at], entries_bytes, src[at:end])), "ModelProto")
    model.graph = holder.graph
    return True
