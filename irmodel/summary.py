"""What `irmodel inspect` reports: a model summary that never touches weight bytes.

Everything here is computed from message headers: tensor sizes come from ``dims`` and
``data_type`` (not from the payload), external data files are measured with
``os.stat`` (never opened).  On a memory-mapped model this reads only the pages that
hold the graph's structure.
"""

from __future__ import annotations

import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable

from .dtypes import ELEM_TYPES
from wirefmt.message import exact_span, item_spans

from .messages import ENUMS
from .nodescan import node_op
from .origin import origin_of
from .walk import GRAPH, NODE, SPARSE_TENSOR, TENSOR, top_level, walk, walk_items

_DTYPE_NAMES = ENUMS["TensorProto.DataType"]
EXTERNAL = 1  # TensorProto.DataLocation.EXTERNAL


def dtype_name(code: int) -> str:
    try:
        return _DTYPE_NAMES.Name(code)
    except ValueError:
        return f"<unknown dtype {code}>"


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
        out: dict[str, Any] = {"kind": "tensor" if which == "tensor_type" else "sparse_tensor",
               "elem_type": dtype_name(t.elem_type)}
        if t.HasField("shape"):
            out["shape"] = [d.dim_value if d.HasField("dim_value") else
                            (d.dim_param if d.HasField("dim_param") else None) for d in t.shape.dim]
        else:
            out["shape"] = None
        return out
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


def type_text(info: dict) -> str:
    """``FLOAT[batch, 3, ?]`` and friends, from a `type_info` dict."""
    kind = info.get("kind")
    if kind in ("tensor", "sparse_tensor"):
        shape = info["shape"]
        dims = " (unknown rank)" if shape is None else \
            "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
        return ("sparse " if kind == "sparse_tensor" else "") + info["elem_type"] + dims
    if kind in ("sequence", "optional"):
        return f"{kind}({type_text(info['elem'])})"
    if kind == "map":
        return f"map({info['key_type']}, {type_text(info['value'])})"
    if kind == "opaque":
        return f"opaque({info['domain']}::{info['name']})"
    return "(no type)"


# -- tensors -----------------------------------------------------------------------------

def element_count(t: Any) -> int | None:
    """The number of elements ``dims`` declare, or ``None`` if a dim is negative."""
    n = 1
    for d in t.dims:
        if d < 0:
            return None
        n *= d
    return n


def tensor_nbytes(t: Any) -> int:
    """The bytes the tensor's values occupy in memory (numpy's ``nbytes``).

    From ``dims`` and ``data_type`` for fixed-width types (sub-byte types packed, as in
    ``raw_data``); the sum of the string lengths for STRING; for an unknown type or
    impossible dims, the stored size (``raw_data`` or the external ``length``).  Never
    reads the payload.
    """
    et = ELEM_TYPES.get(t.data_type)
    bits = None if et is None else et.bits  # 0: variable size (STRING)
    n = element_count(t)
    if bits == 0:
        return sum(len(s) for s in t.string_data)
    if bits is not None and n is not None:
        return (n * bits + 7) // 8
    if t.data_location == EXTERNAL:
        length = external_entries(t).get("length", "")
        return int(length) if length.isdigit() else 0
    return len(t.raw_data) if t.HasField("raw_data") else 0


def external_entries(t: Any) -> dict:
    """``external_data`` as a dict; a repeated key keeps its last value, as onnx does."""
    return {e.key: e.value for e in t.external_data}


def external_location_status(location: str | None, base_dir: str | None) -> tuple[str, int | None]:
    """``(status, size)`` of an external data file, measured with ``os.stat`` only.

    ``status`` is ``"ok"``, ``"missing"``, ``"no location"``, or ``"unsafe location"``
    for a path that is absolute, climbs out with ``..`` or resolves (through symlinks)
    outside the model's directory: those are refused by the loader, so they are not
    even measured here.
    """
    if not location:
        return "no location", None
    if base_dir is None:
        return "missing", None
    parts = location.replace("\\", "/").split("/")
    drive = len(parts[0]) == 2 and parts[0][1] == ":"  # C:foo is absolute enough on Windows
    if os.path.isabs(location) or location.startswith(("/", "\\")) or ".." in parts or drive:
        return "unsafe location", None
    path = os.path.join(base_dir, location)
    real_base = os.path.realpath(base_dir)
    real = os.path.realpath(path)
    if os.path.commonpath([real_base, real]) != real_base:
        return "unsafe location", None
    try:
        st = os.stat(path)
    except OSError:
        return "missing", None
    return "ok", st.st_size


# -- walking the model ----------------------------------------------------------------------

class Census:
    """What one walk over every graph, node and tensor of the model finds (`irmodel.walk`).

    The graphs are the main graph, those of training_info, and every graph-valued
    attribute at any depth (counted as ``subgraphs``); functions' nodes are visited too.
    Each node is visited once, which on a large model is most of the cost.

    ``stream=True`` (the default) reads the main graph's plain nodes from their bytes
    (`irmodel.nodescan`: op type and domain only, no NodeProto made) and walks only the
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
        self._progress = progress
        self._total = len(model.graph.node) if model.HasField("graph") else 0
        self._done = 0
        items = walk(model)
        if stream and model.HasField("graph"):
            span = exact_span(model.graph)
            spans = item_spans(model.graph, "node")
            if span is not None and spans is not None:  # the graph is exactly its bytes
                rest = top_level(model)
                next(rest)  # the main graph, streamed here instead
                self._stream_main_graph(model.graph, span[0], spans)
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

    def _stream_main_graph(self, g: Any, src: Any, spans: list) -> None:
        """The main graph's items as `walk` orders them, plain nodes read from their bytes."""
        where = (None, "graph", None)
        self._visit((GRAPH, g, where))
        for i, t in enumerate(g.initializer):
            self._visit((TENSOR, t, (where, "initializer", i)))
        for i, t in enumerate(g.sparse_initializer):
            self._visit((SPARSE_TENSOR, t, (where, "sparse_initializer", i)))
        depth = g._depth + 1
        counts: dict = {}  # (op_type, domain) -> nodes; named once at the end
        get = counts.get
        for i in range(0, len(spans), 2):
            op = node_op(src, spans[i], spans[i + 1], depth)
            if op is None:  # not plain, or not well formed: made and walked as always
                for item in walk_items([(NODE, g.node[i >> 1], (where, "node", i >> 1))]):
                    self._visit(item)
                continue
            counts[op] = get(op, 0) + 1
            self.streamed += 1
            self._tick()
        for (op_type, domain), n in counts.items():
            name = (domain + "::" if domain not in ("", "ai.onnx") else "") + op_type
            self.main_ops[name] = self.main_ops.get(name, 0) + n

    def _tensors(self, tensors) -> None:
        for t in tensors:
            if t.data_location == EXTERNAL:
                self.external.append(t)

    def _sparse(self, sp) -> None:
        self._tensors([getattr(sp, n) for n in ("values", "indices") if sp.HasField(n)])


def _op_name(node) -> str:
    return (node.domain + "::" if node.domain not in ("", "ai.onnx") else "") + node.op_type


def summarize(model: Any, base_dir: str | None = None,
              progress: Callable[[int, int], None] | None = None, *, stream: bool = True) -> dict:
    """The `inspect` summary of ``model`` as a JSON-friendly dict.

    ``base_dir`` is the model's directory, where external data files are looked up
    (defaults to the directory `irmodel.load` recorded).  ``progress(done, total)`` is
    called now and then while the nodes are visited.  ``stream=False`` walks every node
    as a NodeProto (`Census`); the result is the same.
    """
    if base_dir is None:
        origin = origin_of(model)
        base_dir = origin.base_dir if origin is not None else None
    g = model.graph
    # Held for the length of the summary: the census and the loops below read the same
    # TensorProtos (a long repeated field holds its items weakly; these are made once).
    initializers = list(g.initializer)
    census = Census(model, progress, stream=stream)
    by_dtype: dict = {}
    for t in initializers:
        entry = by_dtype.setdefault(dtype_name(t.data_type), {"count": 0, "bytes": 0})
        entry["count"] += 1
        entry["bytes"] += tensor_nbytes(t)
    init_names = {t.name for t in initializers}

    files: dict = {}
    for t in census.external:
        ext = external_entries(t)
        loc = ext.get("location", "")
        entry = files.get(loc)
        if entry is None:
            status, size = external_location_status(loc, base_dir)
            entry = files[loc] = {"location": loc, "status": status, "file_size": size,
                                  "tensors": 0, "bytes": 0}
        entry["tensors"] += 1
        length = ext.get("length", "")
        entry["bytes"] += int(length) if length.isdigit() else tensor_nbytes(t)

    def value_infos(values):
        return [{"name": v.name, **type_info(v.type), "initializer": v.name in init_names} for v in values]

    return {
        "ir_version": model.ir_version if model.HasField("ir_version") else None,
        "producer_name": model.producer_name,
        "producer_version": model.producer_version,
        "domain": model.domain,
        "model_version": model.model_version,
        "doc_string": model.doc_string,
        "opset_import": [{"domain": o.domain, "version": o.version} for o in model.opset_import],
        "metadata_props": [{"key": p.key, "value": p.value} for p in model.metadata_props],
        "graph_name": g.name,
        "inputs": value_infos(g.input),
        "outputs": value_infos(g.output),
        "value_info_count": len(g.value_info),
        "node_count": len(g.node),
        "op_types": dict(sorted(census.main_ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        "initializer_count": len(g.initializer),
        "initializer_bytes": sum(e["bytes"] for e in by_dtype.values()),
        "initializers_by_dtype": by_dtype,
        "sparse_initializer_count": len(g.sparse_initializer),
        "external_data": list(files.values()),
        "functions": [{"domain": f.domain, "name": f.name, "overload": f.overload, "nodes": len(f.node),
                       "inputs": list(f.input), "outputs": list(f.output)} for f in model.functions],
        "subgraph_count": census.subgraphs,
        "total_node_count": census.graph_nodes,
        "training_info_count": len(model.training_info),
    }
