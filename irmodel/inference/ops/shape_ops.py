"""Operators that rearrange a tensor without computing on its values: Cast, Identity,
Reshape, Shape, Size, Flatten, Squeeze, Unsqueeze, Expand, Transpose, Tile,
SpaceToDepth, DepthToSpace.
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..registry import infers, no_inference
from ..tensordata import INT64
from ..types import Dim, TensorType
from .elementwise import set_tensor_shape, tensor_shape

INT64_T = 7


def tensor_type_shape(ctx, i: int):
    """``getInputType(i)->tensor_type()``'s shape, or None when it has none."""
    t = ctx.input_type(i)
    if type(t) is TensorType:
        return t.shape
    return None


# -- casts and identity ----------------------------------------------------------------------

@infers("Cast", 6)
def cast(ctx) -> None:
    C.propagate_elem_from_attr(ctx, "to", 0)
    if C.has_n_input_shapes(ctx, 1):
        C.propagate_shape(ctx, 0, 0)


no_inference("Cast", 1)


@infers("CastLike", 15)
def cast_like(ctx) -> None:
    C.propagate_elem(ctx, 1, 0)
    if C.has_n_input_shapes(ctx, 1):
        C.propagate_shape(ctx, 0, 0)


_BITS = {1: 32, 6: 32, 12: 32, 11: 64, 7: 64, 13: 64, 14: 64, 15: 128, 10: 16, 16: 16, 5: 16, 4: 16,
         3: 8, 2: 8, 9: 8, 17: 8, 18: 8, 19: 8, 20: 8, 24: 8, 22: 4, 21: 4, 23: 4, 26: 2, 25: 2}


@infers("BitCast", 26)
def bit_cast(ctx) -> None:
    t = ctx.input_type(0)
    if type(t) is TensorType:
        to = ctx.attr("to")
        if to is not None:
            bi = _BITS.get(t.elem or 0, 0)
            bo = _BITS.get(D.int32(to.i), 0)
            if bi and bo and bi != bo:
                raise fail_shape("BitCast requires input and output types to have the same bit-width, but input "
                                 "type has ", bi, " bits and output type has ", bo, " bits.")
    C.propagate_elem_from_attr(ctx, "to", 0)
    if C.has_n_input_shapes(ctx, 1):
        C.propagate_shape(ctx, 0, 0)


infers("Identity", 1)(C.propagate_shape_and_type)


# -- Reshape -----------------------------------------------------------------------------------

def _reshape(ctx, target, allowzero: int, symbolic: bool) -> None:
    """Output shape of Reshape for ``target`` (dims: ints, names or unknown)."""
    data_shape = tensor_type_shape(ctx, 0)
    out: list[Dim] = []
    neg_one = None
    unresolved = [False] * len(target)
    out_product = 1
    out_valid = True
    for i, d in enumerate(target):
        if type(d) is str:
            out.append(d)
            out_valid = False
            continue
        if d is None:
            out.append(None)
            out_valid = False
            continue
        if d == -1:
            if neg_one is not None:
                raise fail_shape("Target shape may not have multiple -1 dimensions" + ("." if symbolic else ""))
            neg_one = i
            out.append(None)
        elif d == 0:
            if allowzero == 0:
                unresolved[i] = True
                new: Dim = None
                if data_shape is not None:
                    if i >= len(data_shape):
                        raise fail_shape("Invalid position of 0" + ("." if symbolic else ""))
                    src = data_shape[i]
                    if type(src) is int:
                        new = src
                        out_product = _checked_product(out_product, src)
                        unresolved[i] = False
                    elif type(src) is str:
                        new = src
                out.append(new)
            else:
                out.append(0)
                out_product = _checked_product(out_product, 0)
        elif d > 0:
            out.append(d)
            out_product = _checked_product(out_product, d)
        else:
            raise fail_shape("Invalid dimension value: ", d)
    if neg_one is not None and out_valid:
        if not out_product:
            raise fail_shape("Invalid Target shape product of 0" +
                             (". Product cannot be 0 in combination with -1" if symbolic else ""))
        in_product = 1
        in_valid = data_shape is not None
        if in_valid:
            for i, d in enumerate(data_shape):
                if type(d) is int:
                    in_product = _checked_product(in_product, d)
                elif i >= len(unresolved) or not unresolved[i]:
                    in_valid = False
                    break
        if in_valid:
            if D.trunc_rem(in_product, out_product) != 0:
                raise fail_shape("Dimension could not be inferred: incompatible shapes")
            out[neg_one] = D.trunc_div(in_product, out_product)
    set_tensor_shape(ctx, 0, out)


def _checked_product(a: int, b: int) -> int:
    r = a * b
    if r < D.INT64_MIN or r > D.INT64_MAX:
        raise fail_shape("Dimension product overflow in Reshape")
    return r


@infers("Reshape", 5)
def reshape5(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    data = ctx.input_data(1)
    if data is None:
        return
    _reshape(ctx, data.values(INT64), 0, False)


no_inference("Reshape", 1)


@infers("Reshape", 14)
def reshape14(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    target = C.shape_input(ctx, 1)
    if target is None:
        return
    _reshape(ctx, target, C.attr_int(ctx, "allowzero", 0), True)


# -- Shape, Size --------------------------------------------------------------------------------

@infers("Shape", 1)
def shape1(ctx) -> None:
    if not C.has_n_input_shapes(ctx, 1):
        ctx.set_output(0, TensorType(INT64_T, (None,)))
        return
    s = tensor_type_shape(ctx, 0)
    ctx.set_output(0, TensorType(INT64_T, (len(s) if s is not None else None,)))


@infers("Shape", 15)
def shape15(ctx) -> None:
    if not C.has_n_input_shapes(ctx, 1):
        ctx.set_output(0, TensorType(INT64_T, (None,)))
        return
    rank = len(tensor_shape(ctx, 0))
    start = C.attr_int(ctx, "start", 0)
    if start < 0:
        start += rank
    start = min(max(start, 0), rank)
    end = C.attr_int(ctx, "end", rank)
    if end < 0:
        end += rank
    end = min(max(end, 0), rank)
    ctx.set_output(0, TensorType(INT64_T, (max(end - start, 0),)))


@infers("Size", 1)
def size(ctx) -> None:
    ctx.set_output(0, TensorType(INT64_T, ()))


# -- Flatten ------------------------------------------------------------------------------------

def _flatten(negative_axes: bool):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if not C.has_input_shape(ctx, 0):
            return
        shape = C.input_shape(ctx, 0)
        rank = len(shape)
        axis = D.int32(C.attr_int(ctx, "axis", 1))
        if negative_axes and axis < 0:
            axis += rank
        if axis > rank or axis < 0:
            raise fail_shape("Invalid value(", axis, ") for attribute 'axis'")
        C.set_output_shape(ctx, 0, (D.product(shape, 0, axis), D.product(shape, axis, rank)))
    return infer


infers("Flatten", 1)(_flatten(False))
infers("Flatten", 11)(_flatten(True))


# -- Squeeze / Unsqueeze ------------------------------------------------------------------------

def _squeeze_old(negative_axes: bool):
    """Squeeze-1 (sorted axes, matched in order) and Squeeze-11 (negative axes allowed)."""
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if not C.has_n_input_shapes(ctx, 1):
            return
        shape = tensor_type_shape(ctx, 0)
        if shape is None:
            return
        rank = len(shape)
        axes = C.attr_ints(ctx, "axes")
        if axes is None:
            axes = []
            for i, d in enumerate(shape):
                if type(d) is not int:
                    return
                if d == 1:
                    axes.append(i)
        out = []
        if negative_axes:
            axes = [a + rank if a < 0 else a for a in axes]
            for i, d in enumerate(shape):
                if i in axes:
                    if type(d) is int and d != 1:
                        raise fail_shape("Dimension of input ", i, " must be 1 instead of ", d)
                else:
                    out.append(d)
        else:
            j = 0
            for i, d in enumerate(shape):
                if j < len(axes) and axes[j] == i:
                    if type(d) is int and d != 1:
                        raise fail_shape("Dimension of input ", i, " must be 1 instead of ", d)
                    j += 1
                else:
                    out.append(d)
        set_tensor_shape(ctx, 0, out)
    return infer


infers("Squeeze", 1)(_squeeze_old(False))
infers("Squeeze", 11)(_squeeze_old(True))


@infers("Squeeze", 13)
def squeeze13(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    axes = []
    not_specified = False
    if ctx.num_inputs == 2 and ctx.input_type(1) is not None:
        data = ctx.input_data(1)
        if data is None:
            return
        axes = data.values(INT64)
    else:
        not_specified = True
    shape = tensor_shape(ctx, 0)
    rank = len(shape)
    C.check_axes_range(axes, rank)
    axes = C.adjust_negative_axes(axes, rank)
    if not_specified and any(type(d) is not int for d in shape):
        return
    out = []
    for i, d in enumerate(shape):
        if not_specified and d == 1:
            continue
        if not not_specified and i in axes:
            if type(d) is int and d != 1:
                raise fail_shape("Dimension of input ", i, " must be 1 instead of ", d)
        else:
            out.append(d)
    set_tensor_shape(ctx, 0, out)


def _unsqueeze_into(shape, axes) -> list:
    """Insert 1s at the sorted output positions ``axes``."""
    out: list[Dim] = []
    j = 0
    for d in shape:
        while j < len(axes) and axes[j] == len(out):
            out.append(1)
            j += 1
        out.append(d)
    while j < len(axes) and axes[j] == len(out):
        out.append(1)
        j += 1
    return out


@infers("Unsqueeze", 1)
def unsqueeze1(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    axes = C.attr_ints(ctx, "axes")
    if axes is None:
        return
    axes.sort()
    shape = tensor_type_shape(ctx, 0)
    if shape is None:
        return
    set_tensor_shape(ctx, 0, _unsqueeze_into(shape, axes))


@infers("Unsqueeze", 11)
def unsqueeze11(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    axes = C.attr_ints(ctx, "axes")
    if axes is None:
        return
    if len(set(axes)) != len(axes):
        raise fail_shape("'axes' attribute must not contain any duplicates")
    shape = tensor_type_shape(ctx, 0)
    if shape is None:
        return
    out_rank = len(shape) + len(axes)
    fixed = []
    for a in axes:
        if a < -out_rank or a >= out_rank:
            raise fail_shape("values in 'axes' are beyond the bounds of the computed output shape")
        fixed.append(a + out_rank if a < 0 else a)
    fixed.sort()
    set_tensor_shape(ctx, 0, _unsqueeze_into(shape, fixed))


@infers("Unsqueeze", 13)
def unsqueeze13(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    data = ctx.input_data(1)
    if data is None:
        return
    axes = data.values(INT64)
    shape = tensor_shape(ctx, 0)
    set_tensor_shape(ctx, 0, ())
    out_rank = len(shape) + len(axes)
    C.check_axes_range(axes, out_rank)
    axes = C.adjust_negative_axes(axes, out_rank)
    C.check_duplicate_axes(axes, out_rank)
    axes.sort()
    set_tensor_shape(ctx, 0, _unsqueeze_into(shape, axes))


# -- Expand ------------------------------------------------------------------------------------------

@infers("Expand", 8)
def expand8(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    data = ctx.input_data(1)
    if not C.has_n_input_shapes(ctx, 2):
        return
    sshape = tensor_shape(ctx, 1)
    if len(sshape) != 1:
        raise fail_shape("'shape' input must be 1D tensor")
    if data is not None:
        second = tuple(data.values(INT64))
    elif type(sshape[0]) is int and sshape[0] <= C.MAX_RANK:
        second = (None,) * max(sshape[0], 0)
    else:  # unknown length, or a rank no tensor can have (never allocated)
        return
    C.set_output_shape(ctx, 0, C.broadcast([tensor_shape(ctx, 0), second]))


@infers("Expand", 13)
def expand13(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.has_n_input_shapes(ctx, 2):
        second = C.shape_input(ctx, 1)
        if second is not None:
            C.set_output_shape(ctx, 0, C.broadcast([tensor_shape(ctx, 0), second]))


# -- Transpose -------------------------------------------------------------------------------------------

def _transpose(make_shape_first: bool):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if not C.has_n_input_shapes(ctx, 1):
            return
        shape = tensor_shape(ctx, 0)
        rank = len(shape)
        perm = C.attr_ints(ctx, "perm")
        if perm is None:
            perm = list(range(rank - 1, -1, -1))
        elif perm:
            seen = [False] * rank
            for p in perm:
                if p < 0 or p >= rank:
                    raise fail_type("Invalid attribute perm {", ", ".join(map(str, perm)), "}, input shape = {",
                                    ", ".join(str(d if type(d) is int else 0) for d in shape),
                                    "}" if rank else "")
                if seen[p]:
                    raise fail_type("Attribute perm for Transpose has repeated value: ", p)
                seen[p] = True
        if make_shape_first:
            C.set_output_shape(ctx, 0, C.output_shape(ctx, 0) or ())
        C.propagate_elem(ctx, 0, 0)
        out = ctx.output(0)
        if not perm:
            return
        src = ctx.input_type(0)
        if type(out) is not type(src):
            raise fail_type("Input: 0 type: does not match type of output: 0")
        current = list(out.shape) if out.shape is not None else []
        for p in perm:
            current.append(src.shape[p])
        ctx.set_output(0, type(out)(out.elem, tuple(current)))
    return infer


infers("Transpose", 1)(_transpose(False))
infers("Transpose", 13)(_transpose(True))


# -- Tile ------------------------------------------------------------------------------------------------

@infers("Tile", 1)
def tile1(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)


@infers("Tile", 6)
def tile6(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = tensor_shape(ctx, 0)
    repeats = ctx.input_data(1)
    if repeats is not None and C.has_n_input_shapes(ctx, 2):
        if len(tensor_shape(ctx, 1)) != 1 or repeats.data_type != INT64:
            raise fail_shape("'Repeats' input must be 1D tensor of type int64")
        values = repeats.values(INT64)
        if len(values) != len(shape):
            raise fail_shape("'Repeats' input has incorrect number of values. The number of values in 'repeats' "
                             "must be equal to the number of input dimensions.")
        out = []
        for d, r in zip(shape, values):
            if r < 0:
                raise fail_shape("'Repeats' input must not contain negative values")
            out.append(D.checked_mul(d, r) if type(d) is int else None)
        set_tensor_shape(ctx, 0, out)
    else:
        set_tensor_shape(ctx, 0, ())
        C.set_output_shape(ctx, 0, (None,) * len(shape))


# -- SpaceToDepth / DepthToSpace -------------------------------------------------------------------------

def _space_depth(to_depth: bool):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        blocksize = C.attr_int(ctx, "blocksize", 0)
        if blocksize <= 0:
            raise fail_shape("Blocksize must be positive")
        area = D.checked_mul(blocksize, blocksize)
        if C.has_input_shape(ctx, 0):
            s = C.input_shape(ctx, 0)
            if len(s) != 4:
                raise fail_shape("Input tensor must be 4-dimensional")
            if to_depth:
                out = (s[0], D.mul_int(s[1], area), D.div_int(s[2], blocksize), D.div_int(s[3], blocksize))
            else:
                out = (s[0], D.div_int(s[1], area), D.mul_int(s[2], blocksize), D.mul_int(s[3], blocksize))
            C.set_output_shape(ctx, 0, out)
    return infer


infers("SpaceToDepth", 1)(_space_depth(True))
infers("DepthToSpace", 1)(_space_depth(False))
