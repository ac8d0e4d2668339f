"""Extracting the part of a model between given inputs and outputs (``onnx.utils``).

`Extractor` has onnx's attributes and methods; `extract_model` onnx's arguments.  What
differs is what is read.  onnx loads the whole model, external data included, infers the
shapes of all of it and copies the part; here the model is mapped (`irmodel.load`), the
graph's nodes are read once for their names, and only the part's nodes, initializers and
external data are touched: their messages are re-opened over the source's bytes
(`wirefmt.shared_copy`), and saving copies those bytes file to file, or streams the part's
external tensors into the output's own data file.  Types for the cut come from the
model's value_info, or else from shape inference over the nodes upstream of the cut with
their large weights left out (`_typing_model`): inference reads no weight beyond small
constants.

Where onnx's result is wrong, this one is not:

* values that the sub-graphs of If, Loop and Scan read from the outer scope are followed
  (onnx drops the nodes and initializers that compute them);
* the model-local functions called from inside sub-graphs come along;
* bad requests raise `SurgeryError` naming what is wrong before anything is written: a
  name that no value of the graph has, inputs that do not cut the outputs off from the
  rest of the graph (onnx writes a model that reads undefined values), a cycle;
* sparse initializers and quantization annotations of the part come along (onnx refuses
  any model that has them).
"""

from __future__ import annotations

import os

from wirefmt import shared_copy

from ..limits import element_count
from .errors import SurgeryError
from .scope import called_functions, outer_names, own_key
from .share import adopt_origin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

#: protobuf's limit on a message (onnx.checker.MAXIMUM_PROTOBUF): a larger extracted
#: model is saved with its tensors in a data file, as onnx does.
MAXIMUM_PROTOBUF = 2_147_483_648
#: Initializers with more elements than this are left out of the models that shape
#: inference reads (inference takes the values of at most this many: `MAX_CONSTANT_ELEMENTS`).
_TYPING_ELEMENTS = 4096
PRODUCER = "onnx.utils.extract_model"


class Extractor:
    """onnx.utils.Extractor: the part of ``model``'s main graph between names.

    ``model``, ``graph``, ``initializers`` (name -> TensorProto), ``value_infos`` (name ->
    ValueInfoProto: value_info, then inputs, then outputs, later ones replacing earlier
    ones in place, as onnx builds it) and ``outmap`` (output name -> node index) are
    onnx's attributes; they are indexes made by one pass over the graph, holding
    messages that read lazily.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.graph = model.graph
        self.initializers: dict = {t.name: t for t in self.graph.initializer}
        self.value_infos: dict = {v.name: v for v in self.graph.value_info}
        self.value_infos.update((v.name, v) for v in self.graph.input)
        self.value_infos.update((v.name, v) for v in self.graph.output)
        self.outmap: dict = self._build_output_dict(self.graph)
        self._graph_inputs = {v.name for v in self.graph.input}
        self._sparse = {s.values.name for s in self.graph.sparse_initializer}

    @staticmethod
    def _build_output_dict(graph: Any) -> dict:
        out: dict = {}
        for index, node in enumerate(graph.node):
            for name in node.output:
                if not name:
                    continue
                if name in out:
                    raise SurgeryError(f"value {name!r} is computed twice: by node {out[name]} "
                                       f"and by node {index} of the graph")
                out[name] = index
        return out

    # -- the part ------------------------------------------------------------------------------

    def _collect_new_io(self, io_names_to_extract: list) -> list:
        missing = [n for n in io_names_to_extract if n not in self.value_infos]
        if missing:
            raise SurgeryError(f"The following names were not found in value_infos: {', '.join(missing)}")
        return [self.value_infos[n] for n in io_names_to_extract]

    def _check_names(self, input_names: list, output_names: list) -> None:
        """Refuse names that no value of the main graph has."""
        known = self._is_value
        unknown = [n for n in list(input_names) + list(output_names) if not known(n)]
        if unknown:
            raise SurgeryError("no value of the graph is named " + ", ".join(repr(n) for n in unknown)
                               + " (names must be graph inputs, initializers or node outputs)")

    def _is_value(self, name: str) -> bool:
        return (name in self.outmap or name in self._graph_inputs or name in self.initializers
                or name in self._sparse)

    def _reachable(self, input_names: Iterable[str], output_names: Iterable[str]) -> list:
        """Indexes of the nodes the outputs depend on, stopping at the inputs, in an order
        where each node comes after the nodes it reads (the graph's own order when it is
        one, as onnx's ``sorted(reachable)``); raises when the inputs do not cut the graph."""
        stop = set(input_names)
        reachable: set = set()
        reads: dict = {}
        uncut: list = []
        stack = [(n, None) for n in output_names]
        while stack:
            name, reader = stack.pop()
            if name in stop:
                continue
            index = self.outmap.get(name)
            if index is None:
                if name in self.initializers or name in self._sparse:
                    continue
                if reader is not None:  # an input of the graph (or nothing) the cut leaves out
                    uncut.append((name, reader))
                continue
            if index in reachable:
                continue
            reachable.add(index)
            names = outer_names(self.graph.node[index])
            reads[index] = names
            stack.extend((n, index) for n in names)
        if uncut:
            raise SurgeryError(self._uncut_message(uncut, stop))
        return _topological(sorted(reachable), reads, self.outmap, self.graph)

    def _uncut_message(self, uncut: list, stop: set) -> str:
        parts = []
        for name, reader in uncut[:10]:
            node = self.graph.node[reader]
            what = "the graph input" if name in self._graph_inputs else "the undefined value"
            parts.append(f"{what} {name!r} (read by node {reader}, {node.op_type} {node.name!r})")
        more = f" and {len(uncut) - 10} more" if len(uncut) > 10 else ""
        return ("the input names do not cut the outputs off from the rest of the graph: the "
                "part also reads " + "; ".join(parts) + more + "; add them to the input names")

    def _collect_reachable_nodes(self, input_names: list, output_names: list) -> list:
        return [self.graph.node[i] for i in self._reachable(input_names, output_names)]

    def _collect_referred_local_functions(self, nodes: list) -> list:
        functions = {own_key(f): f for f in self.model.functions}
        return called_functions(nodes, functions)

    def _used_names(self, nodes: list) -> set:
        names: set = set()
        for node in nodes:
            names.update(outer_names(node))
            names.update(node.output)
        return names

    def _collect_reachable_tensors(self, nodes: list) -> tuple:
        used = self._used_names(nodes)
        initializer = [t for name, t in self.initializers.items() if name in used]
        value_info = [v for name, v in self.value_infos.items() if name in used]
        return initializer, value_info

    def _make_model(self, nodes: list, inputs: list, outputs: list, initializer: list,
                    value_info: list, local_functions: list, used: set | None = None) -> Any:
        from .. import GraphProto, ModelProto  # noqa: PLC0415
        from ..proto import IR_VERSION  # noqa: PLC0415

        g = GraphProto()
        g.node.extend(shared_copy(n) for n in nodes)
        g.name = "Extracted from {" + self.graph.name + "}"
        g.input.extend(shared_copy(v) for v in inputs)
        g.output.extend(shared_copy(v) for v in outputs)
        g.initializer.extend(shared_copy(t) for t in initializer)
        if used is not None:
            g.sparse_initializer.extend(shared_copy(s) for s in self.graph.sparse_initializer
                                        if s.values.name in used)
            g.quantization_annotation.extend(shared_copy(q) for q in self.graph.quantization_annotation
                                             if q.tensor_name in used)
        g.value_info.extend(shared_copy(v) for v in value_info)
        m = ModelProto()
        m.ir_version = IR_VERSION
        m.graph = g
        m.opset_import.extend(shared_copy(o) for o in self.model.opset_import)
        m.producer_name = PRODUCER
        m.functions.extend(shared_copy(f) for f in local_functions)
        m.ir_version = self.model.ir_version
        adopt_origin(m, self.model)
        return m

    def extract_model(self, input_names: list, output_names: list) -> Any:
        """The part between ``input_names`` and ``output_names``, as a new ModelProto.

        Its inputs and outputs are the value infos of those names (the names must have one:
        graph inputs, outputs or value_info entries).  Raises `SurgeryError` for a name that no
        value has, for inputs that do not cut the outputs off from the rest of the graph, and
        for a cycle among the part's nodes.
        """
        input_names, output_names = list(input_names), list(output_names)
        self._check_names(input_names, output_names)
        inputs = self._collect_new_io(input_names)
        outputs = self._collect_new_io(output_names)
        nodes = self._collect_reachable_nodes(input_names, output_names)
        initializer, value_info = self._collect_reachable_tensors(nodes)
        functions = self._collect_referred_local_functions(nodes)
        return self._make_model(nodes, inputs, outputs, initializer, value_info, functions,
                                self._used_names(nodes) | set(input_names))

    # -- types for the cut ---------------------------------------------------------------------

    def _infer_missing(self, names: list) -> None:
        """Find types for ``names`` that have no value info: shape inference over the nodes
        upstream of them, with large initializers left out (`_typing_model`).  Names still
        without a type stay missing (`_collect_new_io` then says so)."""
        missing = [n for n in dict.fromkeys(names) if n not in self.value_infos and n in self.outmap]
        if not missing:
            return
        from .. import ValueInfoProto  # noqa: PLC0415
        inputs = [v.name for v in self.graph.input]
        nodes = self._collect_reachable_nodes(inputs, missing)
        outs = [ValueInfoProto(name=n) for n in missing]
        probe = _typing_model(self, nodes, [self.value_infos[n] for n in inputs], outs)
        for vi in _inferred(probe).graph.output:
            if vi.HasField("type") and vi.type.WhichOneof("value") is not None:
                self.value_infos[vi.name] = shared_copy(vi)


def _topological(order: list, reads: dict, outmap: dict, graph: Any) -> list:
    """``order`` (node indexes, ascending) if every node comes after the nodes it reads,
    else a topological order of them (stable); raises `SurgeryError` naming a cycle."""
    position = {index: k for k, index in enumerate(order)}
    deps = {i: {outmap[n] for n in reads[i] if n in outmap and outmap[n] in position} for i in order}
    if all(position[d] < position[i] for i in order for d in deps[i]):
        return order
    users: dict = {i: [] for i in order}
    pending = {i: len(deps[i]) for i in order}
    for i in order:
        for d in deps[i]:
            users[d].append(i)
    import heapq  # noqa: PLC0415
    ready = [i for i in order if not pending[i]]
    heapq.heapify(ready)
    out = []
    while ready:
        i = heapq.heappop(ready)
        out.append(i)
        for u in users[i]:
            pending[u] -= 1
            if not pending[u]:
                heapq.heappush(ready, u)
    if len(out) < len(order):
        stuck = [i for i in order if pending[i]]
        names = ", ".join(f"{i} ({graph.node[i].op_type} {graph.node[i].name!r})" for i in stuck[:10])
        raise SurgeryError(f"the part has a cycle: nodes {names} read each other's outputs")
    return out


def _typing_model(extractor: Extractor, nodes: list, inputs: list, outputs: list) -> Any:
    """A model of ``nodes`` for shape inference, slimmed (`_slim`)."""
    init, value_info = extractor._collect_reachable_tensors(nodes)
    functions = extractor._collect_referred_local_functions(nodes)
    used = extractor._used_names(nodes)
    return _slim(extractor._make_model(nodes, inputs, outputs, init, value_info, functions, used))


def _inferred(model: Any) -> Any:
    from ..inference import infer_shapes  # noqa: PLC0415
    return infer_shapes(model)


# -- onnx.utils.extract_model ----------------------------------------------------------------

def extract_model(input_path: str | os.PathLike, output_path: str | os.PathLike, input_names: list,
                  output_names: list, check_model: bool = True, infer_shapes: bool = True) -> None:
    """Write the part of the model at ``input_path`` between the named values to ``output_path``.

    onnx.utils.extract_model's arguments and checks.  The source is mapped and read only
    where the part is; see the module docstring for what is read and what differs.  The
    output keeps external data external, in its own data file (``<output name>.data``),
    when the part has any, and is saved so too when it is over 2 GiB (as onnx).  With
    ``check_model`` the *part* is checked before it is written (onnx checks the whole
    source first, which reads all of it); with ``infer_shapes`` the part's value_info is
    inferred, and the cut's types come from the source's value_info or from inference over
    the nodes upstream of the cut.  Nothing is written when anything fails.
    """
    from .. import load  # noqa: PLC0415
    if not os.path.exists(input_path):
        raise SurgeryError(f"Invalid input model path: {input_path}")
    if not output_path:
        raise SurgeryError("Output model path shall not be empty!")
    if not input_names:
        raise SurgeryError("Input tensor names shall not be empty!")
    if not output_names:
        raise SurgeryError("Output tensor names shall not be empty!")
    if len(input_names) != len(set(input_names)):
        raise SurgeryError("Duplicate names found in the input tensor names.")
    if len(output_names) != len(set(output_names)):
        raise SurgeryError("Duplicate names found in the output tensor names.")
    model = load(input_path)
    e = Extractor(model)
    e._check_names(list(input_names), list(output_names))
    if infer_shapes:
        e._infer_missing(list(input_names) + list(output_names))
    part = e.extract_model(input_names, output_names)
    if infer_shapes:
        _add_inferred_types(part)
    if check_model:
        from ..checker import check_model as _check  # noqa: PLC0415
        _check(part)
    save_part(part, output_path)


def _add_inferred_types(part: Any) -> None:
    """Fill ``part``'s value_info (and output types) by inference over its slim twin."""
    from .scope import has_subgraphs  # noqa: PLC0415
    inferred = _inferred(_slim(part)).graph
    nodes = part.graph.node
    for i, node in enumerate(inferred.node):
        if has_subgraphs(node) and node != nodes[i]:  # value_info and types written in its graphs
            nodes[i] = type(node).FromString(node.SerializeToString())
    types = {v.name: v.type for v in list(inferred.value_info) + list(inferred.output) if v.HasField("type")}
    for mine in list(part.graph.output) + list(part.graph.value_info):
        theirs = types.get(mine.name)
        if theirs is not None and theirs != mine.type:  # merged with what inference found
            mine.type.CopyFrom(theirs)
    have = {v.name for v in part.graph.value_info}
    for v in inferred.value_info:
        if v.name not in have:  # a copy of its own: the inferred model's buffer is let go
            part.graph.value_info.append(type(v).FromString(v.SerializeToString()))


def _slim(part: Any) -> Any:
    """``part`` for shape inference: initializers over `_TYPING_ELEMENTS` elements are
    replaced by their name, type and dims (inference never reads their values), so that
    serializing it costs the graph's structure, not its weights.  ``part`` is unchanged."""
    from .. import GraphProto, ModelProto, TensorProto  # noqa: PLC0415
    g = GraphProto()
    src = part.graph
    g.node.extend(shared_copy(n) for n in src.node)
    g.input.extend(shared_copy(v) for v in src.input)
    g.output.extend(shared_copy(v) for v in src.output)
    g.value_info.extend(shared_copy(v) for v in src.value_info)
    g.sparse_initializer.extend(shared_copy(s) for s in src.sparse_initializer)
    for t in src.initializer:
        count = element_count(t.dims)  # bounded (`irmodel.limits`); None: a negative dim
        if count is not None and count > _TYPING_ELEMENTS:
            g.initializer.append(TensorProto(name=t.name, dims=list(t.dims), data_type=t.data_type))
        else:
            g.initializer.append(shared_copy(t))
    m = ModelProto(ir_version=part.ir_version)
    m.graph = g
    m.opset_import.extend(shared_copy(o) for o in part.opset_import)
    m.functions.extend(shared_copy(f) for f in part.functions)
    return m


def save_part(part: Any, output_path: str | os.PathLike) -> None:
    """Save an extracted model: external tensors stay external in ``<output>.data`` (their
    bytes streamed from the source's data files), and so do large ones when the model is
    over 2 GiB; else one file, its unchanged spans copied from the source file."""
    from .. import save  # noqa: PLC0415
    from .._files.external_data import external_tensors  # noqa: PLC0415
    has_external = next(iter(external_tensors(part)), None) is not None
    if has_external or part.ByteSize() > MAXIMUM_PROTOBUF:
        location = os.path.basename(os.fspath(output_path)) + ".data"
        save(part, output_path, save_as_external_data=True, location=location)
    else:
        save(part, output_path)
