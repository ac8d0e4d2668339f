"""Repeated message fields read from bytes that are not their owner's: where items live.

A loaded message's items are read from its buffer (`RepeatedMessages` keeps their spans).
Two needs go beyond that:

* A transformation that writes many items as bytes (the inliner stamps out 75,000 nodes
  of one function body) should not scan each into a message only to have a save write it
  back: `adopt_items` gives a field the items encoded in a new buffer, read lazily from
  it exactly as a loaded message's items are read from the file (the list's *carrier* is
  a message of the owner's type over that buffer; the owner holds the carrier's list).
* A reader that looks at items' bytes instead of making them (the external-data walk's
  `tensor_holders`) asked the whole owner to be exactly its bytes (`items_in_buffer`).
  `item_sources` asks only the list: it answers for an owner changed elsewhere, for an
  adopted list, and it names the items changed since they were read, which the reader
  makes as messages.
"""

from __future__ import annotations

from .containers import MessageList, RepeatedMessages, RepeatedScalars, new_messages
from .containers import _ItemRef as ref
from .errors import DecodeError
from .message import items_in_buffer
from .records import named_tuple
from .schema import MESSAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    class _ItemSourcesFields(NamedTuple):
        buffer: Any  # bytes or mmap the spans index
        spans: list  # flat [start0, end0, start1, end1, ...]: every item's bytes
        changed: list  # indices of items changed since read: their spans are stale
else:
    _ItemSourcesFields = named_tuple("ItemSources", ("buffer", "spans", "changed"), __name__)


class ItemSources(_ItemSourcesFields):
    """Where a repeated message field's items are: see `item_sources`."""

    __slots__ = ()


def _repeated_message_field(msg, name: str) -> None:
    """Refuse a ``name`` that is not a repeated message field of ``msg`` (ValueError)."""
    f = msg._fields.get(name)
    if f is None or not f.repeated or f.kind != MESSAGE:
        raise ValueError(f"{msg._type_name}.{name} is not a repeated message field")


def item_sources(msg, name: str) -> ItemSources | None:
    """The buffer and spans of the items of repeated message field ``name`` of ``msg``,
    with the indices of those changed since they were read; None when the list itself
    changed (items added, removed or moved: spans no longer say where each item is) or
    was made in memory.  An absent field has no items: an empty `ItemSources`."""
    _repeated_message_field(msg, name)
    found = items_in_buffer(msg, name)
    if found is not None:  # the owner is exact: so is every item
        return ItemSources(found[0], found[1], [])
    d = msg.__dict__
    seq = d.get(name)
    if seq is None:
        lazy = d.get("_lazy")
        spans = lazy.get(name) if lazy else None
        if spans is None:
            return ItemSources(b"", [], [])
        return ItemSources(msg._buf[0], list(spans), [])  # never read: every item unchanged
    if not isinstance(seq, RepeatedMessages) or seq._spans is None:
        return None
    items = seq._items
    changed = [] if items is None else [
        i for i, item in enumerate(items)
        if item is not None and type(item) is not ref and item._start < 0]
    return ItemSources(seq._owner._buf[0], list(seq._spans), changed)


def adopt_items(msg, name: str, data: bytes, depth: int) -> None:
    """Replace the items of repeated message field ``name`` of ``msg`` by those encoded in
    ``data`` (records of that field only, each with its tag and length, as an encoding of
    ``msg`` holds them), read lazily from ``data``.

    ``depth``: the `_depth` of the message the items' bytes were read from (the
    shallowest, when they come from several): an item reads its nesting from there, and
    the encoder measures one written deeper, as for any item moved (`wirefmt.encoder`).
    Raises `DecodeError` when ``data`` is not such records, nothing changed then.
    """
    _repeated_message_field(msg, name)
    cls = type(msg)
    carrier = cls.FromString(data)
    cd = carrier.__dict__
    lazy = cd.get("_lazy") or {}
    for key, value in cd.items():  # (a scan may put empty containers in place: nothing read)
        if not key.startswith("_") and key != name and not (
                isinstance(value, (RepeatedScalars, RepeatedMessages, MessageList)) and not value):
            raise DecodeError(f"records of {cls._type_name}.{name} expected, found field {key!r}")
    if set(lazy) - {name} or cd.get("_unknown"):
        raise DecodeError(f"records of {cls._type_name}.{name} expected, found other fields")
    seq = cd.get(name)  # (the scan may hold the list itself: unread, or made by its hints)
    if isinstance(seq, MessageList):
        spans, seq = seq._item_spans(), None
    else:
        spans = lazy.pop(name, None) if seq is None else seq._spans
    msg.ClearField(name)
    msg._touch()
    if not spans:
        return
    cd["_depth"] = depth
    # Error paths of the items read as the owner's (``Model.graph.node[3]``); a change to
    # an item marks the owner's ancestors changed, as the owner itself is already.
    cd["_parent"] = msg._parent
    cd["_key"] = msg.__dict__.get("_key")
    if seq is None:
        seq = cd[name] = new_messages(carrier, name, cls._classes[name], spans)
    msg.__dict__[name] = seq
