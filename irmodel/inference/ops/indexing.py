"""Operators that select or join along axes: Concat, Split, Slice, Gather*, Scatter*,
TensorScatter, Compress, OneHot, NonZero, Unique, Trilu, ReverseSequence.
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..dataprop import ceil_div_float, slice_bounds
from ..errors import HardError, fail_shape, fail_type
from ..merge import merge_in_dim
from ..registry import infers, no_inference
from ..tensordata import DOUBLE, FLOAT, INT32, INT64
from ..types import Dim, TensorType
from .elementwise import set_tensor_shape, tensor_shape

INT64_T = 7


# -- Concat -----------------------------------------------------------------------------------------

def _concat(checked_axis: bool):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        n = ctx.num_inputs
        if n < 1 or not C.has_n_input_shapes(ctx, n):
            return
        rank = len(tensor_shape(ctx, 0))
        a = ctx.attr("axis")
        if a is None:
            raise fail_shape("Required attribute axis is missing")
        axis = D.int32(a.i)
        if checked_axis:
            if axis < -rank or axis >= rank:
                raise fail_shape("axis must be in [-rank, rank-1].")
            if axis < 0:
                axis += rank
            if n == 1:
                C.propagate_shape(ctx, 0, 0)
                return
        else:
            if rank <= axis:
                raise fail_shape("rank must be greater than axis")
            if axis < 0:
                return
        known = True
        total = 0
        out: list[Dim] = [None] * rank
        for i in range(n):
            shape = tensor_shape(ctx, i)
            if len(shape) != rank:
                raise fail_shape("All inputs to Concat must have same rank. Input ", i, " has rank ", len(shape),
                                 " != ", rank)
            for j in range(rank):
                d = shape[j]
                if j == axis:
                    if type(d) is int:
                        if d < 0:
                            raise fail_shape("Negative dimension value on Concat axis")
                        total += d
                        if total > D.INT64_MAX:
                            raise fail_shape("Integer overflow computing Concat output length")
                    else:
                        known = False
                else:
                    out[j] = merge_in_dim(d, out[j], j)
        if known:
            out[axis] = total
        set_tensor_shape(ctx, 0, out)
    return infer


no_inference("Concat", 1)
infers("Concat", 4)(_concat(False))
infers("Concat", 11)(_concat(True))


# -- Split --------------------------------------------------------------------------------------------

def _split(version: int):
    """Split-2/11 (``split`` attribute), -13 (``split`` input), -18 (input or ``num_outputs``)."""
    def infer(ctx) -> None:
        n_out = ctx.num_outputs
        for i in range(n_out):
            C.propagate_elem(ctx, 0, i)
        if not C.has_n_input_shapes(ctx, 1):
            return
        shape = tensor_shape(ctx, 0)
        rank = len(shape)
        axis = D.int32(C.attr_int(ctx, "axis", 0))
        if axis < -rank or axis >= rank:
            raise fail_type("Invalid value of attribute 'axis'. Rank=", rank, " Value=", axis)
        if axis < 0:
            axis += rank
        if type(shape[axis]) is not int:
            for i in range(n_out):
                _set_split_output(ctx, i, shape, axis, None)
            return
        total = D.int32(shape[axis])
        given = None  # the split sizes from an attribute or an input
        if version >= 18:
            num_outputs = ctx.attr("num_outputs")
            if ctx.has_input(1) and num_outputs is not None:
                raise fail_shape("Both 'split' input and 'num_outputs' attribute were given")
            if ctx.has_input(1):
                data = ctx.input_data(1)
                if data is None:
                    return
                given = data.values(INT64)
        elif version >= 13:
            if ctx.num_inputs == 2 and ctx.input_type(1) is not None:
                data = ctx.input_data(1)
                if data is None:
                    return
                given = data.values(INT64)
        else:
            given = C.attr_ints(ctx, "split")
        if given is not None:
            if len(given) != n_out:
                raise fail_shape("Mismatch between number of splits (", len(given), ") and outputs (", n_out, ")")
            if sum(given) != total:
                raise fail_shape("Mismatch between the sum of 'split' (", sum(given),
                                 ") and the split dimension of the input (", total, ")")
            split = given
        elif version >= 18:
            if num_outputs is None:
                raise fail_shape("Neither 'split' input nor 'num_outputs' attribute has been given")
            k = num_outputs.i
            if k < 1:
                raise fail_shape("Attribute `num_outputs` value cannot be lower than 1")
            # Only the sizes of the outputs the node has are needed: never allocate by `k`.
            if D.trunc_rem(total, k) == 0:
                split = [D.int32(D.trunc_div(total, k))] * min(k, n_out)
            else:
                chunk = D.int32(D.trunc_div(total, k) + 1)
                split = [chunk] * min(k - 1, n_out)
                if len(split) < n_out:
                    split.append(D.int32(total - chunk * (k - 1)))
            if len(split) < n_out:
                raise HardError("Split: num_outputs is smaller than the number of outputs")
        else:
            if n_out == 0:
                raise fail_shape("Split needs at least one output")
            if D.trunc_rem(total, n_out) != 0:
                raise fail_shape("The input is not evenly splittable")
            split = [D.trunc_div(total, n_out)] * n_out
        for i in range(n_out):
            _set_split_output(ctx, i, shape, axis, split[i])
    return infer


def _set_split_output(ctx, i: int, shape, axis: int, value) -> None:
    dims = list(shape)
    dims[axis] = value
    set_tensor_shape(ctx, i, dims)


no_inference("Split", 1)
infers("Split", 2)(_split(2))
infers("Split", 13)(_split(13))
infers("Split", 18)(_split(18))


# -- Slice --------------------------------------------------------------------------------------------------

@infers("Slice", 1)
def slice1(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    starts = C.attr_ints(ctx, "starts")
    ends = C.attr_ints(ctx, "ends")
    if starts is None or ends is None or len(starts) != len(ends):
        raise fail_shape("Incorrect or missing attribute value for starts and ends")
    axes = C.attr_ints(ctx, "axes")
    if axes is None:
        axes = list(range(len(starts)))
    elif len(axes) != len(starts):
        raise fail_shape("Attribute axes has incorrect length")
    elif axes != sorted(axes):
        return
    shape = tensor_shape(ctx, 0)
    if any(a < 0 for a in axes):
        if shape:  # the reference only adds dims (no shape at all for rank 0)
            set_tensor_shape(ctx, 0, [None] * len(shape))
        return
    out = []
    j = 0
    for i, d in enumerate(shape):
        if j < len(axes) and axes[j] == i:
            new = None
            if type(d) is int:
                s, e = starts[j], ends[j]
                if s < 0:
                    s += d
                if e < 0:
                    e += d
                if s >= 0 and e >= 0:
                    v = min(d, e) - s
                    if v >= 0:
                        new = v
            out.append(new)
            j += 1
        else:
            out.append(d)
    set_tensor_shape(ctx, 0, out)


def _index_values(tensor) -> list:
    if tensor.data_type == INT64:
        return tensor.values(INT64)
    if tensor.data_type == INT32:
        return tensor.values(INT32)
    raise fail_shape("Only supports `int32_t` or `int64_t` inputs for starts/ends/axes/steps")


def _slice(version: int):
    def infer(ctx) -> None:
        n = ctx.num_inputs
        if n not in (3, 4, 5):
            raise fail_type("Slice op must have either three, four or five inputs.")
        C.propagate_elem(ctx, 0, 0)
        if not C.has_n_input_shapes(ctx, 1):
            return
        starts_t, ends_t = ctx.input_data(1), ctx.input_data(2)
        has_axes, has_steps = C.has_input_shape(ctx, 3), C.has_input_shape(ctx, 4)
        axes_t = ctx.input_data(3) if has_axes else None
        steps_t = ctx.input_data(4) if has_steps else None
        shape = tensor_shape(ctx, 0)
        rank = len(shape)
        if starts_t is None or ends_t is None or (has_axes and axes_t is None) or (has_steps and steps_t is None):
            if rank:  # the reference only adds dims (no shape at all for rank 0)
                set_tensor_shape(ctx, 0, [None] * rank)
            return
        if not starts_t.proto.HasField("data_type"):
            return
        starts = _index_values(starts_t)
        ends = _index_values(ends_t)
        if len(starts) != len(ends):
            raise fail_shape("Incorrect or missing input value for starts and ends")
        if axes_t is None:
            axes = list(range(len(starts)))
        else:
            axes = _index_values(axes_t)
            if len(axes) != len(starts):
                raise fail_shape("Input axes has incorrect length")
        if version >= 13:
            C.check_axes_range(axes, rank)
            axes = C.adjust_negative_axes(axes, rank)
            C.check_duplicate_axes(axes, rank)
        if steps_t is None:
            steps = [1] * len(starts)
        else:
            steps = _index_values(steps_t)
            if len(steps) != len(axes):
                raise fail_shape("Input steps has incorrect length")
        out = [d if d is not None else None for d in shape]
        seen = set()
        for k, a in enumerate(axes):
            axis = a + rank if a < 0 else a
            if version < 13:
                if axis >= rank or axis < 0:
                    raise fail_shape("Input axes has invalid data")
                if axis in seen:
                    raise fail_shape("'axes' has duplicates")
                seen.add(axis)
            d = shape[axis]
            if type(d) is not int:
                if version >= 11:
                    out[axis] = None
                continue
            if version < 13:
                if d == 0:
                    out[axis] = 0
                    continue
                step = steps[k]
                if step == 0:
                    raise fail_shape("'step' cannot be 0")
                start, end = starts[k], ends[k]
                if start < 0:
                    start += d
                start = min(max(start, 0), d - 1) if step < 0 else min(max(start, 0), d)
                if end < 0:
                    end += d
                end = min(max(end, -1), d) if step < 0 else min(max(end, 0), d)
            else:
                step = steps[k]
                start, end = slice_bounds(d, starts[k], ends[k], step)
            out[axis] = max(ceil_div_float(end - start, step), 0)
        set_tensor_shape(ctx, 0, out)
    return infer


infers("Slice", 10)(_slice(10))
infers("Slice", 11)(_slice(11))
infers("Slice", 13)(_slice(13))


# -- Gather / Scatter ---------------------------------------------------------------------------------------

@infers("Gather", 1)
def gather(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 2):
        return
    data = tensor_shape(ctx, 0)
    indices = tensor_shape(ctx, 1)
    r = len(data)
    if r < 1:
        raise fail_shape("data tensor must have rank >= 1")
    axis = D.int32(C.attr_int(ctx, "axis", 0))
    if axis < -r or axis >= r:
        raise fail_shape("axis must be in [-r, r-1]")
    if axis < 0:
        axis += r
    out = list(data[:axis]) + list(indices) + list(data[axis + 1:])
    set_tensor_shape(ctx, 0, out)


@infers("GatherElements", 11)
def gather_elements(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.has_input_shape(ctx, 1):
        C.propagate_shape(ctx, 1, 0)


def _gather_nd(with_batch: bool):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if not C.has_n_input_shapes(ctx, 2):
            return
        data = tensor_shape(ctx, 0)
        indices = tensor_shape(ctx, 1)
        batch = C.attr_int(ctx, "batch_dims", 0) if with_batch else 0
        if len(data) < 1 or len(indices) < 1:
            raise fail_shape("Both `data` and `indices` input tensors in GatherND op need to have rank larger "
                             "than 0.")
        last = indices[-1]
        if type(last) is not int:
            return
        last = D.checked_add(last, batch) if with_batch else last
        if last > len(data):
            raise fail_shape("Last dimension of `indices` input tensor in GatherND op must not be larger than the "
                             "rank of `data` tensor")
        start = max(D.int32(last), 0)
        set_tensor_shape(ctx, 0, list(indices[:-1]) + list(data[start:]))
    return infer


infers("GatherND", 11)(_gather_nd(False))
infers("GatherND", 12)(_gather_nd(True))


@infers("Scatter", 9)
@infers(("ScatterElements", "ScatterND"), 11)
def scatter(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.has_n_input_shapes(ctx, 1):
        C.propagate_shape(ctx, 0, 0)


@infers("TensorScatter", 24)
def tensor_scatter(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.has_input_shape(ctx, 0) and C.has_input_shape(ctx, 1):
        cache = C.input_shape(ctx, 0)
        update = C.input_shape(ctx, 1)
        rank = len(cache)
        if rank != len(update):
            raise fail_shape("past_cache and update must have the same rank. past_cache_rank=", rank,
                             ", update_rank=", len(update))
        a = ctx.attr("axis")
        axis = a.i if a is not None else -2
        if axis < 0:
            axis += rank
        if axis <= 0 or axis >= rank:
            raise fail_shape("axis ", axis, " is out of range for rank ", rank)
        for i in range(rank):
            if i != axis:
                d = C.unify_input_dim(ctx, 0, i, None)
                C.unify_input_dim(ctx, 1, i, d)
    if C.has_input_shape(ctx, 2):
        C.check_input_rank(ctx, 2, 1)
        d = C.unify_input_dim(ctx, 0, 0, None)
        C.unify_input_dim(ctx, 2, 0, d)
    if C.has_n_input_shapes(ctx, 1):
        C.propagate_shape(ctx, 0, 0)


# -- misc -----------------------------------------------------------------------------------------------------

@infers("Compress", 11)
def compress(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    a = ctx.attr("axis")
    if C.has_input_shape(ctx, 0):
        shape = tensor_shape(ctx, 0)
        r = len(shape)
        if r < 1:
            raise fail_shape("Indices tensor must have rank >= 1")
        if a is not None:
            axis = D.int32(a.i)
            if axis < -r or axis >= r:
                raise fail_shape("'axis' must be in [-rank(indices), rank(indices)-1]")
            if axis < 0:
                axis += r
            set_tensor_shape(ctx, 0, [None if i == axis else d for i, d in enumerate(shape)])
    if a is None:
        current = C.output_shape(ctx, 0) or ()
        C.set_output_shape(ctx, 0, tuple(current) + (None,))


no_inference("Compress", 9)


def _onehot(version: int):
    def infer(ctx) -> None:
        if ctx.num_inputs != 3:
            raise fail_type("OneHot node must have three inputs.")
        if version < 11:
            data = ctx.input_data(0)
            if data is not None and data.data_type in (INT64, INT32, FLOAT, DOUBLE):
                if any(v < 0 for v in data.values(data.data_type)):
                    raise fail_shape("Input 'indices' must be non-negative for OneHot opset < 11.")
        depth = None
        if C.has_input_shape(ctx, 1):
            ds = C.input_shape(ctx, 1)
            if len(ds) not in (0, 1):
                raise fail_type("Input 'depth' must be a scalar or rank 1 tensor.")
            if len(ds) == 1 and type(ds[0]) is int and ds[0] > 1:
                raise fail_type("Input 'depth' must have at most one element.")
            data = ctx.input_data(1)
            if data is not None:
                code = data.data_type
                if code in (INT64, INT32, FLOAT):
                    values = data.values(code)
                    if values:
                        depth = D.int64_of_float(values[0])
                if depth is not None and depth < 0:
                    raise fail_shape("Input 'depth' must be non-negative.")
        if C.has_input_shape(ctx, 2):
            vs = C.input_shape(ctx, 2)
            if len(vs) != 1:
                raise fail_type("Input 'values' must be rank 1 tensor.")
            if type(vs[0]) is int and vs[0] != 2:
                raise fail_type("Input 'values' must have exactly two elements.")
        C.propagate_elem(ctx, 2, 0)
        if C.has_input_shape(ctx, 0):
            indices = tensor_shape(ctx, 0)
            r = len(indices)
            if r < 1:
                raise fail_shape("Indices tensor must have rank >= 1")
            out_rank = r + 1
            axis = D.int32(C.attr_int(ctx, "axis", -1))
            if axis < -out_rank or axis >= out_rank:
                raise fail_shape("'axis' must be in [-rank(indices)-1, rank(indices)]")
            if axis < 0:
                axis += out_rank
            out = list(indices[:axis]) + [depth] + list(indices[axis:])
            C.set_output_shape(ctx, 0, out)
    return infer


infers("OneHot", 9)(_onehot(9))
infers("OneHot", 11)(_onehot(11))


@infers("NonZero", 9)
def non_zero(ctx) -> None:
    C.set_output_elem(ctx, 0, INT64_T)
    rank = len(C.input_shape(ctx, 0)) if C.has_input_shape(ctx, 0) else None
    C.set_output_shape(ctx, 0, (rank, None))


@infers("Unique", 11)
def unique(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    x = ctx.input_type(0)
    for k in range(1, min(ctx.num_outputs, 4)):
        C.set_output_elem(ctx, k, INT64_T)
        current = C.output_shape(ctx, k) or ()
        set_tensor_shape(ctx, k, tuple(current) + (None,))
    a = ctx.attr("axis")
    if a is None:
        current = C.output_shape(ctx, 0) or ()
        set_tensor_shape(ctx, 0, tuple(current) + (None,))
        return
    axis = D.int32(a.i)
    shape = x.shape if type(x) is TensorType else None
    if shape is None:
        return
    rank = len(shape)
    if axis < 0:
        axis += rank
    if axis < 0 or axis >= rank:
        raise fail_shape("Invalid value for attribute axis")
    current = C.output_shape(ctx, 0) or ()
    set_tensor_shape(ctx, 0, tuple(current) + tuple(None if i == axis else d for i, d in enumerate(shape)))


@infers("Trilu", 14)
def trilu(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.has_input_shape(ctx, 0):
        if len(tensor_shape(ctx, 0)) < 2:
            raise fail_shape("Input rank must be >= 2.")
        C.propagate_shape(ctx, 0, 0)


@infers("ReverseSequence", 10)
def reverse_sequence(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 2):
        return
    if len(C.input_shape(ctx, 0)) < 2:
        raise fail_shape("'input' must have rank >= 2")
    if len(C.input_shape(ctx, 1)) != 1:
        raise fail_shape("'sequence_lens' must have rank of 1")
    C.propagate_shape(ctx, 0, 0)
