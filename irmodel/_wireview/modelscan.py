"""The ModelProto reader: a plain model and its main graph read from their bytes.

`model_layout` reads the top-level fields of a model field by field (`wire.field`, the
full scan's checks), and its main graph with `graphscan.graph_layout`, without making a
message: the model's scalars and strings, and the spans of the graph's repeated fields
(nodes, initializers, inputs, outputs), for the other readers of this package to read
item by item.  It answers only for a *plain* model, the shape every exporter writes: one ``graph``, no
functions, training_info, sparse initializers, device configurations or metadata, every
known field with its schema's wire type and every string valid UTF-8.  Anything else is
None, and the caller takes the message path, which says what is wrong with a model that
is not well formed.  Unknown fields are skipped, as the message path keeps them aside.
"""

from __future__ import annotations

from wirefmt.errors import DecodeError
from wirefmt.records import named_tuple
from wirefmt.schema import LEN, VARINT
from wirefmt.varint import to_int64

from .fields import MODEL_GRAPH_NUMBER, number as _number
from .graphscan import GraphLayout, graph_layout
from .wire import field as _field

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import NamedTuple


def _numbers(type_name: str, *names: str) -> tuple:
    return tuple(_number(type_name, n) for n in names)


_IR_VERSION, _MODEL_VERSION = _numbers("ModelProto", "ir_version", "model_version")
#: The model's strings, in `ModelLayout`'s order.
_MODEL_STRINGS = _numbers("ModelProto", "producer_name", "producer_version", "domain", "doc_string")
_GRAPH, _OPSET = MODEL_GRAPH_NUMBER, _number("ModelProto", "opset_import")
#: The model's fields a plain model does not have (the summary would have to walk them).
_MODEL_EXTRAS = frozenset(_numbers("ModelProto", "metadata_props", "training_info", "functions",
                                   "configuration"))

#: A model's nesting depth as the message path counts it (bounding group skipping as there).
_MODEL_DEPTH = 0


if TYPE_CHECKING:
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
            graph = graph_layout(src, a, pos)
            if graph is None:
                return None
        elif number in _MODEL_EXTRAS:
            return None
    if graph is None or pos != end:
        return None
    text = [strings[n] for n in _MODEL_STRINGS]
    return ModelLayout(ir_version, text[0], text[1], text[2], model_version, text[3], opsets, graph)
