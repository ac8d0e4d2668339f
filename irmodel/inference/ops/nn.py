"""Neural-network layers other than convolution: normalizations, Dropout, LRN, the losses,
RoiAlign, NonMaxSuppression.
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..registry import infers, no_inference
from ..types import TensorType
from ..typestr import ELEM_NAMES
from .elementwise import same_as_input, set_tensor_shape, tensor_shape

BOOL, INT64_T = 9, 7

no_inference("BatchNormalization", 1)
no_inference("InstanceNormalization", 1)
no_inference("Dropout", 1)
infers("BatchNormalization", 6)(same_as_input)
infers("InstanceNormalization", 6)(same_as_input)
infers(("LRN", "LpNormalization"), 1)(same_as_input)
infers("Dropout", 6)(same_as_input)


@infers("BatchNormalization", 14)
def batch_norm14(ctx) -> None:
    C.propagate_shape_and_type(ctx)
    C.propagate_shape(ctx, 0, 0)
    for i in range(1, 5):
        C.check_input_rank(ctx, i, 1)
    channels = None
    if C.has_input_shape(ctx, 0):
        if len(C.input_shape(ctx, 0)) > 1:
            channels = C.unify_input_dim(ctx, 0, 1, channels)
        else:
            channels = D.unify_value(channels, 1)
    for i in range(1, 5):
        channels = C.unify_input_dim(ctx, i, 0, channels)
    mode = ctx.attr("training_mode")
    if mode is not None and D.int32(mode.i) != 0:
        if ctx.num_outputs != 3:
            raise fail_shape("This number of op outputs should be 3 when Training_mode = True, but it is not.")
    elif ctx.num_outputs != 1:
        raise fail_shape("This number of op outputs should be 1 when Training_mode = False, but it is not.")
    if ctx.num_outputs > 1:
        C.propagate_elem(ctx, 3, 1)
        C.set_output_shape(ctx, 1, (channels,))
        if ctx.num_outputs > 2:
            C.propagate_elem(ctx, 4, 2)
            C.set_output_shape(ctx, 2, (channels,))


@infers("Dropout", 10)
def dropout10(ctx) -> None:
    C.propagate_shape_and_type(ctx)
    if ctx.num_outputs == 2:
        C.set_output_elem(ctx, 1, BOOL)
        if C.has_n_input_shapes(ctx, 1):
            C.propagate_shape(ctx, 0, 1)


@infers("Dropout", 12)
def dropout12(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.has_input_shape(ctx, 0):
        C.propagate_shape(ctx, 0, 0)
    if ctx.num_inputs > 1 and C.has_input_shape(ctx, 1):
        if len(C.input_shape(ctx, 1)) != 0:
            raise fail_shape("Ratio of Dropout must be a scalar.")
    if ctx.num_inputs > 2 and C.has_input_shape(ctx, 2):
        if len(C.input_shape(ctx, 2)) != 0:
            raise fail_shape("training_mode of Dropout must be a scalar.")
    if ctx.num_outputs == 2:
        C.set_output_elem(ctx, 1, BOOL)
        if C.has_n_input_shapes(ctx, 1):
            C.propagate_shape(ctx, 0, 1)


def _norm_axis(ctx, rank: int) -> int:
    a = ctx.attr("axis")
    axis = a.i if a is not None else -1
    if axis < 0:
        axis += rank
    if axis < 0:
        raise fail_shape("Unexpected axis value (", axis, ") rank of first input is ", rank, " in ",
                         ctx.display_name(), ".")
    return axis


@infers("LayerNormalization", 17)
def layer_norm(ctx) -> None:
    C.propagate_shape_and_type(ctx)
    a = ctx.attr("stash_type")
    stash = D.int32(a.i) if a is not None else 1  # a C int in the reference
    if stash not in ELEM_NAMES:
        # Beyond the reference, which makes any int32 the outputs' elem_type (2**63-1 is
        # -1 there: a type no tensor has); an error here, so strict mode reports it (I101).
        raise fail_type("stash_type ", a.i, " of ", ctx.display_name(), " is not a tensor element type")
    for o in (1, 2):
        if ctx.num_outputs > o:
            out = ctx.output(o)
            ctx.set_output(o, TensorType(stash, out.shape if type(out) is TensorType else None))
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = C.input_shape(ctx, 0)
    axis = D.int32(_norm_axis(ctx, len(shape)))  # the reference loops from static_cast<int>(axis)
    reduced = tuple(1 if d >= axis else dim for d, dim in enumerate(shape))
    for o in (1, 2):
        if ctx.num_outputs > o:
            set_tensor_shape(ctx, o, reduced)


@infers("RMSNormalization", 23)
def rms_norm(ctx) -> None:
    C.propagate_shape_and_type(ctx)
    if not C.has_n_input_shapes(ctx, 1):
        return
    _norm_axis(ctx, len(tensor_shape(ctx, 0)))


# -- losses ----------------------------------------------------------------------------------------

@infers("NegativeLogLikelihoodLoss", 12)
def nll12(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 2):
        return
    x = tensor_shape(ctx, 0)
    t = tensor_shape(ctx, 1)
    rank, trank = len(x), len(t)
    if rank < 2:
        raise fail_shape("Input rank must be >= 2.")
    if trank != rank - 1:
        raise fail_shape("Target rank must be 1 less than the input rank.")
    for d in range(trank):
        a = x[0] if d == 0 else x[d + 1]
        b = t[d]
        if type(a) is int and type(b) is int and a != b:
            raise fail_shape("Input and target dimension value mismatch.")
    if ctx.num_inputs == 3 and C.has_input_shape(ctx, 2):
        if len(tensor_shape(ctx, 2)) != 1:
            raise fail_shape("Weight rank must be 1.")
    if C.attr_str(ctx, "reduction", "mean") == "none":
        set_tensor_shape(ctx, 0, [x[0]] + list(x[2:rank]))
    else:
        set_tensor_shape(ctx, 0, ())


@infers("NegativeLogLikelihoodLoss", 22)
def nll22(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 2):
        return
    rank = len(tensor_shape(ctx, 0))
    trank = rank - 1
    if rank < 2:
        raise fail_shape("Input rank must be >= 2. input_rank=", rank)
    C.check_input_rank(ctx, 1, trank)
    target = [None] * trank
    for i in range(trank):
        target[i] = C.unify_input_dim(ctx, 1, i, target[i])
        target[i] = C.unify_input_dim(ctx, 0, 0 if i == 0 else i + 1, target[i])
    c = C.unify_input_dim(ctx, 0, 1, None)
    if ctx.num_inputs == 3 and C.has_input_shape(ctx, 2):
        C.unify_input_shape(ctx, 2, [c])
    if C.attr_str(ctx, "reduction", "mean") == "none":
        set_tensor_shape(ctx, 0, target)
    else:
        set_tensor_shape(ctx, 0, ())


@infers("SoftmaxCrossEntropyLoss", 12)
def softmax_cross_entropy(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.attr_str(ctx, "reduction", "mean") == "none":
        if C.has_input_shape(ctx, 1):
            C.propagate_shape(ctx, 1, 0)
    else:
        C.set_output_shape(ctx, 0, ())
    if ctx.num_outputs == 2:
        C.propagate_elem(ctx, 0, 1)
        C.propagate_shape(ctx, 0, 1)


# -- detection -------------------------------------------------------------------------------------

@infers("RoiAlign", 10)
def roi_align10(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    C.check_input_rank(ctx, 0, 4)
    C.check_input_rank(ctx, 1, 2)
    C.check_input_rank(ctx, 2, 1)
    c = C.unify_input_dim(ctx, 0, 1, None)
    rois = C.unify_input_dim(ctx, 1, 0, None)
    rois = C.unify_input_dim(ctx, 2, 0, rois)
    h = D.unify_value(None, C.attr_int(ctx, "output_height", 1))
    w = D.unify_value(None, C.attr_int(ctx, "output_width", 1))
    C.set_output_shape(ctx, 0, (rois, c, h, w))


@infers("RoiAlign", 22)
def roi_align22(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    _n, c, _h, _w = C.unify_input_shape(ctx, 0, [None] * 4)
    rois, _four = C.unify_input_shape(ctx, 1, [None, 4])
    (rois,) = C.unify_input_shape(ctx, 2, [rois])
    h = D.unify_value(None, C.attr_int(ctx, "output_height", 1))
    w = D.unify_value(None, C.attr_int(ctx, "output_width", 1))
    C.set_output_shape(ctx, 0, (rois, c, h, w))


@infers("NonMaxSuppression", 10)
def nms10(ctx) -> None:
    out = ctx.output(0)
    ctx.set_output(0, TensorType(INT64_T, out.shape if type(out) is TensorType else None))


@infers("NonMaxSuppression", 11)
def nms11(ctx) -> None:
    nms10(ctx)
    C.set_output_shape(ctx, 0, (None, 3))
