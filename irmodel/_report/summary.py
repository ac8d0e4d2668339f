"""What `irmodel inspect` reports: a model summary that never touches weight bytes.

Everything here is computed from message headers: tensor sizes come from ``dims`` and
``data_type`` (not from the payload), external data files are measured with
``os.stat`` (never opened).  On a memory-mapped model this reads only the pages that
hold the graph's structure.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable

from wirefmt.message import item_spans, items_in_buffer

from .._dtypes.table import ELEM_BITS
from ..limits import add_sizes, byte_size, element_count
from .._wireview.fastpath import fast_paths_on, items_read
from .._wireview.nodescan import count_ops
from .._files.origin import origin_of
from .._wireview.infoscan import opset_entry, value_info_tensor
from .._wireview.tensorscan import tensor_header
from .._walk import GRAPH, NODE, SPARSE_TENSOR, TENSOR, top_level, walk, walk_items
from .entries import add_op_counts, dtype_name, model_header, op_name, summary_dict, tensor_entry, value_entries
from .external import external_files, external_info

EXTERNAL = 1  # TensorProto.DataLocation.EXTERNAL
_BLOCK = 8192  # span entries (4096 nodes) the census reads between progress reports


# -- types and shapes ------------------------------------------------------------------

def type_info(type_proto: Any) -> dict:
    """A JSON-friendly description of a ``TypeProto``.

    Tensor shapes are lists whose items are ints (``dim_value``), strings
    (``dim_param``, a symbolic dimension) or ``None`` (unknown); ``shape`` is ``None``
    when the rank itself is unknown.
    """
    which = type_proto.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        t = getattr(type_proto, which)
        shape = ([d.dim_value if d.HasField("dim_value") else
                  (d.dim_param if d.HasField("dim_param") else None) for d in t.shape.dim]
                 if t.HasField("shape") else None)
        return tensor_entry("tensor" if which == "tensor_type" else "sparse_tensor", t.elem_type, shape)
    if which in ("sequence_type", "optional_type"):
        inner = getattr(type_proto, which)
        elem = type_info(inner.elem_type) if inner.HasField("elem_type") else {"kind": None}
        return {"kind": which[:-5], "elem": elem}
    if which == "map_type":
        m = type_proto.map_type
        value = type_info(m.value_type) if m.HasField("value_type") else {"kind": None}
        return {"kind": "map", "key_type": dtype_name(m.key_type), "value": value}
    if which == "opaque_type":
        return {"kind": "opaque", "domain": type_proto.opaque_type.domain, "name": type_proto.opaque_type.name}
    return {"kind": None}


# -- tensors -----------------------------------------------------------------------------

def tensor_nbytes(t: Any) -> int:
    """The bytes the tensor's values occupy in memory (numpy's ``nbytes``), bounded by
    `irmodel.limits` (`limits.TOO_LARGE` past 2**63-1).

    From ``dims`` and ``data_type`` for fixed-width types (sub-byte types packed, as in
    ``raw_data``); the sum of the string lengths for STRING; for an unknown type or
    impossible dims, the stored size (``raw_data``, or the external ``length`` when the
    entries are valid).  Never reads the payload.
    """
    bits = ELEM_BITS.get(t.data_type)
    if bits == 0:  # STRING: variable size
        return add_sizes(len(s) for s in t.string_data)
    n = element_count(t.dims)
    if bits is not None and n is not None:
        return byte_size(n, bits)
    if t.data_location == EXTERNAL:
        info = external_info(t)[0]
        return info.length if info is not None and info.length is not None else 0
    return len(t.raw_data) if t.HasField("raw_data") else 0


def initializer_facts(t: Any) -> tuple:
    """``(name, data_type, nbytes, t)``: what the summary reads of an initializer."""
    return t.name, t.data_type, tensor_nbytes(t), t


def external_entries(t: Any) -> dict:
    """``external_data`` as a dict, for display; a repeated key keeps its last value.

    Not a parser: what the entries *mean* is `external_info`'s to say."""
    return {e.key: e.value for e in t.external_data}


# -- walking the model ----------------------------------------------------------------------

class Census:
    """What one walk over every graph, node and tensor of the model finds (`irmodel._walk`).

    The graphs are the main graph, those of training_info, and every graph-valued
    attribute at any depth (counted as ``subgraphs``); functions' nodes are visited too.
    Each node is visited once, which on a large model is most of the cost.

    ``stream=True`` (the default) reads the main graph's plain nodes from their bytes
    (`irmodel._wireview.nodescan`: op type and domain only, no NodeProto made) and walks only the
    others; the result is the same as the full walk's (``stream=False``), which the tests
    check on the reference corpus.  A model changed since it was read is walked in full.
    """

    def __init__(self, model: Any, progress: Callable[[int, int], None] | None = None,
                 stream: bool = True) -> None:
        # op histogram of the main graph (a dict, not a Counter: `collections` is not
        # otherwise imported by `inspect`)
        self.main_ops: dict = {}
        self.subgraphs = 0
        self.graph_nodes = 0  # nodes in all graphs (not functions)
        self.external: list = []  # TensorProtos whose data is in external files
        self.streamed = 0  # main-graph nodes read from their bytes (not walked)
        #: The main graph's initializers, ``(name, data_type, nbytes, tensor or None)`` each
        #: (None: read from the bytes, `irmodel._wireview.tensorscan`), when they were streamed.
        self.initializers: list | None = None
        self._progress = progress
        self._total = len(model.graph.node) if model.HasField("graph") else 0
        self._done = 0
        items = walk(model)
        if stream and model.HasField("graph") and fast_paths_on():
            found = items_in_buffer(model.graph, "node")
            if found is not None:  # the graph is exactly its bytes
                rest = top_level(model)
                next(rest)  # the main graph, streamed here instead
                self._stream_main_graph(model.graph, *found)
                items = walk_items(rest)
        visit = self._visit
        for item in items:
            visit(item)

    def _visit(self, item: tuple) -> None:
        kind, msg, where = item
        if kind == NODE:
            container = where[0]
            if container[0] is None and container[1] == "graph":
                name = _op_name(msg)
                self.main_ops[name] = self.main_ops.get(name, 0) + 1
            self._tick()
        elif kind == GRAPH:
            self.graph_nodes += len(msg.node)
            self.subgraphs += where[1] in ("g", "graphs")
        elif kind == TENSOR:
            self._tensors((msg,))
        elif kind == SPARSE_TENSOR:
            self._sparse(msg)

    def _tick(self) -> None:
        self._done += 1
        if self._progress is not None and not self._done & 1023:
            self._progress(self._done, self._total)

    def _advance(self, n: int) -> None:
        """``n`` nodes done at once: progress as `_tick` would have reported at least once."""
        before, self._done = self._done, self._done + n
        if self._progress is not None and before >> 10 != self._done >> 10:
            self._progress(self._done, self._total)

    def _stream_main_graph(self, g: Any, src: Any, spans: list) -> None:
        """The main graph's items as `walk` orders them, plain nodes read from their bytes."""
        where = (None, "graph", None)
        self._visit((GRAPH, g, where))
        self.initializers = self._stream_initializers(g, src, where)
        for i, t in enumerate(g.sparse_initializer):
            self._visit((SPARSE_TENSOR, t, (where, "sparse_initializer", i)))
        depth = g._depth + 1
        counts: dict = {}  # (op_type, domain) -> nodes; named once at the end
        for first in range(0, len(spans), _BLOCK):  # blocks: progress now and then
            block = spans if len(spans) <= _BLOCK else spans[first:first + _BLOCK]
            found, walked = count_ops(src, block, depth)
            for op, n in found.items():
                counts[op] = counts.get(op, 0) + n
            for i in walked:  # not plain, or not well formed: made and walked as always
                index = (first >> 1) + i
                for item in walk_items([(NODE, g.node[index], (where, "node", index))]):
                    self._visit(item)
            streamed = (len(block) >> 1) - len(walked)
            self.streamed += streamed
            self._advance(streamed)
        add_op_counts(self.main_ops, counts)

    def _stream_initializers(self, g: Any, src: Any, where: tuple) -> list:
        """`initializer_facts` of the main graph, read from the bytes where they are simple;
        the others (external ones among them) made and visited as `walk` would."""
        spans = item_spans(g, "initializer")
        depth = g._depth + 1
        out = []
        tries = _HEADER_TRIES if spans is not None and fast_paths_on() else 0
        for i in range(len(g.initializer)):
            header = tensor_header(src, spans[2 * i], spans[2 * i + 1], depth) if tries and spans is not None else None
            if header is not None:
                tries = _HEADER_TRIES
                name, data_type, dims = header
                bits = ELEM_BITS.get(data_type)
                if bits:  # a known type, not STRING (whose size is its strings')
                    n = element_count(dims)
                    if n is not None:
                        out.append((name, data_type, byte_size(n, bits), None))
                        continue
            elif tries:
                tries -= 1
            t = g.initializer[i]
            self._visit((TENSOR, t, (where, "initializer", i)))
            out.append(initializer_facts(t))
        return out

    def _tensors(self, tensors) -> None:
        for t in tensors:
            if t.data_location == EXTERNAL:
                self.external.append(t)

    def _sparse(self, sp) -> None:
        self._tensors([getattr(sp, n) for n in ("values", "indices") if sp.HasField(n)])


#: Initializers `tensor_header` may refuse in a row before the rest of the graph's are
#: made without asking it (an exporter writes all its tensors external, or none: asking
#: for each of 437 external tensors only added to the message path's cost).
_HEADER_TRIES = 8


def _op_name(node):
    """``domain::op_type`` of a NodeProto (`entries.op_name`)."""
    return op_name(node.op_type, node.domain)


def summarize(model: Any, base_dir: str | None = None,
              progress: Callable[[int, int], None] | None = None, *, stream: bool = True) -> dict:
    """The `inspect` summary of ``model`` as a JSON-friendly dict.

    ``base_dir`` is the model's directory, where external data files are looked up
    (defaults to the directory `irmodel.load` recorded).  ``progress(done, total)`` is
    called now and then while the nodes are visited.  ``stream=False`` walks every node
    as a NodeProto (`Census`); the result is the same.
    """
    import gc  # noqa: PLC0415 - built in

    thresholds = gc.get_threshold()
    gc.set_threshold(*_GC_THRESHOLDS)
    try:
        return _summarize(model, base_dir, progress, stream)
    finally:
        gc.set_threshold(*thresholds)


#: The cyclic collector's thresholds while a summary is made (as `irmodel.inference`'s
#: run): a young collection every 700 allocations walked the objects the load had just
#: made, again and again; young collections every 100,000 allocations keep the garbage of
#: walked nodes bounded, older ones wait.
_GC_THRESHOLDS = (100_000, 1000, 1000)


def _summarize(model: Any, base_dir: str | None, progress: Callable[[int, int], None] | None,
               stream: bool) -> dict:
    if base_dir is None:
        origin = origin_of(model)
        base_dir = origin.base_dir if origin is not None else None
    g = model.graph
    census = Census(model, progress, stream=stream)
    # The facts hold the TensorProtos they were taken from (a long repeated field holds
    # its items weakly): the census and the loop below read the same ones.
    initializers = census.initializers
    if initializers is None:
        initializers = [initializer_facts(t) for t in g.initializer]
    init_names = {facts[0] for facts in initializers}

    files = external_files(census.external, base_dir, tensor_nbytes)

    def value_infos(field):
        streamed = _streamed_value_infos(g, field, init_names) if stream else None
        if streamed is not None:
            return streamed
        return [{"name": v.name, **type_info(v.type), "initializer": v.name in init_names}
                for v in getattr(g, field)]

    opsets = _read_items(model, "opset_import", opset_entry) if stream else None
    if opsets is None:
        opsets = [(o.domain, o.version) for o in model.opset_import]
    header = model_header(model.ir_version if model.HasField("ir_version") else None, model.producer_name,
                          model.producer_version, model.domain, model.model_version, model.doc_string, opsets,
                          [(p.key, p.value) for p in model.metadata_props])
    functions = [{"domain": f.domain, "name": f.name, "overload": f.overload, "nodes": len(f.node),
                  "inputs": list(f.input), "outputs": list(f.output)} for f in model.functions]
    return summary_dict(header, g.name, value_infos("input"), value_infos("output"), len(g.value_info),
                        len(g.node), census.main_ops, initializers, len(g.sparse_initializer),
                        files, functions, census.subgraphs, census.graph_nodes,
                        len(model.training_info))


def _read_items(msg: Any, field: str, read: Callable) -> list | None:
    """What ``read(src, start, end, depth)`` (`irmodel._wireview.infoscan`) answers for each item of
    ``msg``'s repeated field ``field``, from their bytes; None if they are not bytes any
    more or ``read`` declines any item (then every one is made, as before)."""
    found = items_read(msg, field, read)
    return None if found is None or None in found else found


def value_types(g: Any, field: str) -> list:
    """``[(name, type_info)]`` of the ValueInfoProtos of ``g``'s repeated ``field``
    (``input``, ``value_info``, ``output``): read from their bytes where each is a plain
    tensor value (`infoscan.value_info_tensor`), else from the messages.  Why: ``infer``
    lists every value of the graph, 200,000 of them for a long chain, and making a
    ValueInfoProto and its types for each cost 4.6 s of such a run."""
    read = _read_items(g, field, value_info_tensor)
    if read is not None:
        return [(name, tensor_entry("tensor", elem_type, shape)) for name, elem_type, shape in read]
    return [(v.name, type_info(v.type)) for v in getattr(g, field)]


def _streamed_value_infos(g: Any, field: str, init_names: set) -> list | None:
    """`_summarize`'s entries of ``g.input`` or ``g.output`` read from their bytes, or None."""
    read = _read_items(g, field, value_info_tensor)
    if read is None:
        return None
    return value_entries(read, init_names)
