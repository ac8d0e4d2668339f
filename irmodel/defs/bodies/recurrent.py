"""Built bodies of the operators that carry a state between calls: CausalConvWithState and
LinearAttention (both version 27).

Each builder takes (attributes, input types, opset version), fills a `BodyBuilder` and
returns True, or returns False where the reference's builder refuses.
"""

from __future__ import annotations

from .base import FLOAT, INT64, BodyBuilder, NodeAttributes, float32, input_type


def _causal_conv_with_state(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """CausalConvWithState: a depthwise Conv over the input prefixed by ``past_state`` (or zeros),
    optionally followed by SiLU; the last k - 1 steps of the prefixed input are the new state.

    The Conv's ``group`` is the channel count, known from the input's dim 1 or else the
    weight's dim 0; refused without it, and for an activation other than none, silu, swish.
    """
    channels = _channel_count(input_types)
    if channels is None:
        return False
    activation = attrs.s("activation", b"none")
    if activation not in (b"none", b"silu", b"swish"):
        return False  # the reference refuses after writing the first nodes
    b.const_1d("One1D", 1, INT64)
    b.add("Shape", ["weight"], ["KernelSize"], start=2, end=3)
    b.add("Sub", ["KernelSize", "One1D"], ["Km1"])
    if attrs.has_input(3):
        b.add("Concat", ["past_state", "input"], ["PaddedInput"], axis=2)
    else:
        b.add("Shape", ["input"], ["BatchDim"], start=0, end=1)
        b.add("Shape", ["input"], ["ChannelDim"], start=1, end=2)
        b.add("Concat", ["BatchDim", "ChannelDim", "Km1"], ["ZeroPadShape"], axis=0)
        b.add("ConstantOfShape", ["ZeroPadShape"], ["ZeroPad"])
        b.add("CastLike", ["ZeroPad", "input"], ["ZeroPadCast"])
        b.add("Concat", ["ZeroPadCast", "input"], ["PaddedInput"], axis=2)
    conv_inputs = ["PaddedInput", "weight"] + (["bias"] if attrs.has_input(2) else [])
    b.add("Conv", conv_inputs, ["ConvOut"], group=channels)
    if activation == b"none":
        b.add("Identity", ["ConvOut"], ["output"])
    else:
        b.add("Cast", ["ConvOut"], ["ConvOutFloat"], to=FLOAT)
        b.add("Sigmoid", ["ConvOutFloat"], ["ConvSigmoid"])
        b.add("Mul", ["ConvOutFloat", "ConvSigmoid"], ["MulOutFloat"])
        b.add("CastLike", ["MulOutFloat", "ConvOut"], ["output"])
    b.add("Shape", ["PaddedInput"], ["PadLen"], start=2, end=3)
    b.add("Sub", ["PadLen", "Km1"], ["StartIdx"])
    b.const_list("SliceAxes", [2], INT64)
    b.add("Slice", ["PaddedInput", "StartIdx", "PadLen", "SliceAxes"], ["present_state"])
    return True


def _channel_count(input_types) -> int | None:
    """The input's dim 1 when known, else the weight's dim 0; None when neither is."""
    x = input_type(input_types, 0)
    if x is None or x.WhichOneof("value") != "tensor_type" or not x.tensor_type.HasField("shape"):
        return None
    dims = x.tensor_type.shape.dim
    if len(dims) < 2:
        return None
    if dims[1].WhichOneof("value") == "dim_value":
        return dims[1].dim_value
    w = input_type(input_types, 1)
    if w is None or w.WhichOneof("value") != "tensor_type" or not w.tensor_type.HasField("shape"):
        return None
    w_dims = w.tensor_type.shape.dim
    if not w_dims or w_dims[0].WhichOneof("value") != "dim_value":
        return None
    return w_dims[0].dim_value


# the Scan body's state update per update_rule (any other rule gets gated_delta's)
_STEP_INPUTS = {
    b"linear": ("state_in q_t k_t v_t", "State0 Q4D K4D V4D"),
    b"gated": ("state_in q_t k_t v_t decay_t", "State0 Q4D K4D V4D Decay4D"),
    b"delta": ("state_in q_t k_t v_t beta_t", "State0 Q4D K4D V4D Beta4D"),
}
_GATED_DELTA_INPUTS = ("state_in q_t k_t v_t decay_t beta_t", "State0 Q4D K4D V4D Decay4D Beta4D")


def _linear_attention(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """LinearAttention: a Scan over the sequence of a [d_k, d_v] state per key/value head.

    Each step (in float) updates the state by the rule (add k·vᵀ; gated: first scale it by
    exp(decay); delta: write beta·(v - stateᵀ·k) instead of v) and reads ``scale·q·state``,
    the state repeated over each group of query heads.  The inputs are [batch, seq, heads ·
    dim] and scanned as [seq, batch, heads, dim].  Refused without both head counts (positive,
    kv dividing q) or without the query's type.
    """
    q_heads, kv_heads = attrs.get("q_num_heads"), attrs.get("kv_num_heads")
    if q_heads is None or not q_heads.HasField("i") or kv_heads is None or not kv_heads.HasField("i"):
        return False
    q_heads, kv_heads = q_heads.i, kv_heads.i
    scale_attr = attrs.get("scale")
    scale = float32(scale_attr.f) if scale_attr is not None and scale_attr.HasField("f") else 0.0
    rule = attrs.s("update_rule", b"gated_delta")
    has_decay = rule in (b"gated", b"gated_delta")
    has_beta = rule in (b"delta", b"gated_delta")
    if input_type(input_types, 0) is None:
        return False
    if q_heads <= 0 or kv_heads <= 0 or q_heads % kv_heads != 0:
        return False
    group_size = q_heads // kv_heads

    b.const_1d("NegOne1D", -1, INT64)
    b.const_1d("One1D", 1, INT64)
    b.const_1d("HqConst", q_heads, INT64)
    b.const_1d("HkvConst", kv_heads, INT64)
    b.add("Shape", ["query"], ["BatchDim"], start=0, end=1)
    b.add("Shape", ["query"], ["SeqLenDim"], start=1, end=2)
    b.add("Concat", ["BatchDim", "SeqLenDim", "HqConst", "NegOne1D"], ["QShape4D"], axis=0)
    b.add("Reshape", ["query", "QShape4D"], ["QReshaped"])
    b.add("Transpose", ["QReshaped"], ["Q4D"], perm=[1, 0, 2, 3])
    b.add("Concat", ["BatchDim", "SeqLenDim", "HkvConst", "NegOne1D"], ["KVShape4D"], axis=0)
    b.add("Reshape", ["key", "KVShape4D"], ["KReshaped"])
    b.add("Transpose", ["KReshaped"], ["K4D"], perm=[1, 0, 2, 3])
    b.add("Reshape", ["value", "KVShape4D"], ["VReshaped"])
    b.add("Transpose", ["VReshaped"], ["V4D"], perm=[1, 0, 2, 3])
    if has_decay:
        b.add("Reshape", ["decay", "KVShape4D"], ["DecayReshaped"])
        b.add("Transpose", ["DecayReshaped"], ["Decay4D"], perm=[1, 0, 2, 3])
    if has_beta:
        b.add("Concat", ["BatchDim", "SeqLenDim", "NegOne1D", "One1D"], ["BetaShape4D"], axis=0)
        b.add("Reshape", ["beta", "BetaShape4D"], ["BetaReshaped"])
        b.add("Transpose", ["BetaReshaped"], ["Beta4D"], perm=[1, 0, 2, 3])
    b.add("Shape", ["query"], ["QLastDim"], start=2, end=3)
    b.add("Shape", ["value"], ["VLastDim"], start=2, end=3)
    b.add("Div", ["QLastDim", "HqConst"], ["DkDim"])
    b.add("Div", ["VLastDim", "HkvConst"], ["DvDim"])
    if attrs.has_input(3):
        b.add("Cast", ["past_state"], ["State0"], to=FLOAT)
    else:
        b.add("Concat", ["BatchDim", "HkvConst", "DkDim", "DvDim"], ["StateShape"], axis=0)
        b.add("ConstantOfShape", ["StateShape"], ["State0"])
    if scale != 0.0:
        b.const("ScaleFactor", scale, FLOAT)
    else:
        b.add("Squeeze", ["DkDim"], ["DkScalar"])
        b.add("Cast", ["DkScalar"], ["DkFloat"], to=FLOAT)
        b.add("Sqrt", ["DkFloat"], ["SqrtDk"])
        b.add("Reciprocal", ["SqrtDk"], ["ScaleFactor"])
    if group_size > 1:
        b.const_1d("GroupSize", group_size, INT64)
        b.const_1d("Two1D", 2, INT64)
        b.add("Concat", ["BatchDim", "HkvConst", "GroupSize", "DkDim", "DvDim"], ["StateExpandShape"], axis=0)
        b.add("Concat", ["BatchDim", "HqConst", "DkDim", "DvDim"], ["StateReadShape"], axis=0)
    b.const_1d("NegTwo1D", -2, INT64)

    step_text, scanned_text = _STEP_INPUTS.get(rule, _GATED_DELTA_INPUTS)
    step_inputs, scanned = step_text.split(), scanned_text.split()
    nodes = _state_update(b, step_inputs) + _state_read(b, group_size > 1)
    step = b.graph("linear_attn_step", [(name, None) for name in step_inputs], ["state_out", "output_t"], nodes)
    b.add("Scan", scanned, ["FinalState", "OutputAccum"], num_scan_inputs=len(scanned) - 1, body=step)
    b.add("Transpose", ["OutputAccum"], ["OutputTransposed"], perm=[1, 0, 2, 3])
    b.add("Concat", ["BatchDim", "SeqLenDim", "NegOne1D"], ["OutputShape3D"], axis=0)
    b.add("Reshape", ["OutputTransposed", "OutputShape3D"], ["output"])
    b.add("CastLike", ["FinalState", "past_state" if attrs.has_input(3) else "query"], ["present_state"])
    return True


def _state_update(b: BodyBuilder, step_inputs: list[str]) -> list:
    """The step's nodes up to ``state_out``: the inputs in float, the decay, the delta, the write."""
    decayed, delta = "decay_t" in step_inputs, "beta_t" in step_inputs
    nodes = [b.node("Cast", [x], [f"{x}_f"], {"to": FLOAT}) for x in step_inputs[1:]]
    state = "state_in"
    if decayed:
        nodes += [b.node("Exp", ["decay_t_f"], ["DecayExp"], {}),
                  b.node("Unsqueeze", ["DecayExp", "NegOne1D"], ["DecayExpUnsq"], {}),
                  b.node("Mul", ["state_in", "DecayExpUnsq"], ["DecayedState"], {})]
        state = "DecayedState"
    nodes.append(b.node("Unsqueeze", ["k_t_f", "NegOne1D"], ["KtCol"], {}))
    if delta:
        nodes += [b.node("Transpose", [state], ["StateT"], {"perm": [0, 1, 3, 2]}),
                  b.node("MatMul", ["StateT", "KtCol"], ["Retrieved"], {}),
                  b.node("Squeeze", ["Retrieved", "NegOne1D"], ["RetrievedSq"], {}),
                  b.node("Sub", ["v_t_f", "RetrievedSq"], ["Diff"], {}),
                  b.node("Mul", ["beta_t_f", "Diff"], ["Delta"], {}),
                  b.node("Unsqueeze", ["Delta", "NegTwo1D"], ["WriteRow"], {})]
    else:
        nodes.append(b.node("Unsqueeze", ["v_t_f", "NegTwo1D"], ["WriteRow"], {}))
    nodes += [b.node("MatMul", ["KtCol", "WriteRow"], ["Outer"], {}),
              b.node("Add", [state, "Outer"], ["state_out"], {})]
    return nodes


def _state_read(b: BodyBuilder, grouped: bool) -> list:
    """The step's output: ``scale · q · state`` (the state repeated per query-head group)."""
    state = "state_out"
    nodes = []
    if grouped:
        nodes += [b.node("Unsqueeze", ["state_out", "Two1D"], ["StateUnsq"], {}),
                  b.node("Expand", ["StateUnsq", "StateExpandShape"], ["StateExpanded"], {}),
                  b.node("Reshape", ["StateExpanded", "StateReadShape"], ["StateForRead"], {})]
        state = "StateForRead"
    return nodes + [b.node("Unsqueeze", ["q_t_f", "NegTwo1D"], ["QtRow"], {}),
                    b.node("MatMul", ["QtRow", state], ["ReadOut"], {}),
                    b.node("Squeeze", ["ReadOut", "NegTwo1D"], ["ReadSq"], {}),
                    b.node("Mul", ["ScaleFactor", "ReadSq"], ["output_t_f"], {}),
                    b.node("CastLike", ["output_t_f", "q_t"], ["output_t"], {})]


BUILDERS = {
    ("", "CausalConvWithState"): _causal_conv_with_state,
    ("", "LinearAttention"): _linear_attention,
}
