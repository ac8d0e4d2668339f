"""Sequences and optionals: Sequence*, SplitToSequence, ConcatFromSequence, SequenceMap,
Optional, OptionalGetElement, OptionalHasElement.

The reference reads nested fields without checking the kind (``sequence_type()
.elem_type().tensor_type()`` of any value): `_seq_tensor` and `_tensor` give those
defaults (element type 0, no shape) the same way.
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..merge import union_shape_into
from ..registry import infers
from ..tensordata import INT32, INT64
from ..types import UNSET, Dim, OptionalType, SequenceType, TensorType, type_from_proto

BOOL, INT64_T, FLOAT = 9, 7, 1
_EMPTY = TensorType(None, None)


def _tensor(t):
    """``type.tensor_type()``: the tensor type, or an empty one."""
    return t if type(t) is TensorType else _EMPTY


def _seq_tensor(t):
    """``type.sequence_type().elem_type().tensor_type()``."""
    if type(t) is SequenceType and type(t.elem) is TensorType:
        return t.elem
    return _EMPTY


def _seq_elem(t):
    """``type.sequence_type().elem_type()`` as a whole type (UNSET when absent)."""
    if type(t) is SequenceType and t.elem is not None:
        return t.elem
    return UNSET


def _required(ctx, i: int):
    t = ctx.input_type(i)
    if t is None:
        raise fail_type("Input type for input at index ", i, " is null. Type info is expected.")
    return t


@infers("SequenceEmpty", 11)
def sequence_empty(ctx) -> None:
    a = ctx.attr("dtype")
    elem = FLOAT
    if a is not None:
        if not a.HasField("i"):
            raise fail_type("Attribute dtype should be of integer type and specify a type.")
        elem = D.int32(a.i)
    ctx.set_output(0, SequenceType(TensorType(elem, None)))


@infers("SequenceConstruct", 11)
def sequence_construct(ctx) -> None:
    n = ctx.num_inputs
    if n < 1:
        raise fail_type("SequenceConstruct is expected to have at least 1 input.")
    elems = []
    for i in range(n):
        t = _required(ctx, i)
        elems.append(_tensor(t).elem or 0)
    if any(e != elems[0] for e in elems):
        raise fail_type("Element type of inputs are expected to be the same.")
    out = TensorType(elems[0], None)
    if C.has_n_input_shapes(ctx, n):
        out = TensorType(elems[0], _tensor(ctx.input_type(0)).shape or ())
        for i in range(1, n):
            out = union_shape_into(_tensor(ctx.input_type(i)).shape or (), out)
    ctx.set_output(0, SequenceType(out))


@infers("SequenceInsert", 11)
def sequence_insert(ctx) -> None:
    s, t = ctx.input_type(0), ctx.input_type(1)
    if s is None or t is None:
        raise fail_type("Input Sequence and Tensor are expected to have type info. Current type is null.")
    seq_elem = _seq_tensor(s).elem or 0
    tensor_elem = _tensor(t).elem or 0
    if seq_elem != tensor_elem:
        raise fail_type("Input Sequence and Tensor are expected to have the same elem type. Sequence=", seq_elem,
                        " Tensor=", tensor_elem)
    out = TensorType(seq_elem, None)
    if C.has_n_input_shapes(ctx, 2):
        out = TensorType(seq_elem, _seq_tensor(s).shape or ())
        out = union_shape_into(_tensor(t).shape or (), out)
    ctx.set_output(0, SequenceType(out))


@infers("SequenceAt", 11)
def sequence_at(ctx) -> None:
    ctx.set_output(0, _seq_elem(_required(ctx, 0)))


@infers("SequenceErase", 11)
def sequence_erase(ctx) -> None:
    ctx.set_output(0, _required(ctx, 0))


@infers("SequenceLength", 11)
def sequence_length(ctx) -> None:
    ctx.set_output(0, TensorType(INT64_T, ()))


@infers("ConcatFromSequence", 11)
def concat_from_sequence(ctx) -> None:
    s = _required(ctx, 0)
    elem_t = _seq_tensor(s)
    ctx.set_output(0, TensorType(elem_t.elem or 0, None))
    if not C.has_input_shape(ctx, 0):
        return
    a = ctx.attr("axis")
    if a is None:
        raise fail_shape("Required attribute axis is missing")
    axis = D.int32(a.i)
    na = ctx.attr("new_axis")
    new_axis = D.int32(na.i) if na is not None else 0
    shape = elem_t.shape or ()
    rank = len(shape)
    if new_axis not in (0, 1):
        raise fail_shape("new_axis must be either 0 or 1")
    upper = rank if new_axis == 1 else rank - 1
    lower = -rank - 1 if new_axis == 1 else -rank
    if axis < lower or axis > upper:
        raise fail_shape("Invalid value of attribute 'axis'. Accepted range=[", lower, ", ", upper, "], Value=", axis)
    if axis < 0:
        axis += upper + 1
    out: list[Dim] = []
    for i in range(upper + 1):
        if i == axis:
            out.append(None)
        else:
            out.append(shape[i - 1 if (i > axis and new_axis) else i])
    ctx.set_output(0, TensorType(elem_t.elem or 0, tuple(out)))


@infers("SplitToSequence", 11)
def split_to_sequence(ctx) -> None:
    t = _required(ctx, 0)
    elem = _tensor(t).elem or 0
    ctx.set_output(0, SequenceType(TensorType(elem, None)))
    if not C.has_input_shape(ctx, 0):
        return
    shape = _tensor(t).shape or ()
    r = len(shape)
    axis = D.int32(C.attr_int(ctx, "axis", 0))
    if axis < -r or axis > r - 1:
        raise fail_shape("Invalid value of attribute 'axis'. Rank=", r, " Value=", axis)
    if axis < 0:
        axis += r
    split_size = 1
    keepdims = 1
    if ctx.num_inputs == 1:
        a = ctx.attr("keepdims")
        if a is not None:
            keepdims = a.i
    else:
        split_size = _split_size(ctx, shape, axis)
    if keepdims:
        out = list(shape)
        out[axis] = split_size if split_size > 0 else None
    else:
        out = [d for i, d in enumerate(shape) if i != axis]
    ctx.set_output(0, SequenceType(TensorType(elem, tuple(out))))


def _split_size(ctx, shape, axis: int) -> int:
    """The size of every piece when the ``split`` input decides it, else -1."""
    if not C.has_input_shape(ctx, 1):
        return -1
    data = ctx.input_data(1)
    if data is None or not data.proto.HasField("data_type"):
        return -1
    if data.data_type == INT64:
        sizes = data.values(INT64)
    elif data.data_type == INT32:
        sizes = data.values(INT32)
    else:
        raise fail_shape("Only supports `int32_t` or `int64_t` inputs for split")
    if not sizes:
        raise fail_shape("Input 'split' can not be empty.")
    d = shape[axis]
    if type(d) is not int:
        return -1
    if len(C.input_shape(ctx, 1)) == 0:
        if sizes[0] <= 0:
            raise fail_shape("Scalar input 'split' must be greater than zero.")
        from ..dims import trunc_rem  # noqa: PLC0415
        return sizes[0] if trunc_rem(d, sizes[0]) == 0 else -1
    total = sum(sizes)
    if d != total:
        raise fail_shape("Sum of split values not equal to 'input' dim size on 'axis'. 'axis' dim size=", d,
                         " sum of split values=", total)
    return sizes[0] if all(s == sizes[0] for s in sizes) else -1


@infers("SequenceMap", 17)
def sequence_map(ctx) -> None:
    inputs = []
    for i in range(ctx.num_inputs):
        t = ctx.input_type(i)
        if t is None:
            raise fail_type("Input ", i, " expected to have type info")
        if type(t) is SequenceType:
            inputs.append(_seq_elem(t))
        else:
            if i == 0:
                raise fail_type("Input ", i, " expected to be a sequence type")
            inputs.append(t)
    outs = ctx.graph_inferencer("body").infer(inputs, [None] * ctx.num_inputs)
    if outs:
        if len(outs) != ctx.num_outputs:
            raise fail_type("Graph attribute inferencing returned type information for ", len(outs),
                            " outputs. Expected ", ctx.num_outputs)
        for i, t in enumerate(outs):
            ctx.set_output(i, SequenceType(t))


# -- optional ---------------------------------------------------------------------------------------

@infers("Optional", 15)
def optional(ctx) -> None:
    if ctx.num_outputs != 1:
        raise fail_type("Optional is expected to have an output.")
    a = ctx.attr("type")
    if ctx.num_inputs == 0 and a is not None:
        if not a.HasField("tp"):
            raise fail_type("Attribute 'type' should be a TypeProto and it should specify a type.")
        ctx.set_output(0, OptionalType(type_from_proto(a.tp)))
    elif ctx.num_inputs == 1:
        t = ctx.input_type(0)
        if t is None:
            raise fail_type("Input type is null. Type information is expected for the input.")
        ctx.set_output(0, OptionalType(t))
    else:
        raise fail_type("Optional is expected to have either an input or the type attribute set.")


def _optional_get(lenient: bool):
    def infer(ctx) -> None:
        if ctx.num_inputs != 1:
            raise fail_type("OptionalGetElement must have an input element.")
        t = ctx.input_type(0)
        if t is None:
            raise fail_type("Input type is null. Input must have Type information.")
        if type(t) is OptionalType:
            if t.elem is None:
                raise fail_type("Optional-type input must contain an element with type information.")
            ctx.set_output(0, t.elem)
        elif lenient:
            C.propagate_shape_and_type(ctx)
        else:
            raise fail_type("Input must be an optional-type value containing an element with type information.")
    return infer


infers("OptionalGetElement", 15)(_optional_get(False))
infers("OptionalGetElement", 18)(_optional_get(True))


def _optional_has(allow_no_input: bool):
    def infer(ctx) -> None:
        n = ctx.num_inputs
        if n != 1 and not (allow_no_input and n == 0):
            raise fail_type("OptionalHasElement is expected to have ", "0 or 1 input." if allow_no_input
                            else "1 input.")
        if ctx.num_outputs != 1:
            raise fail_type("OptionalHasElement is expected to have 1 output.")
        ctx.set_output(0, TensorType(BOOL, ()))
    return infer


infers("OptionalHasElement", 15)(_optional_has(False))
infers("OptionalHasElement", 18)(_optional_has(True))
