"""Built body of ai.onnx.preview FlexAttention 1: attention with graphs that modify the scores
and the probabilities, inlined into the body.

The builder takes (attributes, input types, opset version), fills a `BodyBuilder` and
returns True, or returns False where the reference's builder refuses.
"""

from __future__ import annotations

from .base import (BFLOAT16, DOUBLE, FLOAT, FLOAT16, INT64, BodyBuilder, NodeAttributes, float32, int32,
                   tensor_elem)
from .inline import add_inlined_call

_SOFTMAX_TYPES = (FLOAT, FLOAT16, BFLOAT16, DOUBLE)


def _modifier(attrs: NodeAttributes, name: str):
    """(acceptable, graph to inline or None): a modifier must be a graph of one input and one
    output; one with no nodes whose output is its input changes nothing."""
    a = attrs.get(name)
    if a is None:
        return True, None
    if not a.HasField("g"):
        return False, None
    g = a.g
    if len(g.input) != 1 or len(g.output) != 1:
        return False, None
    identity = len(g.node) == 0 and g.input[0].name == g.output[0].name
    return True, None if identity else g


def _flex_attention(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """FlexAttention: softmax(score_mod(Q·Kᵀ·scale)) along the keys, prob_mod of it, times V.

    K and V heads are repeated to Q's head count; Q and K are each scaled by sqrt(scale)
    (default 1/sqrt(head_size)); the scores are computed in ``softmax_precision`` (default
    float, double for double inputs).  Refused unless Q, K, V are tensors of one element
    type, for a non-float precision, or a modifier that is not a one-in one-out graph.
    """
    elem = tensor_elem(input_types, 0)
    if elem is None or tensor_elem(input_types, 1) != elem or tensor_elem(input_types, 2) != elem:
        return False
    precision_attr = attrs.get("softmax_precision")
    precision = int32(precision_attr.i) if precision_attr is not None else (DOUBLE if elem == DOUBLE else FLOAT)
    if precision not in _SOFTMAX_TYPES:
        return False
    score_ok, score_mod = _modifier(attrs, "score_mod")
    prob_ok, prob_mod = _modifier(attrs, "prob_mod")
    if not score_ok or not prob_ok:
        return False

    b.add("Shape", ["Q"], ["BatchSize"], start=0, end=1)
    b.add("Shape", ["K"], ["KVSeqLen"], start=-2, end=-1)
    b.add("Shape", ["Q"], ["QNumHeads"], start=1, end=2)
    b.add("Shape", ["K"], ["KVNumHeads"], start=1, end=2)
    b.add("Div", ["QNumHeads", "KVNumHeads"], ["KVRepeat"])
    b.const_1d("Axis2", 2, INT64)
    for x in "KV":
        b.add("Unsqueeze", [x, "Axis2"], [f"{x}Unsqueezed"])
        b.add("Shape", [x], [f"{x}HeadSize1D"], start=3, end=4)
        b.add("Concat", ["BatchSize", "KVNumHeads", "KVRepeat", "KVSeqLen", f"{x}HeadSize1D"], [f"{x}ExpandShape"],
              axis=0)
        b.add("Expand", [f"{x}Unsqueezed", f"{x}ExpandShape"], [f"{x}Expanded"])
        b.add("Concat", ["BatchSize", "QNumHeads", "KVSeqLen", f"{x}HeadSize1D"], [f"{x}AlignedShape"], axis=0)
        b.add("Reshape", [f"{x}Expanded", f"{x}AlignedShape"], [f"{x}Aligned"])
    scale = attrs.get("scale")
    if scale is not None:
        b.const("ScaleFactorF32", float32(scale.f), FLOAT)
    else:
        b.add("Shape", ["Q"], ["QShapeAll"])
        b.const("Idx3Head", 3, INT64)
        b.add("Gather", ["QShapeAll", "Idx3Head"], ["QKHeadSize"], axis=0)
        b.add("Cast", ["QKHeadSize"], ["QKHeadSizeF"], to=FLOAT)
        b.add("Sqrt", ["QKHeadSizeF"], ["SqrtHeadSize"])
        b.const("OneF", 1.0, FLOAT)
        b.add("Div", ["OneF", "SqrtHeadSize"], ["CalculatedScale"])
        b.add("Identity", ["CalculatedScale"], ["ScaleFactorF32"])
    b.add("Sqrt", ["ScaleFactorF32"], ["ScaleFactorSqrtF32"])
    b.add("Cast", ["ScaleFactorSqrtF32"], ["ScaleFactorSqrt"], to=elem)
    b.add("Mul", ["Q", "ScaleFactorSqrt"], ["QScaled"])
    b.add("Mul", ["KAligned", "ScaleFactorSqrt"], ["KScaled"])
    b.add("Transpose", ["KScaled"], ["KTranspose"], perm=[0, 1, 3, 2])
    b.add("MatMul", ["QScaled", "KTranspose"], ["Score"])
    b.add("Cast", ["Score"], ["SoftmaxCast"], to=precision)
    if score_mod is not None:
        add_inlined_call(b, ["ScoreAfterScoreMod"], score_mod, ["SoftmaxCast"], "ScoreMod_")
    else:
        b.add("Identity", ["SoftmaxCast"], ["ScoreAfterScoreMod"])
    b.add("Softmax", ["ScoreAfterScoreMod"], ["Prob"], axis=3)
    if prob_mod is not None:
        add_inlined_call(b, ["ProbAfterProbMod"], prob_mod, ["Prob"], "ProbMod_")
    else:
        b.add("Identity", ["Prob"], ["ProbAfterProbMod"])
    if precision != elem:
        b.add("Cast", ["VAligned"], ["VSp"], to=precision)
        b.add("MatMul", ["ProbAfterProbMod", "VSp"], ["YSp"])
        b.add("Cast", ["YSp"], ["Y"], to=elem)
    else:
        b.add("MatMul", ["ProbAfterProbMod", "VAligned"], ["Y"])
    return True


BUILDERS = {
    ("ai.onnx.preview", "FlexAttention"): _flex_attention,
}
