"""What the recipes share: element types, the helpers that build inputs, `domain_of`."""

from __future__ import annotations

from irmodel import TensorProto

FLOAT, UINT8, INT32, INT64 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT32, TensorProto.INT64
STRING, BOOL, FLOAT16, DOUBLE = TensorProto.STRING, TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.DOUBLE
ML_DOMAIN = "ai.onnx.ml"

#: Operators of ai.onnx.ml (everything else here is ai.onnx).
ML_OPS = frozenset({"LinearRegressor", "LinearClassifier", "Normalizer", "Scaler", "Binarizer", "Imputer",
                    "ArrayFeatureExtractor", "LabelEncoder", "OneHotEncoder", "TreeEnsembleRegressor",
                    "TreeEnsembleClassifier", "SVMRegressor", "SVMClassifier", "FeatureVectorizer",
                    "CategoryMapper"})


def domain_of(op: str) -> str:
    return ML_DOMAIN if op in ML_OPS else ""


def _i64(b, values, shape=None) -> str:
    return b.const(INT64, [len(values)] if shape is None else shape, values)


def _f32(b, values, shape=None) -> str:
    return b.const(FLOAT, [len(values)] if shape is None else shape, values)


def _scalar(b, elem, value) -> str:
    return b.const(elem, [], [value])


def _x(b, rank=None, min_rank=1):
    return b.pick(rank=rank, min_rank=min_rank)


def _nchw(b, c: int | None = None):
    """A rank-4 float value, its channel count ``c`` when given."""
    if c is None:
        v = b.pick(rank=4)
        return v, v.shape
    shape = (1, c, 2 + b.rng.randint(0, 1), 2 + b.rng.randint(0, 1))
    return b.add_initializer(shape), shape


def _emit(b, op, inputs, n_out=1, ranks=(), **attrs) -> bool:
    return b.emit(op, inputs, n_out, domain_of(op), ranks, **attrs) is not None



def _u8(b, shape, values=None):
    return b.const(UINT8, shape, values)

def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


#: Operator name -> recipe.  Those not listed are drawn from the schema pool.
