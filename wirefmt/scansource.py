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

Bounds: reading past the end of the buffer raises IndexError (or struct.error), turned
into a precise DecodeError by ``overrun``.  A field that runs past the end of its message
but not of the buffer is caught by the final ``pos != end`` check; strings and bytes whose
length takes more than one byte are checked before slicing, so a forged length can never
make us copy more than 127 bytes beyond the message.

This module is imported only to write source: a process whose scan code all comes from
the code cache (`wirefmt.scangen`) never imports it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Callable

    from .message import Message
    from .schema import FieldSpec

from .scanhints import NO_HINTS, ScanHints
from .schema import BYTES, ENUM, FLOAT, I32, INT32, INT64, LEN, MESSAGE, STRING, VARINT, MessageSpec, Registry

_HEADER_CHILD = '''\
def make_child(cls, parent, start, end, key, idx=HELD):
    m = new(cls)
    d = m.__dict__
    buf = d["_buf"] = parent._buf
    d["_start"] = start
    d["_end"] = end
    d["_parent"] = parent
    d["_key"] = key
    if idx != HELD:  # the class default: stored only for a weakly held item
        d["_idx"] = idx
    depth = d["_depth"] = parent._depth + 1
    if depth > MAX_DEPTH:
        too_deep(m, start)
    src = buf[0]
    mv = buf[1]
    pos = start
    lazy = None
'''

_MEMO_LOOKUP = '''\
    key = None
    if end - start <= MEMO_SPAN:
        key = src[start:end]
        if type(key) is not bytes:
            key = bytes(key)
        hit = MEMO.get(key)
        if hit is not None:
            if hit is NOT_KEPT:  # bytes seen before whose scan left more than plain values
                key = None
            else:
                d.update(hit)
                return m
'''

_MEMO_STORE = '''\
    if key is not None and len(MEMO) < MEMO_ENTRIES:
        memo_store(MEMO, key, d)
'''

def _eager_empty(spec: MessageSpec, hints: ScanHints, after_memo_hit: bool) -> str:
    """The source that puts the empty containers of ``hints.eager_empty`` in place.

    The container is the one a read would have made (owner, element check), so mutation,
    copy-on-write and encoding are unchanged; fields with packed chunks waiting in
    ``_lazy`` are left to that read."""
    out = []
    for name in hints.eager_empty:
        f = spec.by_name[name]
        indent = "    "
        if not after_memo_hit:  # a memo hit holds plain values only, and nothing is lazy
            out.append(f"    if {name!r} not in d and not (lazy and {name!r} in lazy):\n")
            indent = "        "
        out.append(f"{indent}E = d[{name!r}] = RS()\n{indent}E._owner = m\n{indent}E._check = CHECK_{f.number}\n")
    return "".join(out)

_HEADER_SCAN = '''\
def scan(msg, src, mv, pos, end):
    m = msg
    d = m.__dict__
    start = pos
    lazy = d.get("_lazy")
'''

# Hot loop, tuned for CPython's specialising interpreter (3.11+): a comparison is
# specialised (COMPARE_OP_INT_JUMP) only when the conditional jump after it needs no
# EXTENDED_ARG, so every hot test jumps a short way: the end test jumps over a `break`
# (not past the whole loop, as `while pos < end` would), and the branch bodies are kept
# under 255 code units by calling out for the rare cases (`long_length`).  Measured:
# docs/ARCHITECTURE.md (start-up and speed) and benchmarks/RESULTS.md.
_LOOP_HEAD = '''\
    while True:
        try:
            while True:
                if pos >= end:
                    break
                tag = src[pos]
'''

_LOOP_TAIL = '''\
                else:
                    pos = slow(m, src, mv, pos, end)
                    lazy = d.get("_lazy")
            break
        except UnicodeDecodeError:  # the generic path decides: bytes (proto2) or an error (proto3)
            pos = slow(m, src, mv, pos, end)
            lazy = d.get("_lazy")
        except (IndexError, StructError):
            overrun(m, src, start, end)
        except DecodeError as exc:  # from an inline read_varint: name the message
            raise with_path(m, exc)
    if pos != end:
        overrun(m, src, start, end)
'''

# Length-delimited value after a tag of @L bytes: sets q (value start) and e (value end).
# A one-byte length inline; longer ones through `long_length` (keeps the body short).
_LEN = '''\
                    n = src[pos + @L]
                    if n < 128:
                        q = pos + @L1
                        e = q + n
                    else:
                        q, e = long_len(m, src, pos + @L, start, end, overrun)
'''


def _indent(text: str, levels: int) -> str:
    pad = "    " * levels
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def _sibling_pops(spec: MessageSpec, f) -> str:
    if not f.oneof:
        return ""
    out = ""
    for other in spec.oneofs[f.oneof]:
        if other != f.name:
            out += f"                    d.pop({other!r}, None)\n"
            out += (f"                    if lazy and {other!r} in lazy:\n"
                    f"                        drop_replaced_member(m, lazy, {other!r})\n")
    return out


def _new_list(f, check: str, locals_: set) -> str:
    """Create the repeated container on the field's first element, then keep it in a local.

    The local holds the field's container whenever the instance dict has one: the header
    sets it (`_local_init`), and every call of ``slow``, which may create or replace
    containers, reloads it (`_with_reloads`); so the first element needs no dict lookup.
    If packed chunks of the field came first (they wait in ``_lazy``), the generic path
    keeps the order exact.  The local's name is added to ``locals_``.
    """
    name, local = f.name, f"L{f.number}"
    locals_.add(local)
    packable = f.kind != STRING  # strings are never packed: no chunk can wait in _lazy
    return (f"                    if {local} is None:\n"
            + (f"                        if lazy and {name!r} in lazy:\n"
               f"                            pos = slow(m, src, mv, pos, end)\n"
               f"                            lazy = d.get(\"_lazy\")\n"
               f"                            continue\n" if packable else "") +
            # new_repeated((), m, check) without the call: two per node
            f"                        {local} = d[{name!r}] = RS()\n"
            f"                        {local}._owner = m\n"
            f"                        {local}._check = {check}\n")


def _local_field(spec: MessageSpec, local: str) -> str:
    """The field a container local (``L<number>`` or ``R<number>``) holds."""
    return spec.by_number[int(local[1:])].name


def _local_init(spec: MessageSpec, locals_: set, fresh: bool) -> str:
    """The header lines that set the container locals: None in a message made now (its dict
    holds no field yet), else what the dict holds."""
    return "".join(f"    {local} = None\n" if fresh else f"    {local} = d.get({_local_field(spec, local)!r})\n"
                   for local in sorted(locals_))


def _with_reloads(source: str, spec: MessageSpec, locals_: set) -> str:
    """``source`` with the container locals reloaded from the dict after every call of ``slow``
    (each is followed by its reload of ``lazy``)."""
    if not locals_:
        return source
    out = []
    for line in source.splitlines(True):
        out.append(line)
        if line.strip() == 'lazy = d.get("_lazy")':
            pad = line[:len(line) - len(line.lstrip())]
            # One short line (the bodies must stay short, see _LOOP_HEAD): a map unpacked.
            names = tuple(_local_field(spec, local) for local in sorted(locals_))
            out.append(f"{pad}{', '.join(sorted(locals_))}, = map(d.get, {names!r})\n")
    return "".join(out)


def _branch(spec: MessageSpec, registry: Registry, f, consts: dict, cls_of,
            locals_: set, hints: ScanHints) -> tuple[int, str] | None:
    """(tag, code) of the inline branch for field ``f``, or None to leave it to ``slow``."""
    name = f.name
    sibs = _sibling_pops(spec, f)
    check = f"CHECK_{f.number}"
    kind = f.kind
    if kind in (STRING, BYTES, MESSAGE):
        tag = f.number << 3 | LEN
        if tag >= 1 << 14:
            return None
        if kind == STRING:
            if f.repeated:
                body = _LEN + _new_list(f, check, locals_) + f"                    append(L{f.number}, src[q:e].decode())\n"
            else:
                body = _LEN + sibs + f"                    d[{name!r}] = src[q:e].decode()\n"
        elif kind == BYTES:
            if f.repeated:
                return None
            body = _LEN + sibs + f"                    d[{name!r}] = mv[q:e]\n"
        elif f.repeated and tag < 128 and name in hints.runs:
            # A field written as one long run (a graph's nodes): the run is read by one
            # call of `span_run`, whatever the length of each item's length.
            consts[f"CLASS_{f.number}"] = cls_of(f)
            local = f"R{f.number}"
            locals_.add(local)
            return tag, (
                f"                    if {local} is None:\n"
                f"                        seq = {local} = new(RM)\n"
                "                        seq._owner = m\n"
                f"                        seq._name = {name!r}\n"
                f"                        seq._cls = CLASS_{f.number}\n"
                "                        seq._spans = []\n"
                "                        seq._items = None\n"
                "                        seq._forget_cb = None\n"
                f"                        d[{name!r}] = seq\n"
                f"                    pos = span_run(m, src, pos, start, end, {local}._spans)\n")
        elif f.repeated and name in hints.eager_items:
            # Items made now, into a `MessageList` (`ScanHints.eager_items`); an item that
            # cannot be made turns the field into a lazy sequence (`defer_items`), which
            # the `else` branch then extends.
            consts[f"CLASS_{f.number}"] = cls_of(f)
            local = f"R{f.number}"
            locals_.add(local)
            body = _LEN + (
                f"                    if {local} is None:\n"
                f"                        if end - start > {hints.eager_span}:  # a large owner: lazy, see eager_span\n"
                f"                            {local} = lazy_items(m, {name!r})\n"
                "                        else:\n"
                f"                            {local} = d[{name!r}] = ML()\n"
                f"                            {local}._owner = m\n"
                f"                            {local}._name = {name!r}\n"
                f"                            {local}._cls = CLASS_{f.number}\n"
                f"                    if type({local}) is ML:\n"
                "                        try:\n"
                f"                            append({local}, CLASS_{f.number}._make_child(CLASS_{f.number}, m, q, e, {name!r}, HELD))\n"
                "                        except DecodeError:\n"
                f"                            {local} = defer_items(m, {name!r}, q, e)\n"
                "                    else:\n"
                f"                        {local}._add_span(q, e)\n")
        elif f.repeated:  # the spans go straight into the field's sequence
            consts[f"CLASS_{f.number}"] = cls_of(f)
            local = f"R{f.number}"  # the sequence, kept as `_new_list` keeps a container
            locals_.add(local)
            body = _LEN + (
                f"                    if {local} is None:\n"
                # RepeatedMessages(m, name, cls, [q, e]) without its __init__'s call
                f"                        seq = {local} = new(RM)\n"
                "                        seq._owner = m\n"
                f"                        seq._name = {name!r}\n"
                f"                        seq._cls = CLASS_{f.number}\n"
                "                        seq._spans = [q, e]\n"
                "                        seq._items = None\n"
                "                        seq._forget_cb = None\n"
                f"                        d[{name!r}] = seq\n"
                "                    else:\n"
                f"                        spans = {local}._spans\n"
                "                        spans.append(q)\n"
                "                        spans.append(e)\n")
        else:
            body = _LEN + sibs + (
                "                    if lazy is None:\n"
                "                        lazy = d[\"_lazy\"] = {}\n"
                f"                    spans = lazy.get({name!r})\n"
                "                    if spans is None:\n"
                f"                        lazy[{name!r}] = [q, e]\n"
                "                    else:\n"
                "                        spans.append(q)\n"
                "                        spans.append(e)\n")
        return tag, body + "                    pos = e\n"
    if kind in (INT64, INT32) or (kind == ENUM and not f.repeated):
        tag = f.number << 3 | VARINT
        if tag >= 1 << 14:
            return None
        closed = kind == ENUM and registry.enum(f.type_name).closed
        if closed:
            consts[f"VALUES_{f.number}"] = frozenset(registry.enum(f.type_name).values.values())
            # One-byte values of a closed enum inline; anything else (an unknown value is
            # kept as an unknown field) goes to the generic path.
            return tag, (f"                    v = src[pos + @L]\n"
                         f"                    if v < 128 and v in VALUES_{f.number}:\n"
                         + _indent(sibs, 1) +
                         f"                        d[{name!r}] = v\n"
                         f"                        pos += @L1\n"
                         f"                    else:\n"
                         f"                        pos = slow(m, src, mv, pos, end)\n"
                         f"                        lazy = d.get(\"_lazy\")\n")
        wide = ("                        if v >> 63:\n                            v -= 1 << 64\n" if kind == INT64
                else "                        if v > 0x7FFFFFFF:\n                            v = to_int32(v)\n")
        read = ("                    v = src[pos + @L]\n"
                "                    if v < 128:\n"
                "                        pos += @L1\n"
                "                    else:\n"
                "                        v, pos = read_varint(src, pos + @L, end)\n" + wide)
        if f.repeated:
            return tag, _new_list(f, check, locals_) + read + f"                    append(L{f.number}, v)\n"
        return tag, read + sibs + f"                    d[{name!r}] = v\n"
    if kind == FLOAT:
        tag = f.number << 3 | I32
        if tag >= 1 << 14:
            return None
        read = ("                    v = unpack_float(src, pos + @L)[0]\n"
                "                    if v != v:  # NaN: keep its exact bits\n"
                "                        v = float32_nan(src, pos + @L)\n")
        if f.repeated:
            return tag, _new_list(f, check, locals_) + read + f"                    append(L{f.number}, v)\n                    pos += @L4\n"
        return tag, read + sibs + f"                    d[{name!r}] = v\n                    pos += @L4\n"
    return None


def _specialise(body: str, tag_len: int) -> str:
    """Fill in the offsets of a branch body for a tag of ``tag_len`` bytes."""
    return (body.replace("@L1", str(tag_len + 1)).replace("@L2", str(tag_len + 2)).replace("@L4", str(tag_len + 4))
            .replace("@L", str(tag_len)))


def scan_source(spec: MessageSpec, registry: Registry, consts: dict, cls_of: Callable[[FieldSpec], type[Message]],
                hints: ScanHints = NO_HINTS) -> tuple[str, set]:
    """The body shared by the two generated functions: the if/elif chain over tags,
    and the names of the locals it keeps containers in.

    One-byte tags (fields 1-15) are compared directly; two-byte tags (fields 16-2047,
    such as a field numbered 20) in a nested chain entered when the first byte says so,
    placed where its first field stands in the order (`ScanHints.hot_order`, else field numbers).
    """
    hot = hints.hot_order
    fields = sorted(spec.fields, key=lambda f: (hot.index(f.name) if f.name in hot else len(hot), f.number))
    entries: list[tuple[int, str] | None] = []
    long_: list[tuple[int, str]] = []
    locals_: set = set()
    for f in fields:
        b = _branch(spec, registry, f, consts, cls_of, locals_, hints)
        if b is None:
            continue
        if b[0] < 128:
            entries.append(b)
        elif hot and f.name not in hot:
            # Left to `slow`: of a type with a hot order, the two-byte chain holds its hot
            # fields only, so that the test that enters it jumps over a short body.
            continue
        else:
            if not long_:
                entries.append(None)  # the nested chain goes here
            long_.append(b)
    out: list[str] = []
    for entry in entries:
        kw = "elif" if out else "if"
        if entry is not None:
            tag, body = entry
            out.append(f"                {kw} tag == {tag}:\n{_specialise(body, 1)}")
            continue
        chain = ["                tag = (tag & 127) | (src[pos + 1] << 7)\n"]
        for i, (tag, body) in enumerate(long_):
            chain.append(f"                {'elif' if i else 'if'} tag == {tag}:\n{_specialise(body, 2)}")
        chain.append("                else:\n"
                     "                    pos = slow(m, src, mv, pos, end)\n"
                     "                    lazy = d.get(\"_lazy\")\n")
        out.append(f"                {kw} tag > 127:\n" + _indent("".join(chain), 1))
    if not out:
        return "                if False:\n                    pass\n", locals_
    return "".join(out), locals_


def source(spec: MessageSpec, registry: Registry, cls_of: Callable[[FieldSpec], type[Message]], which: str,
           hints: ScanHints = NO_HINTS) -> str:
    """The whole source of ``which`` ("make_child" or "scan") for ``spec``.  A
    ``make_child`` of a type whose ``hints.memo`` is set keeps and copies decoded spans."""
    memo = hints.memo
    body, locals_ = scan_source(spec, registry, {}, cls_of, hints)
    init = _local_init(spec, locals_, fresh=which == "make_child")
    body = _with_reloads(body + _LOOP_TAIL, spec, locals_)
    if which == "make_child":
        lookup = _MEMO_LOOKUP.replace("                return m\n", _indent(_eager_empty(spec, hints, True), 3)
                                      + "                return m\n") if memo else ""
        return (_HEADER_CHILD + lookup + init + _LOOP_HEAD + body
                + (_MEMO_STORE if memo else "") + _eager_empty(spec, hints, False) + "    return m\n")
    return _HEADER_SCAN + init + _LOOP_HEAD + body


def generic_child_source() -> str:
    """The ``make_child`` whose scan is the generic loop: the same header as the generated
    ones, so that creating a child is written once whichever scan follows."""
    return _HEADER_CHILD + "    generic_scan_into(m, src, mv, pos, end)\n    return m\n"
