"""Data propagation: the values of small integer tensors computed from shapes.

With ``data_prop=True`` the reference evaluates the shape arithmetic exporters emit
(``Shape -> Gather -> Concat -> Reshape``): the value of a 0-D or 1-D integer tensor is
kept as a tuple of dims (known values, names, or unknown), so that a later Reshape or
Expand can use ``(N, 3, 224)`` as its target.  Functions here are registered for the
schemas that have one in the reference: Add, Sub, Mul, Cast, Concat, Gather, Shape,
Size, Slice, Squeeze, Unsqueeze.

Where a value comes from (`PropagationContext.input_data`): an earlier propagation; a
constant of rank 0 or 1 and type int32/int64 (parsed once and remembered); or, for a
1-D tensor of known length n, n unknown values.

Every value is kept through `keep_value`, within two budgets (`irmodel.limits`): a value
of more than `MAX_VALUE_ELEMENTS` elements is not kept, and once a run has computed
`MAX_PROPAGATED_ELEMENTS` elements no later value is computed at all (`input_data` offers
none).  A value not kept is unknown, as without data propagation: the dims that depend on
it stay as precise as plain inference makes them, and ``explain`` names the budget
(docs/inference-values.md).  So the memory and the work of propagation are bounded
whatever the file holds.
"""

from __future__ import annotations

import math

from .. import limits
from . import dims as D
from .errors import HardError, fail_shape
from .registry import propagates
from .tensordata import INT32, INT64, MAX_CONSTANT_ELEMENTS
from .types import TensorType


class PropagationContext:
    """The reference's ``DataPropagationContext`` for one node."""

    __slots__ = ("node", "scope")

    def __init__(self, node, scope):
        self.node = node
        self.scope = scope

    @property
    def num_inputs(self) -> int:
        return len(self.node.inputs)

    def attr(self, name: str):
        return self.node.attrs.get(name)

    def input_type(self, i: int):
        if i >= len(self.node.inputs):
            raise HardError(f"Input {i} is out of bounds.")
        slot = self.scope.types.get(self.node.inputs[i])
        return slot.type if slot is not None else None

    def input_data(self, i: int):
        """The value of input ``i`` as a tuple of dims, or None."""
        if i >= len(self.node.inputs):
            raise HardError(f"Input {i} is out of bounds.")
        name = self.node.inputs[i]
        scope = self.scope
        if values_spent(scope.run):
            self._budget_spent(i)
            return None
        found = scope.shape_data.get(name)
        if found is not None:
            return found
        const = scope.const_data.get(name)
        if const is not None and len(const.proto.dims) <= 1:
            if const.data_type == INT64 or const.data_type == INT32:
                value = tuple(const.values(const.data_type))
                return value if keep_value(scope, name, value) else None
            return None
        t = self.input_type(i)
        if type(t) is TensorType and t.shape is not None and len(t.shape) == 1 and type(t.shape[0]) is int:
            n = t.shape[0]
            if n > MAX_CONSTANT_ELEMENTS:
                return None
            value = (None,) * max(n, 0)
            return value if keep_value(scope, name, value) else None
        return None

    def _budget_spent(self, i: int) -> None:
        """Input ``i`` is not offered because the run's budget is spent: for ``explain``,
        the node's outputs are not propagated for that reason (when the input had a value
        to offer: a propagated one, or an int constant of rank 0 or 1)."""
        scope = self.scope
        if scope.run.explain is None:
            return
        name = self.node.inputs[i]
        const = scope.const_data.get(name)
        if name in scope.shape_data or (const is not None and len(const.proto.dims) <= 1 and
                                        const.data_type in (INT32, INT64)):
            for out in self.node.outputs:
                if out:
                    _tell_explain(scope, out, spent_text())

    def add_output_data(self, i: int, value: tuple, count: int | None = None) -> None:
        """Output ``i``'s value; ``count``: its length when ``value`` (empty then) was not
        made because it is over the budget (`keep_value`)."""
        outputs = self.node.outputs
        if i >= len(outputs):
            raise HardError(f"Input {i} is out of bounds.")
        name = outputs[i]
        if name in self.scope.shape_data:
            raise fail_shape("Data for input  ", i, " already exists.")
        keep_value(self.scope, name, tuple(value), count)


def keep_value(scope, name: str, value: tuple, count: int | None = None) -> bool:
    """Hold ``value`` as the propagated value of ``name`` if it is within the budgets
    (`irmodel.limits`): at most `MAX_VALUE_ELEMENTS` elements, and the run's elements so far
    plus these at most `MAX_PROPAGATED_ELEMENTS`.  The first value over the run's budget
    spends it: nothing later is propagated (`PropagationContext.input_data`).  A value not
    kept is unknown; ``explain`` is told why.  The one place a propagated value is stored.
    ``count``: the value's length, when the caller did not make a value it knew too long."""
    run = scope.run
    n = len(value) if count is None else count
    if n > limits.MAX_VALUE_ELEMENTS:
        why = (f"over the {limits.MAX_VALUE_ELEMENTS:,} elements a propagated value may have "
               f"(MAX_VALUE_ELEMENTS; {n:,} counted)")
    elif run.propagated + n > limits.MAX_PROPAGATED_ELEMENTS:
        run.propagated = limits.MAX_PROPAGATED_ELEMENTS + 1
        why = spent_text()
    else:
        run.propagated += n
        scope.shape_data[name] = value
        return True
    _tell_explain(scope, name, why)
    return False


def _tell_explain(scope, name: str, why: str) -> None:
    """``explain`` learns why ``name``'s value was not kept (not of a function body's
    values: those are the callee's private copies, as `Explainer.node` says)."""
    explainer = scope.run.explain
    if explainer is not None and scope.writable:
        explainer.not_propagated(name, why)


def spent_text() -> str:
    """Why a value was not propagated once the run's budget is spent."""
    return (f"the run's budget of {limits.MAX_PROPAGATED_ELEMENTS:,} propagated elements "
            "(MAX_PROPAGATED_ELEMENTS) was spent before this value")


def values_spent(run) -> bool:
    """The run's propagation budget is spent: no value is computed any more."""
    return run.propagated > limits.MAX_PROPAGATED_ELEMENTS


def skip_spent(node, scope) -> bool:
    """True when the run's budget is spent, so that ``node``'s propagation is not run at all
    (a rule that reads no input value, Shape's, would still copy a rank's worth per node).
    ``explain`` is told about the outputs of a node that had a value to read, or that makes
    one from types (Shape, Size)."""
    if not values_spent(scope.run):
        return False
    if scope.run.explain is not None:
        if node.op_type in ("Shape", "Size"):
            for out in node.outputs:
                if out:
                    _tell_explain(scope, out, spent_text())
        else:
            ctx = PropagationContext(node, scope)
            for i, name in enumerate(node.inputs):
                if name:
                    ctx.input_data(i)  # (`_budget_spent` tells explain when input i had a value)
    return True


def _attr_int(ctx, name, default):
    a = ctx.attr(name)
    if a is None:
        return default
    return a.i if a.HasField("i") else 0


def _dim_value(d) -> int:
    """``dim.dim_value()``: 0 when the dim holds no value."""
    return d if type(d) is int else 0


@propagates(("Add", "Sub", "Mul"), 14)
def _math(ctx) -> None:
    a = ctx.input_data(0)
    b = ctx.input_data(1)
    if a is None or b is None:
        return
    na, nb = len(a), len(b)
    op = ctx.node.op_type
    if na != nb and na != 1 and nb != 1:
        raise fail_shape("Invalid rank for ", op, " broadcasting: (", na, ") vs (", nb, ").")
    n = nb if na == 1 else na
    out: list[int | None] = []  # None: not known
    for i in range(n):
        x = a[0 if na == 1 else i]
        y = b[0 if nb == 1 else i]
        if type(x) is int and type(y) is int:
            r = x + y if op == "Add" else x - y if op == "Sub" else x * y
            if r < D.INT64_MIN or r > D.INT64_MAX:
                raise fail_shape("Integer overflow in ", op, " during data propagation")
            out.append(r)
        else:
            out.append(None)
    ctx.add_output_data(0, out)


@propagates(("Cast", "Squeeze", "Unsqueeze"), 13)
def _copy(ctx) -> None:
    data = ctx.input_data(0)
    if data is not None:
        ctx.add_output_data(0, data)


def _axis_is_zero(ctx, default_zero: bool = False) -> bool:
    a = ctx.attr("axis")
    if a is None:
        if default_zero:
            return True
        raise fail_shape("Required attribute axis is missing")
    axis = D.int32(a.i)
    if axis >= 0:
        return axis == 0
    t = ctx.input_type(0)
    if type(t) is not TensorType or t.shape is None:
        return False
    rank = len(t.shape)
    if axis < -rank or axis >= rank:
        raise fail_shape("axis must be in [-rank, rank-1].")
    return axis + rank == 0


@propagates("Concat", 13)
def _concat(ctx) -> None:
    if not _axis_is_zero(ctx):
        return
    parts = []
    total = 0
    for i in range(ctx.num_inputs):
        data = ctx.input_data(i)
        if data is None:
            return
        parts.append(data)
        total += len(data)
    if total > limits.MAX_VALUE_ELEMENTS:  # refused by its length alone: never made
        ctx.add_output_data(0, (), total)
        return
    out = []
    for data in parts:
        out.extend(data)
    ctx.add_output_data(0, out)


@propagates("Gather", 1)
def _gather(ctx) -> None:
    if not _axis_is_zero(ctx, True):
        return
    data = ctx.input_data(0)
    if data is None:
        return
    indices = ctx.input_data(1)
    if indices is None:
        return
    out = []
    n = len(data)
    for d in indices:
        if type(d) is not int:
            return
        if d > 2147483647 or d < -2147483648:
            raise fail_shape("narrow: value ", d, " cannot be represented in target type")
        if d >= n or d < -n:
            raise fail_shape("indices must be in [-rank, rank-1].")
        out.append(data[d + n if d < 0 else d])
    if out:
        ctx.add_output_data(0, out)


def _has_shape(t) -> bool:
    from .common import has_shape  # noqa: PLC0415
    return t is not None and has_shape(t)


@propagates("Shape", 1)
def _shape(ctx) -> None:
    if ctx.num_inputs < 1:
        return
    t = ctx.input_type(0)
    if not _has_shape(t):
        return
    if type(t) is TensorType and t.shape is not None:
        ctx.add_output_data(0, t.shape)


@propagates("Shape", 15)
def _shape15(ctx) -> None:
    if ctx.num_inputs < 1:
        return
    t = ctx.input_type(0)
    if not _has_shape(t):
        return
    shape = t.shape if type(t) is TensorType and t.shape is not None else ()
    rank = len(shape)
    start = _attr_int(ctx, "start", 0)
    if start < 0:
        start += rank
    start = min(max(start, 0), rank)
    end = _attr_int(ctx, "end", rank)
    if end < 0:
        end += rank
    end = min(max(end, 0), rank)
    if end - start > limits.MAX_VALUE_ELEMENTS or values_spent(ctx.scope.run):
        ctx.add_output_data(0, (), end - start)  # refused (`keep_value`) without the copy
        return
    ctx.add_output_data(0, shape[start:end])


@propagates("Size", 13)
def _size(ctx) -> None:
    data = ctx.input_data(0)
    if data is not None:
        ctx.add_output_data(0, (len(data),))


def slice_bounds(size: int, start: int, end: int, step: int) -> tuple:
    """``processSliceInputs``: start and end clamped for a dim of ``size``."""
    if step == 0:
        raise fail_shape("'step' cannot be 0 for Slice")
    if size == 0:
        return 0, 0
    if start < 0:
        start += size
    start = min(max(start, 0), size - 1) if step < 0 else min(max(start, 0), size)
    if end < 0:
        end += size
    end = min(max(end, -1), size - 1) if step < 0 else min(max(end, 0), size)
    return start, end


@propagates("Slice", 13)
def _slice(ctx) -> None:
    data = ctx.input_data(0)
    starts = ctx.input_data(1)
    ends = ctx.input_data(2)
    axes = steps = None
    if ctx.num_inputs >= 4:
        axes = ctx.input_data(3)
        if axes is None:
            return
    if ctx.num_inputs >= 5:
        steps = ctx.input_data(4)
        if steps is None:
            return
    if data is None or starts is None or ends is None:
        return
    if len(starts) != len(ends):
        raise fail_shape("Input rank for starts and ends should be the same: (", len(starts), ") vs (",
                         len(ends), ").")
    if (axes is None or (len(axes) == 1 and _dim_value(axes[0]) == 0)) and len(starts) == 1 and len(ends) == 1:
        start = _dim_value(starts[0])
        end = _dim_value(ends[0])
        step = 1
        if steps is not None:
            if len(steps) != 1 or type(steps[0]) is not int:
                return
            step = steps[0]
        start, end = slice_bounds(len(data), start, end, step)
        out = list(data[start:end:step]) if step > 0 else _backward(data, start, end, step)
        if out:
            ctx.add_output_data(0, out)


def _backward(data, start: int, end: int, step: int) -> list:
    out = []
    i = start
    while i > end:
        out.append(data[i])
        i += step
    return out


def ceil_div_float(a: int, b: int) -> int:
    """``ceil(1.0 * a / b)`` in double precision, as the reference computes slice lengths."""
    return math.ceil(float(a) / float(b))
