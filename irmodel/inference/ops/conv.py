"""Convolution and pooling: Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv,
AveragePool, MaxPool, LpPool, the global pools, MaxRoiPool, MaxUnpool.

`conv_pool_shape` is the one output-size rule (three generations of it: opset 1-11,
11/19, and 22, which differ only in how ``ceil_mode`` rounds).
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..registry import infers, no_inference
from ..types import TensorType
from .elementwise import set_tensor_shape, tensor_shape

INT32_T, INT64_T = 6, 7
LEGACY, V19, V22 = 1, 19, 22  # generations of the rule


def _positive_list(ctx, name: str, n: int, default: int, what: str):
    values = C.attr_ints(ctx, name)
    if values is None:
        return [default] * n
    if len(values) != n:
        raise fail_shape("Attribute ", name, " has incorrect size")
    if any(v <= 0 for v in values):
        raise fail_shape("Attribute ", name, " must only contain positive values")
    return values


def conv_pool_shape(ctx, use_dilation: bool, require_kernel: bool, x: int, w: int, generation: int) -> None:
    """``convPoolShapeInference``: the output shape of a convolution or a pooling."""
    if not C.has_input_shape(ctx, x):
        return
    if not require_kernel and not C.has_input_shape(ctx, w):
        return
    shape = tensor_shape(ctx, x)
    if len(shape) < 3:
        raise fail_shape("Input tensor must have at least 3 dimensions")
    n = len(shape) - 2
    if use_dilation and C.attr_ints(ctx, "dilations") is not None:
        dilations = _positive_list(ctx, "dilations", n, 1, "dilations")
    else:
        dilations = [1] * n
    strides = _positive_list(ctx, "strides", n, 1, "strides")
    kernel = C.attr_ints(ctx, "kernel_shape")
    if kernel is not None:
        if len(kernel) != n:
            raise fail_shape("Attribute kernel_shape has incorrect size")
    elif require_kernel:
        raise fail_shape("Attribute kernel_shape must be specified")
    else:
        kernel = []
        for d in tensor_shape(ctx, w)[2:]:
            if type(d) is not int:
                return
            kernel.append(d)
        if len(kernel) != n:
            raise fail_shape("Number of spatial dimensions in the weight tensor (", len(kernel),
                             ") does not match the number of spatial dimensions in the input tensor (", n, ").")
    if any(k <= 0 for k in kernel):
        raise fail_shape("Attribute kernel_shape must only contain positive values")
    effective = [D.checked_add(D.checked_mul(D.checked_sub(k, 1), d), 1) for k, d in zip(kernel, dilations)]
    pads = C.attr_ints(ctx, "pads")
    if pads is not None:
        if len(pads) != n * 2:
            raise fail_shape("Attribute pads has incorrect size")
        if any(p < 0 for p in pads):
            raise fail_shape("Attribute pads must not contain negative values")
    else:
        pads = [0] * (2 * n)
        auto_pad = ctx.attr("auto_pad")
        mode = bytes(auto_pad.s) if auto_pad is not None else None
        if auto_pad is not None and mode != b"VALID":
            for i in range(n):
                residual = 0
                stride = strides[i]
                if stride > 1:
                    d = shape[2 + i]
                    if type(d) is not int:
                        continue
                    residual = d
                    if residual < 0:
                        continue
                    residual %= stride
                total = D.checked_sub(effective[i], stride if residual == 0 else residual)
                total = max(total, 0)
                small = total >> 1
                big = D.checked_sub(total, small)
                if mode == b"SAME_UPPER":
                    pads[i], pads[i + n] = small, big
                elif mode == b"SAME_LOWER":
                    pads[i], pads[i + n] = big, small
    out = [shape[0]]
    if require_kernel:
        out.append(shape[1])
    else:
        ws = C.input_shape(ctx, w)
        if len(ws) < 1:
            raise fail_shape("Second input tensor has wrong dimension")
        out.append(ws[0])
    k = len(kernel)
    ceil_mode = C.attr_int(ctx, "ceil_mode", 0)
    for i in range(k):
        d = shape[2 + i]
        if type(d) is not int:
            out.append(None)
            continue
        stride = strides[i]
        if generation == V22:
            eff_in = D.checked_add(D.checked_add(d, pads[i]), pads[i + k])
            num = D.checked_sub(eff_in, effective[i])
            if ceil_mode:
                num = D.checked_add(num, D.checked_sub(stride, 1))
            size = D.checked_add(D.checked_div(num, stride), 1)
            if ceil_mode == 1 and D.checked_mul(D.checked_sub(size, 1), stride) >= D.checked_add(d, pads[i]):
                size -= 1
        else:
            eff_in = D.checked_add(D.checked_add(d, pads[i]), pads[i + k])
            gap = D.checked_sub(eff_in, effective[i])
            if ceil_mode == 1:
                positions = D.checked_add(D.checked_div(gap, stride), 1 if D.trunc_rem(gap, stride) > 0 else 0)
            else:
                positions = D.checked_div(gap, stride)
            size = D.checked_add(1, positions)
        out.append(size)
    set_tensor_shape(ctx, 0, out)
    if ctx.num_outputs > 1:
        second = ctx.output(1)
        elem = second.elem if type(second) is TensorType else None
        ctx.set_output(1, TensorType(elem, tuple(out)))


def _conv(generation: int):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        conv_pool_shape(ctx, True, False, 0, 1, generation)
    return infer


infers("Conv", 1)(_conv(LEGACY))
infers("Conv", 11)(_conv(V19))
infers("Conv", 22)(_conv(V22))
infers("DeformConv", 19)(_conv(V19))
infers("DeformConv", 22)(_conv(V22))


@infers("ConvInteger", 10)
def conv_integer(ctx) -> None:
    x, w = ctx.input_type(0), ctx.input_type(1)
    if x is None or w is None or type(x) is not TensorType or type(w) is not TensorType:
        raise fail_type("inputs are expected to have tensor type and output type should not be null.")
    out = ctx.output(0)
    ctx.set_output(0, TensorType(INT32_T, out.shape if type(out) is TensorType else None))
    conv_pool_shape(ctx, True, False, 0, 1, V22)


@infers("QLinearConv", 10)
def qlinear_conv(ctx) -> None:
    x, w = ctx.input_type(0), ctx.input_type(3)
    if x is None or w is None or type(x) is not TensorType or type(w) is not TensorType:
        raise fail_type("inputs are expected to have tensor type in ", ctx.display_name(), ".")
    xz = ctx.input_type(2)
    if xz is None or _tensor_elem(xz) != (x.elem or 0):
        raise fail_type("input and zero_point pair is expected to have be same type in ", ctx.display_name(), ".")
    wz = ctx.input_type(5)
    if wz is None or _tensor_elem(wz) != (w.elem or 0):
        raise fail_type("weight and zero_point pair is expected to have same type in ", ctx.display_name(), ".")
    C.propagate_elem(ctx, 7, 0)
    conv_pool_shape(ctx, True, False, 0, 3, V22)


def _tensor_elem(t) -> int:
    """``type.tensor_type().elem_type()``: 0 unless a tensor type."""
    return (t.elem or 0) if type(t) is TensorType else 0


# -- pooling --------------------------------------------------------------------------------------

def _pool(use_dilation: bool, generation: int, indices_output: bool = True):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if indices_output and ctx.num_outputs > 1:
            out = ctx.output(1)
            if out is None or type(out) is TensorType:
                ctx.set_output(1, TensorType(INT64_T, out.shape if out is not None else None))
        conv_pool_shape(ctx, use_dilation, True, 0, 1, generation)
    return infer


infers(("AveragePool", "MaxPool"), 1)(_pool(False, LEGACY))
infers("AveragePool", 10)(_pool(False, LEGACY))
infers("AveragePool", 11)(_pool(True, LEGACY))
infers("MaxPool", 10)(_pool(True, LEGACY))
infers("AveragePool", 19)(_pool(True, V19))
infers("MaxPool", 12)(_pool(True, V19))
infers(("AveragePool", "MaxPool"), 22)(_pool(True, V22))
no_inference("LpPool", 1)
infers("LpPool", 2)(_pool(False, LEGACY, False))
infers("LpPool", 18)(_pool(True, V19, False))
infers("LpPool", 22)(_pool(True, V22, False))


@infers(("GlobalAveragePool", "GlobalMaxPool"), 1)
@infers("GlobalLpPool", 2)
def global_pool(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = tensor_shape(ctx, 0)
    if len(shape) < 2:
        return
    set_tensor_shape(ctx, 0, [shape[0], shape[1]] + [1] * (len(shape) - 2))


no_inference("GlobalLpPool", 1)


@infers(("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"), 22)
def global_pool22(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = tensor_shape(ctx, 0)
    if len(shape) < 2:
        return
    n = c = None
    s = C.input_shape(ctx, 0)  # unifyInputShapePrefix
    n, c = D.unify(s[0], n), D.unify(s[1], c)
    set_tensor_shape(ctx, 0, [n, c] + [1] * (len(shape) - 2))


@infers("MaxRoiPool", 1)
def max_roi_pool1(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 2):
        return
    shape = tensor_shape(ctx, 0)
    rois = tensor_shape(ctx, 1)
    if len(shape) < 4:
        raise fail_shape("Input tensor must have at least 4 dimensions")
    if len(rois) != 2:
        raise fail_shape("RoIs tensor must have 2 dimensions")
    pooled = _pooled_shape(ctx, len(shape) - 2)
    set_tensor_shape(ctx, 0, [rois[0], shape[1], pooled[0], pooled[1]])


def _pooled_shape(ctx, n: int) -> list:
    pooled = C.attr_ints(ctx, "pooled_shape")
    if pooled is None:
        raise fail_shape("Attribute pooled_shape must be specified")
    if len(pooled) != n:
        raise fail_shape("Attribute pooled_shape has incorrect length")
    if any(p <= 0 for p in pooled):
        raise fail_shape("Attribute pooled_shape must only contain positive values")
    return pooled


@infers("MaxRoiPool", 22)
def max_roi_pool22(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 2):
        return
    _n, c, _h, _w = C.unify_input_shape(ctx, 0, [None] * 4)
    num_rois, _five = C.unify_input_shape(ctx, 1, [None, 5])
    pooled = _pooled_shape(ctx, 2)
    C.set_output_shape(ctx, 0, (num_rois, c, pooled[0], pooled[1]))


@infers("MaxUnpool", 9)
def max_unpool(ctx) -> None:
    if ctx.num_inputs not in (2, 3):
        raise fail_type("MaxUnpool op must have either two or three inputs.")
    C.propagate_elem(ctx, 0, 0)
    if not C.has_input_shape(ctx, 0):
        return
    shape = tensor_shape(ctx, 0)
    if len(shape) < 2:
        raise fail_shape("Input tensor X must have at least 2 dimensions.")
    n = len(shape) - 2
    pads = C.attr_ints(ctx, "pads")
    if pads is None:
        pads = [0] * (2 * n)
    elif len(pads) != 2 * n:
        raise fail_shape("Attribute pads has incorrect size.")
    strides = C.attr_ints(ctx, "strides")
    if strides is None:
        strides = [1] * n
    elif len(strides) != n:
        raise fail_shape("Attribute strides has incorrect size.")
    kernel = C.attr_ints(ctx, "kernel_shape")
    if kernel is None:
        raise fail_shape("Attribute kernel_shape must be specified.")
    if len(kernel) != n:
        raise fail_shape("Attribute kernel_shape has incorrect size.")
    if ctx.num_inputs == 3:
        if C.has_input_shape(ctx, 2):
            os = C.input_shape(ctx, 2)
            if len(os) != 1:
                raise fail_type("'output_shape' must be rank 1 tensor.")
            if type(os[0]) is int and D.int32(os[0]) != len(shape):
                raise fail_shape("'output_shape' must have same number of elements as the shape of input tensor X.")
        return
    if not C.has_input_shape(ctx, 1):
        return
    indices = tensor_shape(ctx, 1)
    if len(indices) < 2:
        raise fail_shape("Indices tensor I must have at least 2 dimensions.")
    out = [shape[0], indices[1]]
    k = len(kernel)
    for i in range(k):
        d = shape[2 + i]
        if type(d) is not int:
            out.append(None)
            continue
        v = D.checked_mul(strides[i], D.checked_sub(d, 1))
        v = D.checked_add(v, kernel[i])
        v = D.checked_sub(v, pads[i])
        v = D.checked_sub(v, pads[i + k])
        out.append(v)
    set_tensor_shape(ctx, 0, out)


# -- ConvTranspose ---------------------------------------------------------------------------------------

def _conv_transpose(check_auto_pad_conflict: bool):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if not C.has_n_input_shapes(ctx, 2):
            return
        group = C.attr_int(ctx, "group", 1)
        if group <= 0:
            raise fail_shape("Attribute group must be > 0 for ConvTranspose. group=", group, ".")
        shape = tensor_shape(ctx, 0)
        if len(shape) < 3:
            raise fail_shape("Input tensor must have at least 3 dimensions (N x C x D1...Dn). Got: ", len(shape))
        if type(shape[1]) is int and D.trunc_rem(shape[1], group) != 0:
            raise fail_shape("Input channels C must be divisible by group for ConvTranspose. C=", shape[1],
                             " group=", group, ".")
        weight = tensor_shape(ctx, 1)
        if len(weight) < 3:
            raise fail_shape("Weight tensor must have at least 3 dimensions (C x M/group x k1...kn). Got: ",
                             len(weight))
        n = len(shape) - 2
        dilations = _positive_list(ctx, "dilations", n, 1, "dilations")
        strides = _positive_list(ctx, "strides", n, 1, "strides")
        kernel = C.attr_ints(ctx, "kernel_shape")
        if kernel is not None:
            if len(kernel) != n:
                raise fail_shape("Attribute kernel_shape has incorrect size")
        else:
            kernel = []
            for d in weight[2:]:
                if type(d) is not int:
                    return
                kernel.append(d)
            if len(kernel) != n:
                raise fail_shape("Weight tensor spatial rank does not match input tensor spatial rank")
        if any(k <= 0 for k in kernel):
            raise fail_shape("Attribute kernel_shape must only contain positive values")
        effective = [D.checked_add(D.checked_mul(D.checked_sub(k, 1), d), 1) for k, d in zip(kernel, dilations)]
        pads = C.attr_ints(ctx, "pads")
        auto_pad = ctx.attr("auto_pad")
        mode = bytes(auto_pad.s) if auto_pad is not None else None
        if pads is not None:
            if len(pads) != n * 2:
                raise fail_shape("Attribute pads has incorrect size")
            if any(p < 0 for p in pads):
                raise fail_shape("Attribute pads must not contain negative values")
            if check_auto_pad_conflict and auto_pad is not None and mode != b"NOTSET":
                raise fail_shape("The pads attribute cannot be used simultaneously with auto_pad attribute")
        else:
            pads = [0] * (2 * n)
            if auto_pad is not None and mode != b"VALID":
                for i in range(n):
                    total = max(D.checked_sub(effective[i], strides[i]), 0)
                    small = total >> 1
                    big = D.checked_sub(total, small)
                    if mode == b"SAME_UPPER":
                        pads[i], pads[i + n] = small, big
                    elif mode == b"SAME_LOWER":
                        pads[i], pads[i + n] = big, small
        output_shape = C.attr_ints(ctx, "output_shape")
        if output_shape is not None:
            if len(output_shape) != n:
                raise fail_shape("Attribute output_shape has incorrect size")
            if any(s < 0 for s in output_shape):
                raise fail_shape("Attribute output_shape must not contain negative values")
        output_padding = C.attr_ints(ctx, "output_padding")
        if output_padding is not None:
            if len(output_padding) != n:
                raise fail_shape("Attribute output_padding has incorrect size")
            if any(p < 0 for p in output_padding):
                raise fail_shape("Attribute output_padding must not contain negative values")
        else:
            output_padding = [0] * n
        out = [shape[0], D.mul_int(weight[1], group)]
        if output_shape is not None:
            for i, v in enumerate(output_shape):
                d = shape[i + 2]
                if type(d) is int and v < d:
                    break
                out.append(v)
        else:
            for i in range(n):
                d = shape[i + 2]
                if type(d) is int:
                    v = D.checked_mul(strides[i], D.checked_sub(d, 1))
                    v = D.checked_add(v, output_padding[i])
                    v = D.checked_add(v, effective[i])
                    v = D.checked_sub(v, pads[i])
                    v = D.checked_sub(v, pads[i + n])
                    out.append(v)
                else:
                    out.append(None)
        set_tensor_shape(ctx, 0, out)
    return infer


infers("ConvTranspose", 1)(_conv_transpose(False))
infers("ConvTranspose", 11)(_conv_transpose(True))

