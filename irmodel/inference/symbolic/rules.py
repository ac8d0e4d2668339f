"""Symbolic shape rules (``infer_shapes(..., symbolic=True)``).

Each rule here refines the reference's rule of one operator: it runs the reference's
function first (so every check and error is the reference's), then replaces output
dims the reference leaves unknown by expressions that the operator's semantics make
exact, and records equalities the semantics prove (`dims.record_equal`):

* Concat: the axis dim is the sum of the inputs'; the other dims of all inputs are equal.
* Reshape: the ``-1`` dim is the input's element count over the other dims' product.
* Slice: lengths from symbolic dims and from starts/ends computed at run time (step +-1
  and positive steps; clamping written with ``min``/``max`` only where it can apply).
* Split, Tile, Range, Pad, MatMul (inner dims equal, batch dims broadcast).

Nothing here guesses: where a value is not known well enough, the reference's result
stands (a fresh name follows).  Dims are sizes: names are >= 0, and no dim reaches
2**62 (no such tensor can be addressed), which lets ``ends = INT64_MAX`` mean "to the end".
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from . import expr as X
from ..dims import _STATE
from .values import condition, propagate  # noqa: F401 (propagate: the engine's hook, with override and resolve_types)
from ..types import Dim, OptionalType, SequenceType, SparseTensorType, TensorType

BIG = 1 << 62  # an index at least this large is past the end of any dim


def _shape(ctx, i: int):
    t = ctx.input_type(i) if i < ctx.num_inputs else None
    if type(t) is TensorType:
        return t.shape
    return None


def _out_shape(ctx, o: int):
    t = ctx.output(o)
    return t.shape if type(t) is TensorType else None


def _set_dims(ctx, o: int, shape) -> None:
    t = ctx.output(o)
    if type(t) is TensorType:
        ctx.set_output(o, TensorType(t.elem, tuple(shape)))


def values(ctx, i: int):
    """Input ``i``'s value as a tuple of dims: a small integer constant or a propagated value."""
    if i >= ctx.num_inputs or not ctx.has_input(i):
        return None
    data = ctx.input_data(i)
    if data is not None:
        code = data.data_type
        if code in (6, 7) and len(data.proto.dims) <= 1:
            return tuple(data.values(code))
        return None
    return ctx.symbolic_input(i)


# -- Concat ------------------------------------------------------------------------------

def concat(ctx, base) -> None:
    base(ctx)
    out = _out_shape(ctx, 0)
    if out is None:
        return
    n = ctx.num_inputs
    shapes = [_shape(ctx, i) for i in range(n)]
    if any(s is None or len(s) != len(out) for s in shapes):
        return
    axis = D.int32(ctx.attr("axis").i)
    if axis < 0:
        axis += len(out)
    new = list(out)
    for j in range(len(out)):
        if j == axis:
            continue
        first = shapes[0][j]
        for s in shapes[1:]:
            if s[j] is not None and first is not None:
                D.record_equal(first, s[j])
        if new[j] is None:
            known = next((s[j] for s in shapes if s[j] is not None), None)
            new[j] = known
    if new[axis] is None:
        total: Dim = 0
        for s in shapes:
            total = D.add(total, s[axis])
            if total is None:
                break
        new[axis] = total
    _set_dims(ctx, 0, new)


# -- Reshape -----------------------------------------------------------------------------

def _product(dims):
    acc = X.ONE
    for d in dims:
        e = D.expr(d)
        if e is None:
            return None
        acc = X.mul(acc, e)
        if acc is None:
            return None
    return acc


def exact_quotient(a: X.Expr, b: X.Expr):
    """``a / b`` when ``b`` divides ``a`` (as Reshape's -1 requires): the exact quotient.

    A single-term divisor cancels term by term; otherwise floor division, which equals
    the quotient whenever the division is exact.
    """
    if len(b.terms) == 1:
        mb, cb = b.terms[0]
        out: dict = {}
        for ma, ca in a.terms:
            rest = list(ma)
            ok = ca % cb == 0
            for f in mb:
                if not ok:
                    break
                if f in rest:
                    rest.remove(f)
                else:
                    ok = False
            if not ok:
                break
            out[tuple(rest)] = out.get(tuple(rest), 0) + ca // cb
        else:
            return X._checked(X._make(out))
    return X.floordiv(a, b)


def reshape(ctx, base) -> None:
    base(ctx)
    out = _out_shape(ctx, 0)
    data_shape = _shape(ctx, 0)
    if data_shape is None or ctx.num_inputs < 2:
        return
    target = values(ctx, 1)
    if target is None or (out is not None and len(target) != len(out)):
        return
    if out is None:  # Reshape-5 reads constants only: the target from propagated values
        if type(ctx.output(0)) is not TensorType:
            return
        out = [d if type(d) is str or (type(d) is int and d > 0) else None for d in target]
        if any(type(d) is int and d < -1 for d in target) or sum(1 for d in target if d == -1) > 1:
            return
    allowzero = C.attr_int(ctx, "allowzero", 0)
    new = list(out)
    for i, d in enumerate(target):
        if type(d) is int and d == 0 and not allowzero and new[i] is None and i < len(data_shape):
            new[i] = data_shape[i]
    holes = [i for i, d in enumerate(target) if type(d) is int and d == -1]
    if len(holes) == 1 and new[holes[0]] is None:
        h = holes[0]
        others = tuple(d for i, d in enumerate(new) if i != h)
        new[h] = D.memo(("reshape -1", data_shape, others), lambda: _hole(data_shape, others))
    _set_dims(ctx, 0, new)


def _hole(data_shape, others):
    """Reshape's ``-1``: the element count over the product of the other dims, or None."""
    num = _product(data_shape)
    den = _product(others)
    if num is not None and den is not None and den != X.ZERO:
        return D.dim(exact_quotient(num, den))
    return None


# -- Slice -------------------------------------------------------------------------------

def _clamped_index(i, d, for_end: bool):
    """A start or end index (step > 0) clamped into [0, d], as an expression dim, or None."""
    if type(i) is int:
        if i >= BIG:
            return d
        if i >= 0:
            return D.minimum(i, d)
        if i <= -BIG:
            return 0
        return D.maximum(D.add(d, i), 0)
    if i is None:
        return None
    lo, _ = D.bounds(i)
    if lo >= 0:
        return D.minimum(i, d)
    return None


def slice_length(d, start, end, step):
    """The length of ``d[start:end:step]`` with ONNX's clamping, or None (step > 0 only)."""
    if type(step) is not int or step <= 0:
        return None
    return D.memo(("slice", d, start, end, step), lambda: _slice_length(d, start, end, step))


def _slice_length(d, start, end, step):
    s = _clamped_index(start, d, False)
    e = _clamped_index(end, d, True)
    if s is None or e is None:
        return None
    diff = D.sub(e, s)
    if diff is None:
        return None
    if step != 1:
        diff = D.floordiv(D.add(diff, step - 1), step)
    return D.maximum(diff, 0)


def slice_(ctx, base) -> None:
    base(ctx)
    if ctx.num_inputs < 3:
        return
    data_shape = _shape(ctx, 0)
    out = _out_shape(ctx, 0)
    if data_shape is None or out is None or len(out) != len(data_shape):
        return
    starts, ends = values(ctx, 1), values(ctx, 2)
    if starts is None or ends is None or len(starts) != len(ends):
        return
    rank = len(data_shape)
    axes = values(ctx, 3) if ctx.num_inputs > 3 and ctx.has_input(3) else tuple(range(len(starts)))
    steps = values(ctx, 4) if ctx.num_inputs > 4 and ctx.has_input(4) else (1,) * len(starts)
    if axes is None or steps is None or len(axes) != len(starts) or len(steps) != len(starts):
        return
    new = list(out)
    sliced = set()
    for a, s, e, k in zip(axes, starts, ends, steps):
        if type(a) is not int or not -rank <= a < rank:
            return
        a = a + rank if a < 0 else a
        if a in sliced:
            return
        sliced.add(a)
        if new[a] is None:
            new[a] = slice_length(data_shape[a], s, e, k)
    for j in range(rank):  # the reference forgets every dim when a bound is computed
        if j not in sliced and new[j] is None:
            new[j] = data_shape[j]
    _set_dims(ctx, 0, new)


# -- Split -------------------------------------------------------------------------------

def split(ctx, base) -> None:
    base(ctx)
    shape = _shape(ctx, 0)
    n_out = ctx.num_outputs
    if shape is None or not shape or n_out == 0:
        return
    rank = len(shape)
    axis = D.int32(C.attr_int(ctx, "axis", 0))
    if not -rank <= axis < rank:
        return
    axis = axis + rank if axis < 0 else axis
    d = shape[axis]
    sizes = None
    has_split_input = ctx.num_inputs > 1 and ctx.has_input(1)
    given = values(ctx, 1) if has_split_input else None
    if has_split_input and given is None:
        return  # sizes given at run time: no guess (an even split would be one)
    if given is None and ctx.attr("split") is not None:
        given = tuple(C.attr_ints(ctx, "split"))
    if given is not None:
        if len(given) == n_out:
            sizes = list(given)
            if d is not None:
                total: Dim = 0
                for g in given:
                    total = D.add(total, g)
                if total is not None:
                    D.record_equal(total, d)
    elif ctx.attr("num_outputs") is not None:
        k = ctx.attr("num_outputs").i
        if k >= 1 and k == n_out and d is not None:
            chunk = D.floordiv(D.add(d, k - 1), k)
            last = D.sub(d, D.mul_int(chunk, k - 1)) if chunk is not None else None
            sizes = [chunk] * (k - 1) + [last]
    elif d is not None:
        sizes = [D.floordiv(d, n_out)] * n_out  # the input must split evenly
    if sizes is None:
        return
    for i in range(n_out):
        out = _out_shape(ctx, i)
        if out is None and type(ctx.output(i)) is TensorType:
            out = shape  # computed split sizes: the reference gives no shape
            new = list(out)
            new[axis] = sizes[i] if out[axis] is not None else None
            _set_dims(ctx, i, new)
        elif out is not None and len(out) == rank and out[axis] is None:
            new = list(out)
            new[axis] = sizes[i]
            _set_dims(ctx, i, new)


# -- Tile, Range, Pad --------------------------------------------------------------------

def tile(ctx, base) -> None:
    base(ctx)
    shape = _shape(ctx, 0)
    out = _out_shape(ctx, 0)
    reps = values(ctx, 1)
    if shape is None or out is None or reps is None or len(reps) != len(shape) or len(out) != len(shape):
        return
    new = [o if o is not None else D.mul(d, r) for o, d, r in zip(out, shape, reps)]
    _set_dims(ctx, 0, new)


def range_(ctx, base) -> None:
    base(ctx)
    out = _out_shape(ctx, 0)
    if out is None or len(out) != 1 or out[0] is not None:
        return
    t = ctx.input_type(0)
    if type(t) is not TensorType or t.elem not in (6, 7):
        return
    start, limit, delta = values(ctx, 0), values(ctx, 1), values(ctx, 2)
    if start is None or limit is None or delta is None or len(start) != 1 or len(limit) != 1 or len(delta) != 1:
        return
    k = delta[0]
    if type(k) is not int or k == 0:
        return
    diff = D.sub(limit[0], start[0])
    n = D.floordiv(D.add(diff, k - 1), k) if k > 0 else D.floordiv(D.add(diff, k + 1), k)
    _set_dims(ctx, 0, [D.maximum(n, 0)])


def pad(ctx, base) -> None:
    base(ctx)
    shape = _shape(ctx, 0)
    out = _out_shape(ctx, 0)
    if shape is None or out is None or len(out) != len(shape) or ctx.num_inputs < 2:
        return
    pads = values(ctx, 1)
    if pads is None:
        return
    rank = len(shape)
    axes = values(ctx, 3) if ctx.num_inputs > 3 and ctx.has_input(3) else tuple(range(rank))
    if axes is None or len(pads) != 2 * len(axes):
        return
    new = list(out)
    for j, a in enumerate(axes):
        if type(a) is not int or not -rank <= a < rank:
            return
        a = a + rank if a < 0 else a
        if new[a] is None:
            new[a] = D.add(D.add(shape[a], pads[j]), pads[j + len(axes)])
    _set_dims(ctx, 0, new)


def trunc_div(n, k: int):
    """``n / k`` rounded toward zero (C++ division), exactly, for k > 0 and any ``n``.

    ``max(n, 0)//k - max(-n, 0)//k``; the second term vanishes when ``n`` is known >= 0
    (or when ``-n`` is known to be below ``k``), leaving ``n//k``.
    """
    if k == 1:
        return n
    pos = D.floordiv(D.maximum(n, 0), k)
    neg = D.floordiv(D.maximum(D.sub(0, n), 0), k)
    return D.sub(pos, neg)


def conv_pool(ctx, base) -> None:
    """Spatial output dims of Conv and the poolings (floor mode) from symbolic input dims."""
    base(ctx)
    out = _out_shape(ctx, 0)
    shape = _shape(ctx, 0)
    if out is None or shape is None or len(out) != len(shape) or len(shape) < 3:
        return
    if C.attr_int(ctx, "ceil_mode", 0):
        return
    n = len(shape) - 2
    kernel = C.attr_ints(ctx, "kernel_shape")
    if kernel is None:
        w = _shape(ctx, 1) if ctx.node.op_type == "Conv" else None
        if w is None or len(w) != n + 2 or any(type(d) is not int for d in w[2:]):
            return
        kernel = list(w[2:])
    strides = C.attr_ints(ctx, "strides") or [1] * n
    dilations = C.attr_ints(ctx, "dilations") or [1] * n
    pads = C.attr_ints(ctx, "pads")
    auto_pad = ctx.attr("auto_pad")
    mode = bytes(auto_pad.s) if auto_pad is not None else b"NOTSET"
    if len(kernel) != n or len(strides) != n or len(dilations) != n:
        return
    if pads is None:
        pads = [0] * (2 * n)
    elif len(pads) != 2 * n or mode not in (b"NOTSET", b""):
        return
    new = list(out)
    for i in range(n):
        d = shape[2 + i]
        if new[2 + i] is not None or d is None:
            continue
        s = strides[i]
        if s <= 0:
            return
        if mode in (b"SAME_UPPER", b"SAME_LOWER"):
            new[2 + i] = D.floordiv(D.add(d, s - 1), s)  # ceil(d / s), by the definition of SAME
            continue
        if mode not in (b"NOTSET", b"", b"VALID"):
            return
        effective = (kernel[i] - 1) * dilations[i] + 1
        num = D.sub(D.add(d, pads[i] + pads[i + n]), effective)
        new[2 + i] = D.add(trunc_div(num, s), 1)
    _set_dims(ctx, 0, new)
    if ctx.num_outputs > 1 and type(ctx.output(1)) is TensorType:
        _set_dims(ctx, 1, new)


def matmul(ctx, base) -> None:
    base(ctx)
    s0, s1 = _shape(ctx, 0), _shape(ctx, 1)
    if s0 and s1:
        dl = s0[-1]
        dr = s1[0] if len(s1) == 1 else s1[-2]
        if dl is not None and dr is not None and dl != dr:
            D.record_equal(dl, dr)


def with_subgraphs(ctx, base) -> None:
    """An operator with graph attributes: a body that may run zero times proves no equality."""
    st = D.symbolic_state()
    assert st is not None  # rules of this module run in symbolic mode only
    st.frozen += 1
    try:
        base(ctx)
    finally:
        st.frozen -= 1


def if_(ctx, base) -> None:
    """If-13 with a condition known before run time: the outputs are the taken branch's."""
    cond = condition(ctx)
    if cond is None or ctx.opset_version < 13:
        with_subgraphs(ctx, base)
        return
    from ..merge import union  # noqa: PLC0415
    from ..ops.controlflow import _branches  # noqa: PLC0415
    st = D.symbolic_state()
    assert st is not None
    st.frozen += 1
    try:
        then_out, else_out = _branches(ctx)
    finally:
        st.frozen -= 1
    for i, (t, e) in enumerate(zip(then_out, else_out)):
        union(e, t)  # the reference's checks of the two branches
        ctx.set_output(i, t if cond else e)


OVERRIDES = {
    "If": if_, "Loop": with_subgraphs, "Scan": with_subgraphs, "SequenceMap": with_subgraphs, "Concat": concat, "Reshape": reshape, "Slice": slice_, "Split": split, "Tile": tile,
    "Range": range_, "Pad": pad, "MatMul": matmul,
    "Conv": conv_pool, "MaxPool": conv_pool, "AveragePool": conv_pool, "LpPool": conv_pool,
}


def override(domain: str, op_type: str):
    """The symbolic rule of an operator of the default domain, or None."""
    if domain in ("", "ai.onnx"):
        return OVERRIDES.get(op_type)
    return None


def outcome_token():
    """What a node's symbolic outcome depends on beyond its own inputs (for a cache of
    per-node outcomes in the engine): changes with every proven equality, and differs
    inside sub-graphs (where nothing is proven).  An outcome -- output types and
    propagated output values -- computed from the same node, the same resolved input
    types and input values (constants and ``shape_data``) under the same token is the
    same, and replaying it skips no equality: store an outcome only if the token after
    the node equals the one before it (a node that proved something is not replayed).
    None outside symbolic mode."""
    st = _STATE.get()
    return None if st is None else (st.version, st.frozen > 0)


def resolve_types(types: list) -> list:
    """Input types with the proven equalities applied to their dims (the list itself when
    nothing changes: shapes are resolved through a per-shape cache, `dims.resolve_tuple`)."""
    st = _STATE.get()
    if st is None:
        return types
    cache = st._tuples  # `dims.resolve_tuple`'s cache, read here first (once per node)
    out = types
    for i, t in enumerate(types):
        if type(t) is TensorType:
            shape = t.shape
            if shape:
                new = cache.get(shape)
                if new is None:
                    new = D.resolve_tuple(shape)
                if new is not shape:
                    if out is types:
                        out = list(types)
                    out[i] = TensorType(t.elem, new)
    return out


def resolve_type(t):
    """A value's type with the proven equalities applied (tensors, and the elements of containers)."""
    kind = type(t)
    if kind is TensorType or kind is SparseTensorType:
        shape = t.shape
        if shape:
            st = _STATE.get()
            new = st._tuples.get(shape) if st is not None else None
            if new is None:
                new = D.resolve_tuple(shape)
            if new is not shape:
                return kind(t.elem, new)
        return t
    if (kind is SequenceType or kind is OptionalType) and t.elem is not None:
        e = resolve_type(t.elem)
        return t if e is t.elem else kind(e)
    return t
