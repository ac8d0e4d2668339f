"""Per-message-type scan functions: made from generated source, kept across processes.

Each message type's scan functions are written from its schema (`wirefmt.scansource`,
which says why and what they inline) and compiled on first use, or loaded from a code
cache where a process before this one left them (below).  This module is what a reading
process imports: the cache lookup, the constants and helpers the code names,
`long_length`, which the code calls for lengths of two bytes or more, and the scan hints
a layer above gives for its types (`ScanHints`).
"""

from __future__ import annotations

import marshal
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable, Mapping, TypedDict

    from .message import Message
    from .schema import FieldSpec

from .reader import fixed_struct
from .varint import read_short_varint
from .schema import ENUM, FLOAT, MESSAGE, MessageSpec, Registry

# -- scan hints: what the generator is told about a type beyond its schema ---------------
# The schema says which fields a type has; it does not say how files use them.  A graph's
# nodes come as one run of thousands of items, a node's attributes are read with the node,
# an attribute's ``type`` (a two-byte tag) is in every attribute and its ``ints`` are read
# even when absent.  Code written for those shapes is faster, code written for shapes that
# do not occur is slower, so the layer that knows its files says so per type, as
# `build_classes`'s ``scan_hints`` (full type name -> `ScanHints`), and the generator
# (`wirefmt.scansource`) follows.  wirefmt names no type of its own: a type without hints
# gets the generic choices, right for any input.  Hints change speed and memory only,
# never what a read gives: malformed input raises the same errors either way.  They are
# part of the stamp of cached code (`_stamp`): code written for other hints is not loaded.
#
# A `ScanHints` is a dict with some of these keys (a class, with its module, would cost
# every process that reads a file; the type checker sees a TypedDict); each
# hint names fields of the type by name, and a hint that cannot apply is refused
# (ValueError: `hints_by_type`, `scansource.checked_hints`):
#
# ``hot_order``: the order of the scan's tag tests: these fields first, in this order, then
#     the rest by number.  For a type whose common fields are not its lowest-numbered ones
#     (each test before the right one costs a comparison per field read).  A type with a
#     hot order reads only its hot fields of two-byte tags (16-2047) inline, so that the
#     test entering that nested chain jumps over a short body.
# ``runs``: repeated message fields (numbers 1-15) written as one long run of items, such
#     as a graph's nodes: a run is read by one call of a loop over it (`scan._span_run`)
#     instead of one turn of the field loop per item.  For long runs only: a call per run
#     of one or two items costs more than it saves.
# ``eager_items``: repeated message fields whose items the scan makes at once, into a
#     `MessageList` (a ``list``, iterated in C), because a reader reads them with their
#     owner.  Each item is made whether it is read or not: for short fields only.  An
#     owner without the field gets an empty `MessageList` (made at the end of its scan),
#     since its reader reads the field all the same (`scansource._eager_items_empty`).
# ``eager_span``: owners longer than this many bytes keep their ``eager_items`` lazy (read
#     item by item, as any long sequence): a bound on the memory forged input can make the
#     scan allocate (`EAGER_SPAN`).
# ``eager_empty``: repeated scalar fields whose empty container the scan puts in place when
#     it found none: for fields a reader reads even when absent, where the read of an
#     absent field is a Python call from C.  The container is the one that read would make.
# ``memo``: whether the scan that makes an item keeps what it decoded from a short span,
#     keyed by its bytes, for later items with the same bytes (below): for types whose
#     items repeat byte for byte across a file.

if TYPE_CHECKING:
    class ScanHints(TypedDict, total=False):
        hot_order: tuple[str, ...]
        runs: tuple[str, ...]
        eager_items: tuple[str, ...]
        eager_span: int
        eager_empty: tuple[str, ...]
        memo: bool
else:
    ScanHints = dict

#: The default ``eager_span``: a node of 4 KB whose items are made at once holds at most
#: ~1 MB of objects (an item costs ~500 bytes of objects for as little as 2 bytes of
#: input, an empty one), where a forged owner of megabytes would hold gigabytes.
EAGER_SPAN = 4096
#: Every hint with its default, in the order the stamp lists them: the generic choices.
NO_HINTS: ScanHints = {"hot_order": (), "runs": (), "eager_items": (), "eager_span": EAGER_SPAN,
                       "eager_empty": (), "memo": False}


def hints_by_type(registry: Registry, hints: Mapping[str, ScanHints] | None) -> dict[str, ScanHints]:
    """``hints`` (full type name -> `ScanHints`) each with every key (`NO_HINTS` fills the
    missing ones).  ValueError for an unknown type or key; whether the named fields can
    take their hints is checked where the source is written (`scansource.checked_hints`),
    as every process that imports wirefmt runs this and most never write source: code
    loaded from a cache was written, so checked, under exactly these hints (`_stamp`)."""
    out: dict[str, ScanHints] = {}
    for type_name, given in (hints or {}).items():
        if type_name not in registry.messages:
            raise ValueError(f"scan hints for unknown message type {type_name!r}")
        if not isinstance(given, dict) or not given.keys() <= NO_HINTS.keys():
            raise ValueError(f"scan hints for {type_name}: not a dict with keys among {', '.join(NO_HINTS)}: {given!r}")
        out[type_name] = {**NO_HINTS, **given}
    return out


# The memo of a type whose items repeat byte for byte across a file (``memo`` hint: a
# node's ``axis: -1``, ``alpha``): `make_child` keeps what a successful scan of a short span
# decoded, keyed by those bytes, and a later item with the same bytes copies it instead of
# scanning.  Only when every decoded value is an immutable str, int or float and the scan
# left nothing else behind (no containers, spans, unknown fields: `scan.memo_store`
# decides); the key is the whole span, so the values are what a scan of those bytes gives,
# wherever they are.  A scan that fails stores nothing, so malformed bytes always take the
# scan and its error.  Bytes whose scan left anything else are kept too, as
# `scan.NOT_KEPT`: their next copy scans without offering its result to `memo_store` again.
#: Spans longer than this are not kept (the key is a copy of the bytes).
MEMO_SPAN = 64
#: Entries per type; past it nothing more is kept (a bound on memory, not an eviction policy).
MEMO_ENTRIES = 4096


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


# -- compiled code, kept across processes ------------------------------------------------
# Compiling a scan function costs about a millisecond, in every process that reads that
# type.  A class built with a ``code_cache`` (`build_classes`) keeps the compiled code in
# it instead: any object with ``load(key) -> bytes | None`` and ``save(key, data)``
# (irmodel's is a directory of files, `irmodel._files.codecache`; wirefmt itself opens no
# files).  Stored with the code is its *stamp*: everything the generated source depends
# on, written out in full (`_stamp`): the generator's own files (this module, `scansource`
# and `schema`, whose constants it uses: their size and modification time, the rule
# CPython uses for its own .pyc files), which function, every field of the type as the
# generator reads it, and the type's `ScanHints` (`build_classes`).  An entry is used only when its stamp is exactly the stamp of
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
_CODE_TYPE = type(long_length.__code__)
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
            here = os.path.dirname(__file__)
            for path in (__file__, os.path.join(here, "scansource.py"), schema.__file__):
                st = os.stat(path)
                parts.append(f"{st.st_size:x}.{st.st_mtime_ns:x}")
            _generator_stamp = "-".join(parts)
        except (OSError, TypeError):  # no file (frozen, zipped without one): no cache
            _generator_stamp = ""
    return _generator_stamp


def _stamp(spec: MessageSpec, registry: Registry, which: str, hints: ScanHints) -> str:
    """Everything `scan_source` and `build_scanner` read to write the source of ``which``."""
    fields = tuple((f.number, f.name, f.kind, f.repeated, f.type_name, f.oneof, f.packed,
                    f.kind == ENUM and registry.enum(f.type_name).closed) for f in spec.fields)
    return repr((generator_stamp(), which, spec.name, spec.syntax, fields, tuple(hints.items())))


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
    from .scansource import generic_child_source  # noqa: PLC0415 - the generic mode only

    source = generic_child_source()
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
    ``helpers`` supplies the functions the code calls (`scan._SCANNER_HELPERS`); the
    class's ``_scan_hints`` (`build_classes`) say how its fields occur in files.
    """
    spec = cls._spec
    cls_of = lambda f: cls._classes[f.name]  # noqa: E731
    ns = dict(helpers)
    ns.update(scan_consts(spec, registry, cls_of))
    for f in spec.fields:
        if f.name in cls._checks:
            ns[f"CHECK_{f.number}"] = cls._checks[f.name]
    hints = cls._scan_hints
    if which == "make_child" and hints["memo"]:
        ns.update(MEMO={}, MEMO_SPAN=MEMO_SPAN, MEMO_ENTRIES=MEMO_ENTRIES)

    def source_of() -> str:
        from .scansource import source  # noqa: PLC0415 - only when the cache has no valid entry

        return source(spec, registry, cls_of, which, hints)

    # The key names the generator's files and the stamp's length, so that two versions of
    # a schema or of this generator (two checkouts, say) mostly keep an entry each instead
    # of replacing each other's; the stamp stored with the code is compared in full.
    gen = generator_stamp()
    cache = cls._code_cache if gen else None
    stamp = _stamp(spec, registry, which, hints) if cache is not None else ""
    code = _compile(source_of, stamp, f"<wirefmt {which} {spec.name}>",
                    f"{cls.__module__}.{spec.name}.{which}.{gen}.{len(stamp):x}", cache)
    if _names(code, "unpack_float"):
        ns.update(float_helpers())
    exec(code, ns)  # noqa: S102 -- source built above from the schema tables only
    return ns[which]


def float_helpers() -> dict:
    """The helpers of code that reads a float32 inline (`scansource._read_float`): apart from
    the others (`scan._SCANNER_HELPERS`) because `struct` is a shared library to load, and
    the scans a model's summary runs (the model, its graph, tensors, value infos) read none."""
    unpack_float = fixed_struct(FLOAT).unpack_from
    from struct import error  # noqa: PLC0415 - see the docstring (loaded by the line above)

    return {"unpack_float": unpack_float, "StructError": error}


def _names(code: Any, name: str) -> bool:
    """Whether ``code`` or a function defined in it names the global ``name``."""
    return name in code.co_names or any(_names(c, name) for c in code.co_consts if type(c) is _CODE_TYPE)
