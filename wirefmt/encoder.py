"""Encoding messages: copy every unchanged span, re-encode only what changed.

Encoding runs in two passes.  `plan` walks the changed part of the tree once, encodes
scalars, and records each message's size (so no size is ever computed twice); untouched
submessages and undecoded lazy fields become memoryview slices of the original buffer.
`write_plan` then streams the parts.  A 5 GB model with one edited field is thus one
streaming copy: the plan holds a few slices of the mmap, not the data.

Depth.  Nothing is written nested deeper than `MAX_DEPTH`, which no protobuf reader
(ours included) would read back.  Re-encoded messages are counted as the plan descends;
a copied span is bounded without decoding it when it is written no deeper than it was
read: each message knows the depth its bytes had in the tree they were decoded from
(``_depth``), and a readable source nests at most `MAX_DEPTH` minus that below it.  Only
a span that moves deeper (a sub-graph taken from a shallow place and grafted into a deep
one; a ``CopyFrom`` into a deep message) is measured, by `_check_span_depth`: tags and
lengths only, skipping every payload that is too short to reach the limit.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, BinaryIO, Callable, cast

    from .message import Message
else:  # run time: cast is the identity (typing is not imported for it)
    from .records import cast

from .containers import UNATTACHED_DEFAULT, RepeatedMessages
from .containers import _ItemRef as ref
from .errors import DecodeError, EncodeError
from .limits import MAX_DEPTH
from .reader import read_field
from .schema import BYTES, LEN, MESSAGE, SGROUP, STRING, WIRE_TYPE
from .values import is_default
from .varint import encode_varint
from .writer import StreamWriter, encode_packed_body, encode_scalar, tag

if TYPE_CHECKING:
    from .writer import SpanCopier

_TAGS: dict = {}


def _tag(number: int, wt: int) -> bytes:
    key = number << 3 | wt
    t = _TAGS.get(key)
    if t is None:
        t = _TAGS[key] = tag(number, wt)
    return t


class _SourceSpan:
    """A large unchanged run of the source buffer, handed to the writer's copier (a mapped
    file's owner can copy it file-to-file without touching its pages: `StreamWriter.copy_span`)."""

    __slots__ = ("mv", "start", "end")

    def __init__(self, mv, start: int, end: int):
        self.mv, self.start, self.end = mv, start, end

    def __len__(self) -> int:
        return self.end - self.start

    def view(self):
        return self.mv[self.start:self.end]


#: Unchanged runs at least this long become `_SourceSpan`s; shorter ones are sliced.
_SPAN_MIN = 1 << 20


def _source(mv, a: int, b: int):
    return mv[a:b] if b - a < _SPAN_MIN else _SourceSpan(mv, a, b)


class _Plan:
    """The parts of one message's encoding; ``size`` is their total length."""

    __slots__ = ("parts", "size")

    def __init__(self):
        self.parts: list = []
        self.size = 0

    def add(self, part) -> None:
        self.parts.append(part)
        self.size += len(part) if not isinstance(part, _Plan) else part.size


def _message_fields(cls) -> dict:
    """field number -> class, for the message fields of ``cls`` (cached on the class)."""
    table = cls.__dict__.get("_encoder_message_fields")
    if table is None:
        table = {f.number: cls._classes[f.name] for f in cls._spec.fields if f.kind == MESSAGE}
        cls._encoder_message_fields = table
    return table


def _check_span_depth(cls, buf, start: int, end: int, depth: int, where) -> None:
    """Raise EncodeError if the ``cls`` message in ``buf[start:end]``, written at
    ``depth``, nests deeper than `MAX_DEPTH` (message fields and groups, counted as
    the decoder counts them).

    A payload of ``n`` bytes holds at most ``n // 2`` levels (a level takes a tag and a
    length byte at least), so only payloads long enough to reach the limit are read:
    the cost is the structure of those, never a payload's contents.  Malformed bytes
    are no concern here (the decoder refuses them wherever they are): they end the
    measurement of the message that holds them.
    """
    if depth > MAX_DEPTH:
        raise EncodeError(f"message nesting deeper than {MAX_DEPTH} at {where()}")
    if depth + (end - start) // 2 <= MAX_DEPTH:
        return
    stack = [(cls, start, end, depth)]
    while stack:
        c, pos, e, d = stack.pop()
        children = _message_fields(c)
        try:
            while pos < e:
                f, pos = read_field(buf, pos, e, d)
                if f.wire_type != LEN:
                    continue
                child = children.get(f.number)
                if child is None:
                    continue
                if d + 1 > MAX_DEPTH:
                    raise EncodeError(f"message nesting deeper than {MAX_DEPTH} at {where()} "
                                      f"(in bytes copied from a shallower place)")
                if d + 1 + (f.end - f.start) // 2 > MAX_DEPTH:
                    stack.append((child, f.start, f.end, d + 1))
        except DecodeError as exc:
            if exc.reason.startswith("nesting deeper"):  # a group too deep, as read_field counts
                raise EncodeError(f"message nesting deeper than {MAX_DEPTH} at {where()} "
                                  f"(a group in bytes copied from a shallower place)") from None


def _check_unknown_depth(msg, unknown: list, depth: int) -> None:
    """Groups among the unknown fields of ``msg`` (written at ``depth``) must fit too."""
    buf = msg._buf[0]
    for i in range(0, len(unknown), 2):
        a = unknown[i]
        if isinstance(a, int) and buf[a] & 7 == SGROUP:
            try:
                read_field(buf, a, unknown[i + 1], depth)
            except DecodeError as exc:
                if exc.reason.startswith("nesting deeper"):
                    raise EncodeError(f"message nesting deeper than {MAX_DEPTH} at "
                                      f"{msg._path()} (a group among its unknown fields)") from None


def _add_submessage(plan: _Plan, t: bytes, child, depth: int) -> None:
    if child._start >= 0:
        mv = child._buf[1]
        if depth + 1 > child._depth:  # written deeper than it was read: measure
            _check_span_depth(type(child), child._buf[0], child._start, child._end, depth + 1, child._path)
        plan.add(t + encode_varint(child._end - child._start))
        plan.add(_source(mv, child._start, child._end))
    else:
        sub = build_plan(child, depth + 1)
        plan.add(t + encode_varint(sub.size))
        plan.add(sub)


def build_plan(msg: Message, depth: int = 0) -> _Plan:
    """Plan the encoding of ``msg`` (the root itself is re-encoded if it changed).

    Recursion is bounded by MAX_DEPTH: a tree built bottom-up by a caller can be deeper
    than anything we would decode, and protobuf would not read it back either.
    """
    if depth > MAX_DEPTH:
        raise EncodeError(f"message nesting deeper than {MAX_DEPTH} at {msg._path()}")
    plan = _Plan()
    if msg._start >= 0:
        if depth > msg._depth:
            _check_span_depth(type(msg), msg._buf[0], msg._start, msg._end, depth, msg._path)
        plan.add(_source(msg._buf[1], msg._start, msg._end))
        return plan
    d = msg.__dict__
    lazy = d.get("_lazy") or {}
    mv = msg._buf[1] if msg._buf is not None else None
    implicit = msg._implicit
    # Spans of this message's undecoded fields were read one level below it.
    moved = msg._buf is not None and depth > msg._depth
    for f in msg._spec.fields:
        name = f.name
        if name in d:
            value = d[name]
        elif name in lazy:
            spans = lazy[name]
            if f.kind == MESSAGE:
                if f.repeated or len(spans) == 2:
                    t = _tag(f.number, LEN)
                    for i in range(0, len(spans), 2):
                        a, b = spans[i], spans[i + 1]
                        if moved:
                            _check_span_depth(msg._classes[name], msg._buf[0], a, b, depth + 1,
                                              lambda: f"{msg._path()}.{name}")
                        plan.add(t + encode_varint(b - a))
                        plan.add(_source(mv, a, b))
                    continue
            elif len(spans) == 2 and msg._spec.is_packed(f):
                # One packed chunk of a packed field: exactly what protobuf would write.
                a, b = spans
                if b > a:
                    plan.add(_tag(f.number, LEN) + encode_varint(b - a))
                    plan.add(_source(mv, a, b))
                continue
            value = getattr(msg, name)  # merged message or several packed chunks: decode
        else:
            continue
        kind = f.kind
        if implicit and name in implicit and is_default(value):
            continue
        if kind == MESSAGE:
            t = _tag(f.number, LEN)
            if f.repeated:
                _add_repeated_messages(plan, t, value, depth)
            elif value._idx != UNATTACHED_DEFAULT:
                _add_submessage(plan, t, value, depth)
        elif f.repeated:
            if not value:
                continue
            if msg._spec.is_packed(f):
                body = encode_packed_body(kind, value)
                plan.add(_tag(f.number, LEN) + encode_varint(len(body)) + body)
            else:
                t = _tag(f.number, WIRE_TYPE[kind])
                if kind == STRING or kind == BYTES:
                    for v in value:
                        if len(v) > 65536:  # kept out of the small-part concatenation
                            if isinstance(v, str):
                                v = v.encode()
                            plan.add(t + encode_varint(len(v)))
                            plan.add(v)
                        else:
                            plan.add(t + encode_scalar(kind, v))
                else:
                    plan.add(b"".join([t + encode_scalar(kind, v) for v in value]))
        elif kind == BYTES and len(value) > 65536:
            plan.add(_tag(f.number, LEN) + encode_varint(len(value)))
            plan.add(value)  # large payloads (raw_data) are never copied into the plan
        else:
            plan.add(_tag(f.number, WIRE_TYPE[kind]) + encode_scalar(kind, value))
    unknown = d.get("_unknown")
    if unknown:
        if moved:
            _check_unknown_depth(msg, unknown, depth)
        for i in range(0, len(unknown), 2):
            a = unknown[i]
            plan.add(a if isinstance(a, bytes) else cast(memoryview, mv)[a:unknown[i + 1]])
    return plan


def _add_repeated_messages(plan: _Plan, t: bytes, seq, depth: int) -> None:
    if not isinstance(seq, RepeatedMessages):
        for child in seq:
            _add_submessage(plan, t, child, depth)
        return
    spans = seq._spans
    items = seq._item_list()
    owner = seq._owner
    src: Any
    mv: Any
    src, mv = owner._buf if owner._buf is not None else (None, None)  # None: every item is new
    moved = depth > owner._depth  # its spans were read one level below their owner
    # Unchanged items that lie back to back in the source, each behind exactly the tag and
    # length this would write, are copied as one run (tag to last byte): a graph with one
    # new entry is then a few parts instead of two per node (100,000 nodes: 200,000 parts
    # to plan and write one by one).  An item behind any other header bytes (a length
    # written longer than it needs) is written with our header, as before.
    run_start = run_end = -1
    for i, child in enumerate(items):
        if child is None or type(child) is ref:  # never read, or read but unchanged: exact bytes
            a, b = spans[2 * i], spans[2 * i + 1]
            if moved:
                _check_span_depth(seq._cls, src, a, b, depth + 1,
                                  lambda i=i: f"{owner._path()}.{seq._name}[{i}]")
            head = t + encode_varint(b - a)
            h = a - len(head)
            if h >= 0 and src[h:a] == head:
                if h != run_end:
                    if run_end >= 0:
                        plan.add(_source(mv, run_start, run_end))
                    run_start = h
                run_end = b
                continue
            if run_end >= 0:
                plan.add(_source(mv, run_start, run_end))
                run_start = run_end = -1
            plan.add(head)
            plan.add(_source(mv, a, b))
        else:
            if run_end >= 0:
                plan.add(_source(mv, run_start, run_end))
                run_start = run_end = -1
            _add_submessage(plan, t, child, depth)
    if run_end >= 0:
        plan.add(_source(mv, run_start, run_end))


def _iter_parts(plan: _Plan):
    stack = [iter(plan.parts)]
    while stack:
        for part in stack[-1]:
            if isinstance(part, _Plan):
                stack.append(iter(part.parts))
                break
            yield part
        else:
            stack.pop()


def dumps_message(msg: Message) -> bytes:
    """The serialized bytes of ``msg`` (what protobuf's SerializeToString gives)."""
    if msg._start >= 0:
        return bytes(msg._buf[1][msg._start:msg._end])
    return b"".join([p.view() if type(p) is _SourceSpan else p for p in _iter_parts(build_plan(msg))])


def write_message(msg: Message, fileobj: BinaryIO, *, copier: SpanCopier | None = None,
                  progress: Callable[[int], None] | None = None) -> int:
    """Stream the encoding of ``msg`` to a binary file; returns the number of bytes written.

    Unchanged runs of the buffer ``msg`` was read from go to ``copier`` when one is given
    (see `StreamWriter.copy_span`): the owner of a mapped file copies them file-to-file,
    so saving a 1.5 GB model with one edited field costs about what copying the file
    costs and maps none of it.  ``progress(n)`` hears of the bytes written so far.
    """
    writer = StreamWriter(fileobj, progress=progress)
    if msg._start >= 0:
        writer.copy_span(msg._buf[1], msg._start, msg._end - msg._start, copier)
    else:
        for part in _iter_parts(build_plan(msg)):
            if type(part) is _SourceSpan:
                writer.copy_span(part.mv, part.start, len(part), copier)
            else:
                writer.write(part)
    writer.flush()
    return writer.written
