"""What an adapter may ask about the graph around a node: constants, types, shapes, names.

Everything here is computed on first demand, so a conversion that needs none of it reads
nothing beyond the nodes: constant values come from the initializer or Constant node that
makes a name (only that tensor is read, and only when an adapter asks for it); element
types and shapes come from one run of shape inference over the whole model (the inferred
copy is the caller's model's, read only where asked); fresh names avoid every name of the
model.  The inference modules used here (`irmodel.inference.types`, `.typestr`) are
internal to inference: their functions turn a TypeProto into a type and a type string.
"""

from __future__ import annotations

from .errors import StepRefused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

# Every graph-valued attribute kind: GRAPH (5) and GRAPHS (10).
_GRAPH, _GRAPHS = 5, 10


def subgraphs(node) -> Iterator[tuple[int, int | None, Any]]:
    """(attribute index, index in a GRAPHS list or None, graph) of every graph of ``node``."""
    for i, a in enumerate(node.attribute):
        t = a.type
        if t == _GRAPH or (not t and a.HasField("g")):
            yield i, None, a.g
        elif t == _GRAPHS or (not t and len(a.graphs)):
            for j, g in enumerate(a.graphs):
                yield i, j, g


class ModelFacts:
    """Facts about the whole model shared by every scope: inferred types, used names."""

    def __init__(self, model) -> None:
        self._model = model
        self.ir_version = model.ir_version
        self._types: dict[str, Any] | None = None
        self._names: set[str] | None = None
        self._counter = 0
        self._pending: list = []
        self._added_types: dict = {}

    # -- types --------------------------------------------------------------------------

    def _collect_types(self) -> dict:
        """name -> inference Type, from shape inference of the model (declared types if
        inference fails: a model the converter is asked about need not be complete)."""
        from ..inference.types import type_from_proto  # noqa: PLC0415

        types: dict[str, Any] = {}
        model = self._model
        try:
            from ..inference import infer_shapes  # noqa: PLC0415

            model = infer_shapes(model)
        except Exception:  # noqa: BLE001 - inference is a help here, never a requirement
            model = self._model

        def graph(g) -> None:
            for vi in list(g.input) + list(g.output) + list(g.value_info):
                if vi.HasField("type") and vi.name not in types:
                    types[vi.name] = type_from_proto(vi.type)
            for t in g.initializer:
                if t.name not in types:
                    from ..inference.types import TensorType  # noqa: PLC0415

                    types[t.name] = TensorType(t.data_type, tuple(t.dims))
            for n in g.node:
                for _, _, sub in subgraphs(n):
                    graph(sub)

        if model.HasField("graph"):
            graph(model.graph)
        return types

    def note_type(self, name: str, elem: int, dims: tuple) -> None:
        """Record the type of a tensor the converter added."""
        from ..inference.types import TensorType  # noqa: PLC0415

        self._added_types[name] = TensorType(elem, dims)

    def type_of(self, name: str):
        """The inference `Type` of ``name``, or None when not known."""
        if not name:
            return None
        if self._types is None:
            self._types = self._collect_types()
            self._types.update(self._added_types)
        while self._pending:
            self._infer_added(*self._pending.pop(0))
        return self._types.get(name)

    def infer_added(self, node, domain: str, version: int, scope: Scope) -> None:
        """Record the output types of a node the converter added (written for ``version``),
        from its inputs' types, so that later steps over it know ranks and element types.
        Deferred until a step asks for a type: an upgrade that never does runs no inference."""
        self._pending.append((node, domain, version, scope))

    def _infer_added(self, node, domain: str, version: int, scope: Scope) -> None:
        known = self._types
        if known is None:
            return
        known.update(self._added_types)
        if not any(n in known for n in node.input if n):
            return
        from .. import defs  # noqa: PLC0415
        from ..inference import infer_node_outputs  # noqa: PLC0415
        from ..inference.types import type_from_proto, type_to_proto  # noqa: PLC0415

        try:
            schema = defs.get_schema(node.op_type, version, domain)
        except Exception:  # noqa: BLE001 - an op the registry does not know: no types
            return
        types = {n: type_to_proto(known[n]) for n in node.input if n in known}
        try:
            data = {}
            for n in node.input:
                value = scope.constant(n)
                if value is not None and value.size <= 64:
                    from ..tensors import from_array  # noqa: PLC0415

                    data[n] = from_array(value, n)
            out = infer_node_outputs(schema, node, types, data)
        except Exception:  # noqa: BLE001 - types are a help here, never a requirement
            return
        for name, tp in out.items():
            if name and name not in known and tp.WhichOneof("value"):
                known[name] = type_from_proto(tp)

    # -- names --------------------------------------------------------------------------

    def _collect_names(self) -> set[str]:
        names: set[str] = set()

        def graph(g) -> None:
            names.update(vi.name for vi in g.input)
            names.update(vi.name for vi in g.output)
            names.update(t.name for t in g.initializer)
            for n in g.node:
                names.update(n.input)
                names.update(n.output)
                for _, _, sub in subgraphs(n):
                    graph(sub)

        if self._model.HasField("graph"):
            graph(self._model.graph)
        for f in self._model.functions:
            names.update(f.input)
            names.update(f.output)
            for n in f.node:
                names.update(n.input)
                names.update(n.output)
        return names

    def fresh(self, base: str) -> str:
        """A name used nowhere in the model (nor handed out before)."""
        if self._names is None:
            self._names = self._collect_names()
        while True:
            self._counter += 1
            name = f"{base}__v{self._counter}"
            if name not in self._names:
                self._names.add(name)
                return name


class Scope:
    """One graph (or function body) with its enclosing scopes, as adapters see it."""

    def __init__(self, facts: ModelFacts, graph, parent: Scope | None = None,
                 typed: bool = True) -> None:
        self.facts = facts
        self.graph = graph
        self.parent = parent
        #: False inside a function body: its values' types depend on the call.
        self.typed = typed
        self._constants: dict[str, Any] | None = None

    # -- constants ----------------------------------------------------------------------

    def _collect_constants(self) -> dict:
        """name -> TensorProto or Constant node, for the names this graph defines as constants."""
        found: dict[str, Any] = {}
        g = self.graph
        if hasattr(g, "initializer"):
            # An initializer that is also a graph input is a default the caller may override
            # (IR 4 on); before IR 4 every initializer had to be an input, and was constant.
            overridable = {vi.name for vi in g.input} if self.facts.ir_version >= 4 else set()
            for t in g.initializer:
                if t.name not in overridable:
                    found[t.name] = t
        for n in g.node:
            if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.output) == 1:
                found[n.output[0]] = n
        return found

    def _constant_source(self, name: str):
        """The initializer or Constant node that holds ``name`` in this or an enclosing
        scope, else None."""
        if not name:
            return None
        scope: Scope | None = self
        while scope is not None:
            if scope._constants is None:
                scope._constants = scope._collect_constants()
            src = scope._constants.get(name)
            if src is not None:
                return src
            scope = scope.parent
        return None

    def constant(self, name: str):
        """The value of ``name`` as a numpy array if it is a constant of this or an enclosing
        scope, else None.  Reads that one tensor only."""
        src = self._constant_source(name)
        if src is None:
            return None
        try:
            return _constant_value(src)
        except Exception as e:  # noqa: BLE001 - a malformed tensor: the file's fault
            raise StepRefused("V003", f"constant {name!r} cannot be read: "
                                      f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None

    def overridable(self, name: str) -> bool:
        """Is ``name`` a graph input whose initializer is only its default value?"""
        scope: Scope | None = self
        while scope is not None:
            g = scope.graph
            if (hasattr(g, "initializer") and any(vi.name == name for vi in g.input)
                    and any(t.name == name for t in g.initializer)):
                return True
            scope = scope.parent
        return False

    def add_initializer(self, tensor) -> bool:
        """Add ``tensor`` to this graph's initializers (False in a function body, which has
        none, or before IR 4, where an initializer must also be declared an input)."""
        if not hasattr(self.graph, "initializer") or self.facts.ir_version < 4:
            return False
        self.graph.initializer.append(tensor)
        if self._constants is None:
            self._constants = self._collect_constants()
        self._constants[tensor.name] = tensor
        self.facts.note_type(tensor.name, tensor.data_type, tuple(tensor.dims))
        return True

    def add_known(self, node) -> None:
        """Make a Constant node the converter added known as a constant of this scope."""
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and len(node.output) == 1:
            if self._constants is None:
                self._constants = self._collect_constants()
            self._constants[node.output[0]] = node

    def _constant_values(self, name: str, kinds: str, what: str, convert) -> list | None:
        listed = _small_values(self._constant_source(name), kinds)
        if listed is not None:
            return [convert(x) for x in listed]
        v = self.constant(name)
        if v is None:
            return None
        if v.dtype.kind not in kinds:
            raise StepRefused("V003", f"constant {name!r} holds {v.dtype}, not {what}")
        return [convert(x) for x in v.reshape(-1)]

    def constant_ints(self, name: str) -> list[int] | None:
        """The values of integer constant ``name`` (None: not a constant)."""
        return self._constant_values(name, "iub", "integers", int)

    def constant_floats(self, name: str) -> list[float] | None:
        """The values of numeric constant ``name`` as floats (None: not a constant)."""
        return self._constant_values(name, "iubf", "numbers", float)

    # -- types and shapes ---------------------------------------------------------------

    def type_of(self, name: str):
        return self.facts.type_of(name) if self.typed else None

    def elem_type(self, name: str) -> int | None:
        """The element type of tensor ``name``, or None."""
        t = self.type_of(name)
        return getattr(t, "elem", None) or None

    def shape(self, name: str) -> tuple | None:
        t = self.type_of(name)
        shape = getattr(t, "shape", None)
        return shape if isinstance(shape, tuple) else None

    def rank(self, name: str) -> int | None:
        s = self.shape(name)
        return None if s is None else len(s)

    def need_rank(self, name: str, why: str) -> int:
        r = self.rank(name)
        if r is None:
            raise StepRefused("V007", f"the rank of {name!r} is not known, and {why}")
        return r

    def type_string(self, name: str) -> str | None:
        t = self.type_of(name)
        if t is None:
            return None
        from ..inference.typestr import type_string  # noqa: PLC0415

        try:
            return type_string(t)
        except Exception:  # noqa: BLE001 - an incomplete type says nothing
            return None

    def fresh(self, base: str) -> str:
        return self.facts.fresh(base)


def _small_values(src, kinds: str) -> list | None:
    """The values of a small, well-formed constant of an element type of ``kinds``
    (numpy's kind letters) as a flat list, read without numpy; None for anything else,
    which `Scope.constant` then reads (and reports).  Why: the steps going below opset 13
    read an axes or pads list per node, and importing numpy for them would cost a
    converted model ~10 MiB of memory.  The same values as `_constant_value` gives."""
    if src is None:
        return None
    if src.__class__.__name__ != "TensorProto":
        for a in src.attribute:  # the first value attribute decides, as in `_constant_value`
            name = a.name
            if name == "value":
                src = a.t
                break
            if name in ("value_int", "value_ints"):
                return None if "i" not in kinds else [a.i] if name == "value_int" else list(a.ints)
            if name in ("value_float", "value_floats"):
                return None if "f" not in kinds else [a.f] if name == "value_float" else list(a.floats)
        else:
            return None
    from ..inference.tensordata import DOUBLE, FLOAT, INT32, INT64, is_small, parse_data  # noqa: PLC0415

    code = src.data_type
    if code not in ((INT64, INT32, FLOAT, DOUBLE) if "f" in kinds else (INT64, INT32)) or not is_small(src):
        return None
    try:
        return parse_data(src, code)
    except Exception:  # noqa: BLE001 - `Scope.constant` reads it again and says what is wrong
        return None


def _constant_value(src):
    """A numpy array from an initializer or a Constant node."""
    import numpy as np  # noqa: PLC0415

    from .. import helper  # noqa: PLC0415
    from ..tensors import to_array  # noqa: PLC0415

    if src.__class__.__name__ == "TensorProto":
        return to_array(src)
    for a in src.attribute:
        if a.name == "value":
            return to_array(a.t)
        if a.name in ("value_float", "value_int"):
            return np.array(helper.get_attribute_value(a))
        if a.name in ("value_floats", "value_ints"):
            return np.array(helper.get_attribute_value(a))
    return None
