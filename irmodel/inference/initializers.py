"""The initializers of a large graph seeded from their bytes, without a TensorProto each.

Seeding reads an initializer's name, data_type and dims (its type) and, for a small
one, keeps it as a constant that shapes may depend on (`tensordata.ConstTensor`).
Making a TensorProto of each of the 75,000-node benchmark's 7,500 weights cost about
as much as the rest of seeding.  Here an initializer laid out as exporters write it,

    dims (each a varint of 1 to 10 bytes), data_type (one byte), name (a length of one
    byte, UTF-8), then raw_data to its end or nothing,

is read with one regular expression up to its name, and the raw_data's tag and length
after it (never its bytes: a weight stays unread, its pages untouched): its dims and data_type bytes key a table of
``(type, small)`` made from the TensorProto of the first initializer with those bytes
(the same bytes decode alike, so the message's answers are reused exactly); its
constant is a `LazyConstant`, which makes the TensorProto only when something reads
more than its type.  Anything else -- another field, packed dims, a name that is not
UTF-8, raw_data not ending the tensor -- takes the message, as before (a malformed
one raises there, as it did).
"""

from __future__ import annotations

from itertools import repeat

from .tensordata import ConstTensor, is_small
from .types import TensorType

_PATTERNS: list = []
#: Graphs with fewer initializers make a message of each (the tests lower it).
FAST_FROM = 64


def _pattern():
    if not _PATTERNS:
        import re  # noqa: PLC0415 - the node pass has imported it already

        name = b"(?:" + b"|".join(b"\\x%02x" % n + (b".{%d}" % n if n else b"") for n in range(128)) + b")"
        _PATTERNS.append(re.compile(
            rb"((?:\x08[\x80-\xff]{0,9}[\x00-\x7f])*+)"  # dims, unpacked
            rb"(\x10[\x00-\x7f])?+"                      # data_type
            rb"\x42(" + name + rb")", re.S))            # name; then raw_data, read apart
    return _PATTERNS[0]


class LazyConstant(ConstTensor):
    """A small initializer's constant whose TensorProto is made on first read of ``proto``."""

    __slots__ = ("_seq", "_index", "_data_type", "_dims", "_proto")

    def __init__(self, seq, index: int, data_type: int, dims: tuple):
        self._seq = seq
        self._index = index
        self._data_type = data_type
        self._dims = dims
        self._proto = None
        self._cache = {}

    @property
    def proto(self):
        proto = self._proto
        if proto is None:
            proto = self._proto = self._seq[self._index]
        return proto

    @property
    def data_type(self) -> int:
        return self._data_type

    @property
    def dims(self) -> list:
        return list(self._dims)


def _raw_data_to_end(src, pos: int, end: int) -> bool:
    """``src[pos:end]`` is nothing, or one raw_data field (tag 0x4a, a varint length) reaching
    exactly ``end`` (its bytes are not read: a weight's pages stay untouched)."""
    if pos == end:
        return True
    if src[pos] != 0x4A:
        return False
    n = 0
    shift = 0
    start = pos = pos + 1
    while pos < end and pos - start < 10:
        b = src[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return pos + n == end
        shift += 7
    return False


def seed_initializers(scope, graph) -> bool:
    """Seed ``graph``'s initializers into ``scope`` as `Scope.process_graph` does; False
    (nothing done) when the graph is small or not read from bytes."""
    from wirefmt.message import items_in_buffer  # noqa: PLC0415

    seq = graph.initializer
    if len(seq) < FAST_FROM:
        return False
    found = items_in_buffer(graph, "initializer")
    if found is None:
        return False
    src, spans = found
    known: dict = {}  # (dims bytes, data_type bytes) -> (type, small)
    interned = scope.interned
    const_data = scope.const_data
    seed = scope._seed_initializer
    ends = spans[1::2]
    matches = map(_pattern().match, repeat(src), spans[0::2], ends)
    for i, m in enumerate(matches):
        name = None
        if m is not None:
            dims_bytes, type_byte, name_field = m.group(1, 2, 3)
            if _raw_data_to_end(src, m.end(), ends[i]):
                try:
                    name = name_field[1:].decode()
                except UnicodeDecodeError:
                    name = None
        if name is None:
            tensor = seq[i]
            name = tensor.name
            t = TensorType(tensor.data_type, tuple(tensor.dims))
            t = interned.setdefault(t, t)
            if is_small(tensor):
                const_data[name] = ConstTensor(tensor)
            seed(name, t)
            continue
        key = (dims_bytes, type_byte)
        entry = known.get(key)
        if entry is None:
            tensor = seq[i]
            t = TensorType(tensor.data_type, tuple(tensor.dims))
            entry = known[key] = (interned.setdefault(t, t), is_small(tensor), tensor.data_type, tuple(tensor.dims))
        t = entry[0]
        if entry[1]:
            const_data[name] = LazyConstant(seq, i, entry[2], entry[3])
        seed(name, t)
    return True
