"""Control flow: If, Loop and Scan, whose outputs come from inferring their sub-graphs.

The sub-graphs see the enclosing scope's values (`engine.GraphInferencer`); the body's
inputs get the types these functions pass (with shapes cleared where a loop may change
them), and the node's outputs combine what the sub-graphs produced.
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..merge import merge_in_dim, merge_in_shape, union, union_shape_into
from ..registry import infers
from ..types import UNSET, OptionalType, SequenceType, TensorType

INT64_T = 7


def _num(t) -> int:
    """The value-case number the reference prints."""
    return {TensorType: 1, SequenceType: 4, OptionalType: 9}.get(type(t), 0 if t is None or t is UNSET else 5)


# -- If -------------------------------------------------------------------------------------------

def _branches(ctx):
    then_out = ctx.graph_inferencer("then_branch").infer([], [])
    else_out = ctx.graph_inferencer("else_branch").infer([], [])
    if len(then_out) != len(else_out):
        raise fail_type("then_branch and else_branch produce different number of outputs. ", len(then_out),
                        " != ", len(else_out))
    if len(then_out) != ctx.num_outputs:
        raise fail_type("If node has ", ctx.num_outputs, " but subgraphs produce ", len(then_out))
    return then_out, else_out


def _if_legacy(union_shapes: bool):
    """If-1 (merge the else shape in) and If-11 (union of the shapes)."""
    def infer(ctx) -> None:
        then_out, else_out = _branches(ctx)
        for i, (t, e) in enumerate(zip(then_out, else_out)):
            if type(t) is not type(e):
                raise fail_type("Mismatched type for output ", i, " then=", _num(t), " else=", _num(e))
            out = t
            if type(t) is TensorType:
                if (t.elem or 0) != (e.elem or 0):
                    raise fail_type("Mismatched tensor element type for output ", i, " then=", t.elem or 0,
                                    " else=", e.elem or 0)
                if union_shapes:
                    out = union_shape_into(e.shape if e.shape is not None else (), out)
                elif e.shape is not None:
                    out = TensorType(out.elem, merge_in_shape(e.shape, out.shape))
            ctx.set_output(i, out)
    return infer


infers("If", 1)(_if_legacy(False))
infers("If", 11)(_if_legacy(True))


@infers("If", 13)
def if13(ctx) -> None:
    then_out, else_out = _branches(ctx)
    for i, (t, e) in enumerate(zip(then_out, else_out)):
        ctx.set_output(i, union(e, t))


# -- Loop ------------------------------------------------------------------------------------------

def _clear_shape_loop11(t):
    """Loop-1/11: ``mutable_tensor_type()->clear_shape()`` -- any other kind becomes an empty tensor."""
    return TensorType(t.elem, None) if type(t) is TensorType else TensorType(None, None)


def _clear_shape_loop13(t):
    if type(t) is TensorType:
        return TensorType(t.elem, None)
    if type(t) is SequenceType and type(t.elem) is TensorType:
        return SequenceType(TensorType(t.elem.elem, None))
    return t


def clear_shape(t):
    """``ClearShape``: tensor shapes removed, inside sequences and optionals too."""
    kind = type(t)
    if kind is TensorType:
        return TensorType(t.elem, None)
    if (kind is SequenceType or kind is OptionalType) and t.elem is not None:
        return kind(clear_shape(t.elem))
    return t


def _loop(clear, version: int):
    def infer(ctx) -> None:
        n = ctx.num_inputs
        n_state = n - 2
        body_inputs = [TensorType(INT64_T, None), ctx.input_type(1)]
        for i in range(2, n):
            C.propagate_elem(ctx, i, i - 2)
            body_inputs.append(clear(ctx.input_type(i)))
        data = [None] + [ctx.input_data(i) for i in range(1, n)]
        outs = ctx.graph_inferencer("body").infer(body_inputs, data)
        if not outs:
            return
        n_out = ctx.num_outputs
        if len(outs) != n_out + 1:
            raise fail_type("Graph attribute inferencing returned type information for ", len(outs),
                            " outputs. Expected ", n_out + 1)
        for i in range(n_out):
            sub = outs[i + 1]
            is_state = i < n_state
            kind = type(sub)
            if version >= 13:
                allowed = (TensorType, SequenceType, OptionalType) if version >= 16 else (TensorType, SequenceType)
                if kind not in allowed:
                    raise fail_type("Loop 'body' subgraph outputs should all be tensors or sequences",
                                    " or optionals, but output " if version >= 16 else " but output ", i, " was ",
                                    _num(sub))
                if not is_state and kind is not TensorType:
                    raise fail_type("Loop 'body' subgraph scan outputs should all be tensors but output ", i,
                                    " was ", _num(sub))
            elif kind is not TensorType:
                raise fail_type("Loop 'body' subgraph outputs should all be tensors but output ", i, " was ",
                                _num(sub))
            ctx.set_output(i, C.propagate_elem_validated(sub, ctx.output(i)))
            if not is_state and kind is TensorType and sub.shape is not None:
                inferred = (None,) + tuple(sub.shape)
                out = ctx.output(i)
                target = out if type(out) is TensorType else TensorType(None, None)
                ctx.set_output(i, TensorType(target.elem, merge_in_shape(inferred, target.shape)))
    return infer


infers("Loop", 1)(_loop(_clear_shape_loop11, 11))
infers("Loop", 13)(_loop(_clear_shape_loop13, 13))
infers("Loop", 16)(_loop(clear_shape, 16))


# -- Scan -------------------------------------------------------------------------------------------

def _axis(attrib: str, axis: int, rank: int) -> int:
    if -rank > axis or axis >= rank:
        raise fail_shape(attrib, " axis value ", axis, " is invalid for a tensor of rank ", rank)
    return axis if axis >= 0 else axis + rank


def _scan_axes(ctx, side: str, count: int) -> list:
    """``scan_{side}_axes``: one axis per scan {side}; all 0 when the attribute is absent."""
    axes = C.attr_ints(ctx, f"scan_{side}_axes")
    if axes is None:
        return [0] * count
    if len(axes) != count:
        raise fail_shape("Number of scan ", side, " axes specified (", len(axes),
                         ") is not equal to number of scan ", side, "s (", count, ").")
    return axes


@infers("Scan", 9)
def scan9(ctx) -> None:
    n = ctx.num_inputs
    n_scan = C.required_attr_int(ctx, "num_scan_inputs")
    if n_scan < 0:
        raise fail_shape("narrow: value ", n_scan, " cannot be represented in target type")
    n_out = ctx.num_outputs
    if n_scan > n:
        raise fail_shape("num_scan_inputs (", n_scan, ") cannot exceed the number of Scan inputs (", n, ").")
    n_state = n - n_scan
    if n_state > n_out:
        raise fail_shape("The number of outputs of the Scan (", n_out, ") should equal the sum of the number of "
                         "loop state variables (", n_state, ") and the number of scan-outputs.")
    n_scan_out = n_out - n_state
    axes = _scan_axes(ctx, "input", n_scan)
    out_axes = _scan_axes(ctx, "output", n_scan_out)
    body_inputs = []
    seq_len = None
    for i in range(n):
        is_state = i < n_state
        has_shape = C.has_input_shape(ctx, i)
        t = ctx.input_type(i)
        if t is None or type(t) is not TensorType:
            raise fail_type("Scan input ", i, " was not a tensor.")
        if is_state:
            C.propagate_elem(ctx, i, i)
            if has_shape:
                C.propagate_shape(ctx, i, i)
            body_inputs.append(t)
        elif has_shape:
            assert t.shape is not None  # has_shape of a tensor type: its shape is present
            axis = _axis("scan_input_axes", D.int32(axes[i - n_state]), len(t.shape))
            seq_len = merge_in_dim(t.shape[axis], seq_len, 1)
            body_inputs.append(TensorType(t.elem, t.shape[:axis] + t.shape[axis + 1:]))
        else:
            body_inputs.append(t)
    outs = ctx.graph_inferencer("body").infer(body_inputs, [None] * n)
    if not outs:
        return
    if len(outs) != n_out:
        raise fail_type("Graph attribute inferencing returned type information for ", len(outs),
                        " outputs. Expected ", n_out)
    for i in range(n_out):
        is_state = i < n_state
        sub = outs[i]
        out = ctx.output(i)
        target = out if type(out) is TensorType else TensorType(None, None)
        if type(sub) is not TensorType:
            raise fail_type("Scan 'body' subgraph outputs should all be tensors but output ", i, " was not")
        if is_state:
            if sub.shape is not None:
                target = TensorType(target.elem, merge_in_shape(sub.shape, target.shape))
        else:
            target = TensorType(sub.elem if sub.elem is not None else 0, target.shape)
            if sub.shape is not None:
                rank = len(sub.shape)
                oa = _axis("scan_output_axes", D.int32(out_axes[i - n_state]), rank + 1)
                inferred = tuple(sub.shape[:oa]) + (seq_len,) + tuple(sub.shape[oa:])
                target = TensorType(target.elem, merge_in_shape(inferred, target.shape))
        ctx.set_output(i, target)


@infers("Scan", 8)
def scan8(ctx) -> None:
    n = ctx.num_inputs
    n_scan = C.required_attr_int(ctx, "num_scan_inputs")
    if n_scan < 0:
        raise fail_shape("narrow: value ", n_scan, " cannot be represented in target type")
    if n_scan + 1 > n:
        raise fail_shape("num_scan_inputs (", n_scan, ") plus the sequence_lens input cannot exceed the number of "
                         "Scan inputs (", n, ").")
    n_state = n - 1 - n_scan
    body_inputs = []
    batch = seq_len = None
    for i in range(1, n):
        is_state = (i - 1) < n_state
        has_shape = C.has_input_shape(ctx, i)
        t = ctx.input_type(i)
        if t is None or type(t) is not TensorType:
            raise fail_type("Scan input ", i, " was not a tensor.")
        if is_state:
            C.propagate_elem(ctx, i, i - 1)
            if has_shape:
                assert t.shape is not None  # has_shape of a tensor type: its shape is present
                C.propagate_shape(ctx, i, i - 1)
                body_inputs.append(TensorType(t.elem, t.shape[1:]))
            else:
                body_inputs.append(t)
        elif has_shape:
            assert t.shape is not None  # has_shape of a tensor type: its shape is present
            body_inputs.append(TensorType(t.elem, t.shape[2:]))
            if len(t.shape) > 2:
                batch = merge_in_dim(t.shape[0], batch, 0)
                seq_len = merge_in_dim(t.shape[1], seq_len, 1)
        else:
            body_inputs.append(t)
    data = [ctx.input_data(i) for i in range(1, n)]
    outs = ctx.graph_inferencer("body").infer(body_inputs, data)
    if not outs:
        return
    n_out = ctx.num_outputs
    if len(outs) != n_out:
        raise fail_type("Graph attribute inferencing returned type information for ", len(outs),
                        " outputs. Expected ", n_out)
    for i in range(n_out):
        is_state = i < n_state
        sub = outs[i]
        if type(sub) is not TensorType:
            raise fail_type("Scan 'body' subgraph outputs should all be tensors but output ", i, " was not")
        out = ctx.output(i)
        target = out if type(out) is TensorType else TensorType(None, None)
        if not is_state:
            target = TensorType(sub.elem if sub.elem is not None else 0, target.shape)
        if sub.shape is not None:
            inferred = (batch,) + (() if is_state else (seq_len,)) + tuple(sub.shape)
            target = TensorType(target.elem, merge_in_shape(inferred, target.shape))
        ctx.set_output(i, target)

