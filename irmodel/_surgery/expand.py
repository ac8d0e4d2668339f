"""``expand_out_dim_graph`` and ``expand_out_dim`` (onnx.compose): an extra dimension of
extent 1 on every graph output, by an Unsqueeze per output.

onnx's names for the added nodes and values, and onnx's nodes where they are right.  Fixed:

* the declared output shape puts the new dimension where Unsqueeze puts it: for a negative
  ``dim_idx`` counted from the back of the *new* rank (onnx inserts it one place too early:
  ``[2, 3]`` with ``dim_idx=-1`` becomes ``[2, 1, 3]`` in onnx's declaration, and Unsqueeze
  computes ``[2, 3, 1]``);
* symbolic dims (``dim_param``) and an unknown shape are kept (onnx turns a named dim into
  0 and an unknown shape into ``[1]``);
* below ai.onnx opset 13, where Unsqueeze takes ``axes`` as an attribute, the node is
  written so (onnx always passes axes as an input, which is invalid there); the graph
  function learns the opset from its keyword-only ``opset_version`` (default: 13 or later);
* values of the old outputs read from inside sub-graphs are renamed there too.
"""

from __future__ import annotations

from .prefix import rename_outer
from .scope import subgraphs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def expand_out_dim_graph(graph: Any, dim_idx: int, inplace: bool | None = False, *,
                         opset_version: int | None = None) -> Any:
    from .. import GraphProto, TensorProto, helper  # noqa: PLC0415
    from wirefmt import shared_copy  # noqa: PLC0415
    if not isinstance(graph, GraphProto):
        raise TypeError("graph argument is not an ONNX graph")
    g = graph if inplace else shared_copy(graph)
    suffix = f"_collapsed_dim_{dim_idx}"
    names = [o.name for o in g.output]
    _rename_node_values(g, {n: n + suffix for n in names})
    legacy = opset_version is not None and opset_version < 13
    key = g.name + "_expand_out_dim_idx"
    if not legacy:
        g.node.append(helper.make_node("Constant", [], [key], name=f"{key}-constant",
                                       value=helper.make_tensor(f"{key}-value", TensorProto.INT64, [1], [dim_idx])))
    outputs = list(g.output)
    g.ClearField("output")
    for o in outputs:
        if legacy:
            node = helper.make_node("Unsqueeze", [o.name + suffix], [o.name], name=f"unsqueeze-{o.name}", axes=[dim_idx])
        else:
            node = helper.make_node("Unsqueeze", [o.name + suffix, key], [o.name], name=f"unsqueeze-{o.name}")
        g.node.append(node)
        g.output.append(_expanded(o, dim_idx))
    return g


def _rename_node_values(g: Any, mapping: dict) -> None:
    """Rename, as onnx does, the node outputs and node inputs named in ``mapping`` (and the
    outer-scope reads of sub-graphs, which onnx leaves); graph inputs, outputs and value
    infos keep their names."""
    for n in g.node:
        for field in (n.input, n.output):
            for i, name in enumerate(list(field)):
                if name in mapping:
                    field[i] = mapping[name]
        for sub in subgraphs(n):
            rename_outer(sub, mapping)


def _expanded(o: Any, dim_idx: int) -> Any:
    """The output's value info with a dim of 1 where Unsqueeze puts it (type kept otherwise)."""
    from .. import helper  # noqa: PLC0415
    tt = o.type.tensor_type if o.HasField("type") and o.type.HasField("tensor_type") else None
    if tt is None:
        return helper.make_value_info(o.name, o.type) if o.HasField("type") else helper.make_empty_tensor_value_info(o.name)
    if not tt.HasField("shape"):
        return helper.make_tensor_value_info(o.name, tt.elem_type, None)
    dims: list = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]
    rank = len(dims) + 1
    at = dim_idx + rank if dim_idx < 0 else dim_idx
    if not 0 <= at < rank:
        from .errors import SurgeryError  # noqa: PLC0415
        raise SurgeryError(f"dim_idx {dim_idx} is out of range for output {o.name!r} of rank {rank - 1}")
    dims.insert(at, 1)
    return helper.make_tensor_value_info(o.name, tt.elem_type, dims)


def expand_out_dim(model: Any, dim_idx: int, inplace: bool | None = False) -> Any:
    from .. import ModelProto  # noqa: PLC0415
    from .opsets import opset_map  # noqa: PLC0415
    from wirefmt import shared_copy  # noqa: PLC0415

    from .share import adopt_origin  # noqa: PLC0415
    if not isinstance(model, ModelProto):
        raise TypeError("model argument is not an ONNX model")
    if not inplace:
        copy = shared_copy(model)
        adopt_origin(copy, model)
        model = copy
    expand_out_dim_graph(model.graph, dim_idx, inplace=True, opset_version=opset_map(model.opset_import).get(""))
    return model
