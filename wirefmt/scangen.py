"""Per-message-type scan functions, generated from the schema tables.

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
"""

from __future__ import annotations

import marshal
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable

    from .message import Message
    from .schema import FieldSpec

from .varint import read_short_varint
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

# Types whose items repeat byte for byte across a graph (a node's ``axis: -1``, ``alpha``):
# `make_child` keeps what a successful scan of a short span decoded, keyed by those bytes,
# and a later item with the same bytes copies it instead of scanning.  Only when every
# decoded value is an immutable str, int or float and the scan left nothing else behind
# (no containers, spans, unknown fields: `scan.memo_store` decides); the key is the whole
# span, so the values are what a scan of those bytes gives, wherever they are.  A scan
# that fails stores nothing, so malformed bytes always take the scan and its error.  Bytes
# whose scan left anything else are kept too, as `scan.NOT_KEPT`: their next copy scans
# without offering its result to `memo_store` again.
_MEMO_TYPES = frozenset({"AttributeProto"})
#: Spans longer than this are not kept (the key is a copy of the bytes).
MEMO_SPAN = 64
#: Entries per type; past it nothing more is kept (a bound on memory, not an eviction policy).
MEMO_ENTRIES = 4096

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

# Repeated scalar fields whose empty container `make_child` puts in place when the scan
# found none (tuned for the full walk, which reads all three of every attribute: an absent
# field read through its class's `_LazyScalars` costs a Python call from C, ~4k
# instructions, against ~1k here).  The container is the one that read would have made
# (owner, element check), so mutation, copy-on-write and encoding are unchanged; fields
# with packed chunks waiting in ``_lazy`` are left to that read.
_EAGER_EMPTY = {"AttributeProto": ("floats", "ints", "strings")}


def _eager_empty(spec: MessageSpec, after_memo_hit: bool) -> str:
    """The source that puts the empty containers of ``_EAGER_EMPTY[spec.name]`` in place."""
    out = []
    for name in _EAGER_EMPTY.get(spec.name, ()):
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


def long_length(m, src, p: int, start: int, end: int, overrun: Callable) -> tuple[int, int]:
    """``(start, end)`` of a length-delimited value whose length at ``p`` takes more than one
    byte; a value that runs past ``end`` is refused (`overrun`) before anything is sliced.
    IndexError at the end of the buffer is the caller's to explain, as for its inline reads."""
    if p + 1 < end and src[p + 1] < 128:  # two bytes: as read_short_varint
        q = p + 2
        e = q + ((src[p] & 127) | (src[p + 1] << 7))
    else:
        n, q = read_short_varint(src, p, end, "length")
        e = q + n
    if e > end:
        overrun(m, src, start, end)
    return q, e


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
            locals_: set) -> tuple[int, str] | None:
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
        elif f.repeated and tag < 128 and name in _RUNS.get(spec.name, ()):
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


#: Repeated message fields that come as one long run of the same one-byte tag (a graph's
#: 75,000 ``node`` fields, each an item of 40 to 1,000 bytes): each run is read by one call
#: of ``span_run`` (`scan._span_run`), a loop over the run with the items' lengths of one
#: and two bytes inline, instead of one turn of the field loop per item (its tag tests,
#: the sequence's None test and attribute read) and one `long_length` call per item of
#: 128 bytes or more.  Measured: docs/ARCHITECTURE.md (start-up and speed).  Short
#: repeated fields (a node's attributes) keep the inline branch: a call per run of one
#: or two items costs more than it saves.
_RUNS = {
    "GraphProto": ("node", "initializer", "value_info"),
    "FunctionProto": ("node",),
}


def _specialise(body: str, tag_len: int) -> str:
    """Fill in the offsets of a branch body for a tag of ``tag_len`` bytes."""
    return (body.replace("@L1", str(tag_len + 1)).replace("@L2", str(tag_len + 2)).replace("@L4", str(tag_len + 4))
            .replace("@L", str(tag_len)))


#: Branch order for types whose common fields are not their lowest-numbered ones: every
#: field compared before the right one costs a comparison per field read.  AttributeProto
#: is in every node and its `type` (field 20, a two-byte tag) is always present.
_HOT_ORDER = {
    "AttributeProto": ("name", "type", "i", "ints", "f", "s", "floats", "strings", "t", "g"),
}


def scan_source(spec: MessageSpec, registry: Registry, consts: dict, cls_of: Callable[[FieldSpec], type[Message]]) -> tuple[str, set]:
    """The body shared by the two generated functions: the if/elif chain over tags,
    and the names of the locals it keeps containers in.

    One-byte tags (fields 1-15) are compared directly; two-byte tags (fields 16-2047,
    such as AttributeProto.type) in a nested chain entered when the first byte says so,
    placed where its first field stands in the order (`_HOT_ORDER`, else field numbers).
    """
    hot = _HOT_ORDER.get(spec.name, ())
    fields = sorted(spec.fields, key=lambda f: (hot.index(f.name) if f.name in hot else len(hot), f.number))
    entries: list[tuple[int, str] | None] = []
    long_: list[tuple[int, str]] = []
    locals_: set = set()
    for f in fields:
        b = _branch(spec, registry, f, consts, cls_of, locals_)
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


# -- compiled code, kept across processes ------------------------------------------------
# Compiling a scan function costs about a millisecond, in every process that reads that
# type.  A class built with a ``code_cache`` (`build_classes`) keeps the compiled code in
# it instead: any object with ``load(key) -> bytes | None`` and ``save(key, data)``
# (irmodel's is a directory of files, `irmodel.codecache`; wirefmt itself opens no
# files).  Stored with the code is its *stamp*: everything the generated source depends
# on, written out in full (`_stamp`): the generator's own files (this module and
# `schema`, whose constants it uses: their size and modification time, the rule CPython
# uses for its own .pyc files), which function, and every field of the type as the
# generator reads it.  An entry is used only when its stamp is exactly the stamp of
# now, so a change of the schema or of the generator can never run stale code, and a
# process whose entries are valid never generates the source at all.  Entries of another
# Python are refused by their header (the bytecode magic number) before they are
# unmarshalled.

try:
    from _frozen_importlib_external import MAGIC_NUMBER

    _MAGIC = bytes(MAGIC_NUMBER)
except ImportError:  # not CPython: the version string stands for the bytecode format
    _MAGIC = sys.version.encode()
_HEADER = b"wirefmt scan code 2 " + sys.implementation.cache_tag.encode() + b" " + _MAGIC + b"\n"
_CODE_TYPE = type(_indent.__code__)
_generator_stamp: str | None = None


def generator_stamp() -> str:
    """Size and modification time of the files the generated source depends on, once per
    process; "" when they cannot be read (then no cache is used)."""
    global _generator_stamp
    if _generator_stamp is None:
        import os

        from . import schema

        try:
            parts = []
            for path in (__file__, schema.__file__):
                st = os.stat(path)
                parts.append(f"{st.st_size:x}.{st.st_mtime_ns:x}")
            _generator_stamp = "-".join(parts)
        except (OSError, TypeError):  # no file (frozen, zipped without one): no cache
            _generator_stamp = ""
    return _generator_stamp


def _stamp(spec: MessageSpec, registry: Registry, which: str) -> str:
    """Everything `scan_source` and `build_scanner` read to write the source of ``which``."""
    fields = tuple((f.number, f.name, f.kind, f.repeated, f.type_name, f.oneof, f.packed,
                    f.kind == ENUM and registry.enum(f.type_name).closed) for f in spec.fields)
    return repr((generator_stamp(), which, spec.name, spec.syntax, fields))


def _compile(source_of: Callable[[], str], stamp: str, filename: str, key: str, cache: Any) -> Any:
    """The code object of the source ``source_of()`` makes: from ``cache`` when it holds
    code stored under exactly ``stamp``, else generated, compiled and offered to the cache.
    A cache that fails in any way is a cache miss."""
    if cache is not None:
        try:
            data = cache.load(key)
            if data and data.startswith(_HEADER):
                stored, code = marshal.loads(memoryview(data)[len(_HEADER):])
                if stored == stamp and type(code) is _CODE_TYPE and code.co_filename == filename:
                    return code
        except Exception:  # noqa: BLE001 - unreadable, truncated, corrupt: compile instead
            pass
    code = compile(source_of(), filename, "exec")
    if cache is not None:
        try:
            cache.save(key, _HEADER + marshal.dumps((stamp, code)))
        except Exception:  # noqa: BLE001 - an unwritable cache only costs the next process
            pass
    return code


def scan_consts(spec: MessageSpec, registry: Registry, cls_of: Callable[[FieldSpec], type[Message]]) -> dict:
    """The constants generated code may name (``CLASS_n``, ``VALUES_n``), without the source.

    A superset of those `scan_source` puts in ``consts`` (a test checks it), so that
    code loaded from the cache finds every name it uses.
    """
    consts: dict = {}
    for f in spec.fields:
        if f.kind == MESSAGE and f.repeated:
            consts[f"CLASS_{f.number}"] = cls_of(f)
        elif f.kind == ENUM and not f.repeated:
            enum = registry.enum(f.type_name)
            if enum.closed:
                consts[f"VALUES_{f.number}"] = frozenset(enum.values.values())
    return consts


def generic_child_maker(helpers: dict) -> Callable:
    """A ``make_child`` whose scan is ``helpers["generic_scan_into"]`` (the generic loop).

    Made from the same template as the generated ones, so that creating a child is
    written once whichever scan follows.
    """
    source = _HEADER_CHILD + "    generic_scan_into(m, src, mv, pos, end)\n    return m\n"
    ns = dict(helpers)
    exec(compile(source, "<wirefmt make_child generic>", "exec"), ns)  # noqa: S102 -- fixed template
    return ns["make_child"]


def build_scanner(cls: type[Message], registry: Registry, helpers: dict, which: str) -> Callable:
    """Generate one scan function for message class ``cls``: ``which`` is "make_child" or "scan".

    ``make_child(cls, parent, start, end, key, idx=HELD)`` creates and scans a child over
    ``parent``'s buffer; ``scan(msg, src, mv, pos, end)`` scans a span into an existing
    message (the root, and later occurrences of a merged singular submessage).  Each is
    compiled on its first call only: most types only ever need one of the two, and
    compiling costs about a millisecond per function (or loaded from the class's
    ``_code_cache``, see `_compile`).
    ``helpers`` supplies the functions the code calls (`scan._SCANNER_HELPERS`).
    """
    spec = cls._spec
    cls_of = lambda f: cls._classes[f.name]  # noqa: E731
    ns = dict(helpers)
    ns.update(scan_consts(spec, registry, cls_of))
    for f in spec.fields:
        if f.name in cls._checks:
            ns[f"CHECK_{f.number}"] = cls._checks[f.name]
    memo = which == "make_child" and spec.name in _MEMO_TYPES
    if memo:
        ns.update(MEMO={}, MEMO_SPAN=MEMO_SPAN, MEMO_ENTRIES=MEMO_ENTRIES)

    def source_of() -> str:
        body, locals_ = scan_source(spec, registry, {}, cls_of)
        init = _local_init(spec, locals_, fresh=which == "make_child")
        body = _with_reloads(body + _LOOP_TAIL, spec, locals_)
        if which == "make_child":
            lookup = _MEMO_LOOKUP.replace("                return m\n", _indent(_eager_empty(spec, True), 3)
                                          + "                return m\n") if memo else ""
            return (_HEADER_CHILD + lookup + init + _LOOP_HEAD + body
                    + (_MEMO_STORE if memo else "") + _eager_empty(spec, False) + "    return m\n")
        return _HEADER_SCAN + init + _LOOP_HEAD + body

    # The key names the generator's files and the stamp's length, so that two versions of
    # a schema or of this generator (two checkouts, say) mostly keep an entry each instead
    # of replacing each other's; the stamp stored with the code is compared in full.
    gen = generator_stamp()
    cache = cls._code_cache if gen else None
    stamp = _stamp(spec, registry, which) if cache is not None else ""
    code = _compile(source_of, stamp, f"<wirefmt {which} {spec.name}>",
                    f"{cls.__module__}.{spec.name}.{which}.{gen}.{len(stamp):x}", cache)
    exec(code, ns)  # noqa: S102 -- source built above from the schema tables only
    return ns[which]
