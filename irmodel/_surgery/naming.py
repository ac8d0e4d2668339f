"""Fresh names for inlined values, as onnx's inliner makes them.

onnx (onnx/inliner/inliner.cc, ``NameGenerator`` and ``InliningRenamer``) gives every value
and node of an inlined call a name made from the callee's name and a suffix per call site
(``temp`` of the third inlined call becomes ``temp__3``), and where that name is taken, the
suggested name plus ``_`` and a counter shared by the whole run (``temp__3_0``).  Taken means
used anywhere in the main graph (its inputs, initializers, outputs, and every node's name,
inputs and outputs, in sub-graphs too) or made earlier in the run.  We keep that scheme, so
that our result names what onnx's names, with one fix: a sub-graph output that the
sub-graph does not compute (it passes a value of an outer scope through) keeps referring to
that value, where onnx renames it into a name nothing defines.
"""

from __future__ import annotations

from .scope import initializer_names, subgraphs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class NameGenerator:
    """The set of names in use and onnx's rule for a new one (`create`)."""

    def __init__(self, graph: Any = None) -> None:
        self.index = 0
        self.names: set = set()
        if graph is not None:
            self.add_graph(graph)

    def add_graph(self, graph: Any) -> None:
        pending = [graph]
        names = self.names
        while pending:
            g = pending.pop()
            names.update(v.name for v in g.input)
            names.update(initializer_names(g))
            names.update(v.name for v in g.output)
            for node in g.node:
                names.add(node.name)
                names.update(node.input)
                names.update(node.output)
                pending.extend(subgraphs(node))

    def create(self, suggested: str) -> str:
        name = suggested
        while name in self.names:
            name = f"{suggested}_{self.index}"
            self.index += 1
        self.names.add(name)
        return name


class CallRenamer:
    """Renames a copy of a callee's body for one call site (onnx's ``InliningRenamer``).

    Formal inputs become the call's actual inputs (a missing optional one becomes ""),
    formal outputs the call's outputs (a missing one a fresh name), every other value and
    every named node a fresh name; names the body reads from an outer scope are left alone.
    """

    def __init__(self, suffix: str, generator: NameGenerator) -> None:
        self.suffix = suffix
        self.generator = generator
        self.scopes: list = [{}]

    def unique(self, name: str) -> str:
        return self.generator.create(name + self.suffix)

    def bind(self, call: Any, function: Any) -> None:
        formals_in, formals_out = list(function.input), list(function.output)
        actual_in, actual_out = list(call.input), list(call.output)
        if len(actual_in) > len(formals_in) or len(actual_out) > len(formals_out):
            from .errors import SurgeryError  # noqa: PLC0415
            raise SurgeryError(f"node {call.name!r} ({call.op_type}) passes more inputs or outputs "
                               f"than function {function.name!r} declares")
        scope = self.scopes[-1]
        for i, formal in enumerate(formals_in):
            scope[formal] = actual_in[i] if i < len(actual_in) else ""
        for i, formal in enumerate(formals_out):
            actual = actual_out[i] if i < len(actual_out) else ""
            scope[formal] = actual if actual else self.unique(formal)

    def _rename(self, name: str) -> str:
        new = self.unique(name)
        self.scopes[-1][name] = new
        return new

    def _lookup(self, name: str, defines: bool) -> str:
        if not name:
            return name
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self._rename(name) if defines else name

    def node_names(self, name: str, inputs: list, outputs: list) -> tuple:
        """The new name, inputs and outputs of a body node named ``name`` reading ``inputs``
        and writing ``outputs``, made in onnx's order (name, inputs, outputs).

        Tuned (the inliner's stamp calls it for every node of every call: 75,000 times for
        3,000 calls of a 25-node body): in the call's own scope, which is all a body
        without sub-graphs has, the scope lookups are inlined."""
        create, suffix = self.generator.create, self.suffix
        new_name = create(name + suffix) if name else name
        if len(self.scopes) > 1:
            lookup = self._lookup
            return new_name, [lookup(x, False) for x in inputs], [lookup(x, True) for x in outputs]
        scope = self.scopes[0]
        get = scope.get
        new_inputs = [get(x, x) if x else x for x in inputs]  # (an outer name stays as it is)
        new_outputs = []
        for x in outputs:
            y = get(x)
            if y is None:
                y = scope[x] = create(x + suffix) if x else x
            new_outputs.append(y)
        return new_name, new_inputs, new_outputs

    def node(self, node: Any) -> None:
        new_name, new_inputs, new_outputs = self.node_names(node.name, node.input, node.output)
        if new_name != node.name:
            node.name = new_name
        for field, old, new in ((node.input, list(node.input), new_inputs),
                                (node.output, list(node.output), new_outputs)):
            for i, (a, b) in enumerate(zip(old, new)):
                if a != b:
                    field[i] = b
        for attr in node.attribute:
            if attr.HasField("g"):
                self.graph(attr.g)
            for g in attr.graphs:
                self.graph(g)

    def graph(self, graph: Any) -> None:
        self.scopes.append({})
        local = {v.name for v in graph.input}
        local.update(initializer_names(graph))
        for node in graph.node:
            local.update(node.output)
        scope = self.scopes[-1]
        for v in list(graph.input) + list(graph.initializer):
            v.name = scope[v.name] if v.name in scope else self._rename(v.name)
        for v in graph.output:
            if v.name in scope:
                v.name = scope[v.name]
            elif v.name in local:
                v.name = self._rename(v.name)
            else:  # passed through from an outer scope (onnx renames it to nothing)
                v.name = self._lookup(v.name, False)
        for node in graph.node:
            self.node(node)
        self.scopes.pop()

    def function(self, function: Any) -> None:
        for node in function.node:
            self.node(node)
        for v in function.value_info:
            new = self._lookup(v.name, False)
            if new != v.name:
                v.name = new
