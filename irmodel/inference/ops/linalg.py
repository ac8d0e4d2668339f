"""Matrix products and friends: MatMul, Gemm, Einsum, Det, TopK."""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape
from ..registry import infers, no_inference
from ..tensordata import INT64
from ..types import Dim
from .elementwise import set_tensor_shape, tensor_shape


def matmul_shape(ctx, a: int, b: int) -> None:
    """``MatMulShapeInference``: numpy matmul rules, batch dims broadcast."""
    if not C.has_input_shape(ctx, a) or not C.has_input_shape(ctx, b):
        return
    s0 = tensor_shape(ctx, a)
    s1 = tensor_shape(ctx, b)
    if len(s0) == 0 or len(s1) == 0:
        raise fail_shape("Input tensors of wrong rank (0).")
    left = (1, s0[0]) if len(s0) == 1 else tuple(s0)
    right = (s1[0], 1) if len(s1) == 1 else tuple(s1)
    dl, dr = left[-1], right[-2]
    if type(dl) is int and type(dr) is int and dl != dr:
        raise fail_shape("Incompatible dimensions for matrix multiplication")
    out = list(C.broadcast([left[:-2], right[:-2]]))
    if len(s0) != 1:
        out.append(left[-2])
    if len(s1) != 1:
        out.append(right[-1])
    set_tensor_shape(ctx, 0, out)


@infers("MatMul", 1)
def matmul(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    matmul_shape(ctx, 0, 1)


@infers("Gemm", 6)
def gemm6(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.has_n_input_shapes(ctx, 2):
        ta = _flag(ctx, "transA")
        tb = _flag(ctx, "transB")
        C.check_input_rank(ctx, 0, 2)
        C.check_input_rank(ctx, 1, 2)
        a, b = C.input_shape(ctx, 0), C.input_shape(ctx, 1)
        current = C.output_shape(ctx, 0) or ()
        set_tensor_shape(ctx, 0, tuple(current) + (a[1 if ta else 0], b[0 if tb else 1]))
    elif C.has_input_shape(ctx, 2):
        bc = ctx.attr("broadcast")
        if bc is None or D.int32(bc.i) == 0:
            set_tensor_shape(ctx, 0, tensor_shape(ctx, 2))


def _flag(ctx, name: str) -> bool:
    a = ctx.attr(name)
    return a is not None and D.int32(a.i) != 0


@infers("Gemm", 7)
def gemm7(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if C.has_n_input_shapes(ctx, 2):
        ta = _flag(ctx, "transA")
        tb = _flag(ctx, "transB")
        a, b = C.input_shape(ctx, 0), C.input_shape(ctx, 1)
        if len(a) != 2:
            raise fail_shape("First input does not have rank 2")
        if len(b) != 2:
            raise fail_shape("Second input does not have rank 2")
        C.set_output_shape(ctx, 0, (a[1 if ta else 0], b[0 if tb else 1]))


no_inference("Gemm", 1)


@infers("Gemm", 13)
def gemm13(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    ta = _flag(ctx, "transA")
    tb = _flag(ctx, "transB")
    m = n = k = None
    if ta:
        k, m = C.unify_input_shape(ctx, 0, [k, m])
    else:
        m, k = C.unify_input_shape(ctx, 0, [m, k])
    if tb:
        n, k = C.unify_input_shape(ctx, 1, [n, k])
    else:
        k, n = C.unify_input_shape(ctx, 1, [k, n])
    C.set_output_shape(ctx, 0, (m, n))


# -- Einsum ------------------------------------------------------------------------------------------

def _is_letter(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


@infers("Einsum", 12)
def einsum(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    equation = C.attr_str(ctx, "equation", "")
    if not equation:
        return
    equation = equation.replace(" ", "")
    n = ctx.num_inputs
    if n < 1 or not C.has_n_input_shapes(ctx, n):
        return
    mid = equation.find("->")
    left = equation[:mid] if mid >= 0 else equation
    labels = {}  # label -> position in `dims`
    repeated = set()
    dims: list[Dim] = []
    ellipsis_dims_value = []
    first_ellipsis = True
    num_operands = 0
    num_ellipsis = 0
    num_ellipsis_indices = 0
    first_ellipsis_operand = 0
    for term in left.split(","):
        ell = term.find("...")
        if n <= num_operands:
            raise fail_shape("Number of input tensors does not match the operands in the equation.")
        shape = tensor_shape(ctx, num_operands)
        rank = len(shape)
        ellipsis_dims = 0
        term_size = sum(1 for c in term if _is_letter(c))
        illegal = 0
        if ell >= 0:
            if rank < term_size:
                raise fail_shape("Ellipsis represents incompatible dimensions for input ", num_operands, ". Rank ",
                                 rank, " is less than term size ", term_size, ".")
            # Every ellipsis covers as many dims as the first: checked before the dims are read.
            if num_ellipsis == 0:
                num_ellipsis_indices = rank - term_size
                first_ellipsis_operand = num_operands
            elif num_ellipsis_indices != rank - term_size:
                raise fail_shape("Ellipsis for input ", num_operands, " represents ", rank - term_size,
                                 " dimensions, but ellipsis for input ", first_ellipsis_operand, " represents ",
                                 num_ellipsis_indices, " dimensions.")
            num_ellipsis += 1
        elif rank != term_size:
            raise fail_shape("Rank of input ", num_operands, " (", rank, ") does not match the equation indices (",
                             term_size, ").")
        index = 0
        while index < len(term):
            c = term[index]
            if index == ell:
                ellipsis_dims = rank - term_size
                if first_ellipsis:
                    first_ellipsis = False
                    for i in range(ellipsis_dims):
                        ellipsis_dims_value.append(shape[index + i - illegal])
                else:
                    for i in range(ellipsis_dims):
                        src = shape[index + i - illegal]
                        cur = ellipsis_dims_value[i]
                        if type(src) is int and type(cur) is int and src > cur and cur == 1:
                            ellipsis_dims_value[i] = src
                index += 3
                illegal += 3
                continue
            if not _is_letter(c):
                illegal += 1
                index += 1
                continue
            if c not in labels:
                labels[c] = len(dims)
                dims.append(shape[index + ellipsis_dims - illegal])
            else:
                repeated.add(c)
            index += 1
        num_operands += 1
    if n != num_operands:
        raise fail_shape("Number of input tensors does not match the operands in the equation.")
    out = []
    if mid >= 0:
        right = equation[mid + 2:]
        rell = right.find("...")
        index = 0
        while index < len(right):
            if index == rell:
                out.extend(ellipsis_dims_value[:num_ellipsis_indices])
                index += 3
                continue
            c = right[index]
            if _is_letter(c):
                if c not in labels:
                    raise fail_shape("Equation output contains a label missing from the inputs")
                out.append(dims[labels[c]])
            index += 1
    else:
        out.extend(ellipsis_dims_value[:num_ellipsis_indices])
        for c in sorted(labels):
            if c not in repeated:
                out.append(dims[labels[c]])
    current = C.output_shape(ctx, 0) or ()
    C.set_output_shape(ctx, 0, tuple(current) + tuple(out))


# -- Det, TopK ------------------------------------------------------------------------------------------

def _det(check_square):
    """Det maps a batch of square matrices to the batch shape; ``check_square(h, w)`` is the version's rule."""
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if C.has_input_shape(ctx, 0):
            s = tensor_shape(ctx, 0)
            rank = len(s)
            if rank < 2:
                raise fail_shape("Input rank must be >= 2.")
            check_square(s[rank - 2], s[rank - 1])
            set_tensor_shape(ctx, 0, s[:rank - 2])
    return infer


def _det11_square(h, w) -> None:
    if type(w) is int and type(h) is int and w != h:
        raise fail_shape("The inner-most 2 dimensions must have the same size (mat_w:", w, " != mat_h:", h, ").")


def _det22_square(h, w) -> None:
    D.unify(w, D.unify(h, None))


infers("Det", 11)(_det(_det11_square))
infers("Det", 22)(_det(_det22_square))


def _set_topk_outputs(ctx, shape, axis: int, k) -> None:
    """Values and indices both take the input shape with ``k`` along ``axis``."""
    result = list(shape)
    result[axis] = k
    C.set_output_shape(ctx, 0, result)
    C.set_output_shape(ctx, 1, result)


def _topk_axis(ctx, shape) -> int:
    rank = len(shape)
    axis = C.attr_int(ctx, "axis", -1)
    if axis < 0:
        axis += rank
    if axis < 0 or axis >= rank:
        raise fail_shape("Invalid value for attribute axis")
    return axis


@infers("TopK", 1)
def topk1(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    C.set_output_elem(ctx, 1, 7)
    if not C.has_input_shape(ctx, 0):
        return
    shape = C.input_shape(ctx, 0)
    axis = _topk_axis(ctx, shape)
    k = C.attr_int(ctx, "k", -1)
    if k <= 0:
        raise fail_shape("Invalid value for attribute k")
    _set_topk_outputs(ctx, shape, axis, k)


@infers("TopK", 10)
def topk10(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    C.set_output_elem(ctx, 1, 7)
    if not C.has_input_shape(ctx, 0):
        return
    shape = C.input_shape(ctx, 0)
    axis = _topk_axis(ctx, shape)
    axis_dim = shape[axis]
    k = ctx.input_data(1)
    if k is not None and type(axis_dim) is int:
        if k.dims != [1]:
            raise fail_shape("K input must be a one-dimensional tensor of size 1.")
        if k.data_type != INT64:
            raise fail_shape("K input must be of type int64.")
        value = k.values(INT64)[0]
        if axis_dim < value:
            raise fail_shape("Axis has less than the requested k elements.")
        _set_topk_outputs(ctx, shape, axis, value)
        return
    for o in (0, 1):
        current = C.output_shape(ctx, o) or ()
        C.set_output_shape(ctx, o, tuple(current) + (None,) * len(shape))
