"""The inference pass: one forward walk over the nodes, with the reference's semantics.

A `Scope` is the reference's ``ShapeInferenceImplBase``: one graph, or one call of a
function body.  It maps value names to `Slot`s (a slot holds the current type of a
value; a sub-graph sees its outer scope's slots through a `ChainMap`, so a merge into
an outer value is seen by everyone, as the reference's pointers are).  Types are
seeded from value_info, inputs and outputs (a declared type wins) and from
initializers; then each node in order:

1. its domain's opset version (no import: an error whatever the mode);
2. its schema's inference function, or its function body, or a model-local function;
   no schema and no function: the op is unsupported, its outputs stay untyped (and,
   as in the reference, errors of later nodes in that scope are no longer recorded);
3. each inferred output type gets fresh names for its unknown dims and is merged into
   the value's slot (a new value gets a value_info entry);
4. Constant nodes record their value; with ``data_prop``, the schema's propagation
   function computes the value of small integer tensors (shapes) for later nodes.

An error of an operator's rule is recorded against the node (strict mode raises them
all at the end); the reference's other runtime errors (`HardError`) are raised at once.

Function calls are bounded (`MAX_CALL_DEPTH`) and detected when recursive; sub-graphs and
calls nested in each other are bounded together by `irmodel.limits.MAX_NESTING`, and the
run has the Python stack that needs (`nesting`).  No recursion depends on the number of
nodes.
"""

from __future__ import annotations

from collections import ChainMap
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

from . import lookup, nesting, schemas
from .context import A_FLOAT, A_FLOATS, A_INT, A_INTS, A_SPARSE_TENSOR, A_TENSOR, InferenceContext, NodeView
from .. import DecodeError
from .dims import int32
from .dataprop import PropagationContext
from .declared import declared_types
from .errors import HardError, NodeInferenceError, fail_shape, fail_type
from .merge import check_compatible, merge
from .initializers import seed_initializers
from .nodepass import empty_node_spans, infer_nodes, nodes_with_graphs
from .outcomes import data_positions, data_signature, value_signature
from .slot import Slot
from .symbols import SymbolTable, materialize
from .tensordata import FLOAT, ConstTensor, const_from_ints, is_small
from .types import UNSET, SparseTensorType, TensorType, type_from_proto

MAX_HELD_NODES = 10000  # nodes made for their sub-graphs' names, kept for the node pass
MAX_CALL_DEPTH = 100  # nested function calls (model-local functions and schema bodies)
LATEST_IR_VERSION = 14  # the reference's IR_VERSION, used for sub-graphs and function bodies


class Options:
    __slots__ = ("check_type", "strict", "data_prop", "symbolic")

    def __init__(self, check_type: bool = False, strict: bool = False, data_prop: bool = False,
                 symbolic=False):
        self.check_type = check_type
        self.strict = strict
        self.data_prop = data_prop
        # the module `symbolic.rules` (its hooks: override, propagate, resolve_types) or False
        self.symbolic = symbolic


class GraphRecord:
    """What inference learnt about one GraphProto, to be written back to it.

    ``declared``: ``(field, index, slot, original type or None)`` for every value_info,
    input and output entry (changed ones are rewritten); ``bare``: the ``(field, index)``
    of those read from their bytes and known to carry no denotation; ``assigned``: types
    given to entries that had none; ``added``: new value_info entries, in order.
    """

    __slots__ = ("graph", "declared", "bare", "assigned", "added")

    def __init__(self, graph):
        self.graph = graph
        self.declared = []
        self.bare = set()
        self.assigned = {}
        self.added = []


class Run:
    """State shared by every scope of one inference call."""

    __slots__ = ("options", "symbols", "functions", "active", "records", "missing", "depth", "explain", "ops",
                 "outcomes", "outcomes_by_shape", "propagated", "nesting", "allowance")

    def __init__(self, options: Options, symbols: SymbolTable | None, functions: dict):
        self.options = options
        self.symbols = symbols
        self.functions = functions
        self.active: set[int] = set()  # id() of the functions being expanded
        self.records: list[GraphRecord] = []
        self.missing: set[tuple[str, str, int]] = set()  # (domain, op_type, since_version)
        self.depth = 0
        # sub-graphs and calls open now, and how many this thread's stack has room for
        # (`nesting`: past it the run restarts on a deeper stack, up to MAX_NESTING)
        self.nesting = 0
        self.allowance = nesting.allowance()
        self.explain = None  # an explain.Explainer told about each node, when asked for
        # (domain, op_type, opset version) -> (schema, inference fn, propagation fn): the
        # lookups of a node's rules, made once per operator and version (`op_rules`).
        self.ops: dict = {}
        self.outcomes: dict | None = None  # the node pass's cache (`nodepass`), made on first use
        self.outcomes_by_shape: dict = {}
        self.propagated = 0  # elements data propagation has kept, against its budget (`dataprop.keep_value`)

    def op_rules(self, domain: str, op_type: str, version: int) -> tuple:
        key = (domain, op_type, version)
        rules = self.ops.get(key)
        if rules is None:
            schema = schemas.get_schema(op_type, version, domain)
            fn = prop = None
            if schema is not None:
                if schema.has_type_and_shape_inference_function:
                    fn = lookup.rule_for(schema, domain, op_type)
                if schema.has_data_propagation_function:
                    prop = lookup.propagation_function(domain, op_type, schema.since_version)
            rules = self.ops[key] = (schema, fn, prop)
        return rules


def function_id(domain: str, name: str, overload: str) -> str:
    return f"{domain}:{name}:{overload}" if overload else f"{domain}:{name}"


class Scope:
    """One graph or one function-body call being inferred (see the module docstring)."""

    def __init__(self, run: Run, opsets: dict, outer=None, shape_data=None, ir_version: int = LATEST_IR_VERSION,
                 record: GraphRecord | None = None, writable: bool = False):
        self.run = run
        self.writable = writable  # results go back into the model (not for function-body copies)
        self.opsets = opsets
        self.types = ChainMap({}, outer) if outer is not None else {}
        self.const_data: dict[str, ConstTensor] = {}
        self.sparse_data: dict[str, Any] = {}  # SparseTensorProto views
        self.shape_data = shape_data if shape_data is not None else {}
        self.ir_version = ir_version
        self.record = record
        # name -> index into record (entries declared without a type)
        self.undefined: dict[str, tuple[str, int]] = {}
        self.unsupported = False
        self.errors: list[tuple[str, NodeView, str]] = []  # (message, node, kind)
        self.unbound: set[str] = set()
        self.reuse_constants = True
        self.inert_constants: dict = {}  # `outcomes.data_signature`'s: name -> (constant, passed over)
        self.const_signatures: dict = {}  # `outcomes.value_signature`'s: name -> (constant, its signature)
        self.held_nodes: list = []  # see `_add_node_graph_symbols`; emptied after the node pass
        self.interned: dict = {}  # initializer types: one object per distinct type (`nodepass` keys)

    # -- types ---------------------------------------------------------------------------
    def update_type(self, name: str, inferred) -> None:
        """``UpdateType``: name fresh dims, then merge into the value's slot or make one."""
        if inferred is None or inferred is UNSET:
            return
        symbols = self.run.symbols
        if symbols is not None and not (type(inferred) is TensorType and
                                        (inferred.shape is None or None not in inferred.shape)):
            inferred = materialize(inferred, symbols)
        slot = self.types.get(name)
        if slot is not None:
            slot.type = merge(inferred, slot.type)
            if slot.merged is not None:
                slot.merged.append(inferred)
            return
        slot = Slot(inferred)
        self.types[name] = slot
        if self.record is not None:
            self.record.added.append((name, slot))
            key = self.undefined.get(name)
            if key is not None:
                self.record.assigned[key] = inferred

    def _declare(self, field: str, index: int, name: str, t) -> None:
        assert self.record is not None  # only process_graph declares, and its scopes have a record
        if t is not None:
            slot = Slot(t, [])
            self.types[name] = slot
            self.record.declared.append((field, index, slot, t))
        else:
            # The reference reaches for the (absent) type to fill it later: it becomes
            # present and empty even if nothing is ever inferred.
            self.undefined[name] = (field, index)
            self.record.assigned[(field, index)] = UNSET

    # -- a graph ---------------------------------------------------------------------------
    def process_graph(self, graph, binding=None, input_overrides=None) -> None:
        """Seed the types of ``graph`` and infer its nodes (``Process(GraphProto&)``)."""
        # Only the model's graph and sub-graphs are processed here, and both scopes are made
        # with a GraphRecord; function bodies (record None) go through process_function.
        assert self.record is not None
        declared = []  # (field, index, name, type or None), each type read once
        for field in ("value_info", "input", "output"):
            overrides = input_overrides if field == "input" and input_overrides is not None else {}
            for i, (name, t, bare) in enumerate(declared_types(graph, field, overrides)):
                declared.append((field, i, name, overrides[i] if i in overrides else t))
                if bare:
                    self.record.bare.add((field, i))
        symbols = self.run.symbols
        nodes = graph.node
        if symbols is not None:
            for _f, _i, _vi, t in declared:
                if type(t) is tuple:
                    t = t[0]
                if t is not None:
                    symbols.add_from_type(t)
            # The names in the nodes' sub-graphs matter only once a fresh name is made.
            symbols.defer(lambda table: _add_node_graph_symbols(nodes, table, graph, self.held_nodes))
        for field, i, name, t in declared:
            if type(t) is tuple:  # a sub-graph input merged with the type its node gives
                slot = Slot(t[0], [t[2]])
                self.types[name] = slot
                self.record.declared.append((field, i, slot, t[1]))
            else:
                self._declare(field, i, name, t)
        if not seed_initializers(self, graph):  # (a large graph's: from their bytes)
            for tensor in graph.initializer:
                name = tensor.name
                t = TensorType(tensor.data_type, tuple(tensor.dims))
                t = self.interned.setdefault(t, t)
                if is_small(tensor):
                    self.const_data[name] = ConstTensor(tensor)
                self._seed_initializer(name, t)
        for sparse in graph.sparse_initializer:
            values = sparse.values
            name = values.name
            t = SparseTensorType(values.data_type, tuple(sparse.dims))
            self.sparse_data[name] = sparse
            self._seed_initializer(name, t)
        if binding is None and infer_nodes(self, graph, nodes):
            self.held_nodes.clear()
            return  # read from the nodes' bytes, outcomes cached (`nodepass`)
        if len(nodes) > 1:
            nodes[0]  # the first read makes the node decoder; the loop below then binds it, not its stub
        spans = empty_node_spans(graph, len(nodes))
        if spans is not None:
            self._process_nodes_skipping_empty(nodes, spans, binding)
            return
        for index, node in enumerate(nodes):
            self.process_node(NodeView(node, index, binding))

    def _process_nodes_skipping_empty(self, nodes, spans: list, binding) -> None:
        """The node loop of a graph with empty NodeProtos (``spans``: each node's start and
        end in its bytes): an empty node (no op, no names) that changed nothing but flags on
        its full path (no error recorded) makes every later one a no-op, skipped unread."""
        empty_inert = None
        for index in range(len(nodes)):
            empty = spans[2 * index] == spans[2 * index + 1]
            if empty and empty_inert:
                continue
            errors = len(self.errors)
            self.process_node(NodeView(nodes[index], index, binding))
            if empty and empty_inert is None:
                empty_inert = len(self.errors) == errors

    def _seed_initializer(self, name: str, t) -> None:
        slot = self.types.get(name)
        if slot is not None:
            check_compatible(t, slot.type)
        elif self.ir_version >= 4:
            self.types[name] = Slot(t)

    def finalize(self) -> None:
        """Strict mode: every recorded node error, raised together (to the enclosing node)."""
        if self.errors and self.run.options.strict:
            raise NodeInferenceError("Inference error(s): " + "".join(e[0] + "\n" for e in self.errors))

    def finalize_top(self) -> None:
        """Strict mode, for the model's graph: every node error, one problem each."""
        if self.errors and self.run.options.strict:
            from .errors import InferenceError, node_problem  # noqa: PLC0415
            raise InferenceError([node_problem(*e) for e in self.errors])

    # -- a node ------------------------------------------------------------------------------
    def _opset_version(self, node: NodeView) -> int:
        version = self.opsets.get(node.domain)
        if version is None and node.domain == "":
            version = self.opsets.get("ai.onnx")
        if version is None:
            raise fail_type("Cannot infer type and shape for node name ", node.name, ". No opset import for domain ",
                            node.domain, " optype ", node.op_type)
        return version

    def make_context(self, node: NodeView, version: int = 0) -> InferenceContext:
        """The node's context: input types now, constant and propagated values on first use."""
        get = self.types.get
        in_types = [None if (slot := get(name)) is None else slot.type for name in node.inputs]
        symbolic = self.run.options.symbolic
        if symbolic:
            in_types = symbolic.resolve_types(in_types)
        return InferenceContext(node, in_types, None, None, None, self, self.unbound, version)

    def process_node(self, node: NodeView, keep: list | None = None) -> None:
        """Infer one node: its rule, its outputs' types, its constant or propagated value.

        ``keep`` (the node pass's cache, `nodepass`): a list that receives the node's
        outcome when it depends on nothing but the node's kind and its input types: the
        rule's output types (before fresh names are given) and whether data propagation
        changed nothing (see `nodepass.Outcome`).
        """
        version = self.opsets.get(node.domain)
        if version is None:
            version = self._opset_version(node)
        run = self.run
        schema, fn, prop = run.op_rules(node.domain, node.op_type, version)
        get = self.types.get  # `make_context`, inlined (once per node)
        in_types = [None if (slot := get(name)) is None else slot.type for name in node.inputs]
        if run.options.symbolic:
            in_types = run.options.symbolic.resolve_types(in_types)
        ctx = InferenceContext(node, in_types, None, None, None, self, self.unbound, version)
        try:
            self._infer_node(node, ctx, schema, fn, prop, keep)
        except Exception as exc:  # noqa: BLE001 - sorted out by `node_failed`, which re-raises the rest
            self.node_failed(node, ctx, exc)

    def _infer_node(self, node: NodeView, ctx: InferenceContext, schema, fn, prop, keep: list | None) -> None:
        run = self.run
        if schema is not None:
            if schema.has_type_and_shape_inference_function:
                if fn is None:
                    run.missing.add((node.domain, node.op_type, schema.since_version))
                    if schemas.beyond_reference(schema):
                        self.unsupported = True
                    if run.explain is not None:
                        run.explain.node(self, node, ctx, "no-inference-function", schema=schema)
                    return
                if run.options.symbolic:
                    rule = run.options.symbolic.override(node.domain, node.op_type)
                    if rule is not None:
                        rule(ctx, fn)
                    else:
                        fn(ctx)
                else:
                    fn(ctx)
            elif schema.has_function:
                keep = None  # a body reads the caller's propagated values
                body = schemas.latest_function_body(schema)
                if body is not None:
                    self.process_call(node, body, ctx)
            elif schemas.beyond_reference(schema):
                self.unsupported = True
            if run.options.check_type:
                from .typecheck import check_input_output_types  # noqa: PLC0415
                check_input_output_types(schema, ctx)
        else:
            fn = run.functions.get(function_id(node.domain, node.op_type, node.overload)) \
                if run.functions else None
            if fn is None:
                self.unsupported = True
                if run.explain is not None:
                    run.explain.node(self, node, ctx, "unknown-op")
                return
            keep = None
            self.process_call(node, fn, ctx)
        if run.explain is not None:
            run.explain.node(self, node, ctx, schema=schema)
        outs = ctx.outputs
        # The outcome is the node kind's when the rule read no input value and no
        # sub-graph (the context's values are derived on the first such read); a
        # Constant, or a rule that read input values, is cached by those values too
        # (`outcomes.value_signature`: None when they are not small and plain).
        # So is a node whose propagation has values to read.
        valued = None
        if run.options.symbolic:
            self._finish_symbolic(node, ctx, outs, keep)
            return
        if keep is not None and (ctx.symbolic_ is not None or node.op_type == "Constant" or (
                prop is not None and run.options.data_prop and data_signature(self, node.inputs) is None)):
            if ctx._inferencers is None and not any(ctx.sparse_data_ or ()) and \
                    not (set(node.inputs) & set(node.outputs)) - {""}:
                valued = value_signature(self, node.inputs)
            if valued is None:
                keep = None
        if keep is not None:
            keep.append(tuple(outs))
        for i, name in enumerate(node.outputs):
            if name:
                self.update_type(name, outs[i])
        if node.op_type == "Constant":
            effect = self.process_constant(node)
            if keep is not None:
                keep.append(())
                keep.append((valued, (), effect))
                return
        if valued is not None and keep is not None:
            if prop is not None and run.options.data_prop:
                shape_data = self.shape_data
                before = len(shape_data)
                prop(PropagationContext(node, self))
                additions = data_positions(node.inputs, node.outputs, shape_data, before)
                if additions is not None:
                    keep.append(None)
                    keep.append((valued, additions, None))
            else:
                keep.append(())
                keep.append((valued, (), None))
            return
        if run.options.symbolic:
            run.options.symbolic.propagate(node, self)
        elif prop is not None and run.options.data_prop:
            if keep is None:
                prop(PropagationContext(node, self))
                if run.explain is not None:
                    run.explain.propagated(self, node)
            else:
                # Propagation with no value to read: does it change anything for this kind?
                # (the data signature when it does not, None when it does or may)
                sig = data_signature(self, node.inputs)
                before = len(self.shape_data)
                prop(PropagationContext(node, self))
                keep.append(sig if len(self.shape_data) == before else None)
        elif keep is not None:
            keep.append(())

    def _finish_symbolic(self, node: NodeView, ctx: InferenceContext, outs: list, keep: list | None) -> None:
        """Symbolic mode, after the rule: output types, a Constant's value, propagation.

        ``keep`` (the node pass, `nodepass.infer_nodes_symbolic`) receives
        ``(output types before fresh names, propagated values added by position, the
        Constant's effect)`` when the outcome is a function of the node, its input types
        and values and the symbolic state (no sub-graph or sparse value read, no input
        that is also an output, every added value at one of the node's names)."""
        if keep is not None and (ctx._inferencers is not None or any(ctx.sparse_data_ or ()) or
                                 (set(node.inputs) & set(node.outputs)) - {""}):
            keep = None
        for i, name in enumerate(node.outputs):
            if name:
                self.update_type(name, outs[i])
        effect = self.process_constant(node) if node.op_type == "Constant" else ()
        shape_data = self.shape_data
        before = len(shape_data)
        self.run.options.symbolic.propagate(node, self)
        if self.run.explain is not None:
            self.run.explain.propagated(self, node)
        if keep is not None:
            additions = data_positions(node.inputs, node.outputs, shape_data, before)
            if additions is not None:
                keep.append((tuple(outs), additions, effect))

    def node_failed(self, node: NodeView, ctx: InferenceContext | None, exc: Exception) -> None:
        """A node's error: recorded (strict mode raises it at the end) or raised as ours."""
        run = self.run
        if isinstance(exc, NodeInferenceError):
            if not self.unsupported:
                self.errors.append((f"{node.describe()}: {exc}", node, exc.kind))
            if run.explain is not None:
                run.explain.node(self, node, ctx, "inference-error", str(exc))
            return
        if isinstance(exc, HardError):
            raise NodeInferenceError(f"{node.describe()}: {exc}") from None
        if isinstance(exc, RecursionError):
            raise NodeInferenceError(f"{node.describe()}: nesting too deep") from None
        if isinstance(exc, DecodeError):
            raise exc  # malformed bytes met while reading the node: the codec's own error
        if isinstance(exc, (ArithmeticError, LookupError, TypeError, ValueError, AttributeError)):
            # A defect of ours, or input our rules did not foresee: never let it escape as
            # anything but our error (the tests report these as differences).
            raise NodeInferenceError(f"{node.describe()}: internal error: {type(exc).__name__}: {exc}") from exc
        raise exc

    def process_constant(self, node: NodeView) -> tuple:
        """A Constant node's value becomes known input data (``ProcessConstant``).

        Returns what it recorded, in order: ``(True, ConstTensor)`` or ``(False, sparse
        tensor)`` pairs (the node pass replays them for a node with the same attribute bytes;
        neither object is ever changed once made, so they are shared)."""
        if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or len(node.outputs) != 1:
            return ()
        out = node.outputs[0]
        done = []
        for a in node.proto.attribute if node.binding is None else _bound_attributes(node):
            c = None
            if a.name == "value":
                if a.type == A_TENSOR and a.HasField("t"):
                    if is_small(a.t):
                        c = ConstTensor(a.t)
                elif a.type == A_SPARSE_TENSOR and a.HasField("sparse_tensor"):
                    if self.reuse_constants:
                        self.sparse_data[out] = a.sparse_tensor
                        done.append((False, a.sparse_tensor))
            else:
                t = a.type
                if t == A_INTS:
                    c = const_from_ints(list(a.ints), False)
                elif t == A_INT:
                    c = const_from_ints([a.i], True)
                elif t == A_FLOATS:
                    c = const_from_ints(list(a.floats), False, FLOAT)
                elif t == A_FLOAT:
                    c = const_from_ints([a.f], True, FLOAT)
            if c is not None:
                self.const_data[out] = c
                done.append((True, c))
        return tuple(done)

    # -- sub-graphs ---------------------------------------------------------------------------
    def graph_inferencer(self, graph, binding):
        return GraphInferencer(self, graph, binding)

    # -- function calls -------------------------------------------------------------------------
    def process_call(self, node: NodeView, function, ctx: InferenceContext) -> None:
        """Infer ``node``'s outputs from a function body (``ProcessCall``)."""
        run = self.run
        key = id(function)
        if key in run.active:
            raise fail_shape("Cycle detected in model-local function references: function '",
                             function_id(function.domain, function.name, function.overload),
                             "' is already being expanded in the current call chain.")
        if run.depth >= MAX_CALL_DEPTH:
            raise fail_shape("Function calls nested deeper than ", MAX_CALL_DEPTH)
        nesting.enter(run)
        run.active.add(key)
        run.depth += 1
        try:
            callee_data = {}
            formal_in = list(function.input)
            formal_out = list(function.output)
            for actual, formal in zip(node.inputs, formal_in):
                if actual and actual in self.shape_data:
                    callee_data[formal] = self.shape_data[actual]
            opsets = {}
            for op in function.opset_import:
                opsets[op.domain] = int32(op.version)  # a C int in the reference
            callee = Scope(run, opsets, None, callee_data, LATEST_IR_VERSION, None)
            callee.process_function(function, formal_in, formal_out, ctx)
            callee.finalize()
            for actual, formal in zip(node.outputs, formal_out):
                if actual and formal in callee_data:
                    self.shape_data[actual] = callee_data[formal]
        finally:
            run.active.discard(key)
            run.depth -= 1
            nesting.leave(run)

    def process_function(self, function, formal_in: list, formal_out: list, ctx: InferenceContext) -> None:
        """``Process(FunctionProto&, ctx)``: bind inputs and attributes, infer the body."""
        self.reuse_constants = False
        n_actual = ctx.num_inputs
        for i, formal in enumerate(formal_in):
            provided = i < n_actual and ctx.has_input(i)
            t = ctx.input_type(i) if provided else None
            if t is not None:
                self.types[formal] = Slot(t)
            if not provided:
                self.unbound.add(formal)
        for i in range(min(n_actual, len(formal_in))):
            t = ctx.input_type(i)
            if t is not None:
                if type(t) is TensorType and ctx.input_data(i) is not None:
                    self.const_data[formal_in[i]] = ctx.input_data(i)
                elif type(t) is SparseTensorType and ctx.input_sparse_data(i) is not None:
                    self.sparse_data[formal_in[i]] = ctx.input_sparse_data(i)
        binding = {}
        for name in function.attribute:
            a = ctx.attr(name)
            if a is not None:
                binding[name] = a
        for default in function.attribute_proto:
            a = ctx.attr(default.name)
            binding[default.name] = a if a is not None else default
        for index, node in enumerate(function.node):
            self.process_node(NodeView(node, index, binding))
        for i, name in enumerate(formal_out):
            slot = self.types.get(name)
            if slot is not None:
                ctx.output(i)  # an output the caller does not have is a hard error
                ctx.set_output(i, slot.type)


def _add_node_graph_symbols(nodes, symbols: SymbolTable, graph=None, held: list | None = None) -> None:
    """The names used in the graphs held by ``nodes``' attributes (see `add_graph_symbols`).

    Of a large graph read from bytes, only the nodes whose attributes may hold a graph
    are made (`nodepass.nodes_with_graphs`), and up to `MAX_HELD_NODES` of them are kept
    in ``held`` until the node pass is over: it reads the same objects, not their bytes
    again (a graph's nodes are held weakly)."""
    picked = nodes_with_graphs(graph, nodes) if graph is not None else None
    for node in (nodes if picked is None else picked):
        if picked is not None and held is not None and len(held) < MAX_HELD_NODES:
            held.append(node)
        for a in node.attribute:
            if a.HasField("g"):
                add_graph_symbols(a.g, symbols)


def _bound_attributes(node: NodeView):
    """The attributes of a bound node in order, as the reference's copy holds them."""
    out = []
    for a in node.proto.attribute:
        if a.ref_attr_name:
            value = node.binding.get(a.ref_attr_name)
            if value is None:
                continue
            out.append(_Renamed(a.name, value))
        else:
            out.append(a)
    return out


class _Renamed:
    """A caller's attribute seen under the callee's attribute name (the binder's copy)."""

    __slots__ = ("name", "_a")

    def __init__(self, name, a):
        self.name = name
        self._a = a

    def __getattr__(self, item):
        return getattr(self._a, item)


class GraphInferencer:
    """Infers a sub-graph (a graph attribute) given the types of its inputs (``doInferencing``)."""

    def __init__(self, scope: Scope, graph, binding):
        self.scope = scope
        self.graph = graph
        self.binding = binding

    def infer(self, input_types: list, input_data: list | None = None) -> list:
        """The sub-graph's output types after inferring it with these input types.

        ``input_types`` entries may be None (nothing known: the declared type stays).
        Returns one type per graph output (UNSET when nothing is known).
        """
        scope = self.scope
        g = self.graph
        run = scope.run
        n = len(input_types)
        inputs = list(g.input)
        init_names = {t.name for t in g.initializer}
        if scope.ir_version >= 4:
            if len(inputs) != n:
                raise fail_shape("Graph has ", len(inputs), " inputs but ", n, " were provided")
            for vi in inputs:
                if vi.name in init_names:
                    raise fail_shape("Cannot use the same name as both a subgraph initializer and subgraph input: ",
                                     vi.name)
        else:
            if n > len(inputs):
                raise fail_shape("Graph has ", len(inputs), " inputs but ", n, " were provided.",
                                 "The number of graph input cannot be smaller than the number of node input")
            if n < len(inputs):
                for i, vi in enumerate(inputs):
                    if i < n and vi.name in init_names:
                        raise fail_shape("Graph initializer names must appear after the actual inputs: ", vi.name)
                    if i >= n and vi.name not in init_names:
                        raise fail_shape("Cannot find missing input: ", vi.name, "in initializers. ")
        overrides = {}
        for i in range(n):
            inferred = input_types[i]
            if inferred is None:
                continue
            vi = inputs[i]
            original = type_from_proto(vi.type) if vi.HasField("type") else None
            t = merge(inferred, UNSET if original is None else original)
            if run.symbols is not None:
                t = materialize(t, run.symbols)
            overrides[i] = (t, original, inferred)
        record = GraphRecord(g)
        if scope.writable:  # the reference infers function bodies on copies: nothing written
            run.records.append(record)
        sub = Scope(run, scope.opsets, scope.types, scope.shape_data, LATEST_IR_VERSION, record, scope.writable)
        nesting.enter(run)
        try:
            sub.process_graph(g, self.binding, overrides)
        finally:
            nesting.leave(run)
        sub.finalize()
        out = []
        for i, vi in enumerate(g.output):
            key = ("output", i)
            slot = None
            for field, index, s, _ in record.declared:
                if field == "output" and index == i:
                    slot = s
            if slot is not None:
                out.append(slot.type)
            elif key in record.assigned:
                out.append(record.assigned[key])
            else:
                out.append(UNSET)
        return out


def add_graph_symbols(graph, symbols: SymbolTable) -> None:
    """``TraverseGraphsToAddExistingSymbols``: dim names of this graph and of its sub-graphs.

    Iterative (a stack, not recursion), following the reference: graph attributes (``g``)
    only, not ``graphs``.
    """
    stack = [graph]
    while stack:
        g = stack.pop()
        for field in (g.input, g.output, g.value_info):
            for vi in field:
                if vi.HasField("type"):
                    symbols.add_from_type(type_from_proto(vi.type))
        for node in g.node:
            for a in node.attribute:
                if a.HasField("g"):
                    stack.append(a.g)
