"""Arithmetic on dims, in one place (see `types` for what a dim is).

Today these are the reference's rules: a result is known only when every operand is
known, with the identities it applies (``1 * d``, ``d * 1``, ``d / 1``, ``d + 0``,
``d - 0`` keep ``d``).  Overflow of the int64 a dim holds is an error where the
reference checks it.  Operator functions call these and never compute with dims
themselves, so symbolic arithmetic (issue 13) replaces the "unknown" branches here
and nowhere else.
"""

from __future__ import annotations

from .errors import fail_shape
from .types import Dim

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def wrap64(v: int) -> int:
    """``v`` as C++ int64 arithmetic leaves it (two's complement wrap-around)."""
    if INT64_MIN <= v <= INT64_MAX:
        return v
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


def int32(v: int) -> int:
    """``static_cast<int>`` of an int64, as the reference narrows axes and counts: the low 32 bits."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= (1 << 31) else v


def checked_mul(a: int, b: int) -> int:
    r = a * b
    if r < INT64_MIN or r > INT64_MAX:
        raise fail_shape("Integer overflow while multiplying dimension values ", a, " and ", b)
    return r


def checked_add(a: int, b: int) -> int:
    r = a + b
    if r < INT64_MIN or r > INT64_MAX:
        raise fail_shape("Integer overflow while adding dimension values ", a, " and ", b)
    return r


def checked_sub(a: int, b: int) -> int:
    r = a - b
    if r < INT64_MIN or r > INT64_MAX:
        raise fail_shape("Integer overflow while subtracting dimension values ", b, " from ", a)
    return r


def trunc_div(a: int, b: int) -> int:
    """C++ integer division (rounds toward zero); ``b`` must not be 0."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_rem(a: int, b: int) -> int:
    """C++ ``%`` (the sign of the dividend); ``b`` must not be 0."""
    return a - b * trunc_div(a, b)


def checked_div(a: int, b: int) -> int:
    if b == 0:
        raise fail_shape("Division by zero while inferring a dimension")
    if a == INT64_MIN and b == -1:
        raise fail_shape("Integer overflow while dividing dimension values ", a, " and ", b)
    return trunc_div(a, b)


def mul(a: Dim, b: Dim) -> Dim:
    """``dim1 * dim2``: known when both are; ``1 * d`` is ``d``; else unknown."""
    if type(a) is int and type(b) is int:
        return checked_mul(a, b)
    if type(a) is int and a == 1:
        return b
    if type(b) is int and b == 1:
        return a
    return None


def mul_int(a: Dim, k: int) -> Dim:
    if type(a) is int:
        return checked_mul(a, k)
    return a if k == 1 else None


def div_int(a: Dim, k: int) -> Dim:
    if type(a) is int:
        return checked_div(a, k)
    return a if k == 1 else None


def add_int(a: Dim, k: int) -> Dim:
    if type(a) is int:
        return checked_add(a, k)
    return a if k == 0 else None


def sub_int(a: Dim, k: int) -> Dim:
    if type(a) is int:
        return checked_sub(a, k)
    return a if k == 0 else None


def add(a: Dim, b: Dim) -> Dim:
    """``dim1 + dim2``: known when both are; ``0 + d`` is ``d``; else unknown."""
    if type(a) is int and type(b) is int:
        return checked_add(a, b)
    if type(a) is int and a == 0:
        return b
    if type(b) is int and b == 0:
        return a
    return None


def product(shape, start: int = 0, stop: int | None = None) -> Dim:
    """``multiplyDims``: the product of ``shape[start:stop]``, starting from 1."""
    result: Dim = 1
    for d in shape[start:stop]:
        result = mul(result, d)
    return result


def is_known(d: Dim) -> bool:
    return type(d) is int


def same(a: Dim, b: Dim) -> bool:
    """Provably the same size: equal values, or the same name."""
    if type(a) is int:
        return type(b) is int and a == b
    return type(a) is str and type(b) is str and a == b


def unify(source: Dim, target: Dim) -> Dim:
    """``unifyDim(source, target)``: the target refined by the source; values must agree."""
    if type(source) is int:
        if type(target) is int:
            if source != target:
                raise fail_shape("Dimension mismatch in unification between ", source, " and ", target)
            return target
        return source
    if target is not None:
        return target
    return source


def check_equal(a: Dim, b: Dim) -> None:
    """``unifyDim(dim1, dim2)`` of two read-only dims: values, when both known, must agree."""
    if type(a) is int and type(b) is int and a != b:
        raise fail_shape("Dimension mismatch in unification between ", a, " and ", b)


def unify_value(d: Dim, value: int) -> Dim:
    """``unifyDim(dim, value)``."""
    if type(d) is int:
        if d != value:
            raise fail_shape("Dimension mismatch in unification between ", d, " and ", value)
        return d
    return value
