"""The generic scan: one message's top-level fields decoded into its instance dict.

This is the reference behaviour of decoding, table-driven: every tag of a message type
maps to an entry that says what to do with it.  The loops generated per type
(`scangen`) inline the common fields and hand every other field to `_slow`, which runs
this loop over that one field, so each protobuf rule is written once, here.  With the
generated scanners switched off (`use_generated_scanners`), every field goes through it:
the test suite decodes its corpus both ways.
"""

from __future__ import annotations

from _weakref import ref as _weakref
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Callable, Iterable

    from .buffer import Buffer
    from .message import Message

from . import containers as _containers
from .containers import HELD, MessageList, RepeatedMessages, RepeatedScalars, new_messages, new_repeated
from .errors import DecodeError
from .limits import MAX_DEPTH
from .reader import (convert_varint, fixed_struct, float32_nan, iter_fields, read_field, read_length, unpack_fixed,
                     unpack_varints)
from .scangen import build_scanner, generic_child_maker, long_length
from .schema import (BOOL, BYTES, ENUM, FIXED_WIDTH, FLOAT, I32, I64, INT32, INT64, LEN,
                     MESSAGE, SINT32, SINT64, STRING, UINT64, VARINT, WIRE_TYPE, MessageSpec, Registry)
from .varint import encode_varint, read_short_varint, read_varint, to_int32

# Scan actions, one per (field shape, wire type) pair, numbered so that the dispatch
# below splits by wire type first: length-delimited actions are below `_A_LEN_END`,
# varint actions below `A_FIXED`, the rest after.  The common ONNX fields (strings,
# submessages, int64s) are then reached in at most four comparisons.  Measured: see
# benchmarks/RESULTS.md.
(A_STR, A_RSTR, A_MSG, A_RMSG, A_BYTES, A_RBYTES, A_PACKED, _A_LEN_END,
 A_INT64, A_RVARINT, A_INT32, A_ENUM, A_VARINT,
 A_FIXED, A_RFIXED, A_RENUM) = range(16)


# What the generic scan does with one tag, an "entry": the plain tuple ``(action, name,
# kind, check, values, sibs)``, unpacked in the hot loop.  ``kind`` is the field's kind;
# ``check`` the validator of one element (repeated fields); ``values`` the known numbers
# of a closed enum; ``sibs`` the other members of the field's oneof, cleared when this
# one is read.


_list_append = list.append
new_instance = _new = object.__new__


def _scan(msg, src, mv, pos: int, end: int) -> None:
    """Decode the top level of ``src[pos:end]`` into ``msg`` (one pass, no recursion).

    The table-driven reference loop: the scanners generated per type (`scangen`) hand it
    every field they do not inline, one field at a time (`_slow`), so each behaviour is
    written once, here.  Still tuned (locals only, one- and two-byte varints inline): a
    message type with many such fields runs mostly through it.  Reads past ``end`` are
    caught once, after the loop (or as IndexError at the end of the buffer), and
    explained precisely by `_explain_overrun`.
    """
    d = msg.__dict__
    tags = msg._tags
    if tags is None:
        cls = type(msg)
        tags = cls._tags = tag_table(cls._spec, cls._registry, cls._checks)
    lazy = d.get("_lazy")
    start = pos
    try:
        while pos < end:
            tag_start = pos
            tag = src[pos]
            pos += 1
            if tag > 127:
                b = src[pos]
                if b < 128:
                    tag = (tag & 127) | (b << 7)
                    pos += 1
                else:
                    tag, pos = read_short_varint(src, tag_start, end, "tag")
            ent = tags.get(tag)
            if ent is None:
                # Unknown field, or a known field with an unexpected wire type (protobuf
                # keeps both as unknown fields).  read_field validates and skips it.
                pos = read_field(src, tag_start, end, msg._depth)[1]
                unknown = d.get("_unknown")
                if unknown is None:
                    unknown = d["_unknown"] = []
                unknown.append(tag_start)
                unknown.append(pos)
                continue
            act, name, kind, check, values, sibs = ent
            if sibs:
                for s in sibs:
                    d.pop(s, None)
                    if lazy and s in lazy:
                        _drop_replaced_member(msg, lazy, s)
            if act < _A_LEN_END:
                n = src[pos]
                pos += 1
                if n > 127:
                    b = src[pos]
                    if b < 128:
                        n = (n & 127) | (b << 7)
                        pos += 1
                    else:
                        n, pos = read_short_varint(src, pos - 1, end, "length")
                e = pos + n
                if e > end:
                    _explain_overrun(src, start, end, msg._depth)
                if act < A_MSG:  # A_STR, A_RSTR
                    s = src[pos:e]
                    try:
                        s = s.decode()
                    except UnicodeDecodeError:
                        # upb hands out invalid UTF-8 in proto2 strings as bytes (so do
                        # we) and refuses it in proto3, where strings must be UTF-8.
                        if msg._spec.syntax == "proto3":
                            raise DecodeError(f"invalid UTF-8 in string field {name!r}", pos) from None
                    if act == A_STR:
                        d[name] = s
                    else:
                        lst = d.get(name)
                        if lst is None:
                            lst = d[name] = new_repeated((), msg, check)
                        _list_append(lst, s)
                elif act == A_RMSG:
                    # Repeated submessages: the spans go straight into the field's sequence.
                    seq = d.get(name)
                    if seq is None:
                        d[name] = RepeatedMessages(msg, name, msg._classes[name], [pos, e])
                    elif type(seq) is MessageList:  # items made by a generated scan: go on lazily
                        _defer_items(msg, name, pos, e)
                    else:
                        seq._add_span(pos, e)
                elif act == A_MSG:
                    # Submessage: keep the span, scan on access.  A singular message seen
                    # twice merges its occurrences, as protobuf does.
                    if lazy is None:
                        lazy = d["_lazy"] = {}
                    spans = lazy.get(name)
                    if spans is None:
                        lazy[name] = [pos, e]
                    else:
                        spans.append(pos)
                        spans.append(e)
                elif act == A_BYTES:
                    d[name] = mv[pos:e]
                elif act == A_RBYTES:
                    lst = d.get(name)
                    if lst is None:
                        lst = d[name] = new_repeated((), msg, check)
                    _list_append(lst, mv[pos:e])
                else:  # A_PACKED
                    lst = d.get(name)
                    if lst is not None:  # unpacked elements came first: keep the order exact
                        chunk = (unpack_varints(kind, src, pos, e) if WIRE_TYPE[kind] == VARINT
                                 else unpack_fixed(kind, src, pos, e))
                        list.extend(lst, chunk)
                    else:
                        if lazy is None:
                            lazy = d["_lazy"] = {}
                        spans = lazy.get(name)
                        if spans is None:
                            lazy[name] = [pos, e]
                        else:
                            spans.append(pos)
                            spans.append(e)
                pos = e
            elif act < A_FIXED:  # varint wire type
                v = src[pos]
                pos += 1
                if v > 127:
                    v, pos = read_varint(src, pos - 1, end)
                    big = True
                else:
                    big = False
                if act == A_INT64:
                    if big and v >> 63:
                        v -= 1 << 64
                    d[name] = v
                elif act == A_RVARINT:  # one element of an unpacked repeated scalar
                    if big:
                        v = convert_varint(kind, v)
                    elif kind == BOOL:
                        v = v != 0
                    elif kind == SINT32 or kind == SINT64:  # zigzag even for one byte
                        v = convert_varint(kind, v)
                    lst = d.get(name)
                    if lst is None:
                        lst = d[name] = new_repeated((), msg, check)
                        if lazy and name in lazy:  # packed chunks came first
                            list.extend(lst, decode_packed(kind, src, lazy.pop(name)))
                    _list_append(lst, v)
                elif act == A_INT32:
                    if v > 0x7FFFFFFF:
                        v = to_int32(v)
                    d[name] = v
                elif act == A_ENUM:
                    if v > 0x7FFFFFFF:
                        v = to_int32(v)
                    if v in values:
                        d[name] = v
                    else:  # closed (proto2) enum: an unknown value is kept as an unknown field
                        unknown = d.get("_unknown")
                        if unknown is None:
                            unknown = d["_unknown"] = []
                        unknown.append(tag_start)
                        unknown.append(pos)
                else:  # A_VARINT: uint32/uint64/bool/sint32/sint64
                    d[name] = convert_varint(kind, v)
            elif act == A_FIXED:
                width = FIXED_WIDTH[kind]
                if end - pos < width:
                    raise DecodeError("truncated fixed-width value", pos)
                v = fixed_struct(kind).unpack_from(src, pos)[0]
                if v != v and kind == FLOAT:  # float32 NaN: keep its exact bits
                    v = float32_nan(src, pos)
                d[name] = v
                pos += width
            elif act == A_RFIXED:
                width = FIXED_WIDTH[kind]
                if end - pos < width:
                    raise DecodeError("truncated fixed-width value", pos)
                v = fixed_struct(kind).unpack_from(src, pos)[0]
                if v != v and kind == FLOAT:
                    v = float32_nan(src, pos)
                pos += width
                lst = d.get(name)
                if lst is None:
                    lst = d[name] = new_repeated((), msg, check)
                    if lazy and name in lazy:
                        list.extend(lst, decode_packed(kind, src, lazy.pop(name)))
                _list_append(lst, v)
            else:  # A_RENUM
                pos = _scan_closed_enum_list(msg, d, src, tag, tag_start, pos, end, name, values, check)
        if pos != end:
            _explain_overrun(src, start, end, msg._depth)
    except IndexError:
        _explain_overrun(src, start, end, msg._depth)


def _explain_overrun(src, start: int, end: int, depth: int):
    """The inline fast paths read past the end: say exactly where and why.

    Cold path: re-reads the span with the validating generic reader, whose errors name
    the truncated varint, length or fixed-width value.
    """
    for _ in iter_fields(src, start, end, depth):
        pass
    raise DecodeError("the last field runs past the end of the message", end)


def _scan_closed_enum_list(msg, d, src, tag, tag_start, pos, end, name, values, check) -> int:
    """A repeated closed enum (packed or not): unknown values become unknown fields.

    protobuf moves each unknown value of a closed enum to the unknown fields as a varint
    field of its own, even out of a packed run, so these are decoded eagerly (never lazily)
    to keep the unknown fields in input order.  No ONNX field takes this path.
    """
    number = tag >> 3
    if tag & 7 == LEN:
        n, pos = read_length(src, pos, end)
        e = pos + n
        raws = unpack_varints(UINT64, src, pos, e)  # raw: upb writes unknowns back unchanged
        pos = e
    else:
        raw, pos = read_varint(src, pos, end)
        raws = [raw]
    lst = d.get(name)
    for raw in raws:
        v = to_int32(raw)
        if v in values:
            if lst is None:
                lst = d[name] = new_repeated((), msg, check)
            _list_append(lst, v)
        else:
            unknown = d.get("_unknown")
            if unknown is None:
                unknown = d["_unknown"] = []
            if tag & 7 == LEN:  # synthetic field: bytes entry, paired with None
                unknown.append(encode_varint(number << 3) + encode_varint(raw))
                unknown.append(None)
            else:
                unknown.append(tag_start)
                unknown.append(pos)
    return pos


def _drop_replaced_member(msg, lazy: dict, name: str) -> None:
    """Drop the undecoded bytes of oneof member ``name``, replaced by a sibling read later.

    protobuf parses a submessage as it reads it, so input whose replaced member is
    malformed is refused even though the member is gone afterwards; its bytes are
    decoded (all of them, as protobuf's parse would) before they are dropped, so that we
    refuse the same inputs.  Oneof members are rarely repeated: this is the cold path.
    """
    spans = lazy.pop(name)
    if msg._fields[name].kind == MESSAGE:
        from .jsonform import to_dict  # noqa: PLC0415 (cold path; jsonform decodes everything)

        to_dict(msg._classes[name]._from_spans(msg, spans, name))


def _with_path(m, exc: DecodeError):
    if exc.path is None:
        exc.path = m._path()
    return exc


def _slow(m, src, mv, pos: int, end: int) -> int:
    """One field at ``pos`` through the generic loop: the cold path of generated scanners."""
    try:
        e = read_field(src, pos, end, m._depth)[1]
        _scan(m, src, mv, pos, e)
    except DecodeError as exc:
        raise _with_path(m, exc)
    return e


def _overrun(m, src, start: int, end: int):
    try:
        _explain_overrun(src, start, end, m._depth)
    except DecodeError as exc:
        raise _with_path(m, exc)


def _too_deep(m, start: int):
    raise _with_path(m, DecodeError(f"nesting deeper than {MAX_DEPTH}", start))


def _span_run(m, src, pos: int, start: int, end: int, spans: list) -> int:
    """Append to ``spans`` the ``[start, end]`` of every item of the run of one repeated
    length-delimited field at ``pos`` (a one-byte tag, the ``runs`` scan hint), up to the first
    other tag or the end of the message; return the position after the run.

    The rules of the generated branch it stands for, item by item: lengths of one and two
    bytes inline, longer ones through `long_length`.  An item that runs past ``end`` ends
    the run there, and the caller's final ``pos != end`` test refuses it (nothing is
    sliced here, so that test is enough); reading past the end of the buffer raises
    IndexError, explained by the caller (``overrun``).  tests/wirefmt/test_scan_runs.py compares
    every edge with the generic loop.
    """
    tag = src[pos]
    append = spans.append
    while True:
        n = src[pos + 1]
        if n < 128:
            q = pos + 2
            e = q + n
        else:
            b = src[pos + 2]
            if b < 128:
                q = pos + 3
                e = q + ((n & 127) | (b << 7))
            else:
                q, e = long_length(m, src, pos + 1, start, end, _overrun)
        append(q)
        append(e)
        pos = e
        if pos >= end or src[pos] != tag:
            return pos


#: The private keys a generated ``make_child`` sets before it scans (`scansource._HEADER_CHILD`).
_CHILD_KEYS = frozenset({"_buf", "_start", "_end", "_parent", "_key", "_idx", "_depth"})
_PLAIN_VALUES = (str, int, float)


def _memo_store(memo: dict, key: bytes, d: dict) -> None:
    """Keep the fields a scan decoded into ``d`` under the bytes ``key`` (the ``memo`` scan hint),
    if they are all immutable (str, int, float) and the scan left nothing else: a bool is
    not kept (``type(v)`` is exact), nor a container, a span waiting in ``_lazy``, unknown
    fields or bytes (a memoryview into this buffer)."""
    out = {}
    for k, v in d.items():
        if k[0] == "_":
            if k not in _CHILD_KEYS:
                memo[key] = NOT_KEPT
                return
        elif type(v) in _PLAIN_VALUES:
            out[k] = v
        else:
            memo[key] = NOT_KEPT
            return
    memo[key] = out


def _lazy_items(msg, name: str):
    """An empty `RepeatedMessages` for ``msg``'s field ``name``, put in place for the scan to
    add spans to: the field of a message too large to make its items at once
    (the ``eager_span`` scan hint)."""
    seq = msg.__dict__[name] = new_messages(msg, name, msg._classes[name], [])
    return seq


def _defer_items(msg, name: str, start: int, end: int):
    """The field ``name`` of ``msg`` (a `MessageList`) as a lazy `RepeatedMessages` of the
    items made so far and the item at ``start:end``, which a generated scan could not make
    (its DecodeError is raised when a reader reaches it, as if made on first access) or
    the generic scan met (a tag the generated one does not read inline)."""
    d = msg.__dict__
    seq = d[name] = d[name]._to_lazy()
    seq._add_span(start, end)
    return seq


#: A memo entry for bytes whose scan left more than plain values (`_memo_store`): scan them.
NOT_KEPT: dict = {}


_SCANNER_HELPERS = {
    "memo_store": _memo_store, "NOT_KEPT": NOT_KEPT, "long_len": long_length, "span_run": _span_run,
    "new": _new, "HELD": HELD, "MAX_DEPTH": MAX_DEPTH, "too_deep": _too_deep, "slow": _slow, "overrun": _overrun,
    "read_varint": read_varint, "read_short_varint": read_short_varint, "to_int32": to_int32, "float32_nan": float32_nan,
    "new_repeated": new_repeated, "RS": RepeatedScalars, "RM": RepeatedMessages, "append": list.append, "DecodeError": DecodeError, "with_path": _with_path,
    "drop_replaced_member": _drop_replaced_member, "ML": MessageList, "defer_items": _defer_items,
    "lazy_items": _lazy_items,
}


def decode_packed(kind: int, src: Buffer, spans: list[int]) -> list:
    out: list = []
    varint = WIRE_TYPE[kind] == VARINT
    for i in range(0, len(spans), 2):
        a, b = spans[i], spans[i + 1]
        out.extend(unpack_varints(kind, src, a, b) if varint else unpack_fixed(kind, src, a, b))
    return out


def tag_table(spec: MessageSpec, registry: Registry, checks: dict) -> dict:
    """tag -> entry (see `_scan`'s comment) for every tag the generic scan decodes as a known field."""
    table = {}
    for f in spec.fields:
        sibs = tuple(n for n in spec.oneofs[f.oneof] if n != f.name) if f.oneof else ()
        wt = WIRE_TYPE[f.kind]
        key = f.number << 3
        kind = f.kind
        check = checks.get(f.name)
        closed = kind == ENUM and registry.enum(f.type_name).closed
        values = frozenset(registry.enum(f.type_name).values.values()) if closed else None

        def entry(action: int) -> tuple:
            return action, f.name, kind, check, values, sibs

        if kind == MESSAGE:
            table[key | LEN] = entry(A_RMSG if f.repeated else A_MSG)
        elif kind == STRING:
            table[key | LEN] = entry(A_RSTR if f.repeated else A_STR)
        elif kind == BYTES:
            table[key | LEN] = entry(A_RBYTES if f.repeated else A_BYTES)
        elif f.repeated and closed:
            table[key | VARINT] = table[key | LEN] = entry(A_RENUM)
        elif f.repeated:
            table[key | wt] = entry(A_RVARINT if wt == VARINT else A_RFIXED)
            table[key | LEN] = entry(A_PACKED)
        elif closed:
            table[key | wt] = entry(A_ENUM)
        elif kind == ENUM or kind == INT32:  # an open (proto3) enum keeps any int32 value
            table[key | wt] = entry(A_INT32)
        elif kind == INT64:
            table[key | wt] = entry(A_INT64)
        elif wt == VARINT:
            table[key | wt] = entry(A_VARINT)
        elif wt in (I32, I64):
            table[key | wt] = entry(A_FIXED)
        # GROUP fields are kept as unknown fields.
    return table


# -- scanners --------------------------------------------------------------------------
# Each class scans through two functions: ``_make_child`` (create a child over its
# parent's buffer and scan it) and ``_scan_into`` (scan a span into an existing message).
# Normally both are generated per type on first use (`scangen`): compiling them all would
# cost every import ~0.1 s for types most programs never read.  With the generated
# scanners switched off, every class uses the generic `_scan`, the reference behaviour;
# the test suite runs its corpus differential tests both ways.

#: Whether classes scan with generated code; see `use_generated_scanners`.
_generated = True
#: Every class built so far (weak references), so that switching reaches them all.
_built: list = []


def use_generated_scanners(generated: bool = True, classes: Iterable[type[Message]] | None = None) -> None:
    """Scan with generated code (the default) or with the generic loop only.

    For tests and debugging: both paths must decode every input identically, and the
    test suite runs its corpus and protobuf-semantics tests both ways.  ``classes``
    limits the switch to those classes; by default it applies to every class built so
    far and to those built later.
    """
    global _generated
    if classes is None:
        _generated = generated
        _built[:] = [r for r in _built if r() is not None]
        classes = [r() for r in _built]
    for cls in classes:
        if generated:
            cls._make_child = staticmethod(_first_make_child)
            cls._scan_into = staticmethod(_first_scan_into)
        else:
            cls._make_child = staticmethod(_generic_child_maker())
            cls._scan_into = staticmethod(_generic_scan_into)


def install_scanners(classes: Iterable[type[Message]]) -> None:
    """Give newly built classes the scanners currently in use (`build_classes` calls it)."""
    classes = list(classes)
    _built.extend(_weakref(c) for c in classes)
    use_generated_scanners(_generated, classes)


def _generic_scan_into(msg, src, mv, pos: int, end: int) -> None:
    try:
        _scan(msg, src, mv, pos, end)
    except DecodeError as exc:
        raise _with_path(msg, exc)


def _generic_child_maker() -> Callable:
    """The ``make_child`` that scans with the generic loop only (`use_generated_scanners(False)`),
    made on first use: compiling it at import would cost every process that never needs it."""
    maker = globals().get("_generic_make_child")
    if maker is None:
        maker = generic_child_maker({**_SCANNER_HELPERS, "generic_scan_into": _generic_scan_into})
        globals()["_generic_make_child"] = maker
    return maker


def __getattr__(name: str) -> Callable:
    if name == "_generic_make_child":
        return _generic_child_maker()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: What every generated scan function passes through as it is made; see `wrap_generated_scanners`.
_wrap: Callable | None = None


def wrap_generated_scanners(wrap: Callable[[Callable], Callable] | None) -> None:
    """Pass every generated scan function through ``wrap`` (None: no longer).

    The generated functions are compiled (or loaded from the code cache) at run time, so
    no import hook sees them: a coverage-guided fuzzer that must instrument them (atheris:
    ``wrap_generated_scanners(atheris.instrument_func)``) gets each one here, as it is made.
    Both scanners of every class built so far are made now, through ``wrap``, so the cost
    comes at start-up rather than in the first input (build every class first to have them
    all: iterate the `ClassTable`); those made later go through it as they are made.
    Classes switched to the generic loop (`use_generated_scanners`) keep it.
    """
    global _wrap
    _wrap = wrap
    _built[:] = [r for r in _built if r() is not None]
    for ref in _built:
        cls = ref()
        if cls is not None and cls.__dict__["_scan_into"].__func__ is not _generic_scan_into:
            cls._make_child = staticmethod(_build(cls, "make_child"))
            cls._scan_into = staticmethod(_build(cls, "scan"))


def _build(cls, which: str) -> Callable:
    fn = build_scanner(cls, cls._registry, _SCANNER_HELPERS, which)
    return fn if _wrap is None else _wrap(fn)


def _first_make_child(cls, parent, start: int, end: int, key: str, idx: int = HELD):
    # A caller may hold this stub in a local across many calls: generate only once.
    return _built_make_child(cls)(cls, parent, start, end, key, idx)


def _built_make_child(cls) -> Callable:
    """``cls._make_child``, generated now if ``cls`` still has the first-call stub."""
    if cls.__dict__["_make_child"].__func__ is _first_make_child:
        cls._make_child = staticmethod(_build(cls, "make_child"))
    return cls._make_child


_containers.first_make_child[:] = [_first_make_child, _built_make_child]


def _first_scan_into(msg, src, mv, pos: int, end: int) -> None:
    cls = type(msg)
    if cls.__dict__["_scan_into"].__func__ is _first_scan_into:
        cls._scan_into = staticmethod(_build(cls, "scan"))
    cls._scan_into(msg, src, mv, pos, end)
