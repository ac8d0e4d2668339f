"""Image operators: Resize, Upsample, GridSample, AffineGrid, Col2Im, ImageDecoder."""

from __future__ import annotations

import math
import sys

from .. import common as C
from .. import dims as D
from ..errors import fail_shape
from ..registry import infers, no_inference
from ..tensordata import FLOAT, INT64
from ..types import Dim, TensorType
from .elementwise import set_tensor_shape, tensor_shape

UINT8 = 2


def _scaled(shape, scales, current) -> list:
    """``resizeShapeInferenceHelper_opset7_to_10``: floor(dim * scale) where the dim is known."""
    out = list(current)
    for i, d in enumerate(shape):
        if type(d) is int:
            v = D.int64_of_float(float(d) * float(scales[i]), math.floor)
            if type(out[i]) is int:
                if out[i] != v:
                    raise fail_shape("Dimension value inferred (", v, ") is not equal to the existing dim value (",
                                     out[i], ").")
            else:
                out[i] = v
    return out


def _rank_or_existing(ctx, shape) -> list:
    """The output's dims: the existing ones (same rank) or one unknown dim per input dim."""
    existing = C.output_shape(ctx, 0)
    if existing:
        if len(existing) != len(shape):
            raise fail_shape("Ranks inferred (", len(shape), ") is not equal to the existing rank value (",
                             len(existing), ").")
        return list(existing)
    return [None] * len(shape)


@infers("Upsample", 7)
def upsample7(ctx) -> None:
    if not C.has_n_input_shapes(ctx, 1):
        return
    C.propagate_elem(ctx, 0, 0)
    shape = C.input_shape(ctx, 0)
    C.set_output_shape(ctx, 0, C.output_shape(ctx, 0) or ())
    out = _rank_or_existing(ctx, shape)
    C.set_output_shape(ctx, 0, out)
    scales = ctx.attr("scales")
    if scales is None:
        raise fail_shape("Attribute 'scales' is required.")
    if scales.type != 6:
        raise fail_shape("Attribute 'scales' must have floats type.")
    values = list(scales.floats)
    if len(values) != len(shape):
        raise fail_shape("Number of elements of attribute 'scales' must be same as rank of input 'X'")
    C.set_output_shape(ctx, 0, _scaled(shape, values, out))


no_inference("Upsample", 1)


@infers("Upsample", 9)
@infers("Resize", 10)
def resize10(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = C.input_shape(ctx, 0)
    C.set_output_shape(ctx, 0, C.output_shape(ctx, 0) or ())
    scales = ctx.input_data(1)
    out = _rank_or_existing(ctx, shape)
    C.set_output_shape(ctx, 0, out)
    if scales is not None:
        if scales.data_type != FLOAT:
            raise fail_shape("Input 'scales' must have float element type.")
        values = scales.values(FLOAT)
        if len(values) != len(shape):
            raise fail_shape("Number of elements of input 'scales' must be same as rank of input 'X'")
        C.set_output_shape(ctx, 0, _scaled(shape, values, out))


def _std_round(x: float) -> int:
    """``static_cast<int64_t>(std::round(x))``: halves away from zero (`D.int64_of_float`:
    NaN, infinities and values past int64 give INT64_MIN)."""
    return D.int64_of_float(x, _round_half_away)


def _round_half_away(x: float) -> int:
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _resize(version: int):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if not C.has_n_input_shapes(ctx, 1):
            return
        shape = C.input_shape(ctx, 0)
        C.set_output_shape(ctx, 0, C.output_shape(ctx, 0) or ())
        has_scales = ctx.has_input(2)
        has_sizes = ctx.has_input(3)
        scales = ctx.input_data(2) if ctx.num_inputs > 2 else None
        sizes = []
        if ctx.num_inputs > 3:
            found = C.shape_input(ctx, 3)
            if found is not None:
                if len(found) == 0:
                    has_sizes = False
                else:
                    sizes = [d if type(d) is int else 0 for d in found]
        if scales is not None and not scales.values(FLOAT):
            has_scales = False
            scales = None
        if version >= 13 and has_scales + has_sizes != 1:
            raise fail_shape("Either `sizes` or `scales` must be provided, but not both of them")
        policy = "stretch"
        a = ctx.attr("keep_aspect_ratio_policy")
        if a is not None and a.HasField("s"):
            policy = bytes(a.s).decode("utf-8", "replace")
            if policy not in ("stretch", "not_larger", "not_smaller"):
                raise fail_shape("Unknown value for `keep_aspect_ratio_policy`: ", policy, ".")
        if has_scales and policy != "stretch":
            raise fail_shape("Providing `scales` is incompatible with a `keep_aspect_ratio_policy` other than "
                             "\"stretch\".")
        out = _rank_or_existing(ctx, shape)
        C.set_output_shape(ctx, 0, out)
        rank = len(shape)
        axes = C.attr_ints(ctx, "axes")
        if axes is not None:
            C.check_axes_range(axes, rank)
            axes = C.adjust_negative_axes(axes, rank)
            C.check_duplicate_axes(axes, rank)
        else:
            axes = []
        full: list[int] | list[float]  # sizes (ints) or scales (floats) spread over all axes
        if has_sizes:
            if axes:
                if len(sizes) != len(axes):
                    raise fail_shape("Number of elements of input 'sizes' (", len(sizes),
                                     ") does not match the number of axes (", len(axes), ").")
            elif len(sizes) != rank:
                raise fail_shape("Number of elements of input 'sizes' (", len(sizes),
                                 ") must be same as rank of input 'X' (", rank, ").")
            sizes = _keep_aspect_ratio(policy, shape, axes, sizes)
            if axes:
                full = [d if type(d) is int else -1 for d in shape]
                for i, ax in enumerate(axes):
                    full[ax] = sizes[i]
                sizes = full
            if sizes:
                for i in range(rank):
                    if sizes[i] > 0:
                        out[i] = sizes[i]
            C.set_output_shape(ctx, 0, out)
        elif scales is not None:
            if scales.data_type != FLOAT:
                raise fail_shape("Input 'scales' must have float element type.")
            values = scales.values(FLOAT)
            if axes:
                if len(values) != len(axes):
                    raise fail_shape("Number of elements of input 'scales' (", len(values),
                                     ") does not match the number of axes (", len(axes), ").")
                full = [1.0] * rank
                for i, ax in enumerate(axes):
                    full[ax] = values[i]
                values = full
            elif len(values) != rank:
                raise fail_shape("Number of elements of input 'scales' must be same as rank of input 'X'")
            C.set_output_shape(ctx, 0, _scaled(shape, values, out))
    return infer


def _keep_aspect_ratio(policy: str, shape, axes, sizes) -> list:
    if policy not in ("not_larger", "not_smaller"):
        return sizes
    scale = sys.float_info.max if policy == "not_larger" else -sys.float_info.max
    unknown = False
    for i, size in enumerate(sizes):
        d = shape[axes[i] if axes else i]
        if type(d) is not int:
            unknown = True
            break
        s = float(size) / float(d) if d else (math.copysign(math.inf, size) if size else math.nan)
        scale = min(scale, s) if policy == "not_larger" else max(scale, s)
    out = []
    for i in range(len(sizes)):
        d = shape[axes[i] if axes else i]
        out.append(-1 if unknown else _std_round(scale * float(d)))
    return out


infers("Resize", 11)(_resize(11))
infers("Resize", 13)(_resize(13))


# -- GridSample, AffineGrid, Col2Im, ImageDecoder ---------------------------------------------------

@infers("GridSample", 16)
def grid_sample(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 2):
        return
    x = C.input_shape(ctx, 0)
    grid = C.input_shape(ctx, 1)
    if len(x) != len(grid):
        raise fail_shape("The input tensor and grid tensor must have the same rank for GridSample. Got input tensor "
                         "rank: ", len(x), ". Got grid tensor rank: ", len(grid), ". ")
    n = len(x)
    if n < 3:
        raise fail_shape("The input tensor and grid tensor ranks must be >= 3. Got input tensor and grid tensor "
                         "ranks: ", n, ". ")
    last = grid[n - 1]
    if type(last) is int and last != n - 2:
        raise fail_shape("The last dimension of the grid tensor must be the rank of the grid tensor - 2. Got grid "
                         "tensor rank: ", n, "Got the last dimension of the grid tensor: ", last, ". ")
    batch = D.unify(grid[0], D.unify(x[0], None))
    out = [batch, D.unify(x[1], None)]
    for i in range(n - 2):
        out.append(D.unify(grid[1 + i], None))
    current = C.output_shape(ctx, 0) or ()
    C.set_output_shape(ctx, 0, tuple(current) + tuple(out))


@infers("AffineGrid", 20)
def affine_grid(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    C.check_input_rank(ctx, 1, 1)
    size = C.shape_input(ctx, 1)
    if size is None:
        return
    if len(size) not in (4, 5):
        raise fail_shape("Length of input 'size' is ", len(size), ". It must be 4 for 2D or 5 for 5D.")
    out: tuple[Dim, ...]
    if len(size) == 4:
        out = (size[0], size[2], size[3], 2)
    else:
        out = (size[0], size[2], size[3], size[4], 3)
    set_tensor_shape(ctx, 0, out)


@infers("Col2Im", 18)
def col2im(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 3):
        return
    n = C.unify_input_dim(ctx, 1, 0, None)
    n = C.unify_input_dim(ctx, 2, 0, n)
    C.check_input_rank(ctx, 1, 1)
    C.check_input_rank(ctx, 2, 1)
    image = []
    data = ctx.input_data(1)
    if data is not None:
        image = data.values(INT64)
        n = D.unify_value(n, len(image))
    pads = C.attr_ints(ctx, "pads")
    if pads is not None:
        if len(pads) % 2:
            raise fail_shape("Attribute pads must have an even size")
        n = D.unify_value(n, len(pads) // 2)
    for name in ("dilations", "strides"):
        values = C.attr_ints(ctx, name)
        if values is not None:
            n = D.unify_value(n, len(values))
    shape = tensor_shape(ctx, 0)
    if len(shape) != 3:
        raise fail_shape("input must have rank 3.")
    block = []
    bdata = ctx.input_data(2)
    if bdata is not None:
        block = bdata.values(INT64)
        n = D.unify_value(n, len(block))
    n = C.unify_input_dim(ctx, 2, 0, n)
    block_size = 0
    if block:
        block_size = 1
        for b in block:
            if b <= 0:
                raise fail_shape("'block_shape' input must contain only positive values")
            block_size = D.checked_mul(block_size, b)
    if type(n) is not int or n < 0 or n > C.MAX_RANK:
        return
    batch = shape[0] if type(shape[0]) is int else None
    channels = D.div_int(shape[1], block_size) if block_size > 0 else None
    out = [batch, channels] + [image[i] if image else None for i in range(n)]
    set_tensor_shape(ctx, 0, out)


@infers("ImageDecoder", 20)
def image_decoder(ctx) -> None:
    if C.has_input_shape(ctx, 0):
        if len(C.input_shape(ctx, 0)) != 1:
            raise fail_shape("Input tensor must be 1-dimensional")
    C.set_output_elem(ctx, 0, UINT8)
    out = ctx.output(0)
    ctx.set_output(0, TensorType(out.elem, (None, None, None)))
