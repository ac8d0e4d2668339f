"""Copying a graph's nodes into a built body under fresh names (the reference's ``AddInlinedCall``).

FlexAttention's body calls its ``score_mod`` and ``prob_mod`` graphs inline: the graph's
input and output are bound to the body's values, each initializer becomes a Constant under
a new name, and every other name the graph's nodes define, and every node name, gets the
call's suffix (``x`` becomes ``x__ScoreMod_``, then ``x__ScoreMod__0`` ... while that is
taken).  Taken means used anywhere in the called graph, its sub-graphs included.  The
renaming stops at the top-level nodes: a node's sub-graphs are copied unchanged (so they
still name the called graph's values as they were), which is what onnx 1.23.2 writes.
The rules are those of onnx/inliner/inliner.cc's renamer as the function builder uses it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .base import BodyBuilder


class _Renamer:
    """Unique names for one inlined call, and the bindings of the names it renamed."""

    def __init__(self, suffix: str, graph) -> None:
        self._suffix = suffix
        self._counter = 0
        self._taken: set[str] = set()
        self._collect(graph)
        self._bound: dict[str, str] = {}

    def _collect(self, graph) -> None:
        """Every name the graph and its sub-graphs use (node names too: one name space)."""
        pending = [graph]
        while pending:
            g = pending.pop()
            self._taken.update(v.name for v in g.input)
            self._taken.update(t.name for t in g.initializer)
            self._taken.update(v.name for v in g.output)
            for node in g.node:
                self._taken.add(node.name)
                self._taken.update(node.input)
                self._taken.update(node.output)
                for a in node.attribute:
                    if a.HasField("g"):
                        pending.append(a.g)
                    pending.extend(a.graphs)

    def unique(self, name: str) -> str:
        suggested = candidate = name + self._suffix
        while candidate in self._taken:
            candidate = f"{suggested}_{self._counter}"
            self._counter += 1
        self._taken.add(candidate)
        return candidate

    def bind(self, formal: str, actual: str) -> None:
        self._bound[formal] = actual

    def bind_unique(self, name: str) -> str:
        new = self.unique(name)
        self._bound[name] = new
        return new

    def _lookup_or_define(self, name: str, defines: bool) -> str:
        if not name:
            return name
        if name in self._bound:
            return self._bound[name]
        return self.bind_unique(name) if defines else name

    def rename_node(self, node) -> None:
        """Rename ``node`` in place: its name, inputs and outputs (its sub-graphs stay as they are)."""
        if node.name:
            node.name = self.unique(node.name)
        for i, name in enumerate(node.input):
            node.input[i] = self._lookup_or_define(name, False)
        for i, name in enumerate(node.output):
            node.output[i] = self._lookup_or_define(name, True)


def add_inlined_call(b: BodyBuilder, outputs: Sequence[str], graph, inputs: Sequence[str], prefix: str) -> None:
    """Append ``graph``'s nodes to ``b`` as a call with ``inputs`` and ``outputs`` bound to its own."""
    renamer = _Renamer("__" + prefix, graph)
    for formal, actual in zip(graph.input, inputs):
        renamer.bind(formal.name, actual)
    for formal, actual in zip(graph.output, outputs):
        renamer.bind(formal.name, actual)
    for initializer in graph.initializer:
        b.add("Constant", [], [renamer.bind_unique(initializer.name)], value=initializer)
    from ...messages import NodeProto  # noqa: PLC0415
    for node in graph.node:
        copy = NodeProto()
        copy.CopyFrom(node)
        renamer.rename_node(copy)
        b.nodes.append(copy)


__all__ = ["add_inlined_call"]
