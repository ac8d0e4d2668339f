"""The ai.onnx.preview.training domain: the optimizers Adagrad, Momentum and Adam.

Each updated tensor (and its accumulated state) has the type and shape of the input it
replaces.
"""

from __future__ import annotations

from .. import common as C
from ..errors import HardError, fail_shape
from ..registry import infers

TRAINING = "ai.onnx.preview.training"


def _groups(ctx, per_tensor: int) -> int:
    """How many tensors are optimized; inputs are R, T, then ``per_tensor`` lists of them."""
    n = ctx.num_inputs
    if n < 2:  # the reference's unsigned arithmetic wraps: its first read is out of bounds
        raise HardError("Input 2 is out of bounds.")
    return (n - 2) // per_tensor


def _copy(ctx, i_in: int, i_out: int) -> None:
    C.propagate_elem(ctx, i_in, i_out)
    C.propagate_shape(ctx, i_in, i_out)


@infers("Adagrad", 1, domain=TRAINING)
def adagrad(ctx) -> None:
    k = _groups(ctx, 3)
    for i in range(k):
        _copy(ctx, 2 + i, i)
        _copy(ctx, 2 + 2 * k + i, k + i)


@infers("Momentum", 1, domain=TRAINING)
def momentum(ctx) -> None:
    if ctx.num_inputs >= 2 and (ctx.num_inputs - 2) % 3 != 0:
        raise fail_shape("The sum of optimized tensor count and momentum tensor count should be a multiple of 2 in "
                         "the input list of Momentum operator")
    adagrad(ctx)


@infers("Adam", 1, domain=TRAINING)
def adam(ctx) -> None:
    if ctx.num_inputs >= 2 and (ctx.num_inputs - 2) % 4 != 0:
        raise fail_shape("The sum of optimized tensor count, gradient tensor count, momentum tensor count, "
                         "accumulated squared-gradient tensor count should be a multiple of 4 in the \"inputs\" of "
                         "Adam operator.")
    k = _groups(ctx, 4)
    for i in range(k):
        _copy(ctx, 2 + i, i)
        _copy(ctx, 2 + 2 * k + i, k + i)
        _copy(ctx, 2 + 3 * k + i, 2 * k + i)
