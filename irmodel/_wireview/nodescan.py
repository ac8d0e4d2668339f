"""A node's ``op_type`` and ``domain`` read straight from its bytes, without making a NodeProto.

What ``irmodel inspect`` needs of a node of the main graph is its op type; making a
NodeProto for that (a message, its input and output lists, its attributes, a
TensorProto for each ``Constant``) is most of the cost of a summary.  `node_op` reads
the node's wire form instead, and answers only for a *plain* node: one whose attributes
hold no graph, no sparse tensor and no tensor that says where its data lives
(``data_location``, which may make it external).  For any other node, and for any bytes
that are not well formed, it answers None and the caller makes the NodeProto and walks
it as before (`irmodel._report.summary`), which raises the error the bytes deserve.

So that the two paths agree exactly, this reads the same levels the full path scans
(the node, each of its attributes, each tensor in them) and refuses (None) whatever
the full path's scan would refuse there: a bad tag, varint, length or group, a field
running past its message.  Deeper levels (the contents of a tensor's ``raw_data``,
an attribute's packed ``ints``) are not read by either.  Protobuf's rules hold: the
last ``op_type`` wins, a field with an unexpected wire type is an unknown field, and
invalid UTF-8 (kept as bytes by the full path) sends the node to the full path.

`count_ops` reads a graph's nodes in runs: one regular expression search over a run's
bytes (compiled once and kept in the code cache, `irmodel._files.codecache.compiled_pattern`)
cuts each node, if all its fields are length-delimited of one-byte tags and lengths,
into its leading names (input, output, name) and its *kind*, every field after them
(op type, attributes, doc string, domain, as exporters write them); the nodes are
counted by kind, and `node_op` reads each distinct kind once (a model has a few dozen,
against thousands of nodes).  Names need no more than the match: `node_op` skips them,
and a string field is well formed whatever its bytes.  A run whose matches are not
exactly its nodes (a field of 128 bytes or more, a varint field, anything odd) and a
long node are read by `node_op` node by node, as before.
"""

from __future__ import annotations

# Built in (Counter's counting loop, and operator's functions): `collections` and
# `operator` are not imported for them.
from _collections import _count_elements  # type: ignore[import-not-found]
from _operator import gt, itemgetter, sub
from itertools import compress, repeat

from wirefmt.errors import DecodeError
from wirefmt.reader import read_field
from wirefmt.varint import read_short_varint, read_varint

from ..messages import CLASSES

_LEN, _VARINT = 2, 0
_FIELD, _KIND = itemgetter(0), itemgetter(1)


def _number(type_name: str, field: str) -> int:
    return CLASSES[type_name]._fields[field].number


_OP_TYPE, _DOMAIN, _ATTRIBUTE = (_number("NodeProto", f) for f in ("op_type", "domain", "attribute"))
_OP_TYPE_TAG, _DOMAIN_TAG, _ATTRIBUTE_TAG = (n << 3 | _LEN for n in (_OP_TYPE, _DOMAIN, _ATTRIBUTE))
assert max(_OP_TYPE_TAG, _DOMAIN_TAG, _ATTRIBUTE_TAG) < 128  # one-byte tags: see node_op
_T, _TENSORS = _number("AttributeProto", "t"), _number("AttributeProto", "tensors")
#: Attribute fields whose presence sends a node to the full path (they hold what a
#: summary counts: graphs, and sparse tensors whose parts may be external).
_NOT_PLAIN = frozenset(_number("AttributeProto", f) for f in ("g", "graphs", "sparse_tensor", "sparse_tensors"))
_DATA_LOCATION = _number("TensorProto", "data_location")
_T_TAG, _TENSORS_TAG = _T << 3 | _LEN, _TENSORS << 3 | _LEN
_DATA_LOCATION_TAG = _DATA_LOCATION << 3 | _VARINT
assert max(_T_TAG, _TENSORS_TAG, _DATA_LOCATION_TAG) < 128
#: The one-byte tags among `_NOT_PLAIN` (the others are two bytes long and take the generic path).
_NOT_PLAIN_TAGS = frozenset(n << 3 | _LEN for n in _NOT_PLAIN if n << 3 < 128)


def _field(src, pos: int, end: int, depth: int) -> tuple:
    """``(number, wire_type, a, after)`` of the field at ``pos``; raises DecodeError or IndexError.

    ``a`` is the payload's start for a length-delimited field (it ends at ``after``) and
    the value for a varint.  One- and two-byte tags, lengths and varints are read inline;
    everything else through `wirefmt.reader.read_field`, the generic validating reader.
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


# The two loops below read one-byte tags of length-delimited and varint fields inline
# (a ``Constant``'s attribute and tensor are nothing else; an attribute's ``type`` has a
# two-byte tag, read inline too) and every other field through `_field`.  A read past the
# end leaves ``pos > end``: not well formed, False.


def _skip_varint(src, q: int) -> int:
    """The position after the varint at ``q``, or -1 if it is longer than 10 bytes (the
    check `wirefmt.varint.read_varint` makes; running past the message is the caller's)."""
    limit = q + 9
    while src[q] > 127:
        if q >= limit:
            return -1
        q += 1
    return q + 1

def _plain_tensor(src, pos: int, end: int, depth: int) -> bool:
    """A well-formed TensorProto that does not set ``data_location`` (so it is not external)."""
    while pos < end:
        tag = src[pos]
        if 7 < tag < 128:
            wt = tag & 7
            if wt == _LEN:
                n = src[pos + 1]
                pos = pos + 2 + n if n < 128 else sum(read_short_varint(src, pos + 1, end))
                continue
            if wt == _VARINT:
                if tag == _DATA_LOCATION_TAG:
                    return False
                pos = pos + 2 if src[pos + 1] < 128 else _skip_varint(src, pos + 1)
                if pos < 0:
                    return False
                continue
        number, wt, _, pos = _field(src, pos, end, depth)
        if number == _DATA_LOCATION and wt == _VARINT:
            return False
    return pos == end


def _plain_attribute(src, pos: int, end: int, depth: int) -> bool:
    while pos < end:
        tag = src[pos]
        if 7 < tag < 128:
            wt = tag & 7
            if wt == _LEN:
                n = src[pos + 1]
                if n < 128:
                    a = pos + 2
                elif pos + 2 < end and src[pos + 2] < 128:  # two bytes, as read_short_varint reads them
                    n = (n & 127) | (src[pos + 2] << 7)
                    a = pos + 3
                else:
                    n, a = read_short_varint(src, pos + 1, end)
                pos = a + n
                if pos > end:
                    return False
                if tag == _T_TAG or tag == _TENSORS_TAG:
                    if not _plain_tensor(src, a, pos, depth + 1):
                        return False
                elif tag in _NOT_PLAIN_TAGS:
                    return False
                continue
            if wt == _VARINT:
                pos = pos + 2 if src[pos + 1] < 128 else _skip_varint(src, pos + 1)
                if pos < 0:
                    return False
                continue
        elif tag > 127 and src[pos + 1] < 128 and tag & 7 == _VARINT:  # a two-byte tag: `type`
            pos = pos + 3 if src[pos + 2] < 128 else _skip_varint(src, pos + 2)
            if pos < 0:
                return False
            continue
        number, wt, a, pos = _field(src, pos, end, depth)
        if wt != _LEN:
            continue
        if number in _NOT_PLAIN:
            return False
        if (number == _T or number == _TENSORS) and not _plain_tensor(src, a, pos, depth + 1):
            return False
    return pos == end


def node_op(src, start: int, end: int, depth: int) -> tuple | None:
    """``(op_type, domain)`` of the plain NodeProto in ``src[start:end]``, else None.

    ``depth`` is the node's nesting depth as the full path would see it (2 in a model's
    main graph); it bounds group skipping as there.  See the module docstring.
    """
    op_type = domain = ""
    pos = start
    try:
        while pos < end:
            tag = src[pos]
            if tag & 7 == _LEN and 7 < tag < 128:  # a node's own fields: inline (hot loop)
                n = src[pos + 1]
                if n < 128:
                    a = pos + 2
                elif pos + 2 < end and src[pos + 2] < 128:  # two bytes, as read_short_varint reads them
                    n = (n & 127) | (src[pos + 2] << 7)
                    a = pos + 3
                else:
                    n, a = read_short_varint(src, pos + 1, end)
                pos = a + n
                if pos > end:
                    return None
                if tag == _OP_TYPE_TAG:
                    op_type = src[a:pos].decode()
                elif tag == _ATTRIBUTE_TAG:
                    if not _plain_attribute(src, a, pos, depth + 1):
                        return None
                elif tag == _DOMAIN_TAG:
                    domain = src[a:pos].decode()
                continue
            number, wt, a, pos = _field(src, pos, end, depth)
            if wt != _LEN:
                continue
            if number == _OP_TYPE:
                op_type = src[a:pos].decode()
            elif number == _DOMAIN:
                domain = src[a:pos].decode()
            elif number == _ATTRIBUTE and not _plain_attribute(src, a, pos, depth + 1):
                return None
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    if pos != end:
        return None
    return op_type, domain


# -- a run of nodes, counted by kind ---------------------------------------------------------

#: Tags of the names a node's kind leaves out: input, output, name.
_NAMES = tuple(_number("NodeProto", f) << 3 | _LEN for f in ("input", "output", "name"))
#: Tags a kind's fields may have: every one-byte tag of a length-delimited field but the
#: graph's node tag (field 1, ``input`` inside a node), which would run into the next node.
_KIND_TAGS = tuple(n << 3 | _LEN for n in range(2, 16))
_NODE_TAG = 1 << 3 | _LEN  # GraphProto.node
assert _number("GraphProto", "node") == 1 and _NAMES[0] == _NODE_TAG
#: Runs of fewer nodes are read by `node_op` alone: loading the pattern costs about as
#: much as reading this many nodes.
MIN_RUN = 64
#: Nodes longer than this (a Constant's tensor of 1 MB) are read one by one by `node_op`:
#: a run's pattern may search its bytes, which would touch every page of the payload.
LONG_NODE = 4096
_PATTERNS: list = []
#: The order in which the pattern tries a name's length (each length is a branch, tried
#: one after the other): nearest to 40 bytes first, where the names torch exporters
#: write cluster (``/transformer/h.0/attn/Constant_output_0``), so a typical name matches
#: after few failed branches (benchmarks/RESULTS.md has the measurement).
_NAME_LENGTHS = sorted(range(128), key=lambda n: (abs(n - 40), n))


def _field_pattern(order) -> bytes:
    """One field's length byte and payload: a branch per length, in ``order``."""
    return b"(?:" + b"|".join(b"\\x%02x" % n + (b".{%d}" % n if n else b"") for n in order) + b")"


def run_pattern():
    """The compiled pattern of one GraphProto ``node`` field: its tag, its length (one or
    two bytes) and a NodeProto made of length-delimited fields of one-byte tags and
    lengths (0-127), names first.  Group 1 is the whole field, group 2 the node's *kind*
    (every field after the leading names).  None if the code cache neither holds it nor
    can keep it (switched off, read-only).

    A field is its tag, a length byte and exactly that many bytes: the length byte picks
    the one branch of the alternation that starts with it (the branches are tried in
    order, names' lengths nearest 40 first, `_NAME_LENGTHS`), so nothing backtracks,
    and each repetition is possessive.  Compiling it costs a process about 40 ms (most of it importing `re`),
    more than it saves on most graphs, so it is compiled only where its compiled form
    can be kept for the next process (`irmodel._files.codecache`); without that, `count_ops`
    reads every node with `node_op`.
    """
    if not _PATTERNS:
        from .._files import codecache  # noqa: PLC0415 - imported by messages already

        names = b"[" + b"".join(b"\\x%02x" % t for t in _NAMES) + b"]"
        kind_tag = b"[" + b"".join(b"\\x%02x" % t for t in _KIND_TAGS) + b"]"
        name_field = _field_pattern(_NAME_LENGTHS)
        kind_field = _field_pattern(range(128))
        source = (b"(\\x%02x(?:[\\x00-\\x7f]|[\\x80-\\xff][\\x01-\\x7f])" % _NODE_TAG
                  + b"(?:" + names + name_field + b")*+((?:" + kind_tag + kind_field + b")*+))")
        try:
            pattern = codecache.compiled_pattern("nodescan-run", source, codecache.DOTALL, only_if_kept=True)
        except Exception:  # noqa: BLE001 - an engine without possessive repeats (before 3.11): node_op alone
            pattern = None
        _PATTERNS.append(pattern)
    return _PATTERNS[0]


def count_ops(src, spans: list, depth: int) -> tuple:
    """``(counts, walk)`` of the nodes of a graph whose spans are ``spans`` (start, end,
    start, ... of each ``node`` field's payload) in ``src``: ``counts`` maps ``(op_type,
    domain)`` to how many of them are plain nodes of that op (`node_op`'s answer),
    ``walk`` lists, in order, the indices (into ``spans``' nodes) of the others, which
    the caller makes and walks.  ``depth`` as in `node_op`.

    The nodes are cut into runs at each node longer than `LONG_NODE` (read alone); a
    run's bytes are read by one ``findall`` of `run_pattern`, whose matches are taken
    only if they are exactly the run's nodes: as many as the nodes and each as long as
    the bytes from the end of the node before to the end of its own.  As the matches do
    not overlap, they then cover the run without a gap, so the first starts at the first
    node's tag and, a node's length being read from the same bytes by both, each match
    is its node (a ``node`` field is the only field of a graph with that tag, so no other
    field lies between them).  A run not taken so is read node by node by `node_op`.
    """
    n = len(spans) >> 1
    pattern = run_pattern() if n >= MIN_RUN else None
    if pattern is None:
        return _count_each(src, spans, range(n), depth, {}, [])
    findall = pattern.findall
    starts, ends = spans[0::2], spans[1::2]
    lengths = list(map(sub, ends, starts))
    long_nodes = list(compress(range(n), map(gt, lengths, repeat(LONG_NODE, n))))
    kinds: dict = {}  # kind -> nodes
    # (first node, end of the run's bytes, start of its first field) of each run the
    # pattern read: a run's matches are dropped once counted (a run's worth of memory at
    # a time, not the graph's: 237 -> 50 page faults on the GPT-2-shaped model), and
    # found again only for a kind `node_op` refuses (rare).
    taken = []
    counts: dict = {}
    walk: list = []
    first = 0
    for stop in (*long_nodes, n):
        if stop > first:
            field_start = starts[first] - (2 if lengths[first] > 127 else 1) - 1
            expected = [ends[first] - field_start, *map(sub, ends[first + 1:stop], ends[first:stop - 1])]
            found = findall(src, field_start, ends[stop - 1])
            if len(found) == stop - first and list(map(len, map(_FIELD, found))) == expected:
                _count_elements(kinds, map(_KIND, found))
                taken.append((first, ends[stop - 1], field_start))
            else:
                _count_each(src, spans, range(first, stop), depth, counts, walk)
            del found
        if stop < n:
            _count_each(src, spans, (stop,), depth, counts, walk)
        first = stop + 1
    refused = set()
    for kind, k in kinds.items():
        op = node_op(kind, 0, len(kind), depth)
        if op is None:
            refused.add(kind)
        else:
            counts[op] = counts.get(op, 0) + k
    if refused:  # rare: the nodes of the kinds node_op refused
        for first, run_end, field_start in taken:
            found = findall(src, field_start, run_end)
            walk += [first + i for i, (_, kind) in enumerate(found) if kind in refused]
    walk.sort()
    return counts, walk


def _count_each(src, spans: list, nodes, depth: int, counts: dict, walk: list) -> tuple:
    """`count_ops` of the ``nodes`` (indices) by `node_op` alone, node by node, into
    ``counts`` and ``walk``."""
    get = counts.get
    for i in nodes:
        op = node_op(src, spans[2 * i], spans[2 * i + 1], depth)
        if op is None:
            walk.append(i)
        else:
            counts[op] = get(op, 0) + 1
    return counts, walk
