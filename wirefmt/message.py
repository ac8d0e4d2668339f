"""Lazy, copy-on-write protobuf messages built from wirefmt schema tables.

How a message works:

* It is created over a span of a buffer and *scans that span once, at creation* (which
  is when its parent first hands it out).  The scan decodes scalars and strings straight
  into the instance ``__dict__``, so reading ``node.op_type`` afterwards is a plain
  attribute lookup.  Submessages and packed numeric arrays are not decoded: their spans
  wait in ``_lazy`` until first access, so opening a model touches only its top level.
* Absent singular scalars read as their default through class attributes.
* ``bytes`` fields are read-only ``memoryview`` slices of the buffer (zero-copy).
* ``_start``/``_end`` is the span whose bytes are still exactly this message.  Any
  modification walks up the parent chain setting ``_start = -1``; the encoder copies
  every message whose span is still valid and re-encodes only the rest.
* Items of repeated message fields are held weakly by their sequence until they (or
  anything below them) change, then strongly (`RepeatedMessages`): a walk keeps nothing
  alive, and an edited item can never be lost.
* The scan loop of each message type is generated from its schema on first use
  (`scangen`); the generic loop (`scan`) handles the fields it does not inline.

Private state lives in the instance ``__dict__`` next to the field values (names start
with ``_``) with class-level defaults, because that made creation ~25% cheaper than
slots behind an overridden ``__setattr__`` (measured while designing, see
benchmarks/RESULTS.md).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

from . import values as _values
from .containers import HELD, UNATTACHED_DEFAULT, MessageList, RepeatedMessages, RepeatedScalars, new_messages, new_repeated
from .errors import DecodeError
from .limits import MAX_DEPTH
from .scan import decode_packed, install_scanners, new_instance
from .scangen import NO_HINTS, hints_by_type
from .schema import BYTES, MESSAGE, FieldSpec, MessageSpec, Registry

from _thread import RLock as _RLock  # built in: `threading` is not imported for it


class Message:
    """Base of every generated message class.  See the module docstring."""

    # Class-level defaults of the private state; instances override them in __dict__.
    _buf: Any = None  # (src, memoryview) of the buffer this message was read from
    _start = -1  # span of this message's bytes while they are still exact; -1 otherwise
    _end = -1
    _parent: Any = None
    _key: Any = None  # field name in the parent
    _idx = HELD  # >= 0: index of a clean item its repeated field holds weakly, to pin on
    # first modification; HELD or UNATTACHED_DEFAULT (see wirefmt.containers)
    _depth = 0  # the depth of this message's bytes in the tree they were decoded in (see _adopt)
    _code_cache: Any = None  # where compiled scan code is kept across processes (`build_classes`)
    _scan_hints: Any = None  # the type's `ScanHints`, for its generated scan (`build_classes`)
    _copy_context: Any = None  # (original, copy) -> None: the layer above's part of a copy (`build_classes`)
    _lazy: Any = None  # field name -> flat [start, end, ...] spans not decoded yet
    _unknown: Any = None  # flat [start, end, ...] spans of unknown fields, in input order;
    # a synthetic field (bytes) stands where a start would, paired with None

    # Set per generated class.
    _spec: MessageSpec
    _registry: Registry
    _tags: dict | None  # tag -> entry of the generic scan (`scan.tag_table`), made on its first use
    _fields: dict  # name -> FieldSpec
    _checks: dict  # name -> value validator
    _implicit: frozenset  # proto3 fields without presence: written only when not default
    _classes: dict  # name -> message class, for message fields
    _type_name: str
    _scan_into: Any  # (msg, src, mv, start, end): the scan function, generated or generic
    _make_child: Any  # (cls, parent, start, end, key, idx): create and scan a child

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            if name not in self._fields:
                raise TypeError(f"{self._type_name} has no field {name!r}")
            setattr(self, name, value)

    # -- creation over a buffer ------------------------------------------------------
    @classmethod
    def _from_buffer(cls, src, mv, start: int, end: int):
        """The root message over ``src[start:end]``."""
        m = new_instance(cls)
        d = m.__dict__
        d["_buf"] = (src, mv)
        d["_start"] = start
        d["_end"] = end
        cls._scan_into(m, src, mv, start, end)
        return m

    @classmethod
    def _from_span(cls, parent, start: int, end: int, key: str, idx: int = HELD):
        """A child of ``parent`` over one span; scanned now (first access)."""
        return cls._make_child(cls, parent, start, end, key)

    @classmethod
    def _from_spans(cls, parent, spans, key: str):
        """A singular child that occurred once or more; occurrences merge in order."""
        if len(spans) == 2:
            return cls._from_span(parent, spans[0], spans[1], key, HELD)
        m = cls._from_span(parent, spans[0], spans[1], key, HELD)
        src, mv = m._buf
        try:
            for i in range(2, len(spans), 2):
                cls._scan_into(m, src, mv, spans[i], spans[i + 1])
        except DecodeError as exc:
            if exc.path is None:
                exc.path = m._path()
            raise
        # Merged occurrences are not one span any more: re-encode if written.
        m.__dict__["_start"] = -1
        return m

    # -- lazy fields -------------------------------------------------------------------
    # No __getattr__: every field has a class attribute (a default value or a
    # `_LazyField`).  Defining one would route *every* attribute read through CPython's
    # slow getattr hook and disable its attribute-access specialisation (benchmarks/RESULTS.md,
    # decoder tuning).

    def _raw_chunks(self, name: str):
        """Packed chunks of a repeated numeric field not decoded yet, as memoryviews.

        Lets the tensor layer view ``float_data`` & co. straight from the buffer instead of
        building a Python list.  ``None`` when the field was decoded (or set) already.
        """
        lazy = self.__dict__.get("_lazy")
        spans = lazy.get(name) if lazy else None
        if spans is None or self._fields[name].kind == MESSAGE:
            return None
        mv = self._buf[1]
        return [mv[spans[i]:spans[i + 1]] for i in range(0, len(spans), 2)]

    def _root(self):
        m = self
        while m._parent is not None:
            m = m._parent
        return m

    # -- modification ------------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        f = self._fields.get(name)
        d = self.__dict__
        if f is None:
            if name[:1] == "_":
                d[name] = value
                return
            raise AttributeError(f"{self._type_name} has no field {name!r}")
        if f.repeated:
            if f.kind == MESSAGE:
                seq = RepeatedMessages(self, name, self._classes[name])
                seq.extend(value)
                value = seq
            else:
                check = self._checks[name]
                value = new_repeated([check(v) for v in value], self, check)
        elif f.kind == MESSAGE:
            if not isinstance(value, self._classes[name]):
                raise TypeError(f"{self._type_name}.{name} must be a {self._classes[name].__name__}, "
                                f"not {type(value).__name__}")
            value._adopt(self, name)
        else:
            value = self._checks[name](value)
        self._clear_oneof_siblings(f)
        lazy = d.get("_lazy")
        if lazy:
            lazy.pop(name, None)
        d[name] = value
        self._touch()

    def __delattr__(self, name: str) -> None:
        self.ClearField(name)

    def _clear_oneof_siblings(self, f: FieldSpec) -> None:
        if f.oneof:
            d = self.__dict__
            lazy = d.get("_lazy")
            for other in self._spec.oneofs[f.oneof]:
                if other != f.name:
                    d.pop(other, None)
                    if lazy:
                        lazy.pop(other, None)

    def _adopt(self, parent, key: str) -> None:
        """Attach this message below ``parent`` (assignment or append).

        A message read from a buffer keeps its ``_depth``: that is the depth its bytes
        (and the spans of its undecoded fields) had in the tree they were decoded from,
        which bounds how deep they nest (`MAX_DEPTH` minus it, for any readable
        source).  The encoder compares it with the depth the message is written at and
        measures a span only when it moves deeper than it came from (`wirefmt.encoder`).
        A message built in memory takes its parent's depth plus one.
        """
        d = self.__dict__
        d["_parent"] = parent
        d["_key"] = key
        d["_idx"] = HELD
        if self._buf is None:
            self._set_depth(parent._depth + 1)

    def _set_depth(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ValueError(f"nesting deeper than {MAX_DEPTH}")
        self.__dict__["_depth"] = depth

    def _touch(self) -> None:
        """Mark this message and every ancestor as changed: their original bytes are stale.

        Walks all the way up (depth is small): a merged submessage starts with no valid
        span while its parent's bytes are still exact, so stopping early would be wrong.
        """
        m = self
        while m is not None:
            d = m.__dict__
            idx = d.get("_idx", HELD)
            if idx != HELD:
                d["_idx"] = HELD
                parent = m._parent
                if idx == UNATTACHED_DEFAULT:  # a default submessage: becomes present in its parent
                    parent._clear_oneof_siblings(parent._fields[m._key])
                    parent.__dict__[m._key] = m
                else:  # a weakly held item of a repeated field: its parent keeps it now
                    seq = parent.__dict__.get(m._key)
                    if isinstance(seq, RepeatedMessages):
                        seq._pin(idx, m)
            d["_start"] = -1
            m = d.get("_parent")  # type: ignore[assignment]  # None ends the walk up to the root

    # -- protobuf-style API --------------------------------------------------------------
    def HasField(self, name: str) -> bool:
        f = self._fields.get(name)
        if f is None:
            oneof = self._spec.oneofs.get(name)
            if oneof is not None:
                return self.WhichOneof(name) is not None
            raise ValueError(f"{self._type_name} has no field {name!r}")
        if f.repeated:
            raise ValueError(f"HasField does not apply to repeated field {name!r}")
        if name in self._implicit:
            raise ValueError(f"field {name!r} of {self._type_name} has no presence (proto3)")
        return self._present(f)

    def _present(self, f: FieldSpec) -> bool:
        """Presence as serialization sees it: explicit presence, or a non-default value."""
        name = f.name
        d = self.__dict__
        lazy = d.get("_lazy")
        if lazy and name in lazy:
            return True
        v = d.get(name)
        if v is None:
            return False
        if f.kind == MESSAGE:
            return v._idx != UNATTACHED_DEFAULT
        if name in self._implicit:
            return not _values.is_default(v)
        return True

    def WhichOneof(self, group: str) -> str | None:
        members = self._spec.oneofs.get(group)
        if members is None:
            raise ValueError(f"{self._type_name} has no oneof {group!r}")
        for name in members:
            if self._present(self._fields[name]):
                return name
        return None

    def ClearField(self, name: str) -> None:
        if name not in self._fields:
            raise ValueError(f"{self._type_name} has no field {name!r}")
        d = self.__dict__
        lazy = d.get("_lazy")
        value = d.pop(name, None)
        # An empty container (read, or put in place by the scan: the ``eager_empty`` scan hint)
        # changes nothing when cleared: the bytes stay exact.
        had = value is not None and not (type(value) is RepeatedScalars and not value)
        if lazy and lazy.pop(name, None) is not None:
            had = True
        if had:
            self._touch()

    def ListFields(self) -> list:
        """``(FieldSpec, value)`` for every present field, in field-number order."""
        out = []
        for f in self._spec.fields:
            if f.repeated:
                if self._has_any(f.name):
                    v = getattr(self, f.name)
                    if len(v):
                        out.append((f, v))
            elif self._present(f):
                out.append((f, getattr(self, f.name)))
        return out

    def _has_any(self, name: str) -> bool:
        d = self.__dict__
        if name in d:
            return True
        lazy = d.get("_lazy")
        return bool(lazy) and name in lazy  # type: ignore[operator]  # bool(lazy) rules out None

    def SetInParent(self) -> None:
        """Make this message present in its parent although nothing in it changed, as
        protobuf's: a default read from an absent field (a scalar's empty ``shape``, say)
        becomes a present empty message.  A message already present is left as it is."""
        if self.__dict__.get("_idx", HELD) == UNATTACHED_DEFAULT:
            self._touch()

    def DiscardUnknownFields(self) -> None:
        """Drop the unknown fields of this message and of every message below it, as
        protobuf's.  Every submessage is read to look; only those that held unknown fields
        change.  The items of a long sequence are visited one at a time (held weakly as
        any read holds them), so a large graph is not kept alive by the walk."""
        stack = [iter((self,))]
        while stack:
            m = next(stack[-1], None)
            if m is None:
                stack.pop()
                continue
            d = m.__dict__
            if d.get("_unknown"):
                del d["_unknown"]
                m._touch()
            for f in m._spec.fields:
                if f.kind == MESSAGE and m._has_any(f.name):
                    value = getattr(m, f.name)
                    stack.append(iter(value) if f.repeated else iter((value,)))

    def Clear(self) -> None:
        for f in self._spec.fields:
            self.__dict__.pop(f.name, None)
        self.__dict__.pop("_lazy", None)
        self.__dict__.pop("_unknown", None)
        self._touch()

    def CopyFrom(self, other: Message) -> None:
        if type(other) is not type(self):
            raise TypeError(f"CopyFrom needs a {self._type_name}")
        if other is self:
            return
        self.Clear()
        from .encoder import dumps_message  # noqa: PLC0415 (readers never import the encoder)

        data = dumps_message(other)
        fresh = type(self)._from_buffer(data, memoryview(data), 0, len(data))
        # The depth of the copied bytes where they came from (see _adopt): ``other``'s
        # own when they are its original span, else 0 (the encoder just bounded them
        # as a root).
        self.__dict__["_depth"] = other._depth if other._start >= 0 and other._buf is not None else 0
        for k, v in fresh.__dict__.items():
            if not k.startswith("_") or k in ("_lazy", "_unknown"):
                if isinstance(v, (RepeatedScalars,)):
                    v._owner = self
                elif isinstance(v, RepeatedMessages):
                    v._owner = self
                elif isinstance(v, MessageList):  # its items are made: they move too
                    v._owner = self
                    for item in v:
                        item.__dict__["_parent"] = self
                elif isinstance(v, Message):
                    v.__dict__["_parent"] = self
                self.__dict__[k] = v
        self.__dict__["_buf"] = fresh._buf
        self._touch()

    def MergeFrom(self, other: Message) -> None:
        if type(other) is not type(self):
            raise TypeError(f"MergeFrom needs a {self._type_name}")
        from .encoder import dumps_message  # noqa: PLC0415

        data = dumps_message(self) + dumps_message(other)
        self.Clear()
        self.CopyFrom(type(self)._from_buffer(data, memoryview(data), 0, len(data)))

    def SerializeToString(self, deterministic: bool = False) -> bytes:
        """The message's bytes, as protobuf's.  ``deterministic`` is accepted for protobuf's
        signature: the output is always the same for the same message (no map fields)."""
        from .encoder import dumps_message  # noqa: PLC0415

        return dumps_message(self)

    def SerializePartialToString(self, deterministic: bool = False) -> bytes:
        """`SerializeToString`: there is nothing a partial serialization may leave out, the
        schema tables having no required fields (proto3 has none; ONNX's proto2 declares none)."""
        return self.SerializeToString()

    def ByteSize(self) -> int:
        """The length of `SerializeToString`'s bytes, without making them: a message that is
        still exactly its bytes answers from its span, so a multi-GB model's size costs
        nothing; a changed one from the encoder's plan, whose unchanged parts are spans."""
        if self._start >= 0:
            return self._end - self._start
        from .encoder import build_plan  # noqa: PLC0415

        return build_plan(self).size

    def IsInitialized(self) -> bool:
        """Always True: no field is required (see `SerializePartialToString`)."""
        return True

    def MergeFromString(self, data: bytes | bytearray | memoryview) -> int:
        """Merge the message encoded in ``data`` into this one (as protobuf: repeated fields
        are extended, singular ones replaced, submessages merged) and return its length."""
        self.MergeFrom(type(self).FromString(data))
        return len(data)

    def ParseFromString(self, data: bytes | bytearray | memoryview) -> None:
        data = bytes(data)
        self.CopyFrom(type(self)._from_buffer(data, memoryview(data), 0, len(data)))

    @classmethod
    def FromString(cls, data: bytes | bytearray | memoryview) -> Any:
        data = bytes(data)
        return cls._from_buffer(data, memoryview(data), 0, len(data))

    # -- copies and pickling ------------------------------------------------------------
    def __deepcopy__(self, memo: dict) -> Any:
        """An independent message with the same content, as protobuf's ``copy.deepcopy``:
        this message's bytes read back into a buffer of its own, so that the copy shares no
        object, and no mapped file, with the original.  The layer above adds its part
        (``_copy_context``: irmodel's external-data directory)."""
        copy = type(self).FromString(self.SerializeToString())
        hook = self._copy_context
        if hook is not None:
            hook(self, copy)
        return copy

    def __copy__(self) -> Any:
        """The same as `__deepcopy__`: a message's fields are its own, so a copy that shared
        them would be edited through the original (protobuf's ``copy.copy`` copies too)."""
        return self.__deepcopy__({})

    def __reduce__(self):
        """Pickled as protobuf pickles: the class (by its module and name) and the
        serialized bytes.  Nothing of the file a message was read from travels with it."""
        return (type(self).FromString, (self.SerializeToString(),))

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        from .encoder import dumps_message  # noqa: PLC0415

        return dumps_message(self) == dumps_message(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, like protobuf messages

    def _path(self) -> str:
        """The root's type, then field names and indexes (``Outer.items[3].inner``): for
        error messages (cold path)."""
        parts = []
        m = self
        while m._parent is not None:
            parts.append(f".{m._key}{m._index_text()}")
            m = m._parent
        parts.append(m._type_name)
        return "".join(reversed(parts))

    def _index_text(self) -> str:
        parent = self._parent
        f = parent._fields.get(self._key)
        if f is None or not f.repeated:
            return ""
        idx = self.__dict__.get("_idx", HELD)
        if idx >= 0:
            return f"[{idx}]"
        seq = parent.__dict__.get(self._key)
        if isinstance(seq, (RepeatedMessages, MessageList)):
            i = seq._index_of(self)
            if i >= 0:
                return f"[{i}]"
        return "[?]"

    def __repr__(self) -> str:
        """Short by design: a few scalar fields, counts of repeated ones, never data."""
        parts: list[str] = []
        for f in self._spec.fields:
            if len(parts) >= 6:
                parts.append("...")
                break
            if f.repeated:
                if self._has_any(f.name):
                    parts.append(f"{f.name}=<{len(getattr(self, f.name))}>")
            elif self._present(f):
                if f.kind == MESSAGE:
                    parts.append(f"{f.name}=<{self._classes[f.name].__name__}>")
                elif f.kind == BYTES:
                    parts.append(f"{f.name}=<{len(getattr(self, f.name))} bytes>")
                else:
                    v = getattr(self, f.name)
                    if isinstance(v, str) and len(v) > 40:
                        v = v[:37] + "..."
                    parts.append(f"{f.name}={v!r}")
        return f"{self._type_name}({', '.join(parts)})"




def exact_span(msg) -> tuple | None:
    """``(buffer, start, end)``: the bytes ``msg`` was read from, while they are still exactly
    ``msg`` (nothing in or below it changed, no occurrences merged); None otherwise (a
    message built in memory, or changed since it was read).

    For readers that want to look at the wire form directly, such as a streaming summary
    that reads a few fields of thousands of nodes without making a message of each.
    ``buffer`` is indexable by offset (bytes or mmap); slicing it copies.
    """
    start = msg._start
    buf = msg._buf
    if start < 0 or buf is None:
        return None
    return buf[0], start, msg._end


def shared_copy(msg):
    """A detached copy of ``msg`` (protobuf's copy semantics: edits to either never show in
    the other) that shares its buffer while ``msg`` is still exactly its bytes: nothing is
    read, decoded or copied, which is what lets a transformation start from a multi-GB
    model for the cost of its structure.  A message changed since it was read is copied
    from its serialized bytes (its unchanged parts are copied as they are).  Unlike
    `copy.copy`, the layer above's ``copy_context`` is not called: the caller decides what
    the copy's context is."""
    buf = msg._buf
    if buf is not None and msg._start >= 0:
        fresh = type(msg)._from_buffer(buf[0], buf[1], msg._start, msg._end)
        fresh.__dict__["_depth"] = msg._depth
        return fresh
    return type(msg).FromString(msg.SerializeToString())


def item_spans(msg, name: str) -> list | None:
    """The flat ``[start0, end0, start1, end1, ...]`` spans of the items of repeated message
    field ``name``, in ``exact_span(msg)``'s buffer; None when ``msg`` is not exact.

    Nothing is scanned: the spans are those ``msg``'s own scan recorded.  The list is a copy.
    """
    if exact_span(msg) is None:
        return None
    return _recorded_spans(msg, name)


def _recorded_spans(msg, name: str) -> list | None:
    """`item_spans` once ``msg`` is known to be exact (its callers have checked)."""
    f = msg._fields.get(name)
    if f is None or not f.repeated or f.kind != MESSAGE:
        raise ValueError(f"{msg._type_name}.{name} is not a repeated message field")
    seq = msg.__dict__.get(name)
    if seq is None:
        return []
    if isinstance(seq, MessageList):  # made items of an exact message: unchanged, their spans hold
        return seq._item_spans()
    spans = seq._spans if isinstance(seq, RepeatedMessages) else None
    return None if spans is None else list(spans)


def items_in_buffer(msg, name: str) -> tuple | None:
    """``(buffer, spans)``: `exact_span`'s buffer and the `item_spans` of repeated message
    field ``name`` in it; None when ``msg`` is not exactly its bytes any more.

    The opening of every reader that looks at the items' bytes instead of making them
    (the summary's node count, the checker's and inference's node passes): None is their
    cue to take the message path.
    """
    span = exact_span(msg)
    if span is None:
        return None
    spans = _recorded_spans(msg, name)
    return None if spans is None else (span[0], spans)


class _LazyField:
    """Class attribute of a message field (singular or repeated): materialises it on first read.

    A non-data descriptor: once the value is stored in the instance dict, reads find it
    there and never come here again.  Measured against ``__getattr__``: the failed
    lookup that precedes ``__getattr__`` formats an AttributeError message each time,
    which cost more than the materialisation itself.
    """

    __slots__ = ("name", "field", "repeated", "check")

    def __init__(self, f: FieldSpec, check=None):
        self.name = f.name
        self.field = f
        self.repeated = f.repeated
        self.check = check

    def __get__(self, msg, owner=None):
        if msg is None:
            return self
        name = self.name
        d = msg.__dict__
        lazy = d.get("_lazy")
        spans = lazy.get(name) if lazy else None
        cls = msg._classes[name]
        if self.repeated:  # absent: a scan puts a present one straight into the dict
            value = new_messages(msg, name, cls, spans)
        elif spans is not None:
            # The spans leave `_lazy` only once the scan succeeded: a DecodeError must not
            # turn the field into an absent one for the next reader.
            value = cls._from_spans(msg, spans, name)
            del lazy[name]
        else:  # absent: a default that attaches itself when first modified
            value = cls()
            vd = value.__dict__
            vd["_parent"] = msg
            vd["_key"] = name
            vd["_idx"] = UNATTACHED_DEFAULT
            vd["_depth"] = msg._depth + 1
        d[name] = value
        return value


class _LazyScalars(_LazyField):
    """Class attribute of a repeated scalar field, with the absent case first and inline.

    Reading an absent field is a Python call from C, so the types a
    full walk reads that way in bulk get their empty containers from their scan instead
    (the ``eager_empty`` scan hint, for fields a walk reads even when absent); this
    path is kept to a handful of bytecodes for the rest.  Packed chunks that a scan left
    undecoded in ``_lazy`` are decoded here.
    """

    __slots__ = ()

    def __get__(self, msg, owner=None):
        if msg is None:
            return self
        d = msg.__dict__
        value = RepeatedScalars()
        value._owner = msg
        value._check = self.check
        lazy = d.get("_lazy")
        if lazy and self.name in lazy:
            # The chunks leave `_lazy` only once decoded: a field that failed to decode
            # raises again on every read, never reads as empty the second time.
            try:
                list.extend(value, decode_packed(self.field.kind, msg._buf[0], lazy[self.name]))
            except DecodeError as exc:
                exc.path = f"{msg._path()}.{self.name}"
                raise
            del lazy[self.name]
        d[self.name] = value
        return value


class _FieldClasses(dict):
    """``cls._classes``: field name -> the class of that message field, looked up in the
    class table on first use, so that building a class does not build the classes of its
    fields (and theirs: from a schema's root type, often every one)."""

    __slots__ = ("_spec", "_table")
    _spec: MessageSpec
    _table: ClassTable

    def __missing__(self, name: str) -> type:
        f = self._spec.by_name.get(name)
        if f is None or f.kind != MESSAGE:
            raise KeyError(name)
        cls = self[name] = self._table[f.type_name]
        return cls


class ClassTable(dict):
    """The message classes of a registry by full name (`build_classes`), each built on first use.

    A process reads a few of a schema's types (a summary of a large model may make objects
    of 2 of 33) and building one costs tens of microseconds, a good part of a small
    command's start.  Reading a name builds that class only (its fields' classes are
    looked up when first needed, `_FieldClasses`); whatever looks at the whole table
    (iteration, ``len``, ``keys``, ``items``, ``values``, ``get``, ``in``, comparison,
    ``repr``) sees every class, built then, in the registry's order.  Building holds a
    re-entrant lock (a class's ``on_build`` may build others), so two threads asking for
    the same name get the same class.
    """

    __slots__ = ("_names", "_build", "_lock", "_complete", "_dressing")
    _names: dict  # the registry's message names, in its order
    _build: Any  # name -> the class, built (`build_classes`)
    _lock: Any
    _complete: bool  # every class built, in the registry's order
    _dressing: dict  # classes built, handed to ``on_build`` and not yet in the table

    def __init__(self, names, build) -> None:
        """``names``: the registry's message names, in its order; ``build(name)``: the class,
        built and put in the table (`build_classes`)."""
        super().__init__()
        self._names = dict.fromkeys(names)
        self._build = build
        self._lock = _RLock()
        self._complete = False
        self._dressing = {}

    def __missing__(self, name: str) -> type:
        if name not in self._names:
            raise KeyError(name)
        with self._lock:
            cls = dict.get(self, name) or self._dressing.get(name)
            if cls is None:
                cls = self._build(name)
        return cls

    def _every(self) -> None:
        """Build every class, and order the table as the registry does."""
        if self._complete:
            return
        with self._lock:
            for name in self._names:
                self[name]
            ordered = [(name, dict.__getitem__(self, name)) for name in self._names]
            dict.clear(self)
            dict.update(self, ordered)
            self._complete = True

    def __iter__(self):
        self._every()
        return dict.__iter__(self)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def get(self, name, default=None):
        return self[name] if name in self._names else default

    def keys(self):
        self._every()
        return dict.keys(self)

    def values(self):
        self._every()
        return dict.values(self)

    def items(self):
        self._every()
        return dict.items(self)

    def copy(self) -> dict:
        self._every()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self._every()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        self._every()
        return dict.__repr__(self)

    def __reduce__(self):
        return (dict, (self.copy(),))


def build_classes(registry: Registry, module: str = "wirefmt", code_cache=None, copy_context=None,
                  scan_hints=None, on_build=None) -> ClassTable:
    """One `Message` subclass per message spec in ``registry``, by full name: a `ClassTable`,
    which builds each class the first time it is asked for.

    ``module`` becomes the classes' ``__module__`` (irmodel passes ``"irmodel"``, so that
    ``repr(type(m))`` and pickling name the package users import them from).
    ``code_cache`` keeps the compiled scan code of each type across processes: an object
    with ``load(key) -> bytes | None`` and ``save(key, data)`` (see `scangen._compile`);
    None compiles it in every process.  ``copy_context(original, copy)``, if given, is called
    on every `copy.deepcopy` of a message, with the copy made (the caller's context for it).
    ``scan_hints`` maps type names to `ScanHints` (dicts; see `wirefmt.scangen`): how
    those types' fields occur in the files read, for their generated scan code (speed and
    memory only; ValueError for a hint that cannot apply, from here or from the first
    scan of the type).  ``on_build(name, cls)``, if given, is called once for each class
    as it is built, before anybody else gets it (where the caller dresses it: nested
    types and enums as attributes, a repr).
    """
    hints = hints_by_type(registry, scan_hints)

    def build(name: str) -> type:
        spec = registry.messages[name]
        checks = {f.name: _values.checker(f, registry) for f in spec.fields if f.kind != MESSAGE}
        field_classes = _FieldClasses()
        field_classes._spec = spec
        field_classes._table = table
        ns = {
            "_spec": spec,
            "_registry": registry,
            "_type_name": name,
            "_fields": dict(spec.by_name),
            "_checks": checks,
            "_tags": None,  # made by the first generic scan of the type: most never need it
            "_classes": field_classes,
            "_code_cache": code_cache,
            "_scan_hints": hints.get(name, NO_HINTS),
            "_copy_context": staticmethod(copy_context) if copy_context is not None else None,
            "_implicit": frozenset(f.name for f in spec.fields
                                   if not f.repeated and not spec.has_presence(f)),
            "__module__": module,
            "__qualname__": name,
            "__doc__": f"The message ``{name}`` (lazy, copy-on-write).",
        }
        for f in spec.fields:
            if not f.repeated and f.kind != MESSAGE:
                ns[f.name] = _values.default(f, registry)
            else:
                lazy_type = _LazyField if f.kind == MESSAGE else _LazyScalars
                ns[f.name] = lazy_type(f, checks.get(f.name))
        cls = type(name.replace(".", "_"), (Message,), ns)
        install_scanners((cls,))
        if on_build is not None:  # the table hands it out once dressed; meanwhile, to this thread only
            table._dressing[name] = cls
            try:
                on_build(name, cls)
            finally:
                del table._dressing[name]
        dict.__setitem__(table, name, cls)
        return cls

    table = ClassTable(registry.messages, build)
    return table
