"""The public functions, with the names and parameters of ``onnx.shape_inference``."""

from __future__ import annotations

import contextlib
import gc
import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

from .engine import LATEST_IR_VERSION, GraphRecord, Options, Run, Scope, function_id
from .slot import Slot
from .dims import int32
from .errors import FatalError, HardError, InferenceError, NodeInferenceError
from .nesting import run_with_room
from .pyrules import UserRuleError
from .symbols import SymbolTable
from .splice import splice_value_infos
from .types import type_bytes, type_from_proto, type_to_proto, value_info_fields

MAX_MODEL_FUNCTIONS = 10000  # as the reference's checker: more is a malformed or hostile model


def infer_shapes(model, check_type: bool = False, strict_mode: bool = False, data_prop: bool = False,
                 symbolic: bool = False):
    """A copy of ``model`` with ``value_info`` filled in and graph output types merged.

    ``model`` is a ModelProto (ours) or its serialized bytes.  The copy shares the
    original's buffer: only the graphs that gained types are re-encoded when saved.
    Raises `InferenceError`: always for model-level problems (an opset not imported, an
    initializer contradicting its input, ...), and for node errors in ``strict_mode``.
    ``check_type`` also checks every node's types against its schema's constraints.

    ``symbolic`` (beyond the reference): dims become integer expressions over the
    model's dim names (``past + seq``, ``(H + 1)//2``), written to ``dim_param`` in
    Python syntax, and the values of small integer tensors are propagated through the
    shape arithmetic exporters emit (see `irmodel.inference.symbolic.rules`).  Implies
    ``data_prop``.  Names are never unified unless an operator's semantics prove it.
    """
    return _infer(model, check_type, strict_mode, data_prop, symbolic, write_back=True)


def check_inference(model) -> None:
    """Strict inference with type checks for its errors only (``check_model(full_check=True)``):
    the types found are not written back (nothing keeps the copy), which on a graph of
    100,000 outputs is a sixth of the run."""
    _infer(model, True, True, False, False, write_back=False)


def _infer(model, check_type: bool, strict_mode: bool, data_prop: bool, symbolic: bool, write_back: bool):
    m = _fresh_copy(model)

    def infer() -> None:
        with inference_mode(symbolic) as hooks:
            run = _run_model(m, Options(check_type, strict_mode, data_prop or symbolic, hooks))
            if symbolic:
                _resolve_added(run.records)
            if write_back:
                _write_back(run.records, m)

    thresholds = gc.get_threshold()
    gc.set_threshold(*_GC_THRESHOLDS)
    try:
        run_with_room(infer)  # (nothing is written back until the run has finished)
    finally:
        gc.set_threshold(*thresholds)
    return m


@contextlib.contextmanager
def inference_mode(symbolic: bool):
    """One inference run's setting, shared by `infer_shapes` and `explain`: yields the
    engine's symbolic hooks (the module `symbolic`, or False for the reference's rules)
    with the symbolic state active until the run ends, and turns the engine's errors
    into `InferenceError`."""
    hooks: Any = False
    token = None
    if symbolic:
        from .symbolic import rules as hooks  # noqa: PLC0415
        from .dims import SymbolicState, use_symbolic  # noqa: PLC0415
        token = use_symbolic(SymbolicState())
    try:
        yield hooks
    except (NodeInferenceError, HardError, FatalError) as exc:
        raise InferenceError([str(exc)]) from None
    except UserRuleError as exc:  # a registered Python function's own exception, as it was raised
        raise exc.error from None
    except RecursionError:
        raise InferenceError(["model nested too deeply"]) from None
    finally:
        if token is not None:
            from .dims import reset_symbolic  # noqa: PLC0415
            reset_symbolic(token)


def _resolve_added(records) -> None:
    """Symbolic mode: equalities proven late apply to the values inferred before them."""
    from .symbolic.rules import resolve_type  # noqa: PLC0415
    for rec in records:
        for _name, slot in rec.added:
            slot.type = resolve_type(slot.type)
        for key, t in list(rec.assigned.items()):
            rec.assigned[key] = resolve_type(t)


#: The collector's thresholds during a run.  A pass allocates a few dozen container
#: objects per node (messages, lists, types) and drops most of them at once; with the
#: default thresholds (700, 10, 10) the collector re-examined the survivors (one slot
#: and type per value) again and again, a quarter of the run's time on a 75,000-node
#: graph.  Young collections every 100,000 allocations keep the garbage (decoded nodes
#: hold reference cycles) bounded; older generations wait until the run ends.
_GC_THRESHOLDS = (100_000, 1000, 1000)


def _run_model(m, opts: Options, explain=None) -> Run:
    opsets = {}
    for op in m.opset_import:
        opsets[op.domain] = int32(op.version)  # the reference keeps versions in a C int
    functions: dict[str, Any] = {}  # function id -> FunctionProto view
    funcs = m.functions
    if len(funcs) > MAX_MODEL_FUNCTIONS:
        raise HardError(f"Model contains {len(funcs)} local functions, exceeding the limit of {MAX_MODEL_FUNCTIONS}.")
    for f in funcs:
        functions.setdefault(function_id(f.domain, f.name, f.overload), f)
    _check_call_cycles(funcs)
    run = Run(opts, SymbolTable() if explain is None else explain.symbols, functions)
    run.explain = explain  # inference.explain's collector (explain.py), None otherwise
    record = GraphRecord(m.graph)
    run.records.append(record)
    scope = Scope(run, opsets, None, {}, m.ir_version, record, True)
    scope.process_graph(m.graph)
    scope.finalize_top()
    return run


def _check_call_cycles(funcs) -> None:
    """The reference's ``check_function_call_cycles``: duplicate ids and recursion are errors."""
    by_id = {}
    for f in funcs:
        fid = function_id(f.domain, f.name, f.overload)
        if fid in by_id:
            raise HardError(f"Model contains multiple local functions with the same implementation id '{fid}'.")
        by_id[fid] = f
    edges = {}
    for fid, f in by_id.items():
        callees = set()
        stack = [f.node]
        while stack:
            for node in stack.pop():
                key = function_id(node.domain, node.op_type, node.overload)
                if key in by_id:
                    callees.add(key)
                for a in node.attribute:
                    if a.HasField("g"):
                        stack.append(a.g.node)
                    for g in a.graphs:
                        stack.append(g.node)
        edges[fid] = sorted(callees)
    state: dict[str, int] = {}  # function id -> 1 on the current path, 2 done
    for root in by_id:
        if state.get(root):
            continue
        path = [root]
        state[root] = 1
        stack = [iter(edges[root])]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                state[path.pop()] = 2
                continue
            s = state.get(nxt)
            if s == 1:
                cycle = " -> ".join(path[path.index(nxt):])
                raise HardError(f"Cycle detected in model-local function references: {cycle} -> {nxt}. "
                                "Model-local functions must not be recursive.")
            if not s:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(edges[nxt]))


def _fresh_copy(model):
    """A new root message over the same bytes (`wirefmt.shared_copy`: nothing copied while
    the model is exactly its bytes), so the caller's stays as it was, with the caller's
    file context (directory, external-data policy)."""
    from wirefmt import shared_copy  # noqa: PLC0415

    from .. import ModelProto, loads  # noqa: PLC0415
    from .._files.origin import origin_of, set_origin  # noqa: PLC0415
    if isinstance(model, (bytes, bytearray, memoryview)):
        return loads(model, "ModelProto")
    if type(model) is not ModelProto:
        raise TypeError(f"infer_shapes needs a ModelProto or bytes, not {type(model).__name__}")
    fresh = shared_copy(model)
    origin = origin_of(model)
    if origin is not None:  # the same file, directory and external-data policy
        set_origin(fresh, origin)
    return fresh


def _write_back(records, model=None) -> None:
    """Assign the changed types and append the new value_info entries.

    New messages are opened over their serialized bytes (`types.value_info_fields`), so
    saving copies them as they are; nothing else of the graph is touched.  The model's
    graph comes last: its entries may be spliced into a copy of its bytes (`splice`),
    which needs its bytes unchanged by the sub-graphs' entries.
    """
    for rec in records:
        if model is None or rec.graph is not model.graph:
            _write_record(rec, None)
    for rec in records:
        if model is not None and rec.graph is model.graph:
            _write_record(rec, model)


def _write_record(rec, model) -> None:
    from .. import loads  # noqa: PLC0415
    from .denotation import declared_type_bytes  # noqa: PLC0415
    g = rec.graph
    if rec.added:
        spans: list = []
        fields = value_info_fields(rec.added, spans, slots=True)
        if model is not None and splice_value_infos(model, fields, spans):
            g = model.graph
        else:
            # One decode for all new entries; each stays a span of that buffer, copied as is.
            holder = loads(_graph_in_model(fields), "ModelProto")
            g.value_info.extend(holder.graph.value_info)
    bare = rec.bare  # (no denotation to keep: written as any other changed entry, below)
    for field, index, slot, original in rec.declared:
        if slot.merged and (field, index) not in bare:  # denotations stay or go as the reference's merge leaves them
            vi = getattr(g, field)[index]
            data = declared_type_bytes(slot.type, vi.type, original, slot.merged)
            if data is not None:
                vi.type = loads(data, "TypeProto")
        elif slot.type != original:
            getattr(g, field)[index].type = loads(type_bytes(slot.type), "TypeProto")
    for (field, index), t in rec.assigned.items():
        getattr(g, field)[index].type = loads(type_bytes(t), "TypeProto")


def _graph_in_model(fields: bytes) -> bytes:
    """A serialized ModelProto whose graph is ``fields`` (entries opened at their depth in a model)."""
    from .._wireview.fields import MODEL_GRAPH_NUMBER  # noqa: PLC0415
    from .types import length_field  # noqa: PLC0415
    return length_field(MODEL_GRAPH_NUMBER, fields)


def infer_shapes_path(model_path, output_path=None, check_type: bool = False, strict_mode: bool = False,
                      data_prop: bool = False, symbolic: bool = False) -> None:
    """`infer_shapes` from a file to a file (``output_path`` defaults to the input).

    The model is mapped, not read, and written back atomically; files over 2 GiB work.
    """
    from .. import load, save  # noqa: PLC0415
    model_path = os.fspath(model_path)
    output_path = model_path if output_path is None or output_path == "" else os.fspath(output_path)
    m = load(model_path, load_external_data=False)
    save(infer_shapes(m, check_type, strict_mode, data_prop, symbolic), output_path)


def infer_node_outputs(schema, node, input_types: dict, input_data: dict | None = None,
                       input_sparse_data: dict | None = None, opset_imports=None, ir_version: int = 14) -> dict:
    """The output types of one node, as ``onnx.shape_inference.infer_node_outputs`` gives them.

    ``schema`` is an `irmodel.defs` schema; ``input_types`` maps value names to TypeProto
    (entries not among the node's inputs are the outer scope of its sub-graphs).
    Returns ``{output name: TypeProto}`` for every output (empty when nothing is known).
    """
    from . import lookup  # noqa: PLC0415
    from .context import NodeView  # noqa: PLC0415
    from .tensordata import ConstTensor, is_small  # noqa: PLC0415
    from .typecheck import check_input_output_types, verify_node  # noqa: PLC0415
    input_data = input_data or {}
    input_sparse_data = input_sparse_data or {}

    def infer():  # (run again on a deeper stack if sub-graphs nest deep: `nesting`)
        try:
            verify_node(schema, node)
            opsets = {op.domain: int32(op.version) for op in opset_imports} if opset_imports else {}
            if not opsets:
                opsets[schema.domain] = schema.since_version
            run = Run(Options(), None, {})
            scope = Scope(run, opsets, None, None, ir_version, None, False)
            for name, tp in input_types.items():
                scope.types[name] = Slot(type_from_proto(tp))
            for name, t in input_data.items():
                if name in node.input and is_small(t):
                    scope.const_data[name] = ConstTensor(t)
            for name, t in input_sparse_data.items():
                if name in node.input:
                    scope.sparse_data[name] = t
            view = NodeView(node, 0)
            ctx = scope.make_context(view)
            ctx.symbolic_ = [None] * len(view.inputs)  # no data propagation here
            fn = lookup.rule_for(schema, schema.domain, schema.name)
            if fn is not None:
                fn(ctx)
            check_input_output_types(schema, ctx)
        except (NodeInferenceError, HardError, FatalError) as exc:
            raise InferenceError([str(exc)]) from None
        except UserRuleError as exc:
            raise exc.error from None
        return ctx

    ctx = run_with_room(infer)
    from .types import UNSET  # noqa: PLC0415
    return {name: type_to_proto(UNSET if t is None else t) for name, t in zip(node.output, ctx.outputs)}


def infer_function_output_types(function, input_types, attributes) -> list:
    """The types of ``function``'s outputs for a call with these input types and attributes.

    ``onnx.shape_inference.infer_function_output_types``: the body is inferred as a call
    would infer it (strict mode, ``check_type``, no data propagation, no constant input
    values), with the opsets the function imports.  ``input_types`` gives one TypeProto
    per actual input; an empty TypeProto marks an absent (optional) input, as in onnx.
    ``attributes`` are the caller's AttributeProtos.  Returns one TypeProto per output
    of the function, empty where nothing is known.
    """
    from .. import NodeProto, loads  # noqa: PLC0415
    from ..io import as_message  # noqa: PLC0415
    from .context import InferenceContext, NodeView  # noqa: PLC0415
    from .types import UNSET  # noqa: PLC0415
    function = as_message(function, "FunctionProto")
    types = [type_from_proto(as_message(t, "TypeProto")) for t in input_types]
    call = NodeProto()  # a call site: inputs named where present, one output per formal output
    call.input.extend(f"in{i}" if t is not UNSET else "" for i, t in enumerate(types))
    call.output.extend(f"out{i}" for i in range(len(function.output)))
    call.attribute.extend(as_message(a, "AttributeProto") for a in attributes)
    view = NodeView(call, 0)
    none = [None] * len(types)

    def infer():  # (run again on a deeper stack if calls and sub-graphs nest deep: `nesting`)
        ctx = InferenceContext(view, [None if t is UNSET else t for t in types], none, none, none)
        with inference_mode(False):
            opsets = {op.domain: int32(op.version) for op in function.opset_import}
            run = Run(Options(check_type=True, strict=True), None, {})
            scope = Scope(run, opsets, None, {}, LATEST_IR_VERSION, None)
            scope.process_function(function, list(function.input), list(function.output), ctx)
            scope.finalize()
        return ctx

    ctx = run_with_room(infer)
    return [loads(type_bytes(UNSET if t is None else t), "TypeProto") for t in ctx.outputs]

