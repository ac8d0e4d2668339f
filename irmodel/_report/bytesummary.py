"""The `inspect` summary of a plain model read from its bytes alone, no message made.

`irmodel._report.summary` summarizes a loaded model; reading what a summary needs of a
plain model goes through this project's byte readers already, but loading builds the
message classes and the scan code first, and that import and setup was most of what a
whole `irmodel inspect` process spent on a GPT-2 export (see benchmarks/RESULTS.md).  Here
the model's bytes are read directly by `irmodel._wireview` (`modelscan` and `graphscan`
for the model and its main graph, `nodescan` for the op histogram, `tensorscan` for
initializer headers, `infoscan` for inputs, outputs and opsets), and this module imports
no message class, nor the codec's message layer.

The answer is the same as `summary.summarize`'s on the loaded model, or None: any part
a byte reader declines (a sub-graph, an odd tensor, a function, a field that is not well
formed) makes the whole summary the message path's, which also says what is wrong with
a model that is broken.  Initializers whose data is external are read from the bytes too
(their entries, `tensorscan.initializer_header`), and their files measured by the same code
as the message path's (`irmodel._report.external`).  The tests compute every summary both
ways.
"""

from __future__ import annotations

import os

from wirefmt.records import named_tuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable, NamedTuple

from .._dtypes.table import ELEM_BITS
from ..limits import byte_size, element_count
from .._wireview.fastpath import fast_paths_on, read_spans
from .._wireview.infoscan import opset_entry, value_info_tensor
from .._wireview.modelscan import model_layout
from .._wireview.nodescan import count_ops
from .._wireview.tensorscan import initializer_header
from .entries import add_op_counts, model_header, summary_dict, value_entries

#: Depths as the message path counts them: a model's opset entries are 1 below it, the
#: main graph's nodes, initializers, inputs and outputs 2.
_OPSET_DEPTH, _ITEM_DEPTH = 1, 2


def summarize_buffer(src: Any, base_dir: str | None = None,
                     progress: Callable[[int, int], None] | None = None) -> dict | None:
    """The summary of the plain model that is all of ``src`` (bytes or a mapped file), or
    None for any model the byte readers do not read whole.  ``base_dir``: the model's
    directory, where the data files of external initializers are measured (never opened);
    None reports them missing, as `summary.summarize` does without a directory."""
    if not fast_paths_on():
        return None
    layout = model_layout(src, 0, len(src))
    if layout is None:
        return None
    g = layout.graph
    opsets = _each(src, layout.opset_import, opset_entry, _OPSET_DEPTH)
    inputs = _each(src, g.input, value_info_tensor, _ITEM_DEPTH)
    outputs = _each(src, g.output, value_info_tensor, _ITEM_DEPTH)
    external: list = []
    initializers = _initializers(src, g.initializer, external)
    if opsets is None or inputs is None or outputs is None or initializers is None:
        return None
    counts, walk = count_ops(src, g.node, _ITEM_DEPTH)
    if walk:  # a node the message path must make (a sub-graph, a tensor to look into)
        return None
    nodes = len(g.node) >> 1
    if progress is not None and nodes:
        progress(nodes, nodes)
    op_counts: dict = {}
    add_op_counts(op_counts, counts)
    init_names = {facts[0] for facts in initializers}
    header = model_header(layout.ir_version, layout.producer_name, layout.producer_version, layout.domain,
                          layout.model_version, layout.doc_string, opsets, ())
    files: list = []
    if external:
        from .external import external_files  # noqa: PLC0415 - only a model with external data needs it

        files = external_files(external, base_dir, _nbytes)
    return summary_dict(header, g.name, value_entries(inputs, init_names), value_entries(outputs, init_names),
                        g.value_info_count, nodes, op_counts, initializers, 0, files, [], 0, nodes, 0)


def _nbytes(t: Any) -> int:
    return t.nbytes


def _each(src: Any, spans: list, read: Callable, depth: int) -> list | None:
    """``read(src, start, end, depth)`` of every span, or None if it declines any."""
    found = read_spans(src, spans, read, depth)
    return None if None in found else found


def _initializers(src: Any, spans: list, external: list) -> list | None:
    """``(name, data_type, nbytes)`` of every initializer, from its header
    (`initializer_header`; those whose data is external are also added to ``external``),
    or None if any is not simple or of no fixed size."""
    out = []
    for i in range(0, len(spans), 2):
        header = initializer_header(src, spans[i], spans[i + 1], _ITEM_DEPTH)
        if header is None:
            return None
        name, data_type, dims, entries = header
        bits = ELEM_BITS.get(data_type)
        n = element_count(dims)
        if not bits or n is None:  # STRING (sized by its strings), an unknown type, odd dims
            return None
        nbytes = byte_size(n, bits)
        out.append((name, data_type, nbytes))
        if entries is not None:
            external.append(_ExternalTensor(name, [_Entry(k, v) for k, v in entries], nbytes))
    return out


if TYPE_CHECKING:
    class _Entry(NamedTuple):
        key: str
        value: str

    class _ExternalTensor(NamedTuple):
        name: str
        external_data: list
        nbytes: int
else:
    #: What `irmodel._report.external` reads of an external tensor (as of a TensorProto:
    #: its ``name`` and ``external_data`` entries), and its size from its dims.
    _Entry = named_tuple("Entry", ("key", "value"), __name__)
    _ExternalTensor = named_tuple("ExternalTensor", ("name", "external_data", "nbytes"), __name__)


def summarize_path(path: str, progress: Callable[[int, int], None] | None = None) -> tuple | None:
    """``(summary, file size)`` of the plain model in the file at ``path``, or None (the
    caller loads the model and takes the message path, which raises what opening or
    reading it raises).  A regular file is opened as `irmodel.load` opens it
    (`_files.buffer`); anything else is left to the message path."""
    from .._files.buffer import regular_file_buffer  # noqa: PLC0415 - imports mmap

    try:
        src = regular_file_buffer(path)
    except OSError:
        return None
    if src is None:  # a pipe, an empty file: the message path opens it
        return None
    found = summarize_buffer(src, os.path.dirname(os.path.abspath(os.fsdecode(os.fspath(path)))), progress)
    return None if found is None else (found, len(src))

