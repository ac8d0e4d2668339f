"""Operators that make tensors: Constant, ConstantOfShape, Range, EyeLike, the random
generators, the window functions and MelWeightMatrix.
"""

from __future__ import annotations

import math

from .. import common as C
from .. import dims as D
from ..context import A_INTS, A_SPARSE_TENSOR, A_TENSOR
from ..errors import FatalError, fail_shape, fail_type
from ..registry import infers
from ..tensordata import DOUBLE, FLOAT, INT32, INT64
from ..types import TensorType
from .elementwise import set_tensor_shape

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def _append_dims(ctx, o: int, dims) -> None:
    """``updateOutputShape(ctx, o, tensor)``: the tensor's dims appended to the output shape."""
    current = C.output_shape(ctx, o) or ()
    C.set_output_shape(ctx, o, tuple(current) + tuple(dims))


def scalar_value(tensor) -> float:
    """``GetScalarValueFromTensor``: the first value of a float/double/int32/int64 tensor."""
    code = tensor.data_type
    if code not in (FLOAT, DOUBLE, INT32, INT64):
        raise fail_shape("Unsupported input data type of ", code)
    values = tensor.values(code)
    if not values:
        raise FatalError("vector::_M_range_check: the tensor has no value")
    return values[0]


# -- Constant ---------------------------------------------------------------------------------------

@infers("Constant", 1)
def constant1(ctx) -> None:
    a = ctx.attr("value")
    if a is None or not a.HasField("t"):
        return
    C.set_output_elem(ctx, 0, a.t.data_type)
    _append_dims(ctx, 0, a.t.dims)


@infers("Constant", 9)
def constant9(ctx) -> None:
    a = ctx.attr("value")
    if a is None or not a.HasField("t"):
        raise fail_shape("Attribute 'value' of Constant node must exist with 'Tensor' data.")
    C.set_output_elem(ctx, 0, a.t.data_type)
    _append_dims(ctx, 0, a.t.dims)


@infers("Constant", 11)
def constant11(ctx) -> None:
    value = ctx.attr("value")
    sparse = ctx.attr("sparse_value")
    if value is not None and sparse is not None:
        raise fail_shape("Only one of the attributes 'value' or 'sparse_value' must be specified for a Constant "
                         "node.")
    if value is not None:
        C.set_output_elem(ctx, 0, value.t.data_type)
        _append_dims(ctx, 0, value.t.dims)
        return
    if sparse is not None:
        st = sparse.sparse_tensor
        C.set_output_elem(ctx, 0, st.values.data_type)
        _append_dims(ctx, 0, st.dims)
        return
    raise fail_shape("One of the attributes 'value' or 'sparse_value' must be specified for a Constant node.")


_VALUE_ATTRS = ("value", "sparse_value", "value_int", "value_ints", "value_float", "value_floats", "value_string",
                "value_strings")


@infers("Constant", 12)
def constant12(ctx) -> None:
    present = {n: ctx.attr(n) for n in _VALUE_ATTRS if ctx.attr(n) is not None}
    if len(present) != 1:
        raise fail_shape("One and only one of the attributes 'value', 'value_*' or 'sparse_value' must be "
                         "specified for a Constant node.")
    (name, a), = present.items()
    if name == "value":
        C.set_output_elem(ctx, 0, a.t.data_type)
        _append_dims(ctx, 0, a.t.dims)
    elif name in ("value_int", "value_float", "value_string"):
        field = {"value_int": "i", "value_float": "f", "value_string": "s"}[name]
        if not a.HasField(field):
            what = {"i": "an integer", "f": "a float", "s": "a string"}[field]
            raise fail_shape("Attribute '", name, "' expect ", what, ".")
        C.set_output_elem(ctx, 0, {"i": 7, "f": 1, "s": 8}[field])
        C.set_output_shape(ctx, 0, ())
    elif name == "value_ints":
        C.set_output_elem(ctx, 0, 7)
        _append_dims(ctx, 0, (len(a.ints),))
    elif name == "value_floats":
        C.set_output_elem(ctx, 0, 1)
        _append_dims(ctx, 0, (len(a.floats),))
    elif name == "value_strings":
        C.set_output_elem(ctx, 0, 8)
        _append_dims(ctx, 0, (len(a.strings),))
    else:
        st = a.sparse_tensor
        C.set_output_elem(ctx, 0, st.values.data_type)
        _append_dims(ctx, 0, st.dims)


# -- ConstantOfShape, Range, EyeLike ------------------------------------------------------------------

def elem_from_dtype_attr(ctx, a, o: int) -> None:
    """``propagateElemTypeFromDtypeToOutput(ctx, attr, o)``: a 1-element tensor attribute's type."""
    if a.type == A_TENSOR:
        if len(a.t.dims) != 1:
            raise fail_type("Attribute expected to have a one-dim tensor in ", ctx.display_name(), ".")
        C.set_output_elem(ctx, o, a.t.data_type)
    elif a.type == A_SPARSE_TENSOR:
        if len(a.sparse_tensor.dims) != 1:
            raise fail_type("Attribute expected to have a one-dim sparse tensor in ", ctx.display_name(), ".")
        from ..types import SparseTensorType  # noqa: PLC0415
        C.set_output_elem(ctx, o, a.sparse_tensor.values.data_type, SparseTensorType)
    else:
        raise fail_type("Attribute expected to have tensor or sparse tensor type in ", ctx.display_name(), ".")


@infers("ConstantOfShape", 9)
def constant_of_shape(ctx) -> None:
    a = ctx.attr("value")
    if a is not None:
        elem_from_dtype_attr(ctx, a, 0)
    else:
        C.set_output_elem(ctx, 0, 1)
    shape = C.shape_input(ctx, 0, fail_if_negative=True)
    if shape is not None:
        set_tensor_shape(ctx, 0, shape)


def range_length(start, limit, delta, code: int) -> int:
    """``ceil((limit - start) / delta)`` as the reference computes it, clamped at 0."""
    diff = limit - start
    if code == FLOAT:
        diff = D.f32(diff)
    elif code == INT32:
        diff = ((diff + (1 << 31)) % (1 << 32)) - (1 << 31)
    q = D.float_div(float(diff), float(delta))
    if math.isnan(q) or math.isinf(q):
        return 0
    n = math.ceil(q)
    if n > _INT64_MAX or n < _INT64_MIN:
        return 0
    return max(n, 0)


@infers("Range", 11)
def range_(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    start, limit, delta = ctx.input_data(0), ctx.input_data(1), ctx.input_data(2)
    length = None
    if start is not None and limit is not None and delta is not None:
        code = start.data_type
        if code != limit.data_type or code != delta.data_type:
            raise fail_shape("All inputs to 'Range' op must be of the same type")
        if code in (FLOAT, INT32, INT64, DOUBLE):
            if start.dims or limit.dims or delta.dims:
                raise fail_shape("Input to 'Range' op should be scalars (Tensor with only one element and shape "
                                 "empty)")
            s, lim, dl = start.values(code), limit.values(code), delta.values(code)
            length = range_length(s[0], lim[0], dl[0], code)
    out = ctx.output(0)
    elem = out.elem if type(out) is TensorType else None
    ctx.set_output(0, TensorType(elem, (length,)))


@infers("EyeLike", 9)
def eye_like(ctx) -> None:
    if ctx.attr("dtype") is not None:
        C.propagate_elem_from_attr(ctx, "dtype", 0)
    else:
        C.propagate_elem(ctx, 0, 0)
    if C.has_input_shape(ctx, 0):
        if len(C.input_shape(ctx, 0)) != 2:
            raise fail_shape("Input tensor must be 2-dimensional")
    C.propagate_shape(ctx, 0, 0)


# -- random ------------------------------------------------------------------------------------------------

def shape_from_attr(ctx, name: str, o: int) -> None:
    """``propagateShapeFromAttributeToOutput``: an ints attribute is the output's shape."""
    a = ctx.attr(name)
    if a is None or not a.HasField("type") or a.type != A_INTS:
        raise fail_shape("Attribute ", name, " should specify a shape in ", ctx.display_name(), ".")
    dims = list(a.ints)
    if any(d < 0 for d in dims):
        raise fail_shape("Negative values are not allowed in a shape specification in ", ctx.display_name(), ".")
    C.set_output_shape(ctx, o, dims)


@infers(("RandomNormal", "RandomUniform"), 1)
def random(ctx) -> None:
    C.propagate_elem_from_attr(ctx, "dtype", 0, 1)
    shape_from_attr(ctx, "shape", 0)


@infers(("RandomNormalLike", "RandomUniformLike"), 1)
@infers("Bernoulli", 15)
def random_like(ctx) -> None:
    if ctx.attr("dtype") is not None:
        C.propagate_elem_from_attr(ctx, "dtype", 0)
    else:
        C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    C.propagate_shape(ctx, 0, 0)


@infers("Multinomial", 7)
def multinomial(ctx) -> None:
    a = ctx.attr("dtype")
    dtype = 6
    if a is not None:
        dtype = a.i
        if dtype not in (6, 7):
            raise fail_type("Output type must be int32 or int64")
    C.set_output_elem(ctx, 0, dtype)
    batch = None
    if C.has_input_shape(ctx, 0):
        s = C.input_shape(ctx, 0)
        if len(s) != 2:
            raise fail_shape("Input tensor must have rank 2")
        batch = s[0]
    C.set_output_shape(ctx, 0, (batch, C.attr_int(ctx, "sample_size", 1)))


# -- windows ----------------------------------------------------------------------------------------------

def _output_datatype(ctx) -> int:
    v = C.attr_int(ctx, "output_datatype", 1)
    if v > 2147483647 or v < -2147483648:
        raise fail_shape("narrow: value ", v, " cannot be represented in target type")
    return v


@infers(("HannWindow", "HammingWindow", "BlackmanWindow"), 17)
def window(ctx) -> None:
    C.set_output_elem(ctx, 0, _output_datatype(ctx))
    if not C.has_input_shape(ctx, 0):
        return
    size = ctx.input_data(0)
    if size is None:
        return
    if size.dims:
        raise fail_shape("size input must be a scalar.")
    n = D.int64_of_float(scalar_value(size))
    if n <= 0:
        raise fail_shape("size input must be greater than 0.")
    C.set_output_shape(ctx, 0, (n,))


@infers("MelWeightMatrix", 17)
def mel_weight_matrix(ctx) -> None:
    C.set_output_elem(ctx, 0, _output_datatype(ctx))
    if not C.has_input_shape(ctx, 0) or not C.has_input_shape(ctx, 1):
        return
    bins, dft = ctx.input_data(0), ctx.input_data(1)
    if bins is None or dft is None:
        return
    if bins.dims:
        raise fail_shape("num_mel_bins input must be scalar.")
    nb = D.int64_of_float(scalar_value(bins))
    if dft.dims:
        raise fail_shape("dft_length input must be scalar.")
    nd = D.int64_of_float(scalar_value(dft))
    if nb > 0 and nd > 0:
        C.set_output_shape(ctx, 0, ((nd >> 1) + 1, nb))
