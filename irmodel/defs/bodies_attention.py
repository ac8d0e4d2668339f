"""Built bodies of the attention family: RotaryEmbedding, Attention (23, 24, 25), LinearAttention.

Each builder takes (attributes, input types, opset version), fills a `BodyBuilder` and
returns True, or returns False where the reference's builder refuses.
"""

from __future__ import annotations

from .bodies_base import INT64, BodyBuilder, NodeAttributes, input_type


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


BUILDERS = {
    ("", "RotaryEmbedding"): _rotary_embedding,
}
