"""Repeated-field containers that tell their owning message when they change.

A message whose bytes are still valid is written back by copying its original span;
these containers are how an ``append`` or ``del`` anywhere below invalidates that span.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable, Iterable, SupportsIndex
from _weakref import ref as _weakref  # the C type: `weakref` (the module) is not needed

if TYPE_CHECKING:
    from .message import Message


class _ItemRef(_weakref):
    """A weak reference to an item, knowing its index (to clear the slot when it dies)."""

    __slots__ = ("i",)
    i: int


_ref = _ItemRef
_object_new = object.__new__
#: ``(stub, build)``: the first-call stub every class starts with as ``_make_child``, and
#: the function that replaces it by the generated scanner and returns that (`wirefmt.scan`
#: sets both; this module cannot import it).
first_make_child: list = [None, None]

# A message's ``_idx`` says how its parent holds it (see `Message._touch`): an index >= 0
# is a clean item that its repeated field holds weakly, to be pinned on first change.
#: Held strongly by its parent (a singular field, or an item already pinned).
HELD = -1
#: A default submessage read from an absent field: attached to its parent on first change.
UNATTACHED_DEFAULT = -2
#: Sequences longer than this hold unmodified items weakly and clear a dead item's slot
#: through a weakref callback (so a walk of a big graph leaves no dead reference per node
#: behind for the garbage collector to traverse again and again).  Shorter ones (a graph's
#: inputs, a model's opsets; a node's attributes when the generic scan read them) hold their
#: items strongly: they die with their owner anyway, and a weak reference per item would
#: cost more than it saves.
_WEAK_FROM = 64


class _WatchedList(list):
    """A ``list`` whose mutators pass each new value through ``_take`` and then call
    ``_changed``: the shared body of `RepeatedScalars` (``_take`` validates) and
    `MessageList` (``_take`` adopts the message)."""

    __slots__ = ()

    def _take(self, value: Any) -> Any:
        raise NotImplementedError

    def _changed(self) -> None:
        raise NotImplementedError

    def append(self, value: Any) -> None:
        list.append(self, self._take(value))
        self._changed()

    def extend(self, values: Iterable[Any]) -> None:
        list.extend(self, [self._take(v) for v in values])
        self._changed()

    def insert(self, index: SupportsIndex, value: Any) -> None:
        list.insert(self, index, self._take(value))
        self._changed()

    def __setitem__(self, index, value) -> None:
        if isinstance(index, slice):
            value = [self._take(v) for v in value]
        else:
            value = self._take(value)
        list.__setitem__(self, index, value)
        self._changed()

    def __delitem__(self, index) -> None:
        list.__delitem__(self, index)
        self._changed()

    def __iadd__(self, values):  # type: ignore[misc]  # list's own += accepts any iterable too
        self.extend(values)
        return self

    def pop(self, index: SupportsIndex = -1) -> Any:
        value = list.pop(self, index)
        self._changed()
        return value

    def clear(self) -> None:
        list.clear(self)
        self._changed()

    def reverse(self) -> None:
        list.reverse(self)
        self._changed()


class RepeatedScalars(_WatchedList):
    """A ``list`` for a repeated scalar/string field; mutators validate and mark the owner dirty."""

    # No Python-level __init__: construction stays in C (one is created for every
    # repeated field of every scanned message).  Build through `new_repeated`, which
    # sets both slots.
    __slots__ = ("_owner", "_check")
    _owner: Any
    _check: Callable | None

    def _changed(self) -> None:
        if self._owner is not None:
            self._owner._touch()

    def _take(self, value):
        return self._check(value) if self._check is not None else value

    def __imul__(self, n):  # type: ignore[misc]  # as list's *=
        list.__imul__(self, n)
        self._changed()
        return self

    def remove(self, value: Any) -> None:
        list.remove(self, value)
        self._changed()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        list.sort(self, *args, **kwargs)
        self._changed()

    def __reduce__(self):
        return (list, (list(self),))


def new_messages(owner: Any, name: str, cls: type[Message], spans: list[int] | None) -> RepeatedMessages:
    """``RepeatedMessages(owner, name, cls, spans)`` without its ``__init__``: a class whose
    ``__init__`` is Python code costs several times more to call than these slot stores."""
    seq = _object_new(RepeatedMessages)
    seq._owner = owner
    seq._name = name
    seq._cls = cls
    seq._spans = spans
    seq._items = None if spans is not None else []
    seq._forget_cb = None
    return seq


def new_repeated(values: Iterable[Any] = (), owner: Any = None, check: Callable | None = None) -> RepeatedScalars:
    lst = RepeatedScalars(values)
    lst._owner = owner
    lst._check = check
    return lst


class _MessageSequence:
    """What the two containers of a repeated message field share (`RepeatedMessages`, lazy;
    `MessageList`, made): adopting new items, `add`, comparison and the short repr."""

    __slots__ = ()
    _owner: Any
    _name: str
    _cls: Any

    def _adopt(self, msg):
        if not isinstance(msg, self._cls):
            raise TypeError(f"{self._name} holds {self._cls.__name__}, not {type(msg).__name__}")
        msg._adopt(self._owner, self._name)
        return msg

    def add(self, **fields: Any) -> Any:
        """Append a new message built from keyword fields and return it (as protobuf's ``add``)."""
        msg = self._cls(**fields)
        self.append(msg)  # type: ignore[attr-defined]  # each container's own
        return msg

    def __iadd__(self, msgs):
        self.extend(msgs)
        return self

    def __eq__(self, other) -> bool:
        if isinstance(other, _MessageSequence):
            other = list(other)  # type: ignore[call-overload]
        return isinstance(other, (list, tuple)) and list(self) == list(other)  # type: ignore[call-overload]

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} x {self._cls.__name__}>"  # type: ignore[arg-type]

    def __reduce__(self):
        """Copied or pickled out of its message, a sequence is a plain list of its items (of
        their copies, for `copy.deepcopy`), as `RepeatedScalars` is."""
        return (list, (list(self),))


class RepeatedMessages(_MessageSequence):
    """A lazy sequence of submessages: each item is scanned on first access.

    ``spans`` is a flat list ``[start0, end0, start1, end1, ...]`` of the items' bytes.
    ``items[i]`` is ``None`` until item ``i`` is first read.  In a long sequence (more
    than `_WEAK_FROM` items, such as a graph's nodes) it is then a *weak* reference to
    the item while the item is unmodified, and the item itself (a strong reference) once
    it or anything below it changes, or once the sequence itself changes.  A short
    sequence holds its items strongly from the first read.

    Why weak: a full walk of a 75,000-node graph would otherwise keep every node, its
    attributes and their containers alive, and CPython's cyclic GC re-traverses that
    growing heap again and again (it doubled the walk's time, benchmarks/RESULTS.md).
    A clean item is exactly its bytes, so dropping it loses nothing: the next read
    scans it again.  While anyone holds an item, reads return that same object (as
    protobuf's upb backend does), so two handles can never disagree.
    """

    __slots__ = ("_owner", "_name", "_cls", "_spans", "_items", "_forget_cb")
    _spans: Any  # flat [start, end, ...] of the items in the owner's buffer, or None
    _items: Any  # list of items (a message or an `_ItemRef`), None until first read

    def __init__(self, owner: Any, name: str, cls: type[Message], spans: list[int] | None = None) -> None:
        self._owner = owner
        self._name = name
        self._cls = cls
        self._spans = spans
        self._items = None if spans is not None else []  # slots made on first need: `_item_list`
        self._forget_cb = None

    def __len__(self) -> int:
        items = self._items
        return len(items) if items is not None else len(self._spans) >> 1

    def _item_list(self) -> list:
        """The item slots, made on first need (a scan creates the sequence with spans only)."""
        items = self._items
        if items is None:
            items = self._items = [None] * (len(self._spans) >> 1)
        return items

    def _materialise(self, i: int):
        """Item ``i``, scanned now (its slot is empty or its weak reference died)."""
        spans = self._spans
        items = self._item_list()
        if len(items) <= _WEAK_FROM:  # short: held strongly, see the class docstring
            item = items[i] = self._cls._make_child(self._cls, self._owner, spans[2 * i], spans[2 * i + 1],
                                                    self._name, HELD)
            return item
        item = self._cls._make_child(self._cls, self._owner, spans[2 * i], spans[2 * i + 1], self._name, i)
        r = items[i] = _ref(item, self._forget_callback())
        r.i = i
        return item

    def _forget_callback(self):
        cb = self._forget_cb
        if cb is None:
            cb = self._forget_cb = self._forget
        return cb

    def _forget(self, r) -> None:
        """An item died unmodified: empty its slot (the weakref callback)."""
        items = self._items
        i = r.i
        if items is not None and i < len(items) and items[i] is r:
            items[i] = None

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        items = self._item_list()
        item = items[index]
        if item is None or type(item) is _ref:
            item = item() if item is not None else None
            if item is None:
                if index < 0:
                    index += len(items)
                item = self._materialise(index)
        return item

    def __iter__(self):
        # Tuned: a full walk of a large graph spends much of its time here (an iteration
        # per node; a node's attributes are a `MessageList` since the node's scan makes
        # them), so creating an item is one direct call with everything bound to locals,
        # and each kind of sequence has its loop.
        # A short sequence makes all its items first and is read through a list iterator:
        # no generator per sequence, no resume per item (benchmarks/RESULTS.md).  Items are created in the same order, and a reader
        # still gets a malformed item's DecodeError only when it reaches that item: the
        # generator below takes over from the first item that cannot be made (the scan of
        # a span is deterministic and stores nothing when it fails: it raises again there).
        items = self._items
        spans = self._spans
        if items is None:
            items = self._items = [None] * (len(spans) >> 1)
        if len(items) > _WEAK_FROM:
            return self._iter_slots(items, spans, True)
        cls, owner, name = self._cls, self._owner, self._name
        make_child = cls._make_child
        try:
            for i, item in enumerate(items):
                if item is None:
                    j = i + i
                    items[i] = make_child(cls, owner, spans[j], spans[j + 1], name, HELD)
                elif type(item) is _ref:  # (never in a short sequence: `_materialise_all` pins first)
                    return self._iter_slots(items, spans, False)
        except Exception:  # noqa: BLE001 - raised again by the generator, at the item it belongs to
            return self._iter_slots(items, spans, False)
        # The list iterator behaves as ``while i < len(items)``: it sees items appended
        # while it runs, as the generator does.
        return iter(items)

    def _iter_slots(self, items: list, spans, weak: bool):
        """The items one by one, each made when the reader reaches it; ``weak``: held weakly
        (a long sequence, see the class docstring).  `enumerate` over the slots behaves as
        ``while i < len(items)``; the spans are read once (a change of the sequence fills
        every slot first, `_materialise_all`, so no empty slot is left to read them for)."""
        cls, owner, name = self._cls, self._owner, self._name
        make_child = cls._make_child
        ref = _ref
        forget = None
        if weak:
            forget = self._forget_callback()
            if make_child is first_make_child[0]:
                # The type's scanner is not generated yet: generate it now, rather than
                # go through the first-call stub (held in the local) for every item.
                make_child = first_make_child[1](cls)
        for i, item in enumerate(items):
            if item is None:
                j = i + i
                if forget is None:
                    item = items[i] = make_child(cls, owner, spans[j], spans[j + 1], name, HELD)
                else:
                    item = make_child(cls, owner, spans[j], spans[j + 1], name, i)
                    r = items[i] = ref(item, forget)
                    r.i = i
            elif type(item) is ref:
                item = item()
                if item is None:
                    item = self._materialise(i)
            yield item

    def __bool__(self) -> bool:
        return len(self) > 0

    def _pin(self, i: int, msg) -> None:
        """Hold item ``i`` strongly: it is about to change (called from `Message._touch`)."""
        items = self._item_list()
        if i < len(items):
            item = items[i]
            if type(item) is _ref and item() is msg:
                items[i] = msg

    def _index_of(self, msg) -> int:
        """Index of ``msg`` here (cold path: error messages), or -1."""
        for i, item in enumerate(self._item_list()):
            if item is msg or (type(item) is _ref and item() is msg):
                return i
        spans = self._spans
        if spans and msg._start >= 0:  # being created: not in its slot yet, find it by its span
            for i in range(0, len(spans), 2):
                if spans[i] == msg._start and spans[i + 1] == msg._end:
                    return i >> 1
        return -1

    # -- mutation -------------------------------------------------------------------
    def _changed(self) -> None:
        self._spans = None  # every item is materialised by now; spans are no longer needed
        self._owner._touch()

    def _materialise_all(self) -> None:
        """Hold every item strongly: the sequence is about to change, indices with it."""
        if self._spans is not None:
            items = self._item_list()
            for i, item in enumerate(items):
                if item is None or type(item) is _ref:
                    item = item() if item is not None else None
                    if item is None:
                        item = self._materialise(i)
                    items[i] = item
                item.__dict__["_idx"] = HELD

    def append(self, msg: Message) -> None:
        self._materialise_all()
        self._items.append(self._adopt(msg))
        self._changed()

    def extend(self, msgs: Iterable[Message]) -> None:
        self._materialise_all()
        self._items.extend(self._adopt(m) for m in msgs)
        self._changed()

    def insert(self, index: int, msg: Message) -> None:
        self._materialise_all()
        self._items.insert(index, self._adopt(msg))
        self._changed()

    def __setitem__(self, index, msg) -> None:
        self._materialise_all()
        if isinstance(index, slice):
            self._items[index] = [self._adopt(m) for m in msg]
        else:
            self._items[index] = self._adopt(msg)
        self._changed()

    def __delitem__(self, index) -> None:
        self._materialise_all()
        del self._items[index]
        self._changed()

    def pop(self, index: int = -1) -> Any:
        self._materialise_all()
        item = self._items.pop(index)
        self._changed()
        return item

    def remove(self, msg: Message) -> None:
        self._materialise_all()
        for i, item in enumerate(self._items):
            if item is msg:
                del self._items[i]
                self._changed()
                return
        raise ValueError("message not in list")

    def clear(self) -> None:
        self._items = []
        self._changed()

    def sort(self, key: Callable[[Any], Any], reverse: bool = False) -> None:
        self._materialise_all()
        self._items.sort(key=key, reverse=reverse)
        self._changed()

    def reverse(self) -> None:
        self._materialise_all()
        self._items.reverse()
        self._changed()

    def _add_span(self, start: int, end: int) -> None:
        """One more item's bytes, read by a scan after some items were made (`MessageList._to_lazy`)."""
        self._spans.append(start)
        self._spans.append(end)
        if self._items is not None:
            self._items.append(None)


class MessageList(_MessageSequence, _WatchedList):  # in this order: the first's __eq__ and __repr__ win over list's
    """A short repeated message field whose items were made with their owner (a node's
    attributes: the ``eager_items`` scan hint), held strongly in a ``list``.

    Why a list: a full walk iterates every node's attributes, and iterating a ``list`` is C
    code, where `RepeatedMessages.__iter__` is a Python call per node; with no spans and
    slot list beside the items, a node also leaves two objects fewer for the collector
    (benchmarks/RESULTS.md).  It offers what `RepeatedMessages` offers:
    mutators adopt the new items and mark the owner changed, and `remove` finds an item by
    identity, as `RepeatedMessages.remove` does.  A scan that cannot make an item
    (bad bytes) turns the field into a `RepeatedMessages` of the items made so far and the
    spans of the rest (`_to_lazy`), so the error is raised where a reader reaches that item.
    """

    # No Python-level __init__: made by the scan with the three slots set.
    __slots__ = ("_owner", "_name", "_cls")

    def _changed(self) -> None:
        self._owner._touch()

    _take = _MessageSequence._adopt

    def _index_of(self, msg) -> int:
        """Index of ``msg`` here (cold path: error messages), or -1."""
        for i, item in enumerate(self):
            if item is msg:
                return i
        return -1

    def _item_spans(self) -> list:
        """The flat ``[start, end, ...]`` spans of the items, valid while they are unchanged
        (a scan still reading them, or an owner that is exactly its bytes)."""
        return [x for item in self for x in (item._start, item._end)]

    def _to_lazy(self) -> RepeatedMessages:
        """A `RepeatedMessages` holding these items (unchanged: a scan is still reading them)
        with their spans, to which the scan adds the spans it cannot make items of."""
        seq = new_messages(self._owner, self._name, self._cls, self._item_spans())
        seq._items = list(self)
        return seq

    def __imul__(self, n):  # type: ignore[misc]
        raise TypeError("a repeated message field cannot be repeated in place: one message has one parent")

    def remove(self, msg: Message) -> None:
        for i, item in enumerate(self):
            if item is msg:
                list.__delitem__(self, i)
                self._changed()
                return
        raise ValueError("message not in list")

    def sort(self, key: Callable[[Any], Any], reverse: bool = False) -> None:  # type: ignore[override]
        list.sort(self, key=key, reverse=reverse)
        self._changed()
