"""The source of each message type's scan functions, written from the schema tables.

Why generate code: a full walk of a large graph is dominated by the loop that splits a
message into fields.  The generic loop (`scan._scan`) looks every tag up in a table
and branches on the resulting action; here each message type gets its own loop in which
the tags of its common fields are integer constants in one ``if``/``elif`` chain (in field
number order, which is the order protobuf writes them) and field names are constants.
That halves the bytecodes spent per field (benchmarks/RESULTS.md, decoder tuning).

Only the shapes that occur in bulk are inlined: strings, bytes, submessages, int32/int64
and open or closed enums, floats, and unpacked repeated int32/int64/float elements, with
one-byte tags.  Every other field, and every unusual case of an inlined one (a length or
value that needs more than one varint byte where the inline path cannot take it, an enum
value outside a closed enum, invalid UTF-8, a repeated field mixing packed and unpacked
runs), goes to ``slow``: the generic loop applied to that one field, which is the
reference behaviour.  The differential and property tests run through both paths.
What the schema cannot say (which fields come in long runs, which are read with their
owner, the order of the common fields) the layer above says per type, as scan hints
(`wirefmt.scangen`); this module follows them and names no type of its own.

Bounds: reading past the end of the buffer raises IndexError (or struct.error), turned
into a precise DecodeError by ``overrun``.  A field that runs past the end of its message
but not of the buffer is caught by the final ``pos != end`` check; strings and bytes whose
length takes more than one byte are checked before slicing, so a forged length can never
make us copy more than 127 bytes beyond the message.

The source is written by an `Emitter`, a line at a time, by functions that each write one
piece (a field's branch, the loop, the header) at the indentation of the block they are
called in.  Names the generated code uses and where they come from: `scan._SCANNER_HELPERS`
(functions and classes), `scangen.float_helpers` (``unpack_float``, ``StructError``: only in
code that reads a float inline), `scangen.scan_consts` (``CLASS_n``, ``VALUES_n``), the class's
value checks (``CHECK_n``), and for a memo ``MEMO``, ``MEMO_SPAN``, ``MEMO_ENTRIES``
(`scangen.build_scanner`).

This module is imported only to write source: a process whose scan code all comes from
the code cache (`wirefmt.scangen`) never imports it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Callable

    from .message import Message
    from .scangen import ScanHints
    from .schema import EnumSpec, FieldSpec

from .schema import BYTES, ENUM, FLOAT, I32, INT32, INT64, LEN, MESSAGE, STRING, VARINT, MessageSpec, Registry


class Emitter:
    """Python source, written a line at a time at the indentation of the open blocks.

    ``with out.block("if x:"):`` writes the header and indents what is written inside;
    `line` writes one line at the current indentation.  So each piece of the generated
    code is written by a function that does not know how deep it sits.  (The emitter is
    its own context manager: `contextlib` would import `collections` and more into the
    first process after a change of the generator, which `tests/test_startup.py` keeps
    free of them.)
    """

    def __init__(self, depth: int = 0) -> None:
        self._lines: list[str] = []
        self._pad = "    " * depth
        self._outer: list[str] = []  # the indentation outside each open block

    def line(self, text: str) -> None:
        self._lines.append(f"{self._pad}{text}\n")

    def block(self, header: str) -> Emitter:
        """Write ``header`` and indent until the ``with`` statement it is used in ends."""
        self.line(header)
        self._outer.append(self._pad)
        self._pad += "    "
        return self

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        self._pad = self._outer.pop()

    def source(self) -> str:
        return "".join(self._lines)


# What each hint that names fields accepts, and how a refusal says it.
_HINT_FIELDS: dict[str, tuple[Callable[[FieldSpec], bool], str]] = {
    "hot_order": (lambda f: True, "a field of the type"),
    "runs": (lambda f: f.repeated and f.kind == MESSAGE and f.number < 16, "a repeated message field numbered 1-15"),
    "eager_items": (lambda f: f.repeated and f.kind == MESSAGE, "a repeated message field"),
    "eager_empty": (lambda f: f.repeated and f.kind != MESSAGE, "a repeated scalar field"),
}


def checked_hints(spec: MessageSpec, hints: ScanHints) -> ScanHints:
    """``hints`` (every key, `scangen.hints_by_type`) with names as tuples, ``eager_span``
    an int and ``memo`` a bool, after checking that each names fields of ``spec`` that can
    take it; ValueError names the first that cannot.  Run before any source is written, so
    no cache entry is ever made under hints that cannot apply."""
    h: dict = dict(hints)
    for key, (ok, rule) in _HINT_FIELDS.items():
        h[key] = names = tuple(h[key])
        for name in names:
            f = spec.by_name.get(name)
            if f is None or not ok(f):
                raise ValueError(f"scan hints for {spec.name}: {key} {name!r} is not {rule}")
    h["eager_span"] = int(h["eager_span"])
    h["memo"] = bool(h["memo"])
    if h["eager_span"] < 0:
        raise ValueError(f"scan hints for {spec.name}: eager_span {h['eager_span']} is negative")
    return h  # type: ignore[return-value]


class _Scan:
    """What the pieces of one type's scan share: the type, its hints, and the container
    locals (``L<number>`` for scalars and strings, ``R<number>`` for message sequences) that
    the code keeps from the header on, so that a field's first element needs no dict lookup.

    Every call of ``slow`` may create or replace containers, so it reloads them all (`slow`);
    which locals there are is decided before anything is written (`_local_name`)."""

    def __init__(self, spec: MessageSpec, registry: Registry, hints: ScanHints,
                 cls_of: Callable[[FieldSpec], type[Message]], consts: dict) -> None:
        self.spec = spec
        self.registry = registry
        self.hints = checked_hints(spec, hints)
        self.cls_of = cls_of
        self.consts = consts
        self.locals = sorted(local for f in spec.fields if (local := _local_name(f)))
        #: Whether a branch reads a float32 inline (`_read_float`): only then does the code
        #: name ``unpack_float`` and catch its ``StructError`` (`scangen.float_helpers`).
        self.reads_floats = False

    def slow(self, out: Emitter) -> None:
        """Hand the field at ``pos`` to the generic loop, then reload what it may change."""
        out.line("pos = slow(m, src, mv, pos, end)")
        out.line('lazy = d.get("_lazy")')
        if self.locals:
            # One short line (the branch bodies must stay short, see `_loop`): a map unpacked.
            names = tuple(self.field_of(local) for local in self.locals)
            out.line(f"{', '.join(self.locals)}, = map(d.get, {names!r})")

    def field_of(self, local: str) -> str:
        """The field a container local holds."""
        return self.spec.by_number[int(local[1:])].name

    def class_const(self, f: FieldSpec) -> str:
        """The name of the constant holding ``f``'s message class (noted in ``consts``)."""
        self.consts[f"CLASS_{f.number}"] = self.cls_of(f)
        return f"CLASS_{f.number}"


def _local_name(f: FieldSpec) -> str | None:
    """The container local of ``f``'s inline branch, if it has one (see `_Scan`).

    A field of two-byte tag that a hot order leaves to ``slow`` (`_chain`) keeps its local
    too: set in the header and reloaded, never used (as the generator has always written it).
    """
    if not f.repeated or _tag_of(f) is None:
        return None
    if f.kind == MESSAGE:
        return f"R{f.number}"
    if f.kind in (STRING, INT64, INT32, FLOAT):
        return f"L{f.number}"
    return None


def _tag_of(f: FieldSpec) -> int | None:
    """The tag of ``f``'s inline branch (one or two bytes), or None if it has none."""
    kind = f.kind
    if kind in (STRING, MESSAGE) or (kind == BYTES and not f.repeated):
        tag = f.number << 3 | LEN
    elif kind in (INT64, INT32) or (kind == ENUM and not f.repeated):
        tag = f.number << 3 | VARINT
    elif kind == FLOAT:
        tag = f.number << 3 | I32
    else:
        return None
    return tag if tag < 1 << 14 else None


# -- the pieces of a field's branch ------------------------------------------------------
# Each writes at the indentation of the branch body; ``t`` is the tag's length in bytes,
# so the field's value starts at ``pos + t``.

def _read_length(out: Emitter, t: int) -> None:
    """Set ``q`` and ``e`` to the start and end of the length-delimited value after the tag.
    A one-byte length inline; longer ones through `long_length` (keeps the body short)."""
    out.line(f"n = src[pos + {t}]")
    with out.block("if n < 128:"):
        out.line(f"q = pos + {t + 1}")
        out.line("e = q + n")
    with out.block("else:"):
        out.line(f"q, e = long_len(m, src, pos + {t}, start, end, overrun)")


def _read_varint(out: Emitter, t: int, kind: int) -> None:
    """Set ``v`` to the varint after the tag, as a signed int64 or int32, and move ``pos``."""
    out.line(f"v = src[pos + {t}]")
    with out.block("if v < 128:"):
        out.line(f"pos += {t + 1}")
    with out.block("else:"):
        out.line(f"v, pos = read_varint(src, pos + {t}, end)")
        if kind == INT64:
            with out.block("if v >> 63:"):
                out.line("v -= 1 << 64")
        else:
            with out.block("if v > 0x7FFFFFFF:"):
                out.line("v = to_int32(v)")


def _read_float(out: Emitter, t: int) -> None:
    """Set ``v`` to the float after the tag (``pos`` is moved by the caller)."""
    out.line(f"v = unpack_float(src, pos + {t})[0]")
    with out.block("if v != v:  # NaN: keep its exact bits"):
        out.line(f"v = float32_nan(src, pos + {t})")


def _drop_siblings(out: Emitter, spec: MessageSpec, f: FieldSpec) -> None:
    """Setting a oneof member clears the others, decoded or still lazy."""
    if not f.oneof:
        return
    for other in spec.oneofs[f.oneof]:
        if other != f.name:
            out.line(f"d.pop({other!r}, None)")
            with out.block(f"if lazy and {other!r} in lazy:"):
                out.line(f"drop_replaced_member(m, lazy, {other!r})")


def _new_list(out: Emitter, scan: _Scan, f: FieldSpec) -> None:
    """Create the repeated scalar container on the field's first element, in its local.

    If packed chunks of the field came first (they wait in ``_lazy``), the generic path
    keeps the order exact; strings are never packed, so no chunk of theirs can wait.
    """
    local = f"L{f.number}"
    with out.block(f"if {local} is None:"):
        if f.kind != STRING:
            with out.block(f"if lazy and {f.name!r} in lazy:"):
                scan.slow(out)
                out.line("continue")
        # new_repeated((), m, check) without the call: two per node
        out.line(f"{local} = d[{f.name!r}] = RS()")
        out.line(f"{local}._owner = m")
        out.line(f"{local}._check = CHECK_{f.number}")


def _new_sequence(out: Emitter, f: FieldSpec, cls: str, spans: str) -> None:
    """``seq = R<n> = d[name]``, a `RepeatedMessages` with ``spans``, made without its
    ``__init__``'s call."""
    out.line(f"seq = R{f.number} = new(RM)")
    out.line("seq._owner = m")
    out.line(f"seq._name = {f.name!r}")
    out.line(f"seq._cls = {cls}")
    out.line(f"seq._spans = {spans}")
    out.line("seq._items = None")
    out.line("seq._forget_cb = None")
    out.line(f"d[{f.name!r}] = seq")


def _run_branch(out: Emitter, scan: _Scan, f: FieldSpec) -> None:
    """A field written as one long run (the ``runs`` scan hint): the run is read by one call of
    `span_run`, whatever the length of each item's length."""
    cls = scan.class_const(f)
    with out.block(f"if R{f.number} is None:"):
        _new_sequence(out, f, cls, "[]")
    out.line(f"pos = span_run(m, src, pos, start, end, R{f.number}._spans)")


def _eager_items_branch(out: Emitter, scan: _Scan, f: FieldSpec, t: int) -> None:
    """Items made now, into a `MessageList` (the ``eager_items`` scan hint); an item that cannot
    be made turns the field into a lazy sequence (`defer_items`), which the ``else``
    branch then extends.  An owner over the ``eager_span`` scan hint keeps the field lazy."""
    cls, local, name = scan.class_const(f), f"R{f.number}", f.name
    _read_length(out, t)
    with out.block(f"if {local} is None:"):
        with out.block(f"if end - start > {scan.hints['eager_span']}:  # a large owner: lazy, see eager_span"):
            out.line(f"{local} = lazy_items(m, {name!r})")
        with out.block("else:"):
            _new_message_list(out, local, name, cls)
    with out.block(f"if type({local}) is ML:"):
        with out.block("try:"):
            out.line(f"append({local}, {cls}._make_child({cls}, m, q, e, {name!r}, HELD))")
        with out.block("except DecodeError:"):
            out.line(f"{local} = defer_items(m, {name!r}, q, e)")
    with out.block("else:"):
        out.line(f"{local}._add_span(q, e)")
    out.line("pos = e")


def _sequence_branch(out: Emitter, scan: _Scan, f: FieldSpec, t: int) -> None:
    """A repeated message field's spans, straight into the field's sequence."""
    cls, local = scan.class_const(f), f"R{f.number}"
    _read_length(out, t)
    with out.block(f"if {local} is None:"):
        _new_sequence(out, f, cls, "[q, e]")
    with out.block("else:"):
        out.line(f"spans = {local}._spans")
        out.line("spans.append(q)")
        out.line("spans.append(e)")
    out.line("pos = e")


def _submessage_branch(out: Emitter, scan: _Scan, f: FieldSpec, t: int) -> None:
    """A singular submessage: its span waits in ``_lazy`` (several when it is merged)."""
    _read_length(out, t)
    _drop_siblings(out, scan.spec, f)
    with out.block("if lazy is None:"):
        out.line('lazy = d["_lazy"] = {}')
    out.line(f"spans = lazy.get({f.name!r})")
    with out.block("if spans is None:"):
        out.line(f"lazy[{f.name!r}] = [q, e]")
    with out.block("else:"):
        out.line("spans.append(q)")
        out.line("spans.append(e)")
    out.line("pos = e")


def _text_branch(out: Emitter, scan: _Scan, f: FieldSpec, t: int) -> None:
    """A string (decoded now: invalid UTF-8 raises UnicodeDecodeError, for ``slow``) or
    bytes (a memoryview into the buffer)."""
    value = "src[q:e].decode()" if f.kind == STRING else "mv[q:e]"
    _read_length(out, t)
    if f.repeated:
        _new_list(out, scan, f)
        out.line(f"append(L{f.number}, {value})")
    else:
        _drop_siblings(out, scan.spec, f)
        out.line(f"d[{f.name!r}] = {value}")
    out.line("pos = e")


def _closed_enum(registry: Registry, f: FieldSpec) -> EnumSpec | None:
    """The enum of ``f`` if it is a closed one (unknown values kept as unknown fields)."""
    if f.kind != ENUM or f.type_name is None:
        return None
    enum = registry.enum(f.type_name)
    return enum if enum.closed else None


def _closed_enum_branch(out: Emitter, scan: _Scan, f: FieldSpec, t: int, enum: EnumSpec) -> None:
    """One-byte values of a closed enum inline; anything else (an unknown value is kept as
    an unknown field) goes to the generic path."""
    scan.consts[f"VALUES_{f.number}"] = frozenset(enum.values.values())
    out.line(f"v = src[pos + {t}]")
    with out.block(f"if v < 128 and v in VALUES_{f.number}:"):
        _drop_siblings(out, scan.spec, f)
        out.line(f"d[{f.name!r}] = v")
        out.line(f"pos += {t + 1}")
    with out.block("else:"):
        scan.slow(out)


def _varint_branch(out: Emitter, scan: _Scan, f: FieldSpec, t: int) -> None:
    """An int32, int64 or open enum value, or an unpacked element of a repeated one."""
    if f.repeated:
        _new_list(out, scan, f)
        _read_varint(out, t, f.kind)
        out.line(f"append(L{f.number}, v)")
    else:
        _read_varint(out, t, f.kind)
        _drop_siblings(out, scan.spec, f)
        out.line(f"d[{f.name!r}] = v")


def _float_branch(out: Emitter, scan: _Scan, f: FieldSpec, t: int) -> None:
    """A float value, or an unpacked element of a repeated one."""
    scan.reads_floats = True
    if f.repeated:
        _new_list(out, scan, f)
        _read_float(out, t)
        out.line(f"append(L{f.number}, v)")
    else:
        _read_float(out, t)
        _drop_siblings(out, scan.spec, f)
        out.line(f"d[{f.name!r}] = v")
    out.line(f"pos += {t + 4}")


def _branch(out: Emitter, scan: _Scan, f: FieldSpec, tag: int) -> None:
    """The body of the inline branch for field ``f`` (whose `_tag_of` is ``tag``)."""
    t = 1 if tag < 128 else 2
    kind = f.kind
    if kind == MESSAGE and f.repeated:
        if t == 1 and f.name in scan.hints["runs"]:
            _run_branch(out, scan, f)
        elif f.name in scan.hints["eager_items"]:
            _eager_items_branch(out, scan, f, t)
        else:
            _sequence_branch(out, scan, f, t)
    elif kind == MESSAGE:
        _submessage_branch(out, scan, f, t)
    elif kind in (STRING, BYTES):
        _text_branch(out, scan, f, t)
    elif (enum := _closed_enum(scan.registry, f)) is not None:
        _closed_enum_branch(out, scan, f, t, enum)
    elif kind == FLOAT:
        _float_branch(out, scan, f, t)
    else:
        _varint_branch(out, scan, f, t)


# -- the loop over a message's fields ----------------------------------------------------

def _chain(out: Emitter, scan: _Scan) -> None:
    """The if/elif chain over tags.

    One-byte tags (fields 1-15) are compared directly; two-byte tags (fields 16-2047)
    in a nested chain entered when the first byte says so, placed where its first field
    stands in the order (the ``hot_order`` scan hint, else field numbers).  Of a type with a hot
    order, the nested chain holds its hot fields only, so that the test that enters it
    jumps over a short body.
    """
    hot = scan.hints["hot_order"]
    fields = sorted(scan.spec.fields, key=lambda f: (hot.index(f.name) if f.name in hot else len(hot), f.number))
    entries: list[tuple[int, FieldSpec] | None] = []  # None: the nested chain goes here
    long_: list[tuple[int, FieldSpec]] = []
    for f in fields:
        tag = _tag_of(f)
        if tag is None:
            continue
        if tag < 128:
            entries.append((tag, f))
        elif not hot or f.name in hot:
            if not long_:
                entries.append(None)
            long_.append((tag, f))
    if not entries:
        with out.block("if False:"):
            out.line("pass")
    for i, entry in enumerate(entries):
        kw = "elif" if i else "if"
        if entry is not None:
            with out.block(f"{kw} tag == {entry[0]}:"):
                _branch(out, scan, entry[1], entry[0])
            continue
        with out.block(f"{kw} tag > 127:"):
            out.line("tag = (tag & 127) | (src[pos + 1] << 7)")
            for j, (tag, f) in enumerate(long_):
                with out.block(f"{'elif' if j else 'if'} tag == {tag}:"):
                    _branch(out, scan, f, tag)
            with out.block("else:"):
                scan.slow(out)


def _loop(out: Emitter, scan: _Scan) -> None:
    """The loop over the fields, and its end test.

    Tuned for CPython's specialising interpreter (3.11+): a comparison is specialised
    (COMPARE_OP_INT_JUMP) only when the conditional jump after it needs no EXTENDED_ARG,
    so every hot test jumps a short way: the end test jumps over a `break` (not past the
    whole loop, as ``while pos < end`` would), and the branch bodies are kept under 255
    code units by calling out for the rare cases (`long_length`, ``slow``).  Measured:
    benchmarks/RESULTS.md ("Measurements behind the design").
    """
    with out.block("while True:"):
        with out.block("try:"):
            with out.block("while True:"):
                with out.block("if pos >= end:"):
                    out.line("break")
                out.line("tag = src[pos]")
                _chain(out, scan)
                with out.block("else:"):
                    scan.slow(out)
            out.line("break")
        with out.block("except UnicodeDecodeError:  # the generic path decides: bytes (proto2) or an error (proto3)"):
            scan.slow(out)
        with out.block("except (IndexError, StructError):" if scan.reads_floats else "except IndexError:"):
            out.line("overrun(m, src, start, end)")
        with out.block("except DecodeError as exc:  # from an inline read_varint: name the message"):
            out.line("raise with_path(m, exc)")
    with out.block("if pos != end:"):
        out.line("overrun(m, src, start, end)")


def _local_init(out: Emitter, scan: _Scan, fresh: bool) -> None:
    """Set the container locals: None in a message made now (its dict holds no field yet),
    else what the dict holds."""
    for local in scan.locals:
        out.line(f"{local} = None" if fresh else f"{local} = d.get({scan.field_of(local)!r})")


# -- make_child: a child created over its parent's buffer, then scanned --------------------

def _child_header(out: Emitter) -> None:
    """Create the child ``m`` of ``parent`` over ``start:end`` and set up the scan's locals."""
    out.line("m = new(cls)")
    out.line("d = m.__dict__")
    out.line('buf = d["_buf"] = parent._buf')
    out.line('d["_start"] = start')
    out.line('d["_end"] = end')
    out.line('d["_parent"] = parent')
    out.line('d["_key"] = key')
    with out.block("if idx != HELD:  # the class default: stored only for a weakly held item"):
        out.line('d["_idx"] = idx')
    out.line('depth = d["_depth"] = parent._depth + 1')
    with out.block("if depth > MAX_DEPTH:"):
        out.line("too_deep(m, start)")
    out.line("src = buf[0]")
    out.line("mv = buf[1]")
    out.line("pos = start")
    out.line("lazy = None")


def _memo_lookup(out: Emitter, scan: _Scan) -> None:
    """A span seen before (the ``memo`` scan hint): copy what its scan decoded and return."""
    out.line("key = None")
    with out.block("if end - start <= MEMO_SPAN:"):
        out.line("key = src[start:end]")
        with out.block("if type(key) is not bytes:"):
            out.line("key = bytes(key)")
        out.line("hit = MEMO.get(key)")
        with out.block("if hit is not None:"):
            with out.block("if hit is NOT_KEPT:  # bytes seen before whose scan left more than plain values"):
                out.line("key = None")
            with out.block("else:"):
                out.line("d.update(hit)")
                _eager_empty(out, scan, after_memo_hit=True)
                _eager_items_empty(out, scan)
                out.line("return m")


def _memo_store(out: Emitter) -> None:
    """Offer what this scan decoded to the memo (`scan._memo_store` decides)."""
    with out.block("if key is not None and len(MEMO) < MEMO_ENTRIES:"):
        out.line("memo_store(MEMO, key, d)")


def _eager_empty(out: Emitter, scan: _Scan, after_memo_hit: bool) -> None:
    """Put in place the empty containers of the ``eager_empty`` scan hint the scan did not fill.

    The container is the one a read would have made (owner, element check), so mutation,
    copy-on-write and encoding are unchanged; fields with packed chunks waiting in
    ``_lazy`` are left to that read.  A memo hit holds plain values only, and nothing is lazy.
    """
    for name in scan.hints["eager_empty"]:
        number = scan.spec.by_name[name].number
        if after_memo_hit:
            _new_empty(out, name, number)
        else:
            with out.block(f"if {name!r} not in d and not (lazy and {name!r} in lazy):"):
                _new_empty(out, name, number)


def _new_empty(out: Emitter, name: str, number: int) -> None:
    out.line(f"E = d[{name!r}] = RS()")
    out.line("E._owner = m")
    out.line(f"E._check = CHECK_{number}")


def _eager_items_empty(out: Emitter, scan: _Scan) -> None:
    """An ``eager_items`` field the scan did not meet gets its empty `MessageList` now.

    Its reader iterates it with the owner (every node's ``attribute``, most of them absent
    in an export); without it, that read is a descriptor call from C that makes a lazy
    sequence, whose iteration is a Python call more.  The list is the one the scan makes
    for a present field (owner, name, item class), so a change through it is a change of
    the owner, as any."""
    for name in scan.hints["eager_items"]:
        with out.block(f"if {name!r} not in d:"):
            _new_message_list(out, "E", name, scan.class_const(scan.spec.by_name[name]))


def _new_message_list(out: Emitter, local: str, name: str, cls: str) -> None:
    """``local`` and the owner's field ``name`` become a new, empty `MessageList` of ``cls`` items."""
    out.line(f"{local} = d[{name!r}] = ML()")
    out.line(f"{local}._owner = m")
    out.line(f"{local}._name = {name!r}")
    out.line(f"{local}._cls = {cls}")


def scan_source(spec: MessageSpec, registry: Registry, consts: dict, cls_of: Callable[[FieldSpec], type[Message]],
                hints: ScanHints) -> tuple[str, set]:
    """The loop shared by the two generated functions (as written inside them), and the
    names of the locals it keeps containers in; the constants it names are added to
    ``consts``."""
    scan = _Scan(spec, registry, hints, cls_of, consts)
    out = Emitter(depth=1)
    _loop(out, scan)
    return out.source(), set(scan.locals)


def source(spec: MessageSpec, registry: Registry, cls_of: Callable[[FieldSpec], type[Message]], which: str,
           hints: ScanHints) -> str:
    """The whole source of ``which`` ("make_child" or "scan") for ``spec``.  A
    ``make_child`` of a type whose ``memo`` hint is set keeps and copies decoded spans."""
    scan = _Scan(spec, registry, hints, cls_of, {})
    out = Emitter()
    if which == "make_child":
        with out.block("def make_child(cls, parent, start, end, key, idx=HELD):"):
            _child_header(out)
            if scan.hints["memo"]:
                _memo_lookup(out, scan)
            _local_init(out, scan, fresh=True)
            _loop(out, scan)
            if scan.hints["memo"]:
                _memo_store(out)
            _eager_empty(out, scan, after_memo_hit=False)
            _eager_items_empty(out, scan)
            out.line("return m")
    else:
        with out.block("def scan(msg, src, mv, pos, end):"):
            out.line("m = msg")
            out.line("d = m.__dict__")
            out.line("start = pos")
            out.line('lazy = d.get("_lazy")')
            _local_init(out, scan, fresh=False)
            _loop(out, scan)
    return out.source()


def generic_child_source() -> str:
    """The ``make_child`` whose scan is the generic loop: the same header as the generated
    ones, so that creating a child is written once whichever scan follows."""
    out = Emitter()
    with out.block("def make_child(cls, parent, start, end, key, idx=HELD):"):
        _child_header(out)
        out.line("generic_scan_into(m, src, mv, pos, end)")
        out.line("return m")
    return out.source()
