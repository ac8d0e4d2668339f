"""Padding and cropping: Pad (attribute pads, then input pads, then input axes) and
CenterCropPad.
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..registry import infers, no_inference
from ..tensordata import INT32, INT64
from .elementwise import set_tensor_shape, tensor_shape


@infers("Pad", 2)
def pad2(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = tensor_shape(ctx, 0)
    pads = C.attr_ints(ctx, "pads")
    if pads is None:
        raise fail_shape("Attribute value for pads is required")
    if len(pads) != len(shape) * 2:
        raise fail_shape("Attribute pads has incorrect length")
    set_tensor_shape(ctx, 0, _padded(shape, range(len(shape)), pads))


def _padded(shape, axes, pads) -> list:
    axes = list(axes)
    n = len(axes)
    out = [d if type(d) is int else None for d in shape]
    for i, axis in enumerate(axes):
        d = shape[axis]
        total = D.checked_add(pads[i], pads[n + i])
        if type(d) is int:
            out[axis] = D.checked_add(d, total)
        elif total == 0:
            out[axis] = d
    return out


no_inference("Pad", 1)


@infers("Pad", 11)
def pad11(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = tensor_shape(ctx, 0)
    rank = len(shape)
    pads = ctx.input_data(1)
    if pads is None:
        set_tensor_shape(ctx, 0, [None] * rank)
        return
    if len(pads.dims) != 1 or pads.data_type != INT64:
        raise fail_shape("'pads' input must be a 1D (shape: [2 * input_rank]) tensor of type int64")
    values = pads.values(INT64)
    if len(values) != 2 * rank:
        raise fail_shape("Pads has incorrect number of values")
    set_tensor_shape(ctx, 0, _padded(shape, range(rank), values))


@infers("Pad", 18)
def pad18(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = tensor_shape(ctx, 0)
    rank = len(shape)
    if C.has_input_shape(ctx, 3):
        axes_t = ctx.input_data(3)
        if axes_t is None:
            return
        axes = axes_t.values(INT64)
        C.check_axes_range(axes, rank)
        axes = C.adjust_negative_axes(axes, rank)
        C.check_duplicate_axes(axes, rank)
    else:
        axes = list(range(rank))
    pads = ctx.input_data(1)
    if pads is not None and axes:
        if len(pads.dims) != 1 or pads.data_type != INT64:
            raise fail_shape("'pads' input must be a 1D (shape: [2 * num_axes]) tensor of type int64")
        values = pads.values(INT64)
        if len(values) != 2 * len(axes):
            raise fail_shape("Pads has incorrect number of values. Expected 2 * ", len(axes), " values. Got ",
                             len(values), " values.")
        set_tensor_shape(ctx, 0, _padded(shape, axes, values))
    else:
        set_tensor_shape(ctx, 0, [None] * rank)


@infers("CenterCropPad", 18)
def center_crop_pad(ctx) -> None:
    if ctx.num_inputs != 2:
        raise fail_type("CenterCropPad op must have 2 inputs.")
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    crop = ctx.input_data(1)
    if crop is None or not crop.proto.HasField("data_type"):
        return
    shape = tensor_shape(ctx, 0)
    rank = len(shape)
    if crop.data_type == INT64:
        sizes = crop.values(INT64)
    elif crop.data_type == INT32:
        sizes = crop.values(INT32)
    else:
        raise fail_shape("`shape` only supports `int32_t` or `int64_t` inputs")
    axes = C.attr_ints(ctx, "axes")
    if axes is not None:
        C.check_axes_range(axes, rank)
        axes = C.adjust_negative_axes(axes, rank)
        C.check_duplicate_axes(axes, rank)
    else:
        axes = list(range(rank))
    if len(sizes) != len(axes):
        raise fail_shape("Number of elements of input 'shape' (", len(sizes), ") does not match the number of axes (",
                         len(axes), ").")
    out = list(shape)
    for j, axis in enumerate(axes):
        out[axis] = sizes[j]
    C.set_output_shape(ctx, 0, out)
