"""Recurrent layers: RNN, GRU, LSTM (outputs Y, Y_h and, for LSTM, Y_c)."""

from __future__ import annotations

from .. import common as C
from ..errors import fail_shape
from ..registry import infers, no_inference


def _common(ctx):
    direction = C.attr_str(ctx, "direction", "forward")
    directions = 1 if direction in ("forward", "reverse") else 2 if direction == "bidirectional" else None
    hidden_value = C.attr_int(ctx, "hidden_size", -1)
    hidden = hidden_value if hidden_value > 0 else None
    return directions, hidden


def _outputs(ctx, seq, batch, directions, hidden, layout: int) -> None:
    n = ctx.num_outputs
    if n > 0:
        C.propagate_elem(ctx, 0, 0)
        C.set_output_shape(ctx, 0, (seq, directions, batch, hidden) if layout == 0
                           else (batch, seq, directions, hidden))
    for o in (1, 2):
        if n > o:
            C.propagate_elem(ctx, 0, o)
            C.set_output_shape(ctx, o, (directions, batch, hidden) if layout == 0 else (batch, directions, hidden))


def _seq_and_batch(ctx) -> tuple:
    """The (seq_length, batch_size) of a sequence-first rank-3 input X, each None when unknown."""
    if not C.has_input_shape(ctx, 0):
        return None, None
    s = C.input_shape(ctx, 0)
    if len(s) != 3:
        raise fail_shape("First input tensor must have rank 3")
    return s[0], s[1]


@infers(("RNN", "LSTM"), 1)
@infers("GRU", 3)
def rnn1(ctx) -> None:
    directions, hidden = _common(ctx)
    seq, batch = _seq_and_batch(ctx)
    output_sequence = C.attr_int(ctx, "output_sequence", 0) != 0
    n = ctx.num_outputs
    if n == 0:
        return
    for o in range(min(n, 3)):
        C.propagate_elem(ctx, 0, o)
    if output_sequence:
        C.set_output_shape(ctx, 0, (seq, directions, batch, hidden))
        for o in (1, 2):
            if n > o:
                C.set_output_shape(ctx, o, (directions, batch, hidden))


no_inference("GRU", 1)


@infers(("RNN", "GRU", "LSTM"), 7)
def rnn7(ctx) -> None:
    directions, hidden = _common(ctx)
    seq, batch = _seq_and_batch(ctx)
    _outputs(ctx, seq, batch, directions, hidden, 0)


@infers(("RNN", "GRU", "LSTM"), 14)
def rnn14(ctx) -> None:
    directions, hidden = _common(ctx)
    layout = C.attr_int(ctx, "layout", 0)
    seq = batch = None
    if C.has_input_shape(ctx, 0):
        s = C.input_shape(ctx, 0)
        if len(s) != 3:
            raise fail_shape("First input tensor must have rank 3")
        seq = s[0 if layout == 0 else 1]
        batch = s[1 if layout == 0 else 0]
    _outputs(ctx, seq, batch, directions, hidden, layout)


@infers(("RNN", "GRU", "LSTM"), 22)
def rnn22(ctx) -> None:
    directions, hidden = _common(ctx)
    layout = C.attr_int(ctx, "layout", 0)
    if layout == 0:
        seq, batch, _ = C.unify_input_shape(ctx, 0, [None, None, None])
    else:
        batch, seq, _ = C.unify_input_shape(ctx, 0, [None, None, None])
    _outputs(ctx, seq, batch, directions, hidden, layout)

