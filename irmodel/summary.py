"""What `irmodel inspect` reports: a model summary that never touches weight bytes."""

from __future__ import annotations

from collections import Counter

from .messages import ENUMS

_DTYPE_NAMES = ENUMS["TensorProto.DataType"]


def dtype_name(code: int) -> str:
    try:
        return _DTYPE_NAMES.Name(code)
    except ValueError:
        return f"<unknown dtype {code}>"


def _dims_of(type_proto) -> dict:
    which = type_proto.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        t = getattr(type_proto, which)
        out = {"kind": "tensor" if which == "tensor_type" else "sparse_tensor",
               "elem_type": dtype_name(t.elem_type)}
        if t.HasField("shape"):
            out["shape"] = [d.dim_value if d.HasField("dim_value") else
                            (d.dim_param if d.HasField("dim_param") else "?") for d in t.shape.dim]
        else:
            out["shape"] = None
        return out
    if which in ("sequence_type", "optional_type"):
        inner = getattr(type_proto, which)
        return {"kind": which[:-5], "elem": _dims_of(inner.elem_type)}
    if which == "map_type":
        return {"kind": "map", "key_type": dtype_name(type_proto.map_type.key_type),
                "value": _dims_of(type_proto.map_type.value_type)}
    if which == "opaque_type":
        return {"kind": "opaque", "domain": type_proto.opaque_type.domain, "name": type_proto.opaque_type.name}
    return {"kind": "unknown"}


def _tensor_nbytes(t) -> int:
    """Payload size from lengths only: raw_data's length, an external length, or typed fields."""
    if t.data_location == 1:
        for e in t.external_data:
            if e.key == "length" and e.value.isdigit():
                return int(e.value)
        return 0
    if t.HasField("raw_data"):
        return len(t.raw_data)
    total = 0
    lazy = t.__dict__.get("_lazy") or {}
    for name in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
        spans = lazy.get(name)
        if spans:
            total += sum(spans[i + 1] - spans[i] for i in range(0, len(spans), 2))
        elif name in t.__dict__:
            total += len(t.__dict__[name]) * (8 if name in ("int64_data", "double_data", "uint64_data") else 4)
    if "string_data" in t.__dict__:
        total += sum(len(s) for s in t.string_data)
    return total


def _count_subgraphs(graph) -> int:
    n = 0
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("g"):
                n += 1 + _count_subgraphs(a.g)
            for g in a.graphs:
                n += 1 + _count_subgraphs(g)
    return n


def summarize(model) -> dict:
    g = model.graph
    ops = Counter()
    for node in g.node:
        ops[(node.domain + "::" if node.domain not in ("", "ai.onnx") else "") + node.op_type] += 1
    by_dtype: dict = {}
    external_files: dict = {}
    for t in g.initializer:
        entry = by_dtype.setdefault(dtype_name(t.data_type), {"count": 0, "bytes": 0})
        entry["count"] += 1
        entry["bytes"] += _tensor_nbytes(t)
        if t.data_location == 1:
            loc = next((e.value for e in t.external_data if e.key == "location"), None)
            if loc is not None:
                external_files.setdefault(loc, 0)
                external_files[loc] += _tensor_nbytes(t)
    return {
        "ir_version": model.ir_version,
        "producer_name": model.producer_name,
        "producer_version": model.producer_version,
        "domain": model.domain,
        "model_version": model.model_version,
        "doc_string": model.doc_string,
        "opset_import": [{"domain": o.domain, "version": o.version} for o in model.opset_import],
        "metadata_props": {p.key: p.value for p in model.metadata_props},
        "graph_name": g.name,
        "inputs": [{"name": v.name, **_dims_of(v.type)} for v in g.input],
        "outputs": [{"name": v.name, **_dims_of(v.type)} for v in g.output],
        "node_count": len(g.node),
        "op_types": dict(ops.most_common()),
        "initializer_count": len(g.initializer),
        "initializer_bytes": sum(e["bytes"] for e in by_dtype.values()),
        "initializers_by_dtype": by_dtype,
        "sparse_initializer_count": len(g.sparse_initializer),
        "external_data_files": external_files,
        "functions": [{"domain": f.domain, "name": f.name, "nodes": len(f.node)} for f in model.functions],
        "subgraph_count": _count_subgraphs(g),
    }
