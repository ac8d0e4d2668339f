"""Signal processing: DFT and STFT (the window functions live with the generators)."""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..registry import infers
from .generator import scalar_value


def _flag(ctx, name: str) -> bool:
    return C.attr_int(ctx, name, 0) != 0


def _check_last_dim(shape, onesided: bool, inverse: bool) -> None:
    if onesided:
        last = shape[-1]
        if inverse:
            if type(last) is int and last != 2:
                raise fail_shape("inverse one-sided DFT requires complex input (last dimension must be 2)")
        elif type(last) is int and last != 1:
            raise fail_shape("one-sided DFT requires real input (last dimension must be 1)")


def _check_axis(axis: int, rank: int) -> None:
    if not (-rank <= axis and axis != -1 and axis < rank - 1):
        raise fail_shape("axis attribute value ", axis, " is invalid for a tensor of rank ", rank,
                         ". Valid values are '-rank <= axis && axis != -1 && axis < rank - 1'")


def _onesided_length(d, inverse: bool):
    """The signal axis of a one-sided transform with no ``dft_length``."""
    if type(d) is not int:
        return None
    if inverse:
        return D.checked_mul(2, D.checked_sub(d, 1))
    return (d >> 1) + 1


def _dft_input_shape(ctx, onesided: bool, inverse: bool):
    """Propagates the element type; the input's shape, checked as a DFT input, or None when unknown."""
    C.propagate_elem(ctx, 0, 0)
    if not C.has_input_shape(ctx, 0):
        return None
    shape = C.input_shape(ctx, 0)
    if len(shape) < 2:
        raise fail_shape("input tensor must have rank >= 2, including the complex dimension.")
    _check_last_dim(shape, onesided, inverse)
    return shape


def _finish(ctx, out: list, onesided: bool, inverse: bool) -> None:
    out[-1] = 1 if (onesided and inverse) else 2
    C.set_output_shape(ctx, 0, out)


@infers("DFT", 17)
def dft17(ctx) -> None:
    onesided, inverse = _flag(ctx, "onesided"), _flag(ctx, "inverse")
    shape = _dft_input_shape(ctx, onesided, inverse)
    if shape is None:
        return
    out = list(shape)
    axis = D.int32(C.attr_int(ctx, "axis", 1))
    rank = len(shape)
    _check_axis(axis, rank)
    idx = axis if axis >= 0 else axis + rank
    length = None
    if ctx.has_input(1):
        length = ctx.input_data(1)
        if length is None:
            return
    if length is not None:
        if length.dims:
            raise fail_shape("dft_length input must be a scalar.")
        value = D.int64_of_float(scalar_value(length))
        out[idx] = (value >> 1) + 1 if (onesided and not inverse) else value
    elif onesided:
        out[idx] = _onesided_length(out[idx], inverse)
    _finish(ctx, out, onesided, inverse)


@infers("DFT", 20)
def dft20(ctx) -> None:
    onesided, inverse = _flag(ctx, "onesided"), _flag(ctx, "inverse")
    shape = _dft_input_shape(ctx, onesided, inverse)
    if shape is None:
        return
    rank = len(shape)
    out = list(shape)
    if ctx.has_input(2) and ctx.input_data(2) is None:
        if onesided or ctx.has_input(1):
            out = [None] * rank
        _finish(ctx, out, onesided, inverse)
        return
    if not ctx.has_input(2):
        axis = -2
    else:
        axis_t = ctx.input_data(2)
        if axis_t.dims:
            raise fail_shape("axis input must be a scalar.")
        axis = D.int64_of_float(scalar_value(axis_t))
    _check_axis(axis, rank)
    idx = axis if axis >= 0 else axis + rank
    if ctx.has_input(1):
        length = ctx.input_data(1)
        if length is None:
            if type(out[idx]) is int:
                out[idx] = None
        else:
            if length.dims:
                raise fail_shape("dft_length input must be a scalar.")
            value = D.int64_of_float(scalar_value(length))
            out[idx] = (value >> 1) + 1 if (onesided and not inverse) else value
    elif onesided:
        out[idx] = _onesided_length(out[idx], inverse)
    _finish(ctx, out, onesided, inverse)


@infers("STFT", 17)
def stft(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_input_shape(ctx, 0):
        return
    shape = C.input_shape(ctx, 0)
    if len(shape) < 2:
        raise fail_shape("First input should have at least 2 dimensions in ", ctx.display_name(), ".")
    signal = shape[1]
    if type(signal) is not int:
        return
    step_t = ctx.input_data(1)
    if step_t is None:
        return
    step = D.int64_of_float(scalar_value(step_t))
    frame_length = None
    if ctx.has_input(3):
        frame_length = ctx.input_data(3)
        if frame_length is None:
            return
    window = C.optional_input_shape(ctx, 2) if ctx.num_inputs >= 3 else None
    if window is None and frame_length is None:
        return
    if window is not None and frame_length is not None:
        if frame_length.dims:
            raise fail_shape("frame_length input must be scalar.")
        flen = D.int64_of_float(scalar_value(frame_length))
        if len(window) != 1:
            raise fail_shape("window input must have rank = 1.")
        if type(window[0]) is int and window[0] != flen:
            raise fail_type("If STFT has both a window input and frame_length specified, the dimension of the "
                            "window must match the frame_length specified!")
        size = flen
    elif window is not None:
        if len(window) != 1:
            raise fail_shape("window input must have rank = 1.")
        if type(window[0]) is not int:
            return
        size = window[0]
    else:
        assert frame_length is not None  # window is None here, and both None returned above
        if frame_length.dims:
            raise fail_shape("frame_length input must be scalar.")
        size = D.int64_of_float(scalar_value(frame_length))
    bins = (size >> 1) + 1 if _flag(ctx, "onesided") else size
    f32 = D.f32
    # (int64 arithmetic, as the reference: a size of INT64_MIN wraps the difference)
    n_dfts = D.int64_of_float(f32(D.float_div(f32(float(D.wrap64(signal - size))), f32(float(step))))) + 1
    batch = shape[0] if type(shape[0]) is int else None
    C.set_output_shape(ctx, 0, (batch, n_dfts, bins, 2))
