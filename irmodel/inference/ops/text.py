"""Text operators: StringNormalizer, StringSplit, StringConcat, RegexFullMatch, TfIdfVectorizer."""

from __future__ import annotations

from .. import common as C
from ..errors import fail_shape
from ..registry import infers
from ..types import Dim, TensorType
from .elementwise import binary_broadcast_shape, tensor_shape

STRING, BOOL, INT64, FLOAT = 8, 9, 7, 1


def _set_elem(ctx, o: int, elem: int) -> None:
    """``getOutputType(o)->mutable_tensor_type()->set_elem_type(elem)``."""
    out = ctx.output(o)
    ctx.set_output(o, TensorType(elem, out.shape if type(out) is TensorType else None))


@infers("StringNormalizer", 10)
def string_normalizer(ctx) -> None:
    _set_elem(ctx, 0, STRING)
    if not C.has_input_shape(ctx, 0):
        return
    shape = tensor_shape(ctx, 0)
    out: tuple[Dim, ...]
    if len(shape) == 1:
        out = (None,)
    elif len(shape) == 2:
        b = shape[0]
        if type(b) is not int or b != 1:
            raise fail_shape("Input shape must have either [C] or [1,C] dimensions where C > 0")
        out = (b, None)
    else:
        raise fail_shape("Input shape must have either [C] or [1,C] dimensions where C > 0")
    C.set_output_shape(ctx, 0, out)


@infers("StringSplit", 20)
def string_split(ctx) -> None:
    if not C.has_input_shape(ctx, 0):
        return
    t = ctx.input_type(0)
    if type(t) is not TensorType or t.elem != STRING:
        return
    C.propagate_elem(ctx, 0, 0)
    C.propagate_shape(ctx, 0, 0)
    C.set_output_shape(ctx, 0, tuple(C.output_shape(ctx, 0) or ()) + (None,))
    _set_elem(ctx, 1, INT64)
    C.propagate_shape(ctx, 0, 1)


@infers("StringConcat", 20)
def string_concat(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    binary_broadcast_shape(ctx)


@infers("RegexFullMatch", 20)
def regex_full_match(ctx) -> None:
    C.set_output_elem(ctx, 0, BOOL)
    C.propagate_shape(ctx, 0, 0)


@infers("TfIdfVectorizer", 9)
def tfidf(ctx) -> None:
    _set_elem(ctx, 0, FLOAT)
    if not C.has_input_shape(ctx, 0):
        return
    indexes = C.attr_ints(ctx, "ngram_indexes") or []
    if not indexes or any(i < 0 for i in indexes):
        raise fail_shape("ngram_indexes must be non-empty with no negative values")
    last = max(indexes) + 1
    shape = tensor_shape(ctx, 0)
    out: tuple[Dim, ...]
    if len(shape) == 1:
        out = (last,)
    elif len(shape) == 2:
        out = (shape[0], last)
    else:
        raise fail_shape("Input tensor must have rank 1 or 2")
    C.set_output_shape(ctx, 0, out)
