"""The initializers of a large graph seeded from their bytes, without a TensorProto each.

Seeding reads an initializer's name, data_type and dims (its type) and, for a small
one, keeps it as a constant that shapes may depend on (`tensordata.ConstTensor`).
Making a TensorProto of each of the 75,000-node benchmark's 7,500 weights cost about
as much as the rest of seeding.  Here an initializer laid out as exporters write it is
read by `irmodel._wireview.tensorscan.initializer_head` (one pattern match up to its
name, never its weights' bytes): its dims and data_type bytes key a table of
``(type, small)`` made from the TensorProto of the first initializer with those bytes
(the same bytes decode alike, so the message's answers are reused exactly); its
constant is a `LazyConstant`, which makes the TensorProto only when something reads
more than its type.  An initializer the reader declines takes the message, as before
(a malformed one raises there, as it did).
"""

from __future__ import annotations

from .._wireview.fastpath import items as fast_items
from .._wireview.tensorscan import initializer_heads
from .tensordata import ConstTensor, is_small
from .types import TensorType


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


class _Seen:
    """What the first initializer of some dims and data_type bytes gave: its interned type,
    whether it is small (a constant), its data type and dims."""

    __slots__ = ("type", "small", "data_type", "dims")

    def __init__(self, t: TensorType, small: bool, data_type: int, dims: tuple):
        self.type = t
        self.small = small
        self.data_type = data_type
        self.dims = dims


def seed_initializers(scope, graph) -> bool:
    """Seed ``graph``'s initializers into ``scope`` as `Scope.process_graph` does; False
    (nothing done) when the graph is small or not read from bytes."""
    seq = graph.initializer
    found = fast_items(graph, "initializer", len(seq))
    if found is None:
        return False
    src, spans = found
    known: dict = {}  # (dims bytes, data_type bytes) -> _Seen
    interned = scope.interned
    const_data = scope.const_data
    seed = scope._seed_initializer
    for i, head in enumerate(initializer_heads(src, spans)):
        if head is None:
            tensor = seq[i]
            name = tensor.name
            t = TensorType(tensor.data_type, tuple(tensor.dims))
            t = interned.setdefault(t, t)
            if is_small(tensor):
                const_data[name] = ConstTensor(tensor)
            seed(name, t)
            continue
        key = (head.dims_bytes, head.type_bytes)
        seen = known.get(key)
        if seen is None:
            tensor = seq[i]
            t = TensorType(tensor.data_type, tuple(tensor.dims))
            seen = known[key] = _Seen(interned.setdefault(t, t), is_small(tensor), tensor.data_type,
                                      tuple(tensor.dims))
        if seen.small:
            const_data[head.name] = LazyConstant(seq, i, seen.data_type, seen.dims)
        seed(head.name, seen.type)
    return True
