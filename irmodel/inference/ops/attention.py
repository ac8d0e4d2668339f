"""Attention-style layers: Attention, RotaryEmbedding, LinearAttention, CausalConvWithState."""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..registry import infers
from ..types import TensorType


def _value(d) -> int:
    """``dim.dim_value()``: 0 when the dim holds no value."""
    return d if type(d) is int else 0


def _attention_outputs(ctx) -> None:
    """The output types of Attention-23/24 (and the first part of 25)."""
    C.propagate_elem(ctx, 0, 0)
    kv_len = -1
    out = []
    qk = []
    if C.has_input_shape(ctx, 0):
        q = C.input_shape(ctx, 0)
        if len(q) not in (3, 4):
            raise fail_shape("Inputs 0 (query) shall be 3 or 4 dimensions")
        if len(q) == 3:
            if ctx.attr("q_num_heads") is None:
                raise fail_type("3D inputs expected to have q_num_heads attribute.")
            if ctx.attr("kv_num_heads") is None:
                raise fail_type("3D inputs expected to have kv_num_heads attribute.")
        out = [q[0], q[1]]
        qk = [q[0]]
        if C.has_input_shape(ctx, 1):
            if len(C.input_shape(ctx, 1)) not in (3, 4):
                raise fail_shape("Inputs 1 (key) shall be 3 or 4 dimensions")
        if C.has_input_shape(ctx, 2):
            v = C.input_shape(ctx, 2)
            if len(v) not in (3, 4):
                raise fail_shape("Inputs 2 (value) shall be 3 or 4 dimensions")
            if len(v) == 4 and len(q) == 4:
                kv_len = _value(v[2])
                out += [q[2], v[3]]
                C.set_output_shape(ctx, 0, out)
                qk += [q[1], q[2], kv_len]
            if len(v) == 3 and len(q) == 3:
                kv_len = _value(v[1])
                qa, ka = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
                if qa is None:
                    raise fail_type("3D inputs expected to have q_num_heads attribute.")
                if ka is None:
                    raise fail_type("3D inputs expected to have kv_num_heads attribute.")
                qh, kh = qa.i, ka.i
                if qh <= 0 or kh <= 0:
                    raise fail_type("q_num_heads and kv_num_heads must be positive.")
                head = D.checked_div(_value(v[2]), kh)
                out.append(D.checked_mul(head, qh))
                C.set_output_shape(ctx, 0, out)
                qk += [qh, q[1], kv_len]
    if ctx.has_output(3):
        C.propagate_elem(ctx, 0, 3)
        C.set_output_shape(ctx, 3, qk)
    if ctx.has_output(1) and ctx.has_output(2) and ctx.has_input(4) and ctx.has_input(5):
        C.propagate_elem(ctx, 4, 1)
        C.propagate_elem(ctx, 5, 2)
        if C.has_input_shape(ctx, 4) and C.has_input_shape(ctx, 5):
            pk, pv = C.input_shape(ctx, 4), C.input_shape(ctx, 5)
            if len(pk) != 4:
                raise fail_shape("The past_key input shall be 4 dimensions")
            if len(pv) != 4:
                raise fail_shape("The past_value input shall be 4 dimensions")
            if kv_len > 0 and type(pk[2]) is int:
                total = D.checked_add(kv_len, pk[2])
                if ctx.has_output(3):
                    qk[3] = total
                    C.set_output_shape(ctx, 3, qk)
                key, value = list(pk), list(pv)
                key[2] = value[2] = total
                C.set_output_shape(ctx, 1, key)
                C.set_output_shape(ctx, 2, value)


infers("Attention", 23)(_attention_outputs)


@infers("Attention", 25)
def attention25(ctx) -> None:
    _attention_outputs(ctx)
    for name in ("left_window_size", "right_window_size"):
        a = ctx.attr(name)
        size = a.i if a is not None else -1
        if size < -1:
            raise fail_shape(name, " must be -1 or nonnegative, got ", size)
    rank = len(C.input_shape(ctx, 0)) if C.has_input_shape(ctx, 0) else None
    qa, ka = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    if rank == 3 and qa is not None and ka is not None and (qa.i <= 0 or ka.i <= 0):
        raise fail_shape("q_num_heads and kv_num_heads must be positive for 3D inputs.")
    past_k, past_v = ctx.has_input(4), ctx.has_input(5)
    if past_k != past_v:
        raise fail_shape("past_key and past_value must be provided together.")
    present_k, present_v = ctx.has_output(1), ctx.has_output(2)
    if present_k != present_v:
        raise fail_shape("present_key and present_value must be requested together.")
    if ctx.has_input(6) and (past_k or present_k):
        raise fail_shape("nonpad_kv_seqlen cannot be combined with past or present cache tensors.")
    if rank == 4 and (qa is not None or ka is not None):
        raise fail_shape("q_num_heads and kv_num_heads must not be specified for 4D inputs.")


@infers("RotaryEmbedding", 23)
def rotary_embedding(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    C.propagate_shape(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    t = ctx.input_type(0)
    rank = len(t.shape) if type(t) is TensorType and t.shape is not None else 0
    if rank < 3 or rank > 4:
        raise fail_shape("Input tensor must have at least 3 and at most 4 dimensions")
    if rank == 3 and ctx.attr("num_heads") is None:
        raise fail_shape("Input shape is 3D, num_heads attribute must be provided")


@infers("CausalConvWithState", 27)
def causal_conv_with_state(ctx) -> None:
    a = ctx.attr("activation")
    if a is not None and a.HasField("s"):
        activation = bytes(a.s)
        if activation not in (b"none", b"silu", b"swish"):
            raise fail_shape("CausalConvWithState: unsupported activation value '",
                             activation.decode("utf-8", "replace"),
                             "'. Supported values are 'none', 'silu', and 'swish'.")
    C.propagate_elem(ctx, 0, 0)
    C.propagate_elem(ctx, 0, 1)
    C.propagate_shape(ctx, 0, 0)
    b, c, _l = C.unify_input_shape(ctx, 0, [None, None, None])
    c, _one, k = C.unify_input_shape(ctx, 1, [c, 1, None])
    if ctx.has_input(2):
        (c,) = C.unify_input_shape(ctx, 2, [c])
    k_minus_1 = None
    if ctx.has_input(3):
        b, c, k_minus_1 = C.unify_input_shape(ctx, 3, [b, c, k_minus_1])
    k_minus_1 = D.unify(D.sub_int(k, 1), k_minus_1)
    if type(k) is int and k < 1:
        raise fail_shape("Kernel size k must be >= 1, got ", k)
    C.set_output_shape(ctx, 1, (b, c, k_minus_1))


_RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True), "gated_delta": (True, True)}


@infers("LinearAttention", 27)
def linear_attention(ctx) -> None:
    qa, ka = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    qh = qa.i if qa is not None and qa.HasField("i") else 0
    kh = ka.i if ka is not None and ka.HasField("i") else 0
    if qh <= 0:
        raise fail_type("q_num_heads must be > 0, got ", qh)
    if kh <= 0:
        raise fail_type("kv_num_heads must be > 0, got ", kh)
    if D.trunc_rem(qh, kh) != 0:
        raise fail_type("q_num_heads (", qh, ") must be a multiple of kv_num_heads (", kh, ")")
    ra = ctx.attr("update_rule")
    rule = bytes(ra.s).decode("utf-8", "replace") if ra is not None else "gated_delta"
    if rule not in _RULES:
        raise fail_type("update_rule must be one of: 'linear', 'gated', 'delta', 'gated_delta'")
    has_past, has_decay, has_beta = ctx.has_input(3), ctx.has_input(4), ctx.has_input(5)
    needs_decay, needs_beta = _RULES[rule]
    if has_decay != needs_decay:
        raise fail_type("update_rule '", rule, "' ", "requires" if needs_decay else "forbids", " decay input")
    if has_beta != needs_beta:
        raise fail_type("update_rule '", rule, "' ", "requires" if needs_beta else "forbids", " beta input")
    C.propagate_elem(ctx, 0, 0)
    past = ctx.input_type(3) if has_past else None
    C.propagate_elem(ctx, 3 if (has_past and type(past) is TensorType) else 0, 1)
    b = t = qp = kp = vp = dk = dv = None
    hkv = kh if kh > 0 else None
    b, t, qp = C.unify_input_shape(ctx, 0, [b, t, qp])
    b, t, kp = C.unify_input_shape(ctx, 1, [b, t, kp])
    b, t, vp = C.unify_input_shape(ctx, 2, [b, t, vp])
    if has_past:
        b, hkv, dk, dv = C.unify_input_shape(ctx, 3, [b, hkv, dk, dv])
    if has_decay:
        b, t, _ = C.unify_input_shape(ctx, 4, [b, t, None])
    if has_beta:
        b, t, _ = C.unify_input_shape(ctx, 5, [b, t, None])
    for packed, heads, what in ((qp, qh, "query"), (kp, kh, "key")):
        if heads > 0 and type(packed) is int:
            if D.trunc_rem(packed, heads) != 0:
                raise fail_shape("Packed ", what, " last dim (", packed, ") must be divisible by ",
                                 "q_num_heads (" if what == "query" else "kv_num_heads (", heads, ")")
            dk = D.unify_value(dk, D.checked_div(packed, heads))
    if kh > 0 and type(vp) is int:
        if D.trunc_rem(vp, kh) != 0:
            raise fail_shape("Packed value last dim (", vp, ") must be divisible by kv_num_heads (", kh, ")")
        dv = D.unify_value(dv, D.checked_div(vp, kh))
    if has_decay and kh > 0:
        last = _last_of_rank3(ctx.input_type(4))
        if last is not None:
            if type(dk) is int:
                kv_dk = D.checked_mul(kh, dk)
                if last != kh and last != kv_dk:
                    raise fail_shape("decay last dim (", last, ") must be kv_num_heads (", kh,
                                     ") or kv_num_heads * d_k (", kv_dk, ")")
            elif last != kh and D.trunc_rem(last, kh) != 0:
                raise fail_shape("decay last dim (", last, ") must be kv_num_heads (", kh,
                                 ") or a multiple of kv_num_heads")
    if has_beta and kh > 0:
        last = _last_of_rank3(ctx.input_type(5))
        if last is not None and last != 1 and last != kh:
            raise fail_shape("beta last dim (", last, ") must be 1 or kv_num_heads (", kh, ")")
    out_last = D.checked_mul(qh, dv) if qh > 0 and type(dv) is int else None
    C.set_output_shape(ctx, 0, (b, t, out_last))
    C.set_output_shape(ctx, 1, (b, hkv, dk, dv))


def _last_of_rank3(t):
    if type(t) is TensorType and t.shape is not None and len(t.shape) == 3 and type(t.shape[2]) is int:
        return t.shape[2]
    return None


# -- FlexAttention (ai.onnx.preview) -------------------------------------------------------------

_SOFTMAX_TYPES = (1, 10, 16, 11)  # float, float16, bfloat16, double


def _declared(vi):
    from ..types import type_from_proto  # noqa: PLC0415
    return type_from_proto(vi.type) if vi.HasField("type") else None


def _check_modifier(a, name: str, expected: int) -> None:
    """A score/prob modifier graph: one rank-4 input and output of the softmax element type."""
    if a is None:
        return
    if not a.HasField("g"):
        raise fail_shape("Attribute ", name, " must be a graph.")
    g = a.g
    inputs, outputs = list(g.input), list(g.output)
    if len(inputs) != 1:
        raise fail_shape("Attribute ", name, " expected 1 input but graph has ", len(inputs), ".")
    if len(outputs) != 1:
        raise fail_shape("Attribute ", name, " must have exactly one output.")
    tin, tout = _declared(inputs[0]), _declared(outputs[0])
    if type(tin) is TensorType and (tin.elem or 0) != expected:
        raise fail_shape("Attribute ", name, " input(0) type mismatch. Expected ", expected, ", got ", tin.elem or 0,
                         ".")
    if tout is not None:
        if type(tout) is not TensorType:
            raise fail_shape("Attribute ", name, " output must be a tensor.")
        if (tout.elem or 0) != expected:
            raise fail_shape("Attribute ", name, " output type mismatch. Expected ", expected, ", got ",
                             tout.elem or 0, ".")
    if type(tin) is TensorType and tin.shape is not None and len(tin.shape) != 4:
        raise fail_shape("Attribute ", name, " input must be rank-4 tensor when shape is specified.")
    if type(tout) is TensorType and tout.shape is not None and len(tout.shape) != 4:
        raise fail_shape("Attribute ", name, " output must be rank-4 tensor when shape is specified.")
    if type(tin) is TensorType and type(tout) is TensorType:
        for a_dim, b_dim in zip(tin.shape or (), tout.shape or ()):
            if type(a_dim) is int and type(b_dim) is int and a_dim != b_dim:
                raise fail_shape("Attribute ", name, " output shape must match input shape when specified.")


@infers("FlexAttention", 1, domain="ai.onnx.preview")
def flex_attention(ctx) -> None:
    from ..merge import merge_in_dim  # noqa: PLC0415
    if ctx.num_inputs < 3:
        raise fail_type("FlexAttention requires query, key, and value inputs.")
    q, k, v = ctx.input_type(0), ctx.input_type(1), ctx.input_type(2)
    if q is None or k is None or v is None:
        return
    if type(q) is not TensorType or type(k) is not TensorType or type(v) is not TensorType:
        raise fail_type("Inputs 0, 1, and 2 are required tensor types.")
    qe, ke, ve = q.elem or 0, k.elem or 0, v.elem or 0
    if qe != ke or qe != ve:
        raise fail_type("Inputs query, key, and value must have the same element type.")
    out = ctx.output(0)
    ctx.set_output(0, TensorType(qe, out.shape if type(out) is TensorType else None))
    qs, ks, vs = q.shape or (), k.shape or (), v.shape or ()
    if len(qs) != 4 or len(ks) != 4 or len(vs) != 4:
        raise fail_shape("FlexAttention requires rank-4 inputs: Q (B, Hq, L, Dqk), K (B, Hkv, S, Dqk), "
                         "V (B, Hkv, S, Dv).")

    def both(a, b):
        return type(a) is int and type(b) is int

    if both(ks[1], vs[1]) and ks[1] != vs[1]:
        raise fail_shape("Key and value must share the same head dimension.")
    if both(ks[2], vs[2]) and ks[2] != vs[2]:
        raise fail_shape("Key and value must share the same sequence length.")
    if both(qs[3], ks[3]) and qs[3] != ks[3]:
        raise fail_shape("Query and key must share the same embedding dimension.")
    if both(qs[1], ks[1]):
        hq, hkv = qs[1], ks[1]
        if hq != hkv and (hkv <= 0 or D.trunc_rem(hq, hkv) != 0):
            raise fail_shape("q_num_heads must be a multiple of kv_num_heads when they differ.")
    shape = [qs[0], qs[1], qs[2], vs[3]]
    shape[0] = merge_in_dim(ks[0], shape[0], 0)
    shape[0] = merge_in_dim(vs[0], shape[0], 0)
    if both(qs[1], ks[1]) and qs[1] == ks[1]:
        shape[1] = merge_in_dim(ks[1], shape[1], 1)
    ctx.set_output(0, TensorType(qe, tuple(shape)))
    precision = ctx.attr("softmax_precision")
    softmax = D.int32(precision.i) if precision is not None else (11 if qe == 11 else 1)
    if softmax not in _SOFTMAX_TYPES:
        raise fail_type("softmax_precision must be specified when inputs are not float/float16/bfloat16/double.")
    _check_modifier(ctx.attr("score_mod"), "score_mod", softmax)
    _check_modifier(ctx.attr("prob_mod"), "prob_mod", softmax)
