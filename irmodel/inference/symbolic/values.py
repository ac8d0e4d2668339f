"""Value propagation in symbolic mode: small integer tensors whose elements are dims.

The reference propagates the values of 0-D and 1-D integer tensors through eleven
operators (`dataprop`); exporters build shapes with many more.  Here a value is a
tuple of elements, each an int, an expression dim (`dims`) or None (unknown), and
the rules below compute it through the shape arithmetic exporters emit: Shape, Size,
Gather, Slice, Concat, Squeeze, Unsqueeze, Cast, Reshape, Flatten, Identity, Expand,
Tile, Range, ConstantOfShape, Where, Equal, Less, Greater, LessOrEqual,
GreaterOrEqual, Not, And, Or, Add, Sub, Mul, Div, Mod, Neg, Abs, Min, Max, Sum,
ReduceProd, ReduceSum, ReduceMin, ReduceMax, Split, Pad, Floor, Ceil, Round (integers
only).  Values are integers only: a Cast to a floating type ends the value.  A Cast to
int32 wraps known values exactly and keeps an expression as it is (a dim that does not
fit in int32 would wrap at run time: the one assumption here, shared with every
runtime's shape code, that a dim cast to int32 fits in it).

Integer Div truncates toward zero (the runtime's C++ division); it is written as
floor division only where the dividend is known to be >= 0 and the divisor > 0.
A value is kept within data propagation's budgets (`dataprop.keep_value`, `irmodel.limits`);
once the run's budget is spent, nothing more is computed.
"""

from __future__ import annotations

from ... import limits
from .. import dims as D
from ..dataprop import PropagationContext, keep_value, skip_spent, slice_bounds
from ..errors import HardError, NodeInferenceError
from ..tensordata import MAX_CONSTANT_ELEMENTS
from ..types import TensorType

_INT_TYPES = (2, 3, 4, 5, 6, 7, 9, 12, 13)  # uint8 int8 uint16 int16 int32 int64 bool uint32 uint64
BIG = 1 << 62


def _out(ctx: PropagationContext, i: int, value) -> None:
    """Keep ``value`` for output ``i`` when its inferred type is a tensor of rank <= 1 that fits."""
    if value is None:
        return
    value = tuple(value)
    if value and all(v is None for v in value):
        return
    outputs = ctx.node.outputs
    if i >= len(outputs) or not outputs[i]:
        return
    slot = ctx.scope.types.get(outputs[i])
    t = slot.type if slot is not None else None
    if type(t) is not TensorType or t.shape is None or len(t.shape) > 1:
        return
    if len(t.shape) == 0 and len(value) != 1:
        return
    if len(t.shape) == 1 and type(t.shape[0]) is int and t.shape[0] != len(value):
        return
    keep_value(ctx.scope, outputs[i], value)


def _refuse(ctx: PropagationContext, count: int) -> None:
    """Output 0's value has ``count`` elements, over the budget of a value: refused by its
    length (`keep_value`), never made."""
    outputs = ctx.node.outputs
    if outputs and outputs[0]:
        keep_value(ctx.scope, outputs[0], (), count)


def _in(ctx: PropagationContext, i: int):
    if i >= ctx.num_inputs or not ctx.node.inputs[i]:
        return None
    v = ctx.input_data(i)
    if v is None:
        return None
    return D.resolve_tuple(v)


def _attr_i(ctx, name, default):
    a = ctx.attr(name)
    return default if a is None else a.i


def _bcast(a, b):
    if a is None or b is None:
        return None
    na, nb = len(a), len(b)
    if na != nb and na != 1 and nb != 1:
        return None
    n = nb if na == 1 else na
    return [(a[0 if na == 1 else i], b[0 if nb == 1 else i]) for i in range(n)]


def _binary(fn):
    def prop(ctx):
        pairs = _bcast(_in(ctx, 0), _in(ctx, 1))
        if pairs is not None:
            _out(ctx, 0, [None if x is None or y is None else fn(x, y) for x, y in pairs])
    return prop


def _trunc_div(x, y):
    if type(x) is int and type(y) is int:
        return None if y == 0 else D.trunc_div(x, y)
    lo_x, _ = D.bounds(x)
    lo_y, _ = D.bounds(y)
    if lo_x >= 0 and lo_y > 0:
        return D.floordiv(x, y)
    return None


def _compare(kind):
    def cmp(x, y):
        if type(x) is int and type(y) is int:
            return int({"Equal": x == y, "Less": x < y, "Greater": x > y, "LessOrEqual": x <= y,
                        "GreaterOrEqual": x >= y}[kind])
        if kind == "Equal" and D.provably_equal(x, y):
            return 1
        diff = D.sub(x, y)
        if diff is None:
            return None
        lo, hi = D.bounds(diff)
        if kind == "Equal":
            return 0 if lo > 0 or hi < 0 else None
        if kind == "Less":
            return 1 if hi < 0 else 0 if lo >= 0 else None
        if kind == "Greater":
            return 1 if lo > 0 else 0 if hi <= 0 else None
        if kind == "LessOrEqual":
            return 1 if hi <= 0 else 0 if lo > 0 else None
        return 1 if lo >= 0 else 0 if hi < 0 else None
    return cmp


def _variadic(fn):
    def prop(ctx):
        acc = _in(ctx, 0)
        for i in range(1, ctx.num_inputs):
            pairs = _bcast(acc, _in(ctx, i))
            if pairs is None:
                return
            acc = [None if x is None or y is None else fn(x, y) for x, y in pairs]
        _out(ctx, 0, acc)
    return prop


def _unary(fn):
    def prop(ctx):
        v = _in(ctx, 0)
        if v is not None:
            _out(ctx, 0, [None if x is None else fn(x) for x in v])
    return prop


def _neg(x):
    return D.sub(0, x)


def _abs(x):
    if type(x) is int:
        return abs(x)
    lo, hi = D.bounds(x)
    if lo >= 0:
        return x
    if hi <= 0:
        return D.sub(0, x)
    return None


def _not(x):
    if type(x) is int:
        return int(x == 0)
    lo, hi = D.bounds(x)
    return 0 if lo > 0 or hi < 0 else None


def _truth(x):
    if type(x) is int:
        return x != 0
    lo, hi = D.bounds(x)
    return True if lo > 0 or hi < 0 else None


def _and(x, y):
    a, b = _truth(x), _truth(y)
    if a is False or b is False:
        return 0
    return 1 if a and b else None


def _or(x, y):
    a, b = _truth(x), _truth(y)
    if a is True or b is True:
        return 1
    return 0 if a is False and b is False else None


def _copy(ctx):
    v = _in(ctx, 0)
    if v is not None:
        _out(ctx, 0, v)


def _elem_type(ctx, i):
    t = ctx.input_type(i)
    return t.elem if type(t) is TensorType else None


def _cast(ctx):
    to = _attr_i(ctx, "to", 0)
    if to not in (6, 7):
        return  # narrower integers wrap, floats round: the value is not kept
    src = _elem_type(ctx, 0)
    if src not in (6, 7, 9):
        return
    v = _in(ctx, 0)
    if v is None:
        return
    if to == 6:  # int32: known values wrap as the runtime's cast does
        v = [D.int32(x) if type(x) is int else x for x in v]
    _out(ctx, 0, v)


def _shape(ctx):
    t = ctx.input_type(0)
    if type(t) is not TensorType or t.shape is None:
        return
    shape = t.shape
    rank = len(shape)
    start = _attr_i(ctx, "start", 0)
    end = _attr_i(ctx, "end", rank)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    if end - start > limits.MAX_VALUE_ELEMENTS:
        _refuse(ctx, end - start)
        return
    _out(ctx, 0, [D.resolve(d) for d in shape[start:end]])


def _size(ctx):
    t = ctx.input_type(0)
    if type(t) is not TensorType or t.shape is None:
        return
    total = 1
    for d in t.shape:
        total = D.mul(total, d)
        if total is None:
            return
    _out(ctx, 0, [total])


def _axis0(ctx, default=0) -> bool:
    axis = _attr_i(ctx, "axis", default)
    return axis in (0, -1)


def _gather(ctx):
    if not _axis0(ctx):
        return
    data, idx = _in(ctx, 0), _in(ctx, 1)
    if data is None or idx is None:
        return
    n = len(data)
    out = []
    for i in idx:
        if type(i) is not int or not -n <= i < n:
            return
        out.append(data[i])
    _out(ctx, 0, out)


def _concat(ctx):
    if not _axis0(ctx):
        return
    parts = []
    total = 0
    for i in range(ctx.num_inputs):
        v = _in(ctx, i)
        if v is None:
            return
        parts.append(v)
        total += len(v)
        if total > limits.MAX_VALUE_ELEMENTS:
            _refuse(ctx, total)
            return
    out = []
    for v in parts:
        out.extend(v)
    _out(ctx, 0, out)


def _slice(ctx):
    data = _in(ctx, 0)
    if data is None:
        return
    if ctx.num_inputs < 3:  # Slice-1: attributes
        starts, ends, axes, steps = (_ints_attr(ctx, "starts"), _ints_attr(ctx, "ends"),
                                     _ints_attr(ctx, "axes"), None)
    else:
        starts, ends, axes, steps = _in(ctx, 1), _in(ctx, 2), _in(ctx, 3), _in(ctx, 4)
        if (ctx.num_inputs > 3 and ctx.node.inputs[3] and axes is None) or \
                (ctx.num_inputs > 4 and ctx.node.inputs[4] and steps is None):
            return
    if starts is None or ends is None or len(starts) != 1 or len(ends) != 1:
        return
    if axes is not None and (len(axes) != 1 or axes[0] not in (0, -1)):
        return
    step = 1 if steps is None else (steps[0] if len(steps) == 1 else None)
    s, e = starts[0], ends[0]
    if type(step) is not int or type(s) is not int or type(e) is not int or step == 0:
        return
    s = max(min(s, BIG), -BIG)
    e = max(min(e, BIG), -BIG)
    s, e = slice_bounds(len(data), s, e, step)
    out = list(data[s:e:step]) if step > 0 else [data[i] for i in range(s, e, step)]
    _out(ctx, 0, out)


def _ints_attr(ctx, name):
    a = ctx.attr(name)
    return None if a is None else tuple(a.ints)


def _expand(ctx):
    v, shape = _in(ctx, 0), _in(ctx, 1)
    if v is None or shape is None or len(shape) > 1:
        return
    n = shape[0] if shape else 1
    if type(n) is not int or n > MAX_CONSTANT_ELEMENTS:
        return
    if len(v) == 1:
        _out(ctx, 0, list(v) * n)
    elif n in (1, len(v)):
        _out(ctx, 0, v)


def _tile(ctx):
    v, reps = _in(ctx, 0), _in(ctx, 1)
    if v is None or reps is None or len(reps) != 1 or type(reps[0]) is not int:
        return
    if 0 <= reps[0] and reps[0] * len(v) <= MAX_CONSTANT_ELEMENTS:
        _out(ctx, 0, list(v) * reps[0])


def _range(ctx):
    start, limit, delta = _in(ctx, 0), _in(ctx, 1), _in(ctx, 2)
    if _elem_type(ctx, 0) not in (6, 7):
        return
    if not start or not limit or not delta:
        return
    s, lim, k = start[0], limit[0], delta[0]
    if type(k) is not int or k == 0:
        return
    if type(s) is int and type(lim) is int:
        n = max(-((s - lim) // k), 0)
        if n <= MAX_CONSTANT_ELEMENTS:
            _out(ctx, 0, [s + i * k for i in range(n)])


def _constant_of_shape(ctx):
    shape = _in(ctx, 0)
    if shape is None or len(shape) > 1:
        return
    n = shape[0] if shape else 1
    if type(n) is not int or not 0 <= n <= MAX_CONSTANT_ELEMENTS:
        return
    a = ctx.attr("value")
    value = 0
    if a is not None:
        t = a.t
        if t.data_type not in (6, 7):
            return
        from ..tensordata import ConstTensor  # noqa: PLC0415
        vals = ConstTensor(t).values(t.data_type)
        if len(vals) != 1:
            return
        value = vals[0]
    _out(ctx, 0, [value] * n)


def _where(ctx):
    cond, x, y = _in(ctx, 0), _in(ctx, 1), _in(ctx, 2)
    if cond is None or x is None or y is None:
        return
    lengths = {len(cond), len(x), len(y)} - {1}
    if len(lengths) > 1:
        return
    n = lengths.pop() if lengths else 1
    out = []
    for i in range(n):
        c = cond[0 if len(cond) == 1 else i]
        t = _truth(c) if c is not None else None
        if t is None:
            a, b = x[0 if len(x) == 1 else i], y[0 if len(y) == 1 else i]
            out.append(a if a is not None and b is not None and D.provably_equal(a, b) else None)
        else:
            out.append((x if t else y)[0 if len((x if t else y)) == 1 else i])
    _out(ctx, 0, out)


def _reduce(fn, empty):
    def prop(ctx):
        v = _in(ctx, 0)
        if v is None:
            return
        if ctx.num_inputs > 1 and ctx.node.inputs[1]:
            axes = _in(ctx, 1)
            if axes is None or any(a not in (0, -1) for a in axes):
                return
            if not axes and _attr_i(ctx, "noop_with_empty_axes", 0):
                _out(ctx, 0, v)
                return
        else:
            axes = _ints_attr(ctx, "axes")
            if axes is not None and any(a not in (0, -1) for a in axes):
                return
        if not v:
            if empty is not None:
                _out(ctx, 0, [empty])
            return
        acc = v[0]
        for x in v[1:]:
            acc = None if acc is None or x is None else fn(acc, x)
        _out(ctx, 0, [acc])
    return prop


def _split(ctx):
    v = _in(ctx, 0)
    if v is None or not _axis0(ctx):
        return
    sizes = _in(ctx, 1) if ctx.num_inputs > 1 and ctx.node.inputs[1] else _ints_attr(ctx, "split")
    n_out = len(ctx.node.outputs)
    if sizes is None:
        k = _attr_i(ctx, "num_outputs", n_out)
        if k != n_out or k < 1:
            return
        chunk = -(-len(v) // k)
        sizes = [chunk] * (k - 1) + [len(v) - chunk * (k - 1)]
    if len(sizes) != n_out or any(type(s) is not int or s < 0 for s in sizes) or sum(sizes) != len(v):
        return
    pos = 0
    for i, s in enumerate(sizes):
        _out(ctx, i, v[pos:pos + s])
        pos += s


def _pad(ctx):
    v, pads = _in(ctx, 0), _in(ctx, 1)
    mode = ctx.attr("mode")
    if mode is not None and bytes(mode.s) != b"constant":
        return
    if v is None or pads is None or len(pads) != 2 or any(type(p) is not int or p < 0 for p in pads):
        return
    fill = 0
    if ctx.num_inputs > 2 and ctx.node.inputs[2]:
        c = _in(ctx, 2)
        if c is None or len(c) != 1:
            return
        fill = c[0]
    if len(v) + pads[0] + pads[1] <= MAX_CONSTANT_ELEMENTS:
        _out(ctx, 0, [fill] * pads[0] + list(v) + [fill] * pads[1])


def _int_only(ctx):
    if _elem_type(ctx, 0) in _INT_TYPES:
        _copy(ctx)


RULES = {
    "Shape": _shape, "Size": _size, "Gather": _gather, "Concat": _concat, "Slice": _slice,
    "Squeeze": _copy, "Unsqueeze": _copy, "Identity": _copy, "Reshape": _copy, "Flatten": _copy,
    "Cast": _cast, "Expand": _expand, "Tile": _tile, "Range": _range, "ConstantOfShape": _constant_of_shape,
    "Where": _where, "Not": _unary(_not), "And": _binary(_and), "Or": _binary(_or),
    "Equal": _binary(_compare("Equal")), "Less": _binary(_compare("Less")),
    "Greater": _binary(_compare("Greater")), "LessOrEqual": _binary(_compare("LessOrEqual")),
    "GreaterOrEqual": _binary(_compare("GreaterOrEqual")),
    "Add": _binary(D.add), "Sub": _binary(D.sub), "Mul": _binary(D.mul), "Div": _binary(_trunc_div),
    "Neg": _unary(_neg), "Abs": _unary(_abs),
    "Min": _variadic(D.minimum), "Max": _variadic(D.maximum), "Sum": _variadic(D.add),
    "ReduceProd": _reduce(D.mul, 1), "ReduceSum": _reduce(D.add, 0), "ReduceMin": _reduce(D.minimum, None),
    "ReduceMax": _reduce(D.maximum, None), "Split": _split, "Pad": _pad,
    "Floor": _int_only, "Ceil": _int_only, "Round": _int_only,
}


def _mod(ctx):
    if _attr_i(ctx, "fmod", 0):
        return  # C fmod: the sign of the dividend
    _binary(D.mod)(ctx)


RULES["Mod"] = _mod


def condition(ctx, i: int = 0):
    """A boolean condition input known before run time (a constant or a propagated value): True, False or None."""
    if i >= ctx.num_inputs or not ctx.has_input(i):
        return None
    data = ctx.input_data(i)
    if data is not None:
        t = data.proto
        if t.data_type != 9 or len(t.dims) > 1 or any(d != 1 for d in t.dims):
            return None
        if t.HasField("raw_data"):
            raw = bytes(t.raw_data)
            return bool(raw[0]) if len(raw) == 1 else None
        vals = list(t.int32_data)
        return bool(vals[0]) if len(vals) == 1 else None
    v = ctx.symbolic_input(i)
    if v is None or len(v) != 1 or type(v[0]) is not int:
        return None
    return v[0] != 0


def _if(ctx):
    from ..context import InferenceContext  # noqa: PLC0415
    scope = ctx.scope
    node = ctx.node
    view = scope.make_context(node)
    cond = condition(view) if isinstance(view, InferenceContext) else None
    if cond is None:
        return
    branch = node.attrs.get("then_branch" if cond else "else_branch")
    if branch is None or not branch.HasField("g"):
        return
    for i, out in enumerate(branch.g.output):
        value = scope.shape_data.get(out.name)
        if value is not None:
            _out(ctx, i, value)


RULES["If"] = _if


def propagate(node, scope) -> None:
    """Compute the value of ``node``'s outputs, when they are small integer tensors."""
    if node.domain not in ("", "ai.onnx"):
        return
    rule = RULES.get(node.op_type)
    if rule is None:
        return
    for name in node.outputs:
        if name in scope.shape_data:
            return
    if skip_spent(node, scope):
        return
    try:
        rule(PropagationContext(node, scope))
    except (NodeInferenceError, HardError):
        pass  # a value that cannot be computed (overflow, a bad index) stays unknown
