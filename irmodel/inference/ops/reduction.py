"""Reductions: Reduce* (axes as an attribute, then as an input from ReduceSum-13 and the
others' version 18) and ArgMax/ArgMin.
"""

from __future__ import annotations

from .. import common as C
from ..errors import fail_shape
from ..registry import infers
from ..tensordata import INT64
from .elementwise import set_tensor_shape, tensor_shape

_REDUCE = ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
           "ReduceProd", "ReduceSum", "ReduceSumSquare")


def _keepdims(ctx) -> int:
    a = ctx.attr("keepdims")
    return a.i if a is not None else 1


def _reduced(shape, axes, keep_dims: int) -> list:
    """The kept dims, and a 1 for each reduced one when ``keep_dims`` is 1 (no axes: all)."""
    out = []
    for i, d in enumerate(shape):
        if axes and i not in axes:
            out.append(d)
        elif keep_dims == 1:
            out.append(1)
    return out


def _reduce_attr_axes(check_range: bool):
    """Opset 1 (no range check) and 11/12 (checked): ``axes`` is an attribute."""
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if not C.has_n_input_shapes(ctx, 1):
            return
        keep = _keepdims(ctx)
        shape = tensor_shape(ctx, 0)
        rank = len(shape)
        axes = C.attr_ints(ctx, "axes") or []
        fixed = []
        for a in axes:
            if check_range and (a < -rank or a >= rank):
                raise fail_shape("axis must be in [-rank, rank-1]. input rank was ", rank)
            fixed.append(a + rank if a < 0 else a)
        set_tensor_shape(ctx, 0, _reduced(shape, fixed, keep))
    return infer


infers(_REDUCE, 1)(_reduce_attr_axes(False))
infers(tuple(n for n in _REDUCE if n not in ("ReduceMax", "ReduceMin")), 11)(_reduce_attr_axes(True))
infers(("ReduceMax", "ReduceMin"), 12)(_reduce_attr_axes(True))
# ReduceMax/Min-11 keep opset 1's rule (registered at 1 above covers 11).


@infers(_REDUCE, 13)
def reduce13(ctx) -> None:
    """From opset 13: axes as an input (or the attribute), ``noop_with_empty_axes``."""
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    keep = _keepdims(ctx)
    noop_attr = ctx.attr("noop_with_empty_axes")
    noop = noop_attr.i if noop_attr is not None else 0
    if ctx.has_input(1):
        if ctx.attr("axes") is not None:
            raise fail_shape("axes as an input and attribute cannot be specified at the same time.")
        data = ctx.input_data(1)
        if data is None:
            return
        axes = list(data.values(INT64))
    else:
        axes = C.attr_ints(ctx, "axes") or []
    shape = tensor_shape(ctx, 0)
    if noop and not axes:
        C.propagate_shape(ctx, 0, 0)
        return
    rank = len(shape)
    fixed = []
    for a in axes:
        if a < -rank or a >= rank:
            raise fail_shape("axis must be in [-rank, rank-1]. Input rank was ", rank)
        fixed.append(a + rank if a < 0 else a)
    set_tensor_shape(ctx, 0, _reduced(shape, fixed, keep))


def _arg_reduce(check_range: bool):
    def infer(ctx) -> None:
        C.set_output_elem(ctx, 0, 7)
        if not C.has_n_input_shapes(ctx, 1):
            return
        shape = tensor_shape(ctx, 0)
        rank = len(shape)
        axis = 0
        a = ctx.attr("axis")
        if a is not None:
            axis = a.i
            if check_range and (axis < -rank or axis >= rank):
                raise fail_shape("'axis' must be in [-rank(indices), rank(indices)-1]")
            if axis < 0:
                axis += rank
        keep = _keepdims(ctx)
        out = []
        for i, d in enumerate(shape):
            if i != axis:
                out.append(d)
            elif keep == 1:
                out.append(1)
        set_tensor_shape(ctx, 0, out)
    return infer


infers(("ArgMax", "ArgMin"), 1)(_arg_reduce(False))
infers(("ArgMax", "ArgMin"), 11)(_arg_reduce(True))
