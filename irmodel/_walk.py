"""Every graph, node, attribute, tensor, sparse tensor and function of a model, at any depth.

One walk serves every whole-model pass (external data, the `inspect` summary, the
checker and inference to come), so that they agree on what "the whole model" is: the
main graph, the graphs of ``training_info``, every model-local function, and every
graph held by an attribute (``g`` or ``graphs``, whatever the attribute's ``type``
says: what is present is what a reader sees) below any of them.

The walk is pre-order, in document order: a graph, its initializers, its sparse
initializers, then its nodes; a node, then each attribute, the attribute's tensors
(``t``, ``tensors``), sparse tensors, then its graphs, each walked whole before the next
attribute.  Iterative (an explicit stack), so nesting costs no Python recursion.

A walk may be given ``pick(container, depth, field)``: for a graph or a function, the
indices of its ``node`` items to visit, and for a graph those of its ``initializer``
items (or None: all of them), so that a pass that looks for only some items skips those
that cannot hold them without making them (the external-data passes give
`irmodel._wireview.holders.tensor_holders`).  ``depth`` is the items' nesting depth,
counted as the message path counts it (2 in the main graph).

Each item is ``(kind, message, where)``.  ``where`` locates the message without
building a string: ``(parent_where, field, index)`` with ``index`` None for a singular
field, and ``None`` as the parent of a top-level field.  `path` renders it
(``graph.node[12].attribute[0].g``) only when somebody needs it, e.g. for an error.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable, Iterable, Iterator, Optional, Tuple

    #: ``(parent, field, index)``: see the module docstring.
    Where = Tuple[Optional["Where"], str, Optional[int]]
    Item = Tuple[int, Any, Where]  # (kind, message of a run-time class, where)
    #: ``pick(container, depth, field)``: see the module docstring.
    Pick = Callable[[Any, int, str], Optional[Iterable[int]]]

GRAPH, FUNCTION, NODE, ATTRIBUTE, TENSOR, SPARSE_TENSOR = range(6)



def path(where: Where | None) -> str:
    """``graph.node[12].attribute[0]`` for a `Where` (cold path: messages, errors)."""
    parts = []
    while where is not None:
        where, field, index = where
        parts.append(field if index is None else f"{field}[{index}]")
    return ".".join(reversed(parts))


def top_field(where: Where) -> str:
    """The model field a location is under: ``graph``, ``training_info`` or ``functions``."""
    while where[0] is not None:
        where = where[0]
    return where[1]


def walk(model: Any, pick: Pick | None = None) -> Iterator[Item]:
    """Yield every item of ``model`` (a ModelProto) in the order the module docstring
    gives; with ``pick``, only the nodes it picks (and what is below them)."""
    return _expand(_top_level(model), pick)


def top_level(model: Any) -> Iterator[Item]:
    """The model's own items (main graph, training_info graphs, functions), not below them."""
    return _top_level(model)


def walk_items(items: Iterable[Item]) -> Iterator[Item]:
    """Each of ``items`` and everything below it, in the walk's order."""
    return _expand(iter(items))


def walk_graph(graph: Any, where: Where = (None, "graph", None)) -> Iterator[Item]:
    """The items of one graph and everything below it."""
    return _expand(iter([(GRAPH, graph, where)]))


def _top_level(model) -> Iterator[Item]:
    if model.HasField("graph"):
        yield GRAPH, model.graph, (None, "graph", None)
    for i, ti in enumerate(model.training_info):
        for name in ("initialization", "algorithm"):
            if ti.HasField(name):
                yield GRAPH, getattr(ti, name), ((None, "training_info", i), name, None)
    for i, f in enumerate(model.functions):
        yield FUNCTION, f, (None, "functions", i)


def _expand(items: Iterator[Item], pick: Pick | None = None) -> Iterator[Item]:
    """Pre-order over ``items`` and their descendants.

    A stack of lazy child iterators: a long node list is read one node at a time, so a
    walk holds no more of the model than the path to the current item (repeated fields
    hold unmodified items weakly: see `wirefmt.containers`).
    """
    stack = [items]
    while stack:
        for item in stack[-1]:
            yield item
            children = _children(item, pick)
            if children is not None:
                stack.append(children)
                break
        else:
            stack.pop()


def _children(item: Item, pick: Pick | None) -> Iterator[Item] | None:
    kind = item[0]
    if kind == NODE:
        return _node_children(item[1], item[2]) if item[1].attribute else None
    if kind == ATTRIBUTE:
        return _attribute_children(item[1], item[2])
    if kind == GRAPH:
        return _graph_children(item[1], item[2], pick)
    if kind == FUNCTION:
        return _nodes(item[1], item[2], pick)
    return None


def _graph_children(graph, where: Where, pick: Pick | None) -> Iterator[Item]:
    picked = None if pick is None else pick(graph, _depth(where) + 1, "initializer")
    if picked is None:
        for i, t in enumerate(graph.initializer):
            yield TENSOR, t, (where, "initializer", i)
    else:
        initializers = graph.initializer
        for i in picked:
            yield TENSOR, initializers[i], (where, "initializer", i)
    for i, t in enumerate(graph.sparse_initializer):
        yield SPARSE_TENSOR, t, (where, "sparse_initializer", i)
    yield from _nodes(graph, where, pick)


def _depth(where: Where) -> int:
    """The nesting depth of the messages at ``where`` (a graph's: 1 for the main graph)."""
    n = 1
    parent = where[0]
    while parent is not None:
        parent = parent[0]
        n += 1
    return n


def _nodes(graph_or_function, where: Where, pick: Pick | None = None) -> Iterator[Item]:
    picked = None if pick is None else pick(graph_or_function, _depth(where) + 1, "node")
    if picked is None:
        for i, node in enumerate(graph_or_function.node):
            yield NODE, node, (where, "node", i)
        return
    nodes = graph_or_function.node
    for i in picked:
        yield NODE, nodes[i], (where, "node", i)


def _node_children(node, where: Where) -> Iterator[Item]:
    for i, a in enumerate(node.attribute):
        yield ATTRIBUTE, a, (where, "attribute", i)


def _attribute_children(a, where: Where) -> Iterator[Item] | None:
    # Most attributes hold scalars: answer those without a generator.
    if not (a.HasField("t") or a.tensors or a.HasField("sparse_tensor") or a.sparse_tensors
            or a.HasField("g") or a.graphs):
        return None
    return _attribute_values(a, where)


def _attribute_values(a, where: Where) -> Iterator[Item]:
    if a.HasField("t"):
        yield TENSOR, a.t, (where, "t", None)
    for i, t in enumerate(a.tensors):
        yield TENSOR, t, (where, "tensors", i)
    if a.HasField("sparse_tensor"):
        yield SPARSE_TENSOR, a.sparse_tensor, (where, "sparse_tensor", None)
    for i, t in enumerate(a.sparse_tensors):
        yield SPARSE_TENSOR, t, (where, "sparse_tensors", i)
    if a.HasField("g"):
        yield GRAPH, a.g, (where, "g", None)
    for i, g in enumerate(a.graphs):
        yield GRAPH, g, (where, "graphs", i)
