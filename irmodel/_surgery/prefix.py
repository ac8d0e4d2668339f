"""Renaming a graph's values: ``add_prefix_graph``, ``add_prefix`` (onnx.compose) and
`rename_values`, which composition uses to resolve clashing names.

`add_prefix_graph` prefixes the names onnx's prefixes, with onnx's flags, and fixes where
onnx's result is broken:

* a sub-graph that reads an initializer or value info of an outer graph reads it under its
  new name (onnx adds those names to its map only after the sub-graphs were done);
* with ``rename_nodes=False`` sub-graphs keep their own names, as in onnx, but read the
  renamed outer values under their new names (onnx leaves them reading the old ones);
* `add_prefix` renames a function call only when its domain is the function's, and in
  sub-graphs and function bodies too (onnx renames any node whose op_type is a function's
  name, in the main graph and function bodies only).
"""

from __future__ import annotations

from .scope import initializer_names, subgraphs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _check(graph: Any, what: str = "graph") -> None:
    from .. import GraphProto  # noqa: PLC0415
    if not isinstance(graph, GraphProto):
        raise TypeError(f"{what} argument is not an ONNX graph")


def _copy(msg: Any) -> Any:
    from wirefmt import shared_copy  # noqa: PLC0415
    return shared_copy(msg)


def add_prefix_graph(graph: Any, prefix: str, rename_nodes: bool | None = True, rename_edges: bool | None = True,
                     rename_inputs: bool | None = True, rename_outputs: bool | None = True,
                     rename_initializers: bool | None = True, rename_value_infos: bool | None = True,
                     inplace: bool | None = False, name_map: dict | None = None) -> Any:
    """Prefix the names of ``graph``'s nodes, values, initializers and value infos (empty
    names stay empty); a copy unless ``inplace``.  ``name_map`` is shared with sub-graphs."""
    _check(graph)
    g = graph if inplace else _copy(graph)
    if name_map is None:
        name_map = {}

    def prefixed(name: str) -> str:
        return prefix + name if name else name

    if rename_edges:
        outputs = {o.name for o in g.output}
        for n in g.node:
            for e in n.output:
                if e not in outputs:
                    name_map[e] = prefixed(e)
    if rename_inputs:
        for v in g.input:
            name_map[v.name] = prefixed(v.name)
    if rename_outputs:
        for v in g.output:
            name_map[v.name] = prefixed(v.name)
    if rename_initializers:
        for t in g.initializer:
            name_map[t.name] = prefixed(t.name)
        for s in g.sparse_initializer:
            name_map[s.values.name] = prefixed(s.values.name)
            name_map[s.indices.name] = prefixed(s.indices.name)
    if rename_value_infos:
        for v in g.value_info:
            name_map[v.name] = prefixed(v.name)
    for n in g.node:
        if rename_nodes:
            n.name = prefixed(n.name)
            for sub in subgraphs(n):  # with onnx's flags for sub-graphs: every name
                add_prefix_graph(sub, prefix, inplace=True, name_map=name_map)
        else:  # sub-graphs keep their names, but read the outer values under the new ones
            for sub in subgraphs(n):
                rename_outer(sub, name_map)
    _apply(g, name_map)
    return g


def _apply(g: Any, name_map: dict) -> None:
    """Rename, by ``name_map``, the names ``g``'s own nodes and lists hold (not sub-graphs)."""
    get = name_map.get
    for n in g.node:
        for field in (n.input, n.output):
            for i, name in enumerate(list(field)):
                new = get(name)
                if new is not None and new != name:
                    field[i] = new
    for v in list(g.input) + list(g.output) + list(g.initializer) + list(g.value_info):
        new = get(v.name)
        if new is not None and new != v.name:
            v.name = new
    for s in g.sparse_initializer:
        for t in (s.values, s.indices):
            new = get(t.name)
            if new is not None and new != t.name:
                t.name = new


def rename_values(graph: Any, mapping: dict) -> None:
    """Rename values of ``graph`` in place: every definition and every use, in sub-graphs
    too, except where a sub-graph defines a name of its own (which shadows the outer one)."""
    _apply(graph, mapping)
    for n in graph.node:
        for sub in subgraphs(n):
            rename_outer(sub, mapping)


def rename_outer(graph: Any, mapping: dict) -> None:
    """Rename the outer-scope names ``graph`` (a sub-graph) reads, at any depth."""
    local = {v.name for v in graph.input} | set(initializer_names(graph))
    local.update(o for m in graph.node for o in m.output)
    inner = {k: v for k, v in mapping.items() if k not in local}
    if not inner:
        return
    for m in graph.node:
        for i, name in enumerate(list(m.input)):
            if name in inner:
                m.input[i] = inner[name]
        for sub in subgraphs(m):
            rename_outer(sub, inner)
    for v in graph.output:
        if v.name in inner:
            v.name = inner[v.name]


def add_prefix(model: Any, prefix: str, rename_nodes: bool | None = True, rename_edges: bool | None = True,
               rename_inputs: bool | None = True, rename_outputs: bool | None = True,
               rename_initializers: bool | None = True, rename_value_infos: bool | None = True,
               rename_functions: bool | None = True, inplace: bool | None = False) -> Any:
    """`add_prefix_graph` on ``model``'s graph, and (``rename_functions``) its local
    functions' names and the calls to them; a copy unless ``inplace``."""
    from .. import ModelProto  # noqa: PLC0415
    from .scope import function_key  # noqa: PLC0415
    from .share import adopt_origin  # noqa: PLC0415
    if not isinstance(model, ModelProto):
        raise TypeError("model argument is not an ONNX model")
    if not inplace:
        copy = _copy(model)
        adopt_origin(copy, model)
        model = copy
    add_prefix_graph(model.graph, prefix, rename_nodes=rename_nodes, rename_edges=rename_edges,
                     rename_inputs=rename_inputs, rename_outputs=rename_outputs,
                     rename_initializers=rename_initializers, rename_value_infos=rename_value_infos,
                     inplace=True)
    if rename_functions:
        renamed = {}
        for f in model.functions:
            renamed[function_key(f.domain, f.name)] = prefix + f.name
            f.name = prefix + f.name
        pending = [model.graph.node] + [f.node for f in model.functions]
        while pending:
            for n in pending.pop():
                new = renamed.get(function_key(n.domain, n.op_type))
                if new is not None:
                    n.op_type = new
                pending.extend(g.node for g in subgraphs(n))
    return model
