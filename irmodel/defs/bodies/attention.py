"""Built bodies of the attention family: RotaryEmbedding, Attention (23, 24, 25), LinearAttention.

Each builder takes (attributes, input types, opset version), fills a `BodyBuilder` and
returns True, or returns False where the reference's builder refuses.
"""

from __future__ import annotations

from .base import (BFLOAT16, BOOL, DOUBLE, FLOAT, FLOAT16, INT64, BodyBuilder, NodeAttributes, float32,
                   input_type, tensor_elem)


def _rotary_embedding(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """RotaryEmbedding: rotate the first ``rotary_embedding_dim`` features of each head.

    The input is brought to [batch, seq, heads, head_size] (a 3-D input reshaped by
    ``num_heads``, a 4-D one transposed from [batch, heads, seq, head_size]), split into
    the rotated and the kept part; the rotated part's halves (or, ``interleaved``, its even
    and odd features) are turned by the cos/sin caches (gathered at ``position_ids`` when
    given), joined back and brought to the input's shape.  Refused unless X is a tensor of
    known rank 3 or 4.
    """
    x = input_type(input_types, 0)
    if x is None or x.WhichOneof("value") != "tensor_type" or not x.tensor_type.HasField("shape"):
        return False
    rank = len(x.tensor_type.shape.dim)
    if rank not in (3, 4):
        return False
    is_4d = rank == 4
    interleaved = attrs.i("interleaved", 0)
    rotary_dim = attrs.i("rotary_embedding_dim", 0)
    b.const_1d("Zero1D", 0, INT64)
    b.const_1d("NumHeads", attrs.i("num_heads", 0), INT64)
    b.const_1d("NegOne", -1, INT64)
    if is_4d:
        b.add("Transpose", ["X"], ["XIn"], perm=[0, 2, 1, 3])
    else:
        b.add("Concat", ["Zero1D", "Zero1D", "NumHeads", "NegOne"], ["NewShape"], axis=0)
        b.add("Reshape", ["X", "NewShape"], ["XIn"])
    b.add("Shape", ["XIn"], ["HeadSize"], start=3, end=4)
    if rotary_dim > 0:
        b.const_1d("RotaryEmbedDim", rotary_dim, INT64)
    else:
        b.add("Identity", ["HeadSize"], ["RotaryEmbedDim"])
    b.const_1d("Two1D", 2, INT64)
    b.add("Sub", ["HeadSize", "RotaryEmbedDim"], ["NoRotateLength"])
    b.add("Concat", ["RotaryEmbedDim", "NoRotateLength"], ["RotateSplitLengths"], axis=0)
    b.add("Split", ["XIn", "RotateSplitLengths"], ["XToRotate", "XNoRotate"], axis=-1)
    if attrs.has_input(3):
        b.add("Gather", ["cos_cache", "position_ids"], ["CosCacheGather"])
        b.add("Gather", ["sin_cache", "position_ids"], ["SinCacheGather"])
    else:
        b.add("Identity", ["cos_cache"], ["CosCacheGather"])
        b.add("Identity", ["sin_cache"], ["SinCacheGather"])
    b.add("Div", ["RotaryEmbedDim", "Two1D"], ["RotaryEmbedDimHalf"])
    b.add("Cast", ["RotaryEmbedDimHalf"], ["RotaryEmbedDimHalfInt"], to=INT64)
    b.add("Slice", ["CosCacheGather", "Zero1D", "RotaryEmbedDimHalfInt", "Two1D"], ["CosCacheSliced"])
    b.add("Slice", ["SinCacheGather", "Zero1D", "RotaryEmbedDimHalfInt", "Two1D"], ["SinCacheSliced"])
    b.add("Unsqueeze", ["CosCacheSliced", "Two1D"], ["CosCacheUnsqueezed"])
    b.add("Unsqueeze", ["SinCacheSliced", "Two1D"], ["SinCacheUnsqueezed"])
    if interleaved == 0:
        b.add("Split", ["XToRotate"], ["X1", "X2"], axis=-1, num_outputs=2)
    else:
        b.const_1d("One1D", 1, INT64)
        b.const_1d("AxesRotaryDim", 3, INT64)
        b.add("Add", ["RotaryEmbedDim", "One1D"], ["RotaryEmbedDimInclusive"])
        b.add("Slice", ["XToRotate", "Zero1D", "RotaryEmbedDim", "AxesRotaryDim", "Two1D"], ["X1"])
        b.add("Slice", ["XToRotate", "One1D", "RotaryEmbedDimInclusive", "AxesRotaryDim", "Two1D"], ["X2"])
    b.add("Mul", ["CosCacheUnsqueezed", "X1"], ["CosX1"])
    b.add("Mul", ["SinCacheUnsqueezed", "X2"], ["SinX2"])
    b.add("Sub", ["CosX1", "SinX2"], ["Real"])
    b.add("Mul", ["SinCacheUnsqueezed", "X1"], ["SinX1"])
    b.add("Mul", ["CosCacheUnsqueezed", "X2"], ["CosX2"])
    b.add("Add", ["SinX1", "CosX2"], ["Imaginary"])
    if interleaved == 0:
        b.add("Concat", ["Real", "Imaginary"], ["XRotated"], axis=-1)
    else:
        b.add("Unsqueeze", ["Real", "NegOne"], ["RealInterleave"])
        b.add("Unsqueeze", ["Imaginary", "NegOne"], ["ImaginaryInterleave"])
        b.add("Concat", ["RealInterleave", "ImaginaryInterleave"], ["XRotatedInterleavedConcat"], axis=-1)
        b.add("Shape", ["XToRotate"], ["XRotatedShape"])
        b.add("Reshape", ["XRotatedInterleavedConcat", "XRotatedShape"], ["XRotated"])
    b.add("Concat", ["XRotated", "XNoRotate"], ["XConcat"], axis=-1)
    if is_4d:
        b.add("Transpose", ["XConcat"], ["YTransposed"], perm=[0, 2, 1, 3])
    else:
        b.add("Identity", ["XConcat"], ["YTransposed"])
    b.add("Shape", ["X"], ["XShape"])
    b.add("Reshape", ["YTransposed", "XShape"], ["Y"])
    return True


_SOFTMAX_PRECISIONS = (FLOAT, BFLOAT16, FLOAT16, DOUBLE)


def _attention(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """Attention: softmax(Q·Kᵀ·scale + bias)·V over [batch, heads, seq, head_size] tensors.

    A 3-D Q, K, V (both head counts given) are split into heads first and joined after;
    ``past_key``/``past_value`` are concatenated before the new keys and values (and copied
    to the ``present_*`` outputs when asked for); K and V heads are repeated for grouped
    queries; the bias adds the mask, the causal triangle (offset by the past), from
    version 24 the padding of ``nonpad_kv_seqlen``, from 25 the sliding window; scores are
    soft-capped when ``softcap`` is non-zero, soft-maxed in ``softmax_precision``, and rows
    masked everywhere give zeros.  ``qk_matmul_output`` is the stage ``qk_matmul_output_mode``
    names.  Refused when Q is not a tensor of known type, for another softmax precision, a
    mask of unknown type, and (version 25) window sizes below -1, a past key without its past
    value (or a present key without its value), ``nonpad_kv_seqlen`` with a past or present
    key, or head counts given for a 4-D Q.
    """
    t1 = tensor_elem(input_types, 0)
    if t1 is None:
        return False
    precision = attrs.i("softmax_precision", t1)
    if precision not in _SOFTMAX_PRECISIONS:
        return False
    q_heads = attrs.i("q_num_heads", 0)
    kv_heads = attrs.i("kv_num_heads", 0)
    is_causal = attrs.i("is_causal", 0)
    left_window = attrs.i("left_window_size", -1) if version >= 25 else -1
    right_window = attrs.i("right_window_size", -1) if version >= 25 else -1
    if version >= 25 and not _attention_25_accepts(attrs, input_types, left_window, right_window):
        return False
    if attrs.has_input(3) and tensor_elem(input_types, 3) is None:
        return False  # the mask's kind decides the bias (the reference leaves a half-built body)
    three_d = q_heads > 0 and kv_heads > 0
    external_cache = attrs.has_input(6) and not attrs.has_input(4)

    b.add("Shape", ["Q"], ["BatchSize"], start=0, end=1)
    b.add("Shape", ["Q"], ["QSeqLen"], start=-2, end=-1)
    b.add("Shape", ["K"], ["KVSeqLen"], start=-2, end=-1)
    if three_d:
        b.const_1d("QNumHeadsAttr", q_heads, INT64)
        b.const_1d("KVNumHeadsAttr", kv_heads, INT64)
        b.const_1d("NegOne", -1, INT64)
        b.add("Concat", ["BatchSize", "QSeqLen", "QNumHeadsAttr", "NegOne"], ["QIntermediateShape"], axis=0)
        b.add("Concat", ["BatchSize", "KVSeqLen", "KVNumHeadsAttr", "NegOne"], ["KVIntermediateShape"], axis=0)
        b.add("Reshape", ["Q", "QIntermediateShape"], ["QIntermediate"])
        b.add("Reshape", ["K", "KVIntermediateShape"], ["KIntermediate"])
        b.add("Reshape", ["V", "KVIntermediateShape"], ["VIntermediate"])
        for x in "QKV":
            b.add("Transpose", [f"{x}Intermediate"], [f"{x}Reshaped"], perm=[0, 2, 1, 3])
    else:
        for x in "QKV":
            b.add("Identity", [x], [f"{x}Reshaped"])
    b.add("Shape", ["QReshaped"], ["QNumHeads"], start=1, end=2)
    b.add("Shape", ["KReshaped"], ["KVNumHeads"], start=1, end=2)

    scale = attrs.get("scale")
    b.add("Shape", ["QReshaped"], ["QKHeadSize"], start=3, end=4)
    b.add("Cast", ["QKHeadSize"], ["QKHeadSizeF"], to=FLOAT)
    b.add("Shape", ["VReshaped"], ["VHeadSize"], start=3, end=4)
    b.add("Sqrt", ["QKHeadSizeF"], ["SqrtHeadSize"])
    b.const_1d("One1D", 1, INT64)
    if version >= 24:
        b.const_1d("NegOne1D", -1, INT64)
    b.const_1d("One1DF", 1.0, FLOAT)
    b.const_1d("Zero1D", 0, INT64)
    b.add("Div", ["One1DF", "SqrtHeadSize"], ["CalculatedScale"])
    b.const("ScaleF", float32(scale.f) if scale is not None else 1.0, FLOAT)
    b.add("Identity", ["ScaleF" if scale is not None else "CalculatedScale"], ["ScaleFactor"])
    b.add("Sqrt", ["ScaleFactor"], ["ScaleFactorSqrt"])
    b.add("Cast", ["ScaleFactorSqrt"], ["ScaleFactorF"], to=t1)

    if attrs.has_input(4):
        b.add("Concat", ["past_key", "KReshaped"], ["PresentKey"], axis=2)
        b.add("Shape", ["past_key"], ["PastKVSeqLen"], start=-2, end=-1)
    else:
        b.add("Identity", ["KReshaped"], ["PresentKey"])
        b.const_1d("PastKVSeqLen", 0, INT64)
    if version >= 24 and is_causal == 1 and external_cache:
        b.add("Sub", ["nonpad_kv_seqlen", "QSeqLen"], ["CausalOffsetPerBatch"])
    if attrs.has_output(1):
        b.add("Identity", ["PresentKey"], ["present_key"])
    if attrs.has_input(5):
        b.add("Concat", ["past_value", "VReshaped"], ["PresentValue"], axis=2)
    else:
        b.add("Identity", ["VReshaped"], ["PresentValue"])
    if attrs.has_output(2):
        b.add("Identity", ["PresentValue"], ["present_value"])

    _attention_bias(b, attrs, input_types, version, is_causal == 1 and external_cache)
    bias = "AttnBiasCausalOrNot"
    if version >= 25:
        _attention_window(b, left_window, right_window, external_cache)
        bias = "AttnBiasCausalWindow"
    if version >= 24:
        if attrs.has_input(6):
            b.add("Unsqueeze", ["nonpad_kv_seqlen", "One1D"], ["KVSeqLenExpanded"])
            b.add("Squeeze", ["KVSeqLen"], ["KVSeqLen0D"])
            b.const("Zero0D", 0, INT64)
            b.const("One0D", 1, INT64)
            b.add("Range", ["Zero0D", "KVSeqLen0D", "One0D"], ["Range"])
            b.add("Less", ["Range", "KVSeqLenExpanded"], ["PaddingMaskBool"])
            b.add("Where", ["PaddingMaskBool", "ScalarZero", "FloatNegInf"], ["PaddingMaskFloat"])
            b.add("Unsqueeze", ["PaddingMaskFloat", "One1D"], ["PaddingMask3D"])
            b.add("Unsqueeze", ["PaddingMask3D", "One1D"], ["PaddingMask4DFloat"])
            b.add("CastLike", ["PaddingMask4DFloat", bias], ["PaddingMask4D"])
            b.add("Add", [bias, "PaddingMask4D"], ["AttnBiasCausalPad"])
        else:
            b.add("Identity", [bias], ["AttnBiasCausalPad"])
        bias = "AttnBiasCausalPad"
    b.add("Cast", [bias], ["AttnBiasT"], to=t1)

    _attention_scores(b, attrs, t1, precision)
    b.add("MatMul", ["SoftmaxOutSafe", "VAttentionInput"], ["YPreReshape"])
    if three_d:
        b.add("Transpose", ["YPreReshape"], ["YTranspose"], perm=[0, 2, 1, 3])
        b.add("Concat", ["Zero1D", "Zero1D", "NegOne"], ["YNewShape"], axis=0)
        b.add("Reshape", ["YTranspose", "YNewShape"], ["Y"])
    else:
        b.add("Identity", ["YPreReshape"], ["Y"])
    return True


def _attention_25_accepts(attrs: NodeAttributes, input_types, left_window: int, right_window: int) -> bool:
    """Version 25's checks of the node before it writes anything."""
    if left_window < -1 or right_window < -1:
        return False
    if attrs.has_input(4) != attrs.has_input(5) or attrs.has_output(1) != attrs.has_output(2):
        return False
    if attrs.has_input(6) and (attrs.has_input(4) or attrs.has_output(1)):
        return False
    q = input_type(input_types, 0).tensor_type
    heads_given = attrs.get("q_num_heads") is not None or attrs.get("kv_num_heads") is not None
    return not (q.HasField("shape") and len(q.shape.dim) == 4 and heads_given)


def _attention_bias(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int, offset_per_batch: bool) -> None:
    """The additive bias from the mask (a boolean mask becomes 0 / -inf; from version 24 padded with
    -inf to the keys' length) plus the causal triangle, shifted by the past length or, for an
    external cache, by each batch's ``nonpad_kv_seqlen - q_len``.

    onnx 1.23.2 casts the triangle like the bias in every version (its source at a later
    commit writes version 23 and 24 without the cast; the installed wheel is what we match).
    """
    b.add("Shape", ["PresentKey"], ["NewKVSeqLen"], start=-2, end=-1)
    b.add("Concat", ["QSeqLen", "NewKVSeqLen"], ["AttnBiasShape"], axis=0)
    b.const_1d("FloatNegInf", float("-inf"), FLOAT)
    b.const_1d("ScalarZero", 0.0, FLOAT)
    if attrs.has_input(3):
        if tensor_elem(input_types, 3) == BOOL:
            b.add("Where", ["attn_mask", "ScalarZero", "FloatNegInf"], ["AttnBiasShort"])
        else:
            b.add("Identity", ["attn_mask"], ["AttnBiasShort"])
        if version >= 24:
            b.add("Shape", ["attn_mask"], ["MaskKVSeqLen"], start=-1)
            b.add("Sub", ["NewKVSeqLen", "MaskKVSeqLen"], ["PaddingKVSeqLen"])
            b.add("Concat", ["Zero1D", "PaddingKVSeqLen"], ["Pads"], axis=0)
            b.add("CastLike", ["FloatNegInf", "AttnBiasShort"], ["FloatNegInfCast"])
            b.add("Pad", ["AttnBiasShort", "Pads", "FloatNegInfCast", "NegOne1D"], ["AttnBias"])
        else:
            b.add("Identity", ["AttnBiasShort"], ["AttnBias"])
    else:
        b.add("ConstantOfShape", ["AttnBiasShape"], ["AttnBias"])
    if attrs.i("is_causal", 0) != 1:
        b.add("Identity", ["AttnBias"], ["AttnBiasCausalOrNot"])
        return
    b.const_1d("Zero", 0, INT64)
    b.const_1d("One", 1, INT64)
    b.add("Squeeze", ["Zero", "Zero"], ["ZeroNoDim"])
    b.add("Squeeze", ["One", "Zero"], ["OneNoDim"])
    b.add("Gather", ["AttnBiasShape", "ZeroNoDim"], ["SequenceLength"])
    b.add("Gather", ["AttnBiasShape", "OneNoDim"], ["TotalSequenceLength"])
    b.add("Range", ["ZeroNoDim", "SequenceLength", "OneNoDim"], ["RangeRow"])
    b.add("Unsqueeze", ["RangeRow", "One"], ["RangeRow2D"])
    b.add("Range", ["ZeroNoDim", "TotalSequenceLength", "OneNoDim"], ["RangeCol"])
    b.add("Unsqueeze", ["RangeCol", "Zero"], ["RangeCol2D"])
    if offset_per_batch:
        b.const_list("Axes01", [0, 1], INT64)
        b.const_list("Axes123", [1, 2, 3], INT64)
        b.add("Unsqueeze", ["RangeRow2D", "Axes01"], ["RangeRow4D"])
        b.add("Unsqueeze", ["RangeCol2D", "Axes01"], ["RangeCol4D"])
        b.add("Unsqueeze", ["CausalOffsetPerBatch", "Axes123"], ["OffsetB4D"])
        b.add("Add", ["RangeRow4D", "OffsetB4D"], ["RowPlusOff"])
        b.add("Less", ["RowPlusOff", "RangeCol4D"], ["BoolMaskTri"])
    else:
        b.add("Add", ["RangeRow2D", "PastKVSeqLen"], ["RangeRow2DPast"])
        b.add("Less", ["RangeRow2DPast", "RangeCol2D"], ["BoolMaskTri"])
    b.add("Where", ["BoolMaskTri", "FloatNegInf", "ScalarZero"], ["MaskTriFloat"])
    b.add("CastLike", ["MaskTriFloat", "AttnBias"], ["MaskTri"])
    b.add("Add", ["AttnBias", "MaskTri"], ["AttnBiasCausalOrNot"])


def _attention_window(b: BodyBuilder, left: int, right: int, external_cache: bool) -> None:
    """Version 25's sliding window: -inf where the query's position minus the key's is beyond
    ``left_window_size`` (or the key is more than ``right_window_size`` ahead)."""
    if left < 0 and right < 0:
        b.add("Identity", ["AttnBiasCausalOrNot"], ["AttnBiasCausalWindow"])
        return
    b.const_1d("WinZero", 0, INT64)
    b.const_1d("WinOne", 1, INT64)
    b.add("Squeeze", ["WinZero", "WinZero"], ["WinZeroNoDim"])
    b.add("Squeeze", ["WinOne", "WinZero"], ["WinOneNoDim"])
    b.add("Squeeze", ["QSeqLen", "WinZero"], ["WinSeqLen"])
    b.add("Squeeze", ["NewKVSeqLen", "WinZero"], ["WinTotalSeqLen"])
    b.add("Range", ["WinZeroNoDim", "WinSeqLen", "WinOneNoDim"], ["WinRangeRow"])
    b.add("Range", ["WinZeroNoDim", "WinTotalSeqLen", "WinOneNoDim"], ["WinRangeCol"])
    if left >= 0:
        b.const_1d("LeftWindowSize", left, INT64)
        b.add("Squeeze", ["LeftWindowSize", "WinZero"], ["LeftWindowSizeNoDim"])
    if right >= 0:
        b.const_1d("RightWindowSize", right, INT64)
        b.add("Squeeze", ["RightWindowSize", "WinZero"], ["RightWindowSizeNoDim"])
    if external_cache:
        b.add("Sub", ["nonpad_kv_seqlen", "QSeqLen"], ["WinOffset"])
        b.const_list("WinAxes123", [1, 2, 3], INT64)
        b.const_list("WinAxes01", [0, 1], INT64)
        b.add("Unsqueeze", ["WinOffset", "WinAxes123"], ["WinOffset4D"])
        b.add("Unsqueeze", ["WinRangeRow", "WinOne"], ["WinRow2D"])
        b.add("Unsqueeze", ["WinRow2D", "WinAxes01"], ["WinRow4D"])
        b.add("Unsqueeze", ["WinRangeCol", "WinZero"], ["WinCol2D"])
        b.add("Unsqueeze", ["WinCol2D", "WinAxes01"], ["WinCol4D"])
        b.add("Add", ["WinRow4D", "WinOffset4D"], ["WinAbsPos"])
        b.add("Sub", ["WinAbsPos", "WinCol4D"], ["WinDiff"])
    else:
        b.add("Unsqueeze", ["WinRangeRow", "WinOne"], ["WinRow2D"])
        b.add("Unsqueeze", ["WinRangeCol", "WinZero"], ["WinCol2D"])
        b.add("Add", ["WinRow2D", "PastKVSeqLen"], ["WinAbsPos"])
        b.add("Sub", ["WinAbsPos", "WinCol2D"], ["WinDiff"])
    if left >= 0 and right >= 0:
        b.add("LessOrEqual", ["WinDiff", "LeftWindowSizeNoDim"], ["WinLeftOk"])
        b.add("Neg", ["WinDiff"], ["WinRightDiff"])
        b.add("LessOrEqual", ["WinRightDiff", "RightWindowSizeNoDim"], ["WinRightOk"])
        b.add("And", ["WinLeftOk", "WinRightOk"], ["WinOk"])
    elif left >= 0:
        b.add("LessOrEqual", ["WinDiff", "LeftWindowSizeNoDim"], ["WinOk"])
    else:
        b.add("Neg", ["WinDiff"], ["WinRightDiff"])
        b.add("LessOrEqual", ["WinRightDiff", "RightWindowSizeNoDim"], ["WinOk"])
    b.add("Where", ["WinOk", "ScalarZero", "FloatNegInf"], ["WinMaskFloat"])
    b.add("CastLike", ["WinMaskFloat", "AttnBiasCausalOrNot"], ["WinMask"])
    b.add("Add", ["AttnBiasCausalOrNot", "WinMask"], ["AttnBiasCausalWindow"])


def _attention_scores(b: BodyBuilder, attrs: NodeAttributes, t1: int, precision: int) -> None:
    """Grouped-query repetition of K and V, the scaled scores, softcap, bias, softmax, and the
    optional ``qk_matmul_output``."""
    b.add("Equal", ["QNumHeads", "KVNumHeads"], ["NGQACond1"])
    b.add("Not", ["NGQACond1"], ["GQACond1"])
    b.add("Div", ["QNumHeads", "KVNumHeads"], ["DivNumHeads"])
    b.add("Cast", ["DivNumHeads"], ["IDivNumHeads"], to=INT64)
    b.add("Mod", ["QNumHeads", "KVNumHeads"], ["RemainderNumHeads"])
    b.add("Equal", ["RemainderNumHeads", "Zero1D"], ["GQACond2"])
    b.add("And", ["GQACond1", "GQACond2"], ["GQACond"])
    b.add("Where", ["GQACond", "IDivNumHeads", "One1D"], ["InterleaveDim"])
    b.const_1d("Two1D", 2, INT64)
    b.add("Unsqueeze", ["PresentKey", "Two1D"], ["KUnsqueezed"])
    b.add("Unsqueeze", ["PresentValue", "Two1D"], ["VUnsqueezed"])
    b.add("Concat", ["BatchSize", "KVNumHeads", "InterleaveDim", "NewKVSeqLen", "QKHeadSize"], ["KExpandShape"],
          axis=0)
    b.add("Expand", ["KUnsqueezed", "KExpandShape"], ["KExpanded"])
    b.add("Concat", ["BatchSize", "KVNumHeads", "InterleaveDim", "NewKVSeqLen", "VHeadSize"], ["VExpandShape"],
          axis=0)
    b.add("Expand", ["VUnsqueezed", "VExpandShape"], ["VExpanded"])
    b.add("Concat", ["BatchSize", "QNumHeads", "NewKVSeqLen", "QKHeadSize"], ["KAttentionShape"], axis=0)
    b.add("Concat", ["BatchSize", "QNumHeads", "NewKVSeqLen", "VHeadSize"], ["VAttentionShape"], axis=0)
    b.add("Reshape", ["KExpanded", "KAttentionShape"], ["KAttentionInput"])
    b.add("Reshape", ["VExpanded", "VAttentionShape"], ["VAttentionInput"])
    b.add("Transpose", ["KAttentionInput"], ["KTranspose"], perm=[0, 1, 3, 2])
    b.add("Mul", ["QReshaped", "ScaleFactorF"], ["QScaled"])
    b.add("Mul", ["KTranspose", "ScaleFactorF"], ["KScaled"])
    b.add("MatMul", ["QScaled", "KScaled"], ["QKAttnWeight"])
    b.add("Cast", ["QKAttnWeight"], ["QKAttnCast"], to=t1)
    softcap = float32(attrs.f("softcap", 0.0))
    if softcap != 0:
        b.const_1d("Softcap", softcap, FLOAT)
        b.add("Cast", ["Softcap"], ["SoftcapF"], to=t1)
        b.add("Div", ["QKAttnCast", "SoftcapF"], ["SoftcapDiv"])
        b.add("Tanh", ["SoftcapDiv"], ["SoftcapTanh"])
        b.add("Mul", ["SoftcapTanh", "SoftcapF"], ["QKAttnSoftcapped"])
        b.add("Add", ["QKAttnSoftcapped", "AttnBiasT"], ["QKAttnWeightSoftcap"])
    else:
        b.add("Add", ["QKAttnCast", "AttnBiasT"], ["QKAttnWeightSoftcap"])
    b.add("Cast", ["QKAttnWeightSoftcap"], ["SoftmaxCast"], to=precision)
    b.add("Softmax", ["SoftmaxCast"], ["AttnWeightSoftmax"])
    b.add("Cast", ["AttnWeightSoftmax"], ["SoftmaxOut"], to=t1)
    axes = b.tensor_of([-1], INT64, [1])
    axes.name = ""
    b.add("Constant", [], ["BiasRowMaxAxes"], value=axes)
    b.add("ReduceMax", ["AttnBiasT", "BiasRowMaxAxes"], ["BiasRowMax"])
    b.add("CastLike", ["FloatNegInf", "AttnBiasT"], ["FloatNegInfT"])
    b.add("Equal", ["BiasRowMax", "FloatNegInfT"], ["RowAllMasked"])
    b.add("CastLike", ["ScalarZero", "SoftmaxOut"], ["ZeroProbT"])
    b.add("Where", ["RowAllMasked", "ZeroProbT", "SoftmaxOut"], ["SoftmaxOutSafe"])
    if attrs.has_output(3):
        mode = attrs.i("qk_matmul_output_mode", 0)
        stage = {1: "QKAttnSoftcapped" if softcap != 0 else "QKAttnCast", 2: "QKAttnWeightSoftcap",
                 3: "SoftmaxOutSafe"}.get(mode, "QKAttnWeight")
        b.add("Identity", [stage], ["qk_matmul_output"])


BUILDERS = {
    ("", "Attention"): _attention,
    ("", "RotaryEmbedding"): _rotary_embedding,
}
