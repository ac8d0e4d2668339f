"""When the byte readers run: one threshold, one switch, and a tracer of what they declined.

Every fast path over the items of a repeated field (a graph's nodes, its initializers)
asks `items`: the items' bytes and spans when the field has at least `FAST_FROM` items,
its message is exactly its bytes and the fast paths are on.  Below the threshold loading
a pattern costs about as much as reading the items through the message path.

`use_fast_paths` switches them all (as `wirefmt.use_generated_scanners` switches the
generated scanners), so a test runs the same model both ways and compares; ``threshold``
lowers the item count (to 1: every graph takes the fast path).  `trace` records why an
item was declined and took the message path (the onnxscript rewriter's ``MatchStatus``
idea): for tests and benchmarks, never consulted on the fast path itself.
"""

from __future__ import annotations

#: Fields with fewer items take the message path.
FAST_FROM = 64

_on = True
_from = FAST_FROM
#: The records of the active `trace`, or None.
_tracer: list | None = None


def use_fast_paths(on: bool = True, threshold: int = FAST_FROM) -> None:
    """Switch every byte-level fast path on or off; ``threshold``: the fewest items of a
    field for which they run (tests lower it to exercise small graphs)."""
    global _on, _from
    _on = bool(on)
    _from = threshold


def enabled(count: int) -> bool:
    """The fast paths run for a field of ``count`` items."""
    return _on and count >= _from


def fast_paths_on() -> bool:
    return _on


def items(msg, field: str, count: int | None = None) -> tuple | None:
    """``(src, spans)`` of ``msg``'s repeated ``field`` (spans: start, end, start, ... of
    each item's payload in ``src``) when the fast paths run for it, else None.  ``count``:
    the field's length when the caller knows it (else counted from the spans)."""
    if not _on or (count is not None and count < _from):
        return None
    from wirefmt.message import items_in_buffer  # noqa: PLC0415 - the byte summary reads no message

    found = items_in_buffer(msg, field)
    if found is None or (count is None and len(found[1]) < 2 * _from):
        return None
    return found


def items_read(msg, field: str, read) -> list | None:
    """What ``read(src, start, end, depth)`` (a byte reader of this package, answering a
    record or None) answers for each item of ``msg``'s repeated ``field``, from its bytes;
    None in place of an item changed since it was read.  None for the whole field when the
    fast paths are off or its list is not bytes any more (`wirefmt.item_sources`): the
    caller makes each item whose answer is None, and reads it as a message."""
    if not _on:
        return None
    from wirefmt.message import items_in_buffer  # noqa: PLC0415 - the byte summary reads no message

    exact = items_in_buffer(msg, field)
    changed: list = []
    if exact is not None:  # the message is its bytes: nothing changed (no import for that)
        src, spans = exact
    else:
        from wirefmt.itemsource import item_sources  # noqa: PLC0415 - a changed owner only

        found = item_sources(msg, field)
        if found is None:
            return None
        src, spans, changed = found
    out = read_spans(src, spans, read, msg._depth + 1)
    for i in changed:
        out[i] = None
    return out


def read_spans(src, spans: list, read, depth: int) -> list:
    """What ``read(src, start, end, depth)`` answers for each item whose payload is at
    ``start:end`` in ``spans`` (start, end, start, ...): a record, or None where it declined."""
    return [read(src, spans[i], spans[i + 1], depth) for i in range(0, len(spans), 2)]


class Declined:
    """An item a byte reader declined: which reader, the item's index (-1: not known), why."""

    __slots__ = ("reader", "index", "reason")

    def __init__(self, reader: str, index: int, reason: str):
        self.reader = reader
        self.index = index
        self.reason = reason

    def __repr__(self) -> str:
        return f"Declined({self.reader!r}, {self.index}, {self.reason!r})"


def tracing() -> bool:
    """A `trace` is active (callers whose reason costs something to say ask first)."""
    return _tracer is not None


def declined(reader: str, index: int, reason: str) -> None:
    """Note that ``reader`` declined item ``index`` (a no-op unless a `trace` is active)."""
    if _tracer is not None:
        _tracer.append(Declined(reader, index, reason))


class trace:  # noqa: N801 - used as a function: ``with trace() as log``
    """``with trace() as log:`` -- ``log`` lists a `Declined` per item sent to the message path."""

    def __init__(self):
        self.log: list = []
        self._before: list | None = None

    def __enter__(self) -> list:
        global _tracer
        self._before, _tracer = _tracer, self.log
        return self.log

    def __exit__(self, *exc) -> None:
        global _tracer
        _tracer = self._before
