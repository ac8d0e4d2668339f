"""A ModelProto and its main graph read from their bytes: the layout a summary needs.

`model_layout` reads the top-level fields of a model and of its main graph, field by
field (`wire.field`, the full scan's checks), without making a message: the model's
scalars and strings, and the spans of the graph's repeated fields (nodes, initializers,
inputs, outputs), for the other readers of this package to read item by item.  It
answers only for a *plain* model, the shape every exporter writes: one ``graph``, no
functions, training_info, sparse initializers, device configurations or metadata, every
known field with its schema's wire type and every string valid UTF-8.  Anything else is
None, and the caller takes the message path, which says what is wrong with a model that
is not well formed.  Unknown fields are skipped, as the message path keeps them aside.
"""

from __future__ import annotations

from wirefmt.errors import DecodeError
from wirefmt.schema import LEN, VARINT
from wirefmt.varint import to_int64

from wirefmt.records import named_tuple

from ..proto import REGISTRY
from .fields import number as _number
from .wire import field as _field

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import NamedTuple


def _numbers(type_name: str, *names: str) -> tuple:
    return tuple(_number(type_name, n) for n in names)


_IR_VERSION, _MODEL_VERSION = _numbers("ModelProto", "ir_version", "model_version")
_MODEL_STRINGS = dict(zip(_numbers("ModelProto", "producer_name", "producer_version", "domain", "doc_string"),
                          ("producer_name", "producer_version", "domain", "doc_string")))
_GRAPH, _OPSET = _numbers("ModelProto", "graph", "opset_import")
#: The model's fields a plain model does not have (the summary would have to walk them).
_MODEL_EXTRAS = frozenset(_numbers("ModelProto", "metadata_props", "training_info", "functions",
                                   "configuration"))

_NODE, _INITIALIZER, _INPUT, _OUTPUT, _VALUE_INFO = _numbers(
    "GraphProto", "node", "initializer", "input", "output", "value_info")
_GRAPH_NAME = _number("GraphProto", "name")
#: The graph's spans a layout keeps, by field number.
_GRAPH_LISTS = {_NODE: "node", _INITIALIZER: "initializer", _INPUT: "input", _OUTPUT: "output"}
_GRAPH_EXTRAS = frozenset(_numbers("GraphProto", "sparse_initializer", "quantization_annotation",
                                   "metadata_props"))
#: Every GraphProto field (all length-delimited: another wire type declines the graph).
_GRAPH_KNOWN = frozenset(f.number for f in REGISTRY.messages["GraphProto"].fields)

#: Nesting depths as the message path counts them (bounding group skipping as there).
_MODEL_DEPTH, _GRAPH_DEPTH = 0, 1


if TYPE_CHECKING:
    class GraphLayout(NamedTuple):
        name: str
        node: list
        initializer: list
        input: list
        output: list
        value_info_count: int

    class ModelLayout(NamedTuple):
        ir_version: int | None
        producer_name: str
        producer_version: str
        domain: str
        model_version: int
        doc_string: str
        opset_import: list
        graph: GraphLayout
else:
    #: A plain main graph: its name, the spans (start, end, start, ... of each payload) of
    #: its repeated fields, and how many ``value_info`` entries it has.
    GraphLayout = named_tuple("GraphLayout", ("name", "node", "initializer", "input", "output",
                                              "value_info_count"), __name__)
    #: A plain model: its scalars and strings (their defaults when absent; ``ir_version``
    #: None when absent, as ``HasField`` tells), its opset entries' spans and its graph.
    ModelLayout = named_tuple("ModelLayout", ("ir_version", "producer_name", "producer_version", "domain",
                                              "model_version", "doc_string", "opset_import", "graph"), __name__)


def model_layout(src, start: int, end: int) -> ModelLayout | None:
    """The `ModelLayout` of the plain ModelProto in ``src[start:end]``, else None."""
    try:
        return _model(src, start, end)
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None


def _model(src, start: int, end: int) -> ModelLayout | None:
    ir_version: int | None = None
    model_version = 0
    strings = dict.fromkeys(_MODEL_STRINGS, "")
    opsets: list = []
    graph = None
    pos = start
    while pos < end:
        number, wt, a, pos = _field(src, pos, end, _MODEL_DEPTH)
        if number == _IR_VERSION or number == _MODEL_VERSION:
            if wt != VARINT:
                return None
            if number == _IR_VERSION:
                ir_version = to_int64(a)
            else:
                model_version = to_int64(a)
        elif number in strings:
            if wt != LEN:
                return None
            strings[number] = src[a:pos].decode()
        elif number == _OPSET:
            if wt != LEN:
                return None
            opsets += (a, pos)
        elif number == _GRAPH:
            if wt != LEN or graph is not None:  # a second graph merges into the first
                return None
            graph = _graph(src, a, pos)
            if graph is None:
                return None
        elif number in _MODEL_EXTRAS:
            return None
    if graph is None or pos != end:
        return None
    text = [strings[n] for n in _MODEL_STRINGS]
    return ModelLayout(ir_version, text[0], text[1], text[2], model_version, text[3], opsets, graph)


def _graph(src, start: int, end: int) -> GraphLayout | None:
    # Every field a plain graph has is length-delimited with a one-byte tag, and they come
    # in runs (thousands of nodes, then the initializers, ...): a run of one tag whose
    # lengths take one or two bytes is read by a tight loop (as `wirefmt.scan._span_run`
    # reads it for the message path), anything else through `wire.field`.
    lists: dict = {n: [] for n in _GRAPH_LISTS}
    name = ""
    value_infos = 0
    pos = start
    while pos < end:
        tag = src[pos]
        number = tag >> 3
        if tag < 128 and tag & 7 == LEN and number:
            spans = lists.get(number)
            if spans is None:
                spans = []  # a run of a field whose items are not kept
            append = spans.append
            run_start = len(spans)
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
            found = (len(spans) - run_start) >> 1
            if number == _VALUE_INFO:
                value_infos += found
            elif number == _GRAPH_NAME and found:
                name = src[spans[-2]:spans[-1]].decode()
            elif number in _GRAPH_EXTRAS and found:
                return None
            if pos >= end or src[pos] != tag:
                continue
        number, wt, a, pos = _field(src, pos, end, _GRAPH_DEPTH)
        if wt != LEN:
            if number in _GRAPH_KNOWN:
                return None
            continue  # an unknown field
        spans = lists.get(number)
        if spans is not None:
            spans += (a, pos)
        elif number == _VALUE_INFO:
            value_infos += 1
        elif number == _GRAPH_NAME:
            name = src[a:pos].decode()
        elif number in _GRAPH_EXTRAS:
            return None
    if pos != end:
        return None
    return GraphLayout(name, lists[_NODE], lists[_INITIALIZER], lists[_INPUT], lists[_OUTPUT], value_infos)
