"""The entries of the `inspect` summary, one layout whichever way the facts were read.

The summary is computed two ways: from a model's messages (`irmodel._report.summary`)
and, for a plain model, from its bytes alone (`irmodel._report.bytesummary`, which
imports no message class).  Both hand their facts to `summary_dict`, so the two cannot
differ in how they name a dtype, order the histogram or total the initializers.  This
module imports no message either: dtype names come from the schema table.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Iterable

from ..limits import add_sizes
from ..proto import enum_spec

_DTYPE_NAMES: dict = enum_spec("TensorProto.DataType").names


def dtype_name(code: int) -> str:
    name = _DTYPE_NAMES.get(code)
    return f"<unknown dtype {code}>" if name is None else name


def tensor_entry(kind: str, elem_type: int, shape: list | None) -> dict:
    """The entry of a tensor type (``kind`` "tensor" or "sparse_tensor")."""
    return {"kind": kind, "elem_type": dtype_name(elem_type), "shape": shape}


def type_text(info: dict) -> str:
    """``FLOAT[batch, 3, ?]`` and friends, from a `type_info` dict (names made safe)."""
    from .shown import name_text  # noqa: PLC0415 - the text output only

    kind = info.get("kind")
    if kind in ("tensor", "sparse_tensor"):
        shape = info["shape"]
        dims = " (unknown rank)" if shape is None else \
            "[" + ", ".join("?" if d is None else str(d) if isinstance(d, int) else name_text(d)
                            for d in shape) + "]"
        return ("sparse " if kind == "sparse_tensor" else "") + info["elem_type"] + dims
    if kind in ("sequence", "optional"):
        return f"{kind}({type_text(info['elem'])})"
    if kind == "map":
        return f"map({info['key_type']}, {type_text(info['value'])})"
    if kind == "opaque":
        return f"opaque({name_text(info['domain'])}::{name_text(info['name'])})"
    return "(no type)"


def op_name(op_type: Any, domain: Any) -> Any:
    """``domain::op_type``, the default domain left out.  A bytes domain or op type
    (invalid UTF-8) makes the name bytes, shown with escapes by every output."""
    if domain in ("", "ai.onnx"):
        return op_type
    if isinstance(domain, str) and isinstance(op_type, str):
        return domain + "::" + op_type
    return b"::".join(x.encode() if isinstance(x, str) else bytes(x) for x in (domain, op_type))


def add_op_counts(into: dict, counts: dict) -> None:
    """Add ``counts`` of nodes by ``(op_type, domain)`` (`irmodel._wireview.nodescan.count_ops`)
    to ``into``, the histogram by `op_name`."""
    for (op_type, domain), n in counts.items():
        name = op_name(op_type, domain)
        into[name] = into.get(name, 0) + n


def _histogram_order(item: tuple) -> tuple:
    """Most frequent first, then by name (a bytes name, invalid UTF-8, as its text)."""
    name, count = item
    if not isinstance(name, str):
        from wirefmt.safetext import as_text  # noqa: PLC0415 - rare: only names of invalid UTF-8

        name = as_text(name)
    return -count, name


def histogram(counts: dict) -> dict:
    """The op histogram in the summary's order."""
    return dict(sorted(counts.items(), key=_histogram_order))


def by_dtype(initializers: Iterable[tuple]) -> dict:
    """``{dtype name: {"count", "bytes"}}`` of ``(name, data_type, nbytes, ...)`` facts."""
    out: dict = {}
    for _, data_type, nbytes, *_ in initializers:
        entry = out.setdefault(dtype_name(data_type), {"count": 0, "bytes": 0})
        entry["count"] += 1
        entry["bytes"] = add_sizes((entry["bytes"], nbytes))
    return out


def value_entries(read: Iterable[tuple], init_names: set) -> list:
    """The entries of inputs or outputs read as ``(name, elem_type, shape)`` tensors."""
    return [{"name": name, **tensor_entry("tensor", elem_type, shape), "initializer": name in init_names}
            for name, elem_type, shape in read]


def model_header(ir_version: int | None, producer_name: Any, producer_version: Any, domain: Any,
                 model_version: int, doc_string: Any, opsets: Iterable[tuple], metadata: Iterable[tuple]) -> dict:
    """The summary's entries of the model itself, ``ir_version`` to ``metadata_props``.
    ``opsets``: ``(domain, version)`` pairs; ``metadata``: ``(key, value)`` pairs."""
    return {
        "ir_version": ir_version,
        "producer_name": producer_name,
        "producer_version": producer_version,
        "domain": domain,
        "model_version": model_version,
        "doc_string": doc_string,
        "opset_import": [{"domain": d, "version": v} for d, v in opsets],
        "metadata_props": [{"key": k, "value": v} for k, v in metadata],
    }


def summary_dict(header: dict, graph_name: Any, inputs: list, outputs: list, value_info_count: int,
                 node_count: int, op_counts: dict, initializers: list, sparse_count: int, external: list,
                 functions: list, subgraphs: int, total_nodes: int, training_infos: int) -> dict:
    """The summary, its keys in their documented order.  ``header``: `model_header`;
    ``initializers``: the main graph's facts,
    ``(name, data_type, nbytes, ...)`` each."""
    dtypes = by_dtype(initializers)
    return {
        **header,
        "graph_name": graph_name,
        "inputs": inputs,
        "outputs": outputs,
        "value_info_count": value_info_count,
        "node_count": node_count,
        "op_types": histogram(op_counts),
        "initializer_count": len(initializers),
        "initializer_bytes": add_sizes(e["bytes"] for e in dtypes.values()),
        "initializers_by_dtype": dtypes,
        "sparse_initializer_count": sparse_count,
        "external_data": external,
        "functions": functions,
        "subgraph_count": subgraphs,
        "total_node_count": total_nodes,
        "training_info_count": training_infos,
    }
