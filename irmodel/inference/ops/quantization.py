"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
QLinearMatMul (QLinearConv and ConvInteger live with the convolutions).
"""

from __future__ import annotations

from .. import common as C
from ..errors import fail_type
from ..registry import infers
from ..types import TensorType
from .linalg import matmul_shape

FLOAT, UINT8, INT32 = 1, 2, 6


def _same_shape_as_input0(ctx) -> None:
    if C.has_input_shape(ctx, 0):
        C.set_output_shape(ctx, 0, C.input_shape(ctx, 0))


@infers("QuantizeLinear", 10)
def quantize10(ctx) -> None:
    if ctx.has_input(2):
        if ctx.input_type(2) is not None:
            C.propagate_elem(ctx, 2, 0)
    else:
        C.set_output_elem(ctx, 0, UINT8)
    _same_shape_as_input0(ctx)


@infers("QuantizeLinear", 21)
def quantize21(ctx) -> None:
    zp = ctx.input_type(2) if ctx.has_input(2) else None
    dtype = C.attr_int(ctx, "output_dtype", 0)
    if zp is not None:
        zp_elem = C.tensor_elem(zp)
        if dtype != 0 and dtype != zp_elem:
            from ..typestr import elem_name_or_code  # noqa: PLC0415
            raise fail_type("output_dtype ", elem_name_or_code(dtype), " does not match y_zero_point type ",
                            elem_name_or_code(zp_elem), ".")
        C.propagate_elem(ctx, 2, 0)
    elif dtype != 0:
        C.propagate_elem_from_attr(ctx, "output_dtype", 0)
    elif not ctx.has_input(2):
        C.set_output_elem(ctx, 0, UINT8)
    _same_shape_as_input0(ctx)


@infers("DequantizeLinear", 10)
def dequantize10(ctx) -> None:
    out = ctx.output(0)
    ctx.set_output(0, TensorType(FLOAT, out.shape if type(out) is TensorType else None))
    _same_shape_as_input0(ctx)


@infers("DequantizeLinear", 19)
def dequantize19(ctx) -> None:
    C.propagate_elem(ctx, 1, 0)
    _same_shape_as_input0(ctx)


@infers("DequantizeLinear", 23)
def dequantize23(ctx) -> None:
    if C.attr_int(ctx, "output_dtype", 0) != 0:
        C.propagate_elem_from_attr(ctx, "output_dtype", 0)
    else:
        C.propagate_elem(ctx, 1, 0)
    _same_shape_as_input0(ctx)


@infers("DynamicQuantizeLinear", 11)
def dynamic_quantize(ctx) -> None:
    C.set_output_elem(ctx, 0, UINT8)
    C.set_output_elem(ctx, 1, FLOAT)
    C.set_output_elem(ctx, 2, UINT8)
    C.set_output_shape(ctx, 1, ())
    C.set_output_shape(ctx, 2, ())
    _same_shape_as_input0(ctx)


@infers("MatMulInteger", 10)
def matmul_integer(ctx) -> None:
    a, b = ctx.input_type(0), ctx.input_type(1)
    if a is None or b is None or type(a) is not TensorType or type(b) is not TensorType:
        raise fail_type("inputs are expected to have tensor type and output type should not be null.")
    out = ctx.output(0)
    ctx.set_output(0, TensorType(INT32, out.shape if type(out) is TensorType else None))
    matmul_shape(ctx, 0, 1)


@infers("QLinearMatMul", 10)
def qlinear_matmul(ctx) -> None:
    a, b = ctx.input_type(0), ctx.input_type(3)
    if a is None or b is None or type(a) is not TensorType or type(b) is not TensorType:
        raise fail_type("inputs are expected to have tensor type.")
    az = ctx.input_type(2)
    if az is None or _elem(az) != (a.elem or 0):
        raise fail_type("input and zero_point pair is expected to have be same type.")
    bz = ctx.input_type(5)
    if bz is None or _elem(bz) != (b.elem or 0):
        raise fail_type("input and zero_point pair is expected to have same type.")
    C.propagate_elem(ctx, 7, 0)
    matmul_shape(ctx, 0, 3)


def _elem(t) -> int:
    return (t.elem or 0) if type(t) is TensorType else 0
