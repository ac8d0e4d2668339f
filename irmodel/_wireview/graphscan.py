"""The GraphProto reader: a main graph's layout, and where inference puts new value_info.

`graph_layout` reads a plain graph's fields (the spans of its nodes, initializers, inputs
and outputs, its name, how many value_info entries it has) for `inspect`'s summary from
the bytes alone (`modelscan`).

A graph whose bytes are exactly what our encoder writes for it (its fields in number
order, each tag and length in its shortest form, nothing unknown, ``name`` and
``doc_string`` at most once) takes new ``value_info`` entries right after its last field
numbered up to ``value_info``: `insertion_point` finds that place, or declines (None).
"""

from __future__ import annotations

from wirefmt.errors import DecodeError
from wirefmt.records import named_tuple
from wirefmt.schema import LEN
from wirefmt.varint import read_short_varint

from . import fields as F
from .wire import field as _field

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import NamedTuple

_VALUE_INFO, _ONCE, _GRAPH_FIELDS = F.GRAPH_VALUE_INFO_NUMBER, F.GRAPH_SINGULAR_NUMBERS, F.GRAPH_NUMBERS
_NODE, _INITIALIZER, _INPUT, _OUTPUT, _GRAPH_NAME = (
    F.number("GraphProto", f) for f in ("node", "initializer", "input", "output", "name"))
#: The graph's spans a layout keeps, by field number.
_GRAPH_LISTS = {_NODE: "node", _INITIALIZER: "initializer", _INPUT: "input", _OUTPUT: "output"}
#: The fields a plain graph does not have (the summary would have to walk them).
_GRAPH_EXTRAS = frozenset(F.number("GraphProto", f) for f in ("sparse_initializer", "quantization_annotation",
                                                               "metadata_props"))
#: A main graph's nesting depth as the message path counts it (bounding group skipping as there).
_GRAPH_DEPTH = 1

if TYPE_CHECKING:
    class GraphLayout(NamedTuple):
        name: str
        node: list
        initializer: list
        input: list
        output: list
        value_info_count: int
else:
    #: A plain graph: its name, the spans (start, end, start, ... of each payload) of its
    #: repeated fields, and how many ``value_info`` entries it has.
    GraphLayout = named_tuple("GraphLayout", ("name", "node", "initializer", "input", "output",
                                              "value_info_count"), __name__)


def _shortest(src, pos: int, end: int) -> tuple:
    """``(value, next)`` of a tag or length in its shortest form (`read_short_varint`), or
    ``(None, pos)``."""
    try:
        value, after = read_short_varint(src, pos, end)
    except DecodeError:
        return None, pos
    if after - pos > 1 and src[after - 1] == 0:
        return None, pos  # padded: not the shortest form
    return value, after


def insertion_point(src, start: int, end: int) -> int | None:
    """Where entries of ``value_info`` go in a canonical GraphProto ``src[start:end]``, or None."""
    pos = start
    last = 0
    at = start
    seen = set()
    while pos < end:
        b = src[pos]
        if b < 0x80:  # one-byte tags: fields 1 to 15
            tag = b
            pos += 1
        else:
            tag, pos = _shortest(src, pos, end)
            if tag is None:
                return None
        number = tag >> 3
        if tag & 7 != LEN or number not in _GRAPH_FIELDS or number < last:
            return None
        if number in _ONCE:
            if number in seen:
                return None
            seen.add(number)
        last = number
        b = src[pos] if pos < end else 0x80
        if b < 0x80:
            pos += 1 + b
        else:
            n, pos = _shortest(src, pos, end)
            if n is None:
                return None
            pos += n
        if number <= _VALUE_INFO:
            at = pos
    return at if pos == end else None


def graph_layout(src, start: int, end: int) -> GraphLayout | None:
    """The `GraphLayout` of the plain GraphProto in ``src[start:end]`` (a main graph: its
    fields one level below the model), else None: a graph with sparse initializers,
    quantization annotations or metadata, a field of another wire type than its schema's,
    invalid UTF-8 in its name, bytes not well formed.  Unknown fields are skipped."""
    try:
        return _layout(src, start, end)
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None


def _layout(src, start: int, end: int) -> GraphLayout | None:
    # Every field a plain graph has is length-delimited with a one-byte tag, and they come
    # in runs (thousands of nodes, then the initializers, ...): a run of one tag whose
    # lengths take one or two bytes is read by a tight loop (as `wirefmt.scan._span_run`
    # reads it for the message path), anything else (a longer length, another tag) one
    # field at a time through `wire.field`.  Either way the items' payloads are appended
    # to ``spans`` (the field's list, or a scratch one for a field a layout does not keep).
    lists: dict = {n: [] for n in _GRAPH_LISTS}
    name = ""
    value_infos = 0
    pos = start
    while pos < end:
        tag = src[pos]
        number = tag >> 3
        spans = lists.get(number)
        if spans is None:
            spans = []
        first = len(spans)
        if tag < 128 and tag & 7 == LEN and number:
            append = spans.append
            while True:
                n = src[pos + 1]
                if n < 128:
                    a = pos + 2
                else:
                    b = src[pos + 2]
                    if b > 127:
                        break  # a length of three bytes or more: `wire.field` below
                    a = pos + 3
                    n = (n & 127) | (b << 7)
                append(a)
                pos = a + n
                append(pos)
                if pos >= end or src[pos] != tag:
                    break
            if pos > end:
                return None
        if len(spans) == first:  # not read by the run
            number, wt, a, pos = _field(src, pos, end, _GRAPH_DEPTH)
            if wt != LEN:
                if number in _GRAPH_FIELDS:
                    return None
                continue  # an unknown field
            spans = lists.get(number)
            if spans is None:
                spans = []
            first = len(spans)
            spans.extend((a, pos))
        if number == _VALUE_INFO:
            value_infos += (len(spans) - first) >> 1
        elif number == _GRAPH_NAME:
            name = src[spans[-2]:spans[-1]].decode()
        elif number in _GRAPH_EXTRAS:
            return None
    return GraphLayout(name, lists[_NODE], lists[_INITIALIZER], lists[_INPUT], lists[_OUTPUT], value_infos)
