"""What the scan generator may know about a message type beyond its schema: `ScanHints`.

The schema says which fields a type has; it does not say how files use them.  A graph's
nodes come as one run of thousands of items, a node's attributes are read with the node,
an attribute's ``type`` (a two-byte tag) is in every attribute and its ``ints`` are read
even when absent.  Code written for those shapes is faster, code written for shapes that
do not occur is slower, so the layer that knows its files says so per type
(`build_classes`'s ``scan_hints``) and the generator (`wirefmt.scansource`) follows.
wirefmt itself names no type: a type without hints gets the generic choices, which are
right for any input.  Hints change speed and memory only, never what a read gives:
malformed input raises the same errors either way (the tests run both).

The hints are part of the stamp of the compiled code kept in a code cache
(`scangen._stamp`): code written for other hints is never loaded.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Iterable, Mapping, NamedTuple

    from .schema import Registry

from .records import named_tuple
from .schema import MESSAGE

#: The default `ScanHints.eager_span`: a node of 4 KB whose items are made at once holds
#: at most ~1 MB of objects (an item costs ~500 bytes of objects for as little as 2 bytes
#: of input, an empty one), where a forged owner of megabytes would hold gigabytes.
EAGER_SPAN = 4096

if TYPE_CHECKING:
    class _ScanHintsFields(NamedTuple):
        hot_order: tuple[str, ...]
        runs: tuple[str, ...]
        eager_items: tuple[str, ...]
        eager_span: int
        eager_empty: tuple[str, ...]
        memo: bool
else:
    _ScanHintsFields = named_tuple(
        "ScanHints", ("hot_order", "runs", "eager_items", "eager_span", "eager_empty", "memo"), __name__)


class ScanHints(_ScanHintsFields):
    """How one message type's fields occur in the files read, for its generated scan.

    Every field names fields of the type by name; unknown names or names of the wrong kind
    are refused by `build_classes` (ValueError), as a hint that cannot apply is a mistake.

    ``hot_order``
        The order of the scan's tag tests: these fields first, in this order, then the
        rest by number.  For a type whose common fields are not its lowest-numbered ones
        (each test before the right one costs a comparison per field read).  A type with
        a hot order reads only its hot fields of two-byte tags (16-2047) inline, so that
        the test entering that nested chain jumps over a short body.
    ``runs``
        Repeated message fields (numbers 1-15) written as one long run of items, such as
        a graph's nodes: a run is read by one call of a loop over it (`scan._span_run`)
        instead of one turn of the field loop per item.  A call per run of one or two
        items costs more than it saves: for long runs only.
    ``eager_items``
        Repeated message fields whose items the scan makes at once, into a `MessageList`
        (a ``list``, iterated in C), because a reader reads them with their owner.  Each
        item is made whether it is read or not: for short fields only.
    ``eager_span``
        Owners longer than this many bytes keep their ``eager_items`` fields lazy (read
        item by item, as any long sequence): a bound on the memory a forged input can make
        the scan allocate (see `EAGER_SPAN`).
    ``eager_empty``
        Repeated scalar fields whose empty container the scan puts in place when it found
        none: for fields a reader reads even when absent, where the read of an absent
        field is a Python call from C.  The container is the one that read would make.
    ``memo``
        Whether the scan that makes an item keeps what it decoded from a short span,
        keyed by its bytes, for later items with the same bytes (`scan._memo_store`):
        for types whose items repeat byte for byte across a file.
    """

    __slots__ = ()

    def __new__(cls, hot_order: Iterable[str] = (), runs: Iterable[str] = (), eager_items: Iterable[str] = (),
                eager_span: int = EAGER_SPAN, eager_empty: Iterable[str] = (), memo: bool = False) -> ScanHints:
        # Tuples of names, an int, a bool: the record's repr is part of the code cache's stamp.
        return _ScanHintsFields.__new__(cls, tuple(hot_order), tuple(runs), tuple(eager_items), int(eager_span),
                                        tuple(eager_empty), bool(memo))


#: The hints of a type that has none: the generic choices.
NO_HINTS = ScanHints()


def checked_hints(registry: Registry, hints: Mapping[str, ScanHints] | None) -> dict[str, ScanHints]:
    """``hints`` (full type name -> `ScanHints`) after checking that each names fields that
    exist and can take it; ValueError names the first that does not."""
    out: dict[str, ScanHints] = {}
    for type_name, h in (hints or {}).items():
        spec = registry.messages.get(type_name)
        if spec is None:
            raise ValueError(f"scan hints for unknown message type {type_name!r}")
        if not isinstance(h, ScanHints):
            raise ValueError(f"scan hints for {type_name} are not a ScanHints: {h!r}")

        def fields(what: str, names: tuple, ok, rule: str) -> None:
            for name in names:
                f = spec.by_name.get(name)
                if f is None or not ok(f):
                    raise ValueError(f"scan hints for {type_name}: {what} {name!r} is not {rule}")

        fields("hot_order", h.hot_order, lambda f: True, "a field of the type")
        fields("runs", h.runs, lambda f: f.repeated and f.kind == MESSAGE and f.number < 16,
               "a repeated message field numbered 1-15")
        fields("eager_items", h.eager_items, lambda f: f.repeated and f.kind == MESSAGE, "a repeated message field")
        fields("eager_empty", h.eager_empty, lambda f: f.repeated and f.kind != MESSAGE, "a repeated scalar field")
        if h.eager_span < 0:
            raise ValueError(f"scan hints for {type_name}: eager_span {h.eager_span} is negative")
        out[type_name] = h
    return out
