"""Why a value's type or dims are unknown: the first node where each was lost.

``explain(model)`` runs inference with a collector (`Explainer`) on the run; the engine
tells it about each node of the model's graphs (never of function bodies, whose values
are private copies): inferred, no inference function, unknown operator, or a rule that
failed.  The collector compares what the node's rule gave for each output with what
was declared for it (a declared dim counts as known) and keeps, for every value left
with an unknown element type, rank or dim, one `Loss`:

* the loss started at this node when all the node's inputs were fully known, or when
  the node could not be inferred at all; the reason is one of `REASONS`;
* otherwise it is inherited: the value's record repeats the origin of the first input
  (in input order) that was itself lost, missing or untyped, and names that input in
  ``via``.  (A node may lose a dim of its own on top of an inherited one: the record
  names the upstream origin, the first cause on the path.)

A value that data propagation did not keep because of a budget (`dataprop.keep_value`)
is remembered with why (``values_not_propagated``); a node's output left without a value
because an input was not kept inherits that; a data-dependent loss through such an input
gives `VALUE_BUDGET` and the budget's words as its reason.

Only the collector's own tables grow; it never changes what inference computes.
"""

from __future__ import annotations

from .symbols import SymbolTable
from .types import UNSET, MapType, OptionalType, SequenceType, SparseTensorType, TensorType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

UNKNOWN_OP = "unknown-op"
NO_INFERENCE = "no-inference-function"
INFERENCE_ERROR = "inference-error"
MISSING_INPUT = "missing-input"
UNTYPED_INPUT = "untyped-input"
DATA_DEPENDENT = "data-dependent"
VALUE_BUDGET = "value-budget"
NOT_DETERMINED = "not-determined"

#: Every reason, with what it means.
REASONS = {
    UNKNOWN_OP: "no schema and no model-local function for the operator (its domain or name is unknown)",
    NO_INFERENCE: "the operator has a schema but irmodel has no inference function for it",
    INFERENCE_ERROR: "the operator's rule failed on this node (its outputs were left as declared)",
    MISSING_INPUT: "an input names a value that no graph input, initializer or earlier node defines",
    UNTYPED_INPUT: "an input is declared without a type, without a shape, or with an unnamed dim",
    DATA_DEPENDENT: "the output's shape depends on input values that are not known before run time",
    VALUE_BUDGET: "the output's shape depends on an input value that data propagation did not keep: it is "
                  "over a budget of `irmodel.limits` (docs/inference-values.md)",
    NOT_DETERMINED: "the operator's rule does not determine it from the inputs' types and attributes",
}

#: Operators whose output shapes depend on the values (not only the shapes) of inputs.
DATA_DEPENDENT_OPS = frozenset({
    "AffineGrid", "BlackmanWindow", "CenterCropPad", "Compress", "ConstantOfShape", "DFT", "Expand",
    "HammingWindow", "HannWindow", "If", "Loop", "MaxUnpool", "MelWeightMatrix", "NonMaxSuppression",
    "NonZero", "OneHot", "Pad", "Range", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
    "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Reshape",
    "Resize", "STFT", "Scan", "Slice", "Split", "Squeeze", "StringNormalizer", "StringSplit", "Tile",
    "TopK", "Unique", "Unsqueeze", "Upsample",
    "GroupQueryAttention",  # com.microsoft: present length from total_sequence_length's value
})


class Loss:
    """One value with an unknown part, and where and why it was first lost.

    ``what`` is "type", "shape" (rank unknown) or "dims" (``dims``: the unknown dim
    indices); ``node_index``/``op_type``/``domain``/``node_name`` name the origin node
    (``node_index`` is its position in its graph; ``graph`` that graph's name);
    ``via`` is the lost input this value inherited from (None at the origin).
    """

    __slots__ = ("value", "what", "dims", "reason", "detail", "graph", "node_index", "op_type", "domain",
                 "node_name", "via")

    def __init__(self, value: str, what: str, dims: tuple, reason: str, detail: str, graph: str,
                 node_index: int, op_type: str, domain: str, node_name: str, via: str | None = None) -> None:
        self.value, self.what, self.dims = value, what, dims
        self.reason, self.detail = reason, detail
        self.graph, self.node_index, self.op_type, self.domain, self.node_name = \
            graph, node_index, op_type, domain, node_name
        self.via = via

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return f"Loss({self.as_dict()!r})"


class Explanation:
    """What `explain` returns: ``losses`` (one `Loss` per value, in the order met),
    ``operators_without_inference``: sorted ``(domain, op_type, since_version or None,
    reason)`` of every operator met that no rule infers (None: no schema at all), and
    ``values_not_propagated``: ``(value, why)`` for each value data propagation computed
    but did not keep, over a budget (in the order met)."""

    __slots__ = ("losses", "operators_without_inference", "values_not_propagated")

    def __init__(self, losses: list, operators: list, not_propagated: list | None = None) -> None:
        self.losses = losses
        self.operators_without_inference = operators
        self.values_not_propagated = not_propagated or []

    def as_dict(self) -> dict:
        return {"values": [loss.as_dict() for loss in self.losses],
                "operators_without_inference": [
                    {"domain": d, "op_type": o, "since_version": v, "reason": r}
                    for d, o, v, r in self.operators_without_inference],
                "values_not_propagated": [{"value": v, "reason": VALUE_BUDGET, "detail": why}
                                          for v, why in self.values_not_propagated]}


def _unknown_part(t, declared, fresh) -> tuple | None:
    """``(what, dims)`` of what is unknown in ``t`` (the rule's result) once merged with
    ``declared`` (the value's type before this node), or None when all is known.  A dim
    is unknown when it is None or one of the ``fresh`` names inference made for one."""
    if t is None or t is UNSET:
        t = declared
        declared = None
    kind = type(t)
    if t is None or t is UNSET:
        return ("type", ())
    if kind is SequenceType or kind is OptionalType:
        inner = declared.elem if type(declared) is kind else None
        return _unknown_part(t.elem, inner, fresh)
    if kind is MapType:
        return None
    if kind is not TensorType and kind is not SparseTensorType:
        return None
    d_shape = declared.shape if type(declared) in (TensorType, SparseTensorType) else None
    elem = t.elem or (declared.elem if type(declared) in (TensorType, SparseTensorType) else 0)
    if not elem:
        return ("type", ())
    shape = t.shape
    if shape is None:
        if d_shape is None:
            return ("shape", ())
        shape = d_shape
    if d_shape is not None and len(d_shape) != len(shape):
        d_shape = None
    lost = tuple(i for i, d in enumerate(shape)
                 if (d is None or d in fresh) and (d_shape is None or d_shape[i] is None or d_shape[i] in fresh))
    return ("dims", lost) if lost else None


class RecordingSymbols(SymbolTable):
    """The run's symbol table, remembering the names it makes (they stand for unknown dims)."""

    __slots__ = ("fresh",)

    def __init__(self) -> None:
        super().__init__()
        self.fresh: set = set()

    def create_new(self, prefix: str = "unk__") -> str:
        name = super().create_new(prefix)
        self.fresh.add(name)
        return name


class Explainer:
    """The collector the engine fills (``Run.explain``); `explanation` gives the result."""

    def __init__(self) -> None:
        self.symbols = RecordingSymbols()  # given to the run (api._run_model)
        self.lost: dict[str, Loss] = {}
        self.order: list[Loss] = []
        self.operators: dict[tuple, str] = {}
        self.unpropagated: dict[str, str] = {}  # value -> why data propagation did not keep it
        self.refused: list[tuple[str, str]] = []  # the values a budget refused, in order

    # -- called by data propagation ------------------------------------------------------
    def not_propagated(self, name: str, why: str) -> None:
        """A budget refused ``name``'s value (`dataprop.keep_value`)."""
        if name not in self.unpropagated:
            self.unpropagated[name] = why
            self.refused.append((name, why))

    def propagated(self, scope, node) -> None:
        """``node``'s propagation is done: an output left without a value while an input's
        value was refused inherits why (the first such input, in input order)."""
        if not self.unpropagated or not scope.writable:
            return
        for inp in node.inputs:
            why = self.unpropagated.get(inp)
            if why is not None:
                break
        else:
            return
        for out in node.outputs:
            if out and out not in scope.shape_data and out not in self.unpropagated:
                self.unpropagated[out] = why

    # -- called by the engine -----------------------------------------------------------
    def node(self, scope, node, ctx, reason: str | None = None, detail: str = "", schema=None) -> None:
        """Node ``node`` of ``scope`` is done: inferred (``reason`` None) or not (a reason).

        Called before the outputs' types are merged into their values (so the value's
        type is still the declared one)."""
        if not scope.writable:
            return  # a function body's values are the callee's copies
        since_version = schema.since_version if schema is not None else None
        if reason is None and schema is not None and not schema.has_type_and_shape_inference_function \
                and not schema.has_function:
            reason = NO_INFERENCE
            detail = "the schema has neither an inference function nor a function body"
        if reason in (UNKNOWN_OP, NO_INFERENCE):
            self.operators.setdefault((node.domain, node.op_type, since_version), reason)
        for i, name in enumerate(node.outputs):
            if not name or name in self.lost:
                continue
            slot = scope.types.get(name)
            declared = slot.type if slot is not None else None
            inferred = ctx.outputs[i] if reason is None and i < len(ctx.outputs) else None
            part = _unknown_part(inferred, declared, self.symbols.fresh)
            if part is None:
                continue
            self._record(scope, node, ctx, name, part, reason, detail)

    # -- the origin of a loss ---------------------------------------------------------------
    def _record(self, scope, node, ctx, name: str, part: tuple, reason, detail: str) -> None:
        graph = _graph_name(scope)
        via = None
        fresh = self.symbols.fresh
        if reason is None or reason == INFERENCE_ERROR:
            for j, inp in enumerate(node.inputs):
                if not inp:
                    continue
                upstream = self.lost.get(inp)
                if upstream is not None:
                    via = inp
                    reason, detail = upstream.reason, upstream.detail
                    origin = upstream
                    break
                slot = scope.types.get(inp)
                if slot is None:
                    declared = inp in scope.undefined
                    reason = UNTYPED_INPUT if declared else MISSING_INPUT
                    detail = (f"input {j} '{inp}' is declared without a type" if declared
                              else f"input {j} '{inp}' is not defined")
                    break
                if _unknown_part(slot.type, None, fresh) is not None:
                    reason = UNTYPED_INPUT
                    detail = f"input {j} '{inp}' has an unknown type, rank or unnamed dim"
                    break
            if via is not None:
                loss = Loss(name, part[0], part[1], reason, detail, origin.graph, origin.node_index, origin.op_type,
                            origin.domain, origin.node_name, via)
                self._keep(loss)
                return
            if reason is None:
                budget = self._refused_input(node, ctx) if node.op_type in DATA_DEPENDENT_OPS else None
                if budget is not None:
                    reason, detail = VALUE_BUDGET, budget
                elif node.op_type in DATA_DEPENDENT_OPS and _has_unknown_value(ctx):
                    reason = DATA_DEPENDENT
                    detail = "an input's value is not known before run time"
                else:
                    reason = NOT_DETERMINED
                    detail = ""
        self._keep(Loss(name, part[0], part[1], reason, detail, graph, node.index, node.op_type, node.domain,
                        node.name))

    def _refused_input(self, node, ctx) -> str | None:
        """Why the value of the first input whose value a budget refused was not kept, or None."""
        if not self.unpropagated:
            return None
        for j, inp in enumerate(node.inputs):
            why = self.unpropagated.get(inp) if inp else None
            if why is not None and ctx.has_input(j) and ctx.input_data(j) is None and \
                    ctx.symbolic_input(j) is None:
                return f"input {j} '{inp}': its value was not propagated: {why}"
        return None

    def _keep(self, loss: Loss) -> None:
        self.lost[loss.value] = loss
        self.order.append(loss)

    def explanation(self) -> Explanation:
        ops = sorted((d, o, v, r) for (d, o, v), r in self.operators.items())
        return Explanation(list(self.order), ops, list(self.refused))


def _has_unknown_value(ctx) -> bool:
    for i in range(ctx.num_inputs):
        if ctx.has_input(i) and ctx.input_data(i) is None and ctx.symbolic_input(i) is None \
                and ctx.input_sparse_data(i) is None:
            return True
    return False


def _graph_name(scope) -> str:
    record = scope.record
    return str(record.graph.name) if record is not None else ""


def explain(model: Any, data_prop: bool = False, symbolic: bool = False) -> Explanation:
    """For each value of ``model``'s graphs with an unknown element type, rank or dim after
    inference, the first node where it was lost and why (`Loss`, reasons in `REASONS`),
    and the operators no inference function covers.  ``model``: a ModelProto or its bytes.
    ``symbolic`` explains what `infer_shapes(..., symbolic=True)` leaves unknown."""
    from .api import _fresh_copy, _run_model, inference_mode  # noqa: PLC0415
    from .engine import Options  # noqa: PLC0415

    from .nesting import run_with_room  # noqa: PLC0415

    def run():
        collector = Explainer()
        with inference_mode(symbolic) as hooks:
            _run_model(_fresh_copy(model), Options(data_prop=data_prop or symbolic, symbolic=hooks), collector)
        return collector.explanation()

    return run_with_room(run)
