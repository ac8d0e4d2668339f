"""What a node reads from its scope, the graphs it holds, and which functions it calls.

A node of a graph reads its ``input`` names and, through the graphs in its attributes
(If's branches, Loop's and Scan's bodies), every name those graphs use without defining
it: the *outer-scope* names.  Extraction follows both, or an If whose branch reads a
weight of the main graph would lose that weight.  The rule is onnx's (``ComputeInputs`` in
onnx/inliner/inliner.cc): inside a graph, its inputs, initializers and the outputs of its
nodes so far are local; anything else is outer.

Functions are identified as onnx's checker identifies them: (domain, name, overload),
with "ai.onnx" the same domain as "".
"""

from __future__ import annotations

from .._wireview.fastpath import items_read
from .._wireview.tensorscan import tensor_header

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Iterator


def normalized(domain: str) -> str:
    return "" if domain == "ai.onnx" else domain


def function_key(domain: str, name: str, overload: str = "") -> tuple:
    """The identity of a function, or of the function a node calls (`call_key`)."""
    return (normalized(domain), name, overload)


def call_key(node: Any) -> tuple:
    return function_key(node.domain, node.op_type, node.overload)


def own_key(function: Any) -> tuple:
    return function_key(function.domain, function.name, function.overload)


def subgraphs(node: Any) -> Iterator[Any]:
    """The graphs held by ``node``'s attributes (``g`` and ``graphs``), in order."""
    for attr in node.attribute:
        if attr.HasField("g"):
            yield attr.g
        yield from attr.graphs


def initializer_names(graph: Any) -> list:
    """The names of ``graph``'s initializers, in order: from each one's header where the
    tensor is simple (`irmodel._wireview.tensorscan.tensor_header`), else from its message
    (a model of 24,000 weights made each of them to name it)."""
    read = items_read(graph, "initializer", tensor_header)
    if read is None:
        return [t.name for t in graph.initializer]
    return [graph.initializer[i].name if header is None else header[0] for i, header in enumerate(read)]


def has_subgraphs(node: Any) -> bool:
    return any(attr.HasField("g") or len(attr.graphs) for attr in node.attribute)


def outer_names(node: Any) -> list:
    """The names ``node`` reads from its scope: its non-empty inputs, then the outer-scope
    names its sub-graphs use, in the order first met (duplicates kept out)."""
    seen: set = set()
    out: list = []
    for name in node.input:
        if name and name not in seen:
            seen.add(name)
            out.append(name)
    if has_subgraphs(node):
        for g in subgraphs(node):
            _graph_reads(g, [], seen, out)
    return out


def _graph_reads(graph: Any, scopes: list, seen: set, out: list) -> None:
    """Append to ``out`` what ``graph`` reads from outside ``scopes`` and itself.

    Recursion follows the nesting of graphs, which the codec bounds (100 levels of
    messages, so at most about 30 of graphs).
    """
    local = {vi.name for vi in graph.input}
    local.update(initializer_names(graph))
    local.update(s.values.name for s in graph.sparse_initializer)
    scopes = scopes + [local]
    for node in graph.node:
        for name in node.input:
            if name and name not in seen and not any(name in s for s in scopes):
                seen.add(name)
                out.append(name)
        if has_subgraphs(node):
            for g in subgraphs(node):
                _graph_reads(g, scopes, seen, out)
        local.update(n for n in node.output if n)


def called_functions(nodes: Iterable[Any], functions: dict) -> list:
    """The model-local functions that ``nodes`` call, directly, through other functions or
    from inside sub-graphs, in the order a breadth-first search meets them (onnx's order).

    ``functions`` maps `function_key` to FunctionProto; each is listed once.
    """
    remaining = dict(functions)
    found = []
    queue = list(nodes)
    i = 0
    while i < len(queue):
        node = queue[i]
        i += 1
        f = remaining.pop(call_key(node), None)
        if f is not None:
            found.append(f)
            queue.extend(f.node)
        if has_subgraphs(node):
            for g in subgraphs(node):
                queue.extend(g.node)
    return found
