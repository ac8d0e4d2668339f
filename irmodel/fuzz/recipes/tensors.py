"""Recipes of tensor operators: shapes and indices as data, normalization, pooling, images,
random, integer, quantized and bitwise operators (see `irmodel.fuzz.recipes`)."""

from __future__ import annotations

from ._common import BOOL, DOUBLE, FLOAT, FLOAT16, INT32, INT64, UINT8, _emit, _f32, _i64, _nchw, _scalar, _size, _u8, _x

# -- data movement and shapes ----------------------------------------------------------------

def cast(b):
    return _emit(b, "Cast", [_x(b).name], to=b.rng.choice((FLOAT, INT64, INT32, DOUBLE, FLOAT16, UINT8, BOOL)))


def cast_like(b):
    return _emit(b, "CastLike", [_x(b).name, b.const(b.rng.choice((INT32, DOUBLE, INT64)), [1])])


def concat(b):
    v = _x(b)
    others = [w.name for w in b.values if w.shape == v.shape and w.elem == v.elem][:2]
    return _emit(b, "Concat", [v.name, *others], axis=b.rng.randrange(-len(v.shape), len(v.shape)))


def constant(b):
    shape = [b.rng.randint(1, 3)]
    value = b.h.make_tensor("value", FLOAT, shape, [0.5] * shape[0])
    return _emit(b, "Constant", [], value=value)


def constant_of_shape(b):
    return _emit(b, "ConstantOfShape", [_i64(b, [2, 3])], value=b.h.make_tensor("value", FLOAT, [1], [1.5]))


def expand(b):
    v = _x(b)
    return _emit(b, "Expand", [v.name, _i64(b, [2, *v.shape])])


def eye_like(b):
    return _emit(b, "EyeLike", [_x(b, rank=2).name])


def gather(b):
    v = _x(b)
    return _emit(b, "Gather", [v.name, _i64(b, [0, v.shape[0] - 1])], axis=0)


def gather_elements(b):
    v = _x(b)
    return _emit(b, "GatherElements", [v.name, b.const(INT64, v.shape, [0] * _size(v.shape))], axis=0)


def gather_nd(b):
    v = _x(b)
    return _emit(b, "GatherND", [v.name, _i64(b, [0], [1, 1])])


def scatter_elements(b):
    v = _x(b)
    n = _size(v.shape)
    return _emit(b, "ScatterElements", [v.name, b.const(INT64, v.shape, [0] * n), b.const(FLOAT, v.shape)], axis=0)


def scatter_nd(b):
    v = _x(b)
    return _emit(b, "ScatterND", [v.name, _i64(b, [0], [1, 1]), b.const(FLOAT, [1, *v.shape[1:]])])


def pad(b):
    v = _x(b)
    pads = [b.rng.randint(0, 1) for _ in range(2 * len(v.shape))]
    return _emit(b, "Pad", [v.name, _i64(b, pads)], mode=b.rng.choice(("constant", "reflect", "edge")))


def reshape(b):
    return _emit(b, "Reshape", [_x(b).name, _i64(b, [-1])])


def slice_(b):
    v = _x(b)
    return _emit(b, "Slice", [v.name, _i64(b, [0]), _i64(b, [1]), _i64(b, [len(v.shape) - 1])])


def tile(b):
    v = _x(b)
    return _emit(b, "Tile", [v.name, _i64(b, [b.rng.randint(1, 2) for _ in v.shape])])


def unsqueeze(b):
    return _emit(b, "Unsqueeze", [_x(b, min_rank=1).name, _i64(b, [0])])


def shape_(b):
    return _emit(b, "Shape", [_x(b).name])


def size_(b):
    return _emit(b, "Size", [_x(b).name])


def top_k(b):
    return _emit(b, "TopK", [_x(b).name, _i64(b, [1])], 2)


def range_(b):
    return _emit(b, "Range", [_scalar(b, FLOAT, 0.0), _scalar(b, FLOAT, 3.0), _scalar(b, FLOAT, 1.0)])


def non_zero(b):
    return _emit(b, "NonZero", [_x(b).name])


def unique(b):
    return _emit(b, "Unique", [_x(b).name], b.rng.randint(1, 4))


def compress(b):
    v = _x(b)
    return _emit(b, "Compress", [v.name, b.const(BOOL, [v.shape[0]])], axis=0)


def trilu(b):
    return _emit(b, "Trilu", [_x(b, min_rank=2).name], upper=b.rng.randint(0, 1))


def einsum(b):
    return _emit(b, "Einsum", [_x(b, rank=2).name], equation="ij->ji")


def depth_to_space(b):
    v, _ = _nchw(b, 4)
    return _emit(b, "DepthToSpace", [v.name], blocksize=2)


def space_to_depth(b):
    shape = (1, 1, 2, 4)
    return _emit(b, "SpaceToDepth", [b.add_initializer(shape).name], blocksize=2)


def reverse_sequence(b):
    v = _x(b, rank=2)
    return _emit(b, "ReverseSequence", [v.name, _i64(b, [v.shape[0]] * v.shape[1])])


def cum_sum(b):
    return _emit(b, "CumSum", [_x(b).name, _scalar(b, INT64, 0)])


def center_crop_pad(b):
    v = _x(b)
    return _emit(b, "CenterCropPad", [v.name, _i64(b, [d + b.rng.randint(-1, 1) or 1 for d in v.shape])])


def resize(b):
    v = _x(b, rank=4)
    return _emit(b, "Resize", [v.name, "", _f32(b, [1.0, 1.0, 2.0, 2.0])], mode="nearest")


def split_(b):
    v = _x(b)
    return _emit(b, "Split", [v.name, _i64(b, [1, v.shape[0] - 1] if v.shape[0] > 1 else [1])],
                 2 if v.shape[0] > 1 else 1)


def _rnn(op, gates):
    def recipe(b):
        hidden = b.rng.randint(1, 3)
        x = b.add_initializer((2, 1, 3))
        w = b.const(FLOAT, [1, gates * hidden, 3])
        r = b.const(FLOAT, [1, gates * hidden, hidden])
        return _emit(b, op, [x.name, w, r], 2, hidden_size=hidden)
    return recipe


# -- normalization, pooling, images --------------------------------------------------------

def _channels(b, shape):
    return _f32(b, [1.0] * shape[1])


def batch_norm(b):
    v, shape = _nchw(b)
    c = shape[1]
    return _emit(b, "BatchNormalization", [v.name, _channels(b, shape), _f32(b, [0.0] * c),
                                           _f32(b, [0.0] * c), _f32(b, [1.0] * c)])


def instance_norm(b):
    v, shape = _nchw(b)
    return _emit(b, "InstanceNormalization", [v.name, _channels(b, shape), _f32(b, [0.0] * shape[1])])


def layer_norm(b):
    v = _x(b, min_rank=2)
    return _emit(b, "LayerNormalization", [v.name, _f32(b, [1.0] * v.shape[-1])])


def group_norm(b):
    v, shape = _nchw(b)
    c = shape[1]
    return _emit(b, "GroupNormalization", [v.name, _f32(b, [1.0] * c), _f32(b, [0.0] * c)], ranks=(4,),
                 num_groups=c)


def lrn(b):
    return _emit(b, "LRN", [_nchw(b)[0].name], size=1)


def lp_normalization(b):
    return _emit(b, "LpNormalization", [_x(b).name])


def mvn(b):
    # axes written out: onnx expands the function body without the attribute's default
    return _emit(b, "MeanVarianceNormalization", [_nchw(b)[0].name], ranks=(4,), axes=[0, 2, 3])


def hardmax(b):
    return _emit(b, "Hardmax", [_x(b).name])


def dropout(b):
    return _emit(b, "Dropout", [_x(b).name])


def _pool(op):
    def recipe(b):
        v = _x(b, min_rank=3)
        return _emit(b, op, [v.name], kernel_shape=[1] * (len(v.shape) - 2))
    return recipe


def _conv(op):
    """Conv and ConvTranspose: their weight's channels must match the input's (runtimes check,
    the schemas' inference does not); a 1x1 kernel keeps the image's size."""
    def recipe(b):
        v, shape = _nchw(b)
        c = shape[1]
        return _emit(b, op, [v.name, b.const(FLOAT, [c, c, 1, 1])])
    return recipe


def max_roi_pool(b):
    v, _ = _nchw(b)
    return _emit(b, "MaxRoiPool", [v.name, _f32(b, [0, 0, 0, 1, 1], [1, 5])], pooled_shape=[1, 1])


def roi_align(b):
    v, _ = _nchw(b)
    return _emit(b, "RoiAlign", [v.name, _f32(b, [0, 0, 1, 1], [1, 4]), _i64(b, [0])],
                 output_height=1, output_width=1)


def max_unpool(b):
    v, shape = _nchw(b, 1)
    return _emit(b, "MaxUnpool", [v.name, b.const(INT64, shape, list(range(_size(shape))))], kernel_shape=[1, 1])


def col2im(b):
    return _emit(b, "Col2Im", [b.const(FLOAT, [1, 4, 4]), _i64(b, [3, 3]), _i64(b, [2, 2])])


def grid_sample(b):
    v, shape = _nchw(b)
    grid = b.const(FLOAT, [shape[0], 2, 2, 2], [0.25, -0.5] * 4 * shape[0])
    return _emit(b, "GridSample", [v.name, grid])


def affine_grid(b):
    return _emit(b, "AffineGrid", [_f32(b, [1, 0, 0, 0, 1, 0], [1, 2, 3]), _i64(b, [1, 1, 2, 3])])


def det(b):
    return _emit(b, "Det", [_f32(b, [2, 1, 1, 3], [2, 2])])


def nll_loss(b):
    return _emit(b, "NegativeLogLikelihoodLoss", [b.const(FLOAT, [2, 3]), _i64(b, [0, 2])])


def sce_loss(b):
    return _emit(b, "SoftmaxCrossEntropyLoss", [b.const(FLOAT, [2, 3]), _i64(b, [1, 2])])


def nms(b):
    boxes = _f32(b, [0, 0, 1, 1, 0, 0, 0.5, 0.5], [1, 2, 4])
    return _emit(b, "NonMaxSuppression", [boxes, _f32(b, [0.9, 0.6], [1, 1, 2])])


# -- random ------------------------------------------------------------------------------

def random_normal(b):
    return _emit(b, "RandomNormal", [], shape=[2, 3], seed=1.0)


def random_uniform(b):
    return _emit(b, "RandomUniform", [], shape=[3], seed=2.0)


def random_normal_like(b):
    return _emit(b, "RandomNormalLike", [_x(b).name], seed=3.0)


def random_uniform_like(b):
    return _emit(b, "RandomUniformLike", [_x(b).name], seed=4.0)


def bernoulli(b):
    return _emit(b, "Bernoulli", [b.const(FLOAT, [3], [0.2, 0.5, 0.9])], seed=5.0)


def multinomial(b):
    return _emit(b, "Multinomial", [b.const(FLOAT, [1, 3], [0.1, 0.2, 0.7])], sample_size=2, seed=6.0)


# -- integer, quantized, bitwise ----------------------------------------------------------

def quantize(b):
    return _emit(b, "QuantizeLinear", [_x(b).name, _scalar(b, FLOAT, 0.5), _scalar(b, UINT8, 3)])


def dequantize(b):
    return _emit(b, "DequantizeLinear", [_u8(b, [2, 3]), _scalar(b, FLOAT, 0.5), _scalar(b, UINT8, 1)])


def dynamic_quantize(b):
    return _emit(b, "DynamicQuantizeLinear", [_x(b).name], 3)


def conv_integer(b):
    return _emit(b, "ConvInteger", [_u8(b, [1, 1, 3, 3]), _u8(b, [1, 1, 2, 2])])


def matmul_integer(b):
    return _emit(b, "MatMulInteger", [_u8(b, [2, 3]), _u8(b, [3, 2])])


def qlinear_conv(b):
    s = lambda: _scalar(b, FLOAT, 0.1)  # noqa: E731
    z = lambda: _scalar(b, UINT8, 2)  # noqa: E731
    return _emit(b, "QLinearConv", [_u8(b, [1, 1, 3, 3]), s(), z(), _u8(b, [1, 1, 2, 2]), s(), z(), s(), z()])


def qlinear_matmul(b):
    s = lambda: _scalar(b, FLOAT, 0.1)  # noqa: E731
    z = lambda: _scalar(b, UINT8, 2)  # noqa: E731
    return _emit(b, "QLinearMatMul", [_u8(b, [2, 3]), s(), z(), _u8(b, [3, 2]), s(), z(), s(), z()])


def bit_shift(b):
    return _emit(b, "BitShift", [_u8(b, [3], [1, 2, 3]), _u8(b, [3], [1, 1, 2])],
                 direction=b.rng.choice(("LEFT", "RIGHT")))


def _bitwise(op):
    def recipe(b):
        return _emit(b, op, [b.const(INT32, [3], [1, 6, 7]), b.const(INT32, [3], [3, 2, 5])])
    return recipe


def bitwise_not(b):
    return _emit(b, "BitwiseNot", [b.const(INT32, [2], [1, 6])])


RECIPES = {
    "Conv": _conv("Conv"), "ConvTranspose": _conv("ConvTranspose"),
    "Cast": cast,
    "CastLike": cast_like,
    "Concat": concat,
    "Constant": constant,
    "ConstantOfShape": constant_of_shape,
    "Expand": expand,
    "EyeLike": eye_like,
    "Gather": gather,
    "GatherElements": gather_elements,
    "GatherND": gather_nd,
    "ScatterElements": scatter_elements,
    "ScatterND": scatter_nd,
    "Pad": pad,
    "Reshape": reshape,
    "Slice": slice_,
    "Tile": tile,
    "Unsqueeze": unsqueeze,
    "Shape": shape_,
    "Size": size_,
    "TopK": top_k,
    "Range": range_,
    "NonZero": non_zero,
    "Unique": unique,
    "Compress": compress,
    "Trilu": trilu,
    "Einsum": einsum,
    "DepthToSpace": depth_to_space,
    "SpaceToDepth": space_to_depth,
    "ReverseSequence": reverse_sequence,
    "CumSum": cum_sum,
    "CenterCropPad": center_crop_pad,
    "Resize": resize,
    "Split": split_,
    "BatchNormalization": batch_norm,
    "InstanceNormalization": instance_norm,
    "LayerNormalization": layer_norm,
    "GroupNormalization": group_norm,
    "LRN": lrn,
    "LpNormalization": lp_normalization,
    "MeanVarianceNormalization": mvn,
    "Hardmax": hardmax,
    "Dropout": dropout,
    "AveragePool": _pool("AveragePool"),
    "MaxPool": _pool("MaxPool"),
    "LpPool": _pool("LpPool"),
    "MaxRoiPool": max_roi_pool,
    "RoiAlign": roi_align,
    "MaxUnpool": max_unpool,
    "Col2Im": col2im,
    "GridSample": grid_sample,
    "AffineGrid": affine_grid,
    "Det": det,
    "NegativeLogLikelihoodLoss": nll_loss,
    "SoftmaxCrossEntropyLoss": sce_loss,
    "NonMaxSuppression": nms,
    "RandomNormal": random_normal,
    "RandomUniform": random_uniform,
    "RandomNormalLike": random_normal_like,
    "RandomUniformLike": random_uniform_like,
    "Bernoulli": bernoulli,
    "Multinomial": multinomial,
    "QuantizeLinear": quantize,
    "DequantizeLinear": dequantize,
    "DynamicQuantizeLinear": dynamic_quantize,
    "ConvInteger": conv_integer,
    "MatMulInteger": matmul_integer,
    "QLinearConv": qlinear_conv,
    "QLinearMatMul": qlinear_matmul,
    "BitShift": bit_shift,
    "BitwiseAnd": _bitwise("BitwiseAnd"),
    "BitwiseOr": _bitwise("BitwiseOr"),
    "BitwiseXor": _bitwise("BitwiseXor"),
    "BitwiseNot": bitwise_not,
    "RNN": _rnn("RNN", 1),
    "GRU": _rnn("GRU", 3),
    "LSTM": _rnn("LSTM", 4),
}
