"""The ai.onnx.ml domain: classifiers, encoders, tree ensembles, ZipMap and friends."""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape, fail_type
from ..registry import infers
from ..types import MapType, SequenceType, TensorType
from .elementwise import same_as_input, set_tensor_shape, tensor_shape

ML = "ai.onnx.ml"
FLOAT, UINT8, INT64, STRING = 1, 2, 7, 8


def _set_elem(ctx, o: int, elem) -> None:
    """``getOutputType(o)->mutable_tensor_type()->set_elem_type(elem)`` (keeps a tensor's shape)."""
    out = ctx.output(o)
    ctx.set_output(o, TensorType(elem, out.shape if type(out) is TensorType else None))


def _strings(ctx, name: str):
    a = ctx.attr(name)
    return None if a is None else list(a.strings)


def _input_elem(ctx, i: int = 0) -> int:
    """``getInputType(i)->tensor_type().elem_type()`` (the input must have a type)."""
    t = ctx.input_type(i)
    if t is None:
        raise fail_type("Input ", i, " has no type")
    return (t.elem or 0) if type(t) is TensorType else 0


infers("Binarizer", 1, domain=ML)(same_as_input)


@infers("ArrayFeatureExtractor", 1, domain=ML)
def array_feature_extractor(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = tensor_shape(ctx, 0)
    if len(shape) == 1:
        return
    out = list(shape[:-1]) + [None]
    set_tensor_shape(ctx, 0, out)
    if not C.has_input_shape(ctx, 1):
        return
    indices = C.input_shape(ctx, 1)
    if not indices:
        return
    count = 1
    symbol = ""
    for d in indices:
        if type(d) is int:
            count = D.checked_mul(count, d)
        elif type(d) is str:
            if symbol:
                return
            symbol = d
        else:
            return
    if not symbol:
        out[-1] = count
    elif count == 1:
        out[-1] = symbol
    set_tensor_shape(ctx, 0, out)


@infers("CastMap", 1, domain=ML)
def cast_map(ctx) -> None:
    a = ctx.attr("cast_to")
    if a is None:
        _set_elem(ctx, 0, FLOAT)
        return
    to = bytes(a.s)
    elem = {b"TO_FLOAT": FLOAT, b"TO_INT64": INT64, b"TO_STRING": STRING}.get(to)
    _set_elem(ctx, 0, elem)


@infers("CategoryMapper", 1, domain=ML)
def category_mapper(ctx) -> None:
    ints = ctx.attr("cats_int64s")
    if ints is None:
        raise fail_shape("Attribute 'cats_int64s' is required.")
    strings = ctx.attr("cats_strings")
    if strings is None:
        raise fail_shape("Attribute 'cats_strings' is required.")
    if len(ints.ints) != len(strings.strings):
        raise fail_shape("Attributes 'cats_int64s' and 'cats_strings' are required to be the same length.")
    if ctx.input_type(0) is None:
        return
    elem = _input_elem(ctx)
    if elem == STRING:
        C.set_output_elem(ctx, 0, INT64)
    elif elem == INT64:
        C.set_output_elem(ctx, 0, STRING)
    if C.has_input_shape(ctx, 0):
        C.propagate_shape(ctx, 0, 0)


@infers("DictVectorizer", 1, domain=ML)
def dict_vectorizer(ctx) -> None:
    t = ctx.input_type(0)
    if t is None:
        raise fail_type("Input 0 has no type")
    value = t.value if type(t) is MapType else None
    _set_elem(ctx, 0, (value.elem or 0) if type(value) is TensorType else 0)


@infers("LabelEncoder", 1, domain=ML)
def label_encoder1(ctx) -> None:
    elem = _input_elem(ctx)
    if elem == STRING:
        _set_elem(ctx, 0, INT64)
    elif elem == INT64:
        _set_elem(ctx, 0, STRING)
    else:
        _set_elem(ctx, 0, None)


@infers("LabelEncoder", 2, domain=ML)
def label_encoder2(ctx) -> None:
    if ctx.num_inputs != 1:
        raise fail_shape("Label encoder has only one input.")
    if ctx.num_outputs != 1:
        raise fail_shape("Label encoder has only one output.")
    keys = [ctx.attr(n) is not None for n in ("keys_strings", "keys_int64s", "keys_floats")]
    if sum(keys) != 1:
        raise fail_shape("Only one of keys_*'s can be set in label encoder.")
    elem = _input_elem(ctx)
    if keys[0] and elem != STRING:
        raise fail_shape("Input type is not string tensor but key_strings is set")
    if keys[1] and elem != INT64:
        raise fail_shape("Input type is not int64 tensor but keys_int64s is set")
    if keys[2] and elem != FLOAT:
        raise fail_shape("Input type is not float tensor but keys_floats is set")
    values = [ctx.attr(n) is not None for n in ("values_strings", "values_int64s", "values_floats")]
    if sum(values) != 1:
        raise fail_shape("Only one of values_*'s can be set in label encoder.")
    _set_elem(ctx, 0, STRING if values[0] else INT64 if values[1] else FLOAT)
    C.propagate_shape(ctx, 0, 0)


@infers("LabelEncoder", 4, domain=ML)
def label_encoder4(ctx) -> None:
    key_type, key_len = C.attrs_elem_type_and_length(ctx, ("keys_tensor", "keys_strings", "keys_int64s",
                                                             "keys_floats"))
    if key_type == 0:
        raise fail_shape("At least one of keys_tensor, keys_strings, keys_int64s, keys_floats must be set.")
    elem = _input_elem(ctx)
    if key_type != elem:
        raise fail_shape("The input type was ", elem, " and the key type ", key_type,
                         " are different, which is not permitted for LabelEncoders.")
    value_type, value_len = C.attrs_elem_type_and_length(ctx, ("values_tensor", "values_strings", "values_int64s",
                                                               "values_floats"))
    if value_type == 0:
        raise fail_shape("At least one of values_tensor, values_strings, values_int64s, values_floats must be set.")
    if value_len != key_len:
        raise fail_shape("The number of keys ", key_len, " and the number of values ", value_len,
                         " must be the same in the LabelEncoder.")
    default = ctx.attr("default_tensor")
    if default is not None and default.HasField("t") and default.t.HasField("data_type") and default.t.data_type:
        t = default.t
        if t.data_type != value_type:
            raise fail_shape("The default tensor type ", t.data_type, " and the value type ", value_type,
                             " must be the same in the LabelEncoder.")
        if list(t.dims) != [1]:
            raise fail_shape("The default tensor must be a singleton 1D tensor.")
    _set_elem(ctx, 0, value_type)
    C.propagate_shape(ctx, 0, 0)


@infers("LinearClassifier", 1, domain=ML)
def linear_classifier(ctx) -> None:
    labels = _strings(ctx, "classlabels_strings")
    using_strings = bool(labels)
    ints = [] if using_strings else (C.attr_ints(ctx, "classlabels_ints") or [])
    _set_elem(ctx, 0, STRING if using_strings else INT64)
    _set_elem(ctx, 1, FLOAT)
    intercepts = C.attr_floats(ctx, "intercepts") or []
    classes = len(intercepts)
    if len(intercepts) == 1 and ((using_strings and len(labels) == 2) or (not using_strings and len(ints) == 2)):
        classes = 2
    batch = None
    if C.has_n_input_shapes(ctx, 1):
        shape = tensor_shape(ctx, 0)
        if len(shape) == 1:
            batch = 1
        elif len(shape) == 2:
            batch = shape[0]
        else:
            raise fail_shape("Input's shape should be 1D or 2D")
    C.set_output_shape(ctx, 0, (batch,))
    C.set_output_shape(ctx, 1, (batch, classes))


@infers("OneHotEncoder", 1, domain=ML)
def one_hot_encoder(ctx) -> None:
    ints = C.attr_ints(ctx, "cats_int64s")
    strings = _strings(ctx, "cats_strings")
    if (ints is not None) == (strings is not None):
        raise fail_shape("Exactly one of 'cats_*' attributes must be provided.")
    if not C.has_n_input_shapes(ctx, 1):
        return
    shape = tensor_shape(ctx, 0)
    set_tensor_shape(ctx, 0, list(shape) + [max(len(ints or ()), len(strings or ()))])
    C.set_output_elem(ctx, 0, FLOAT)


@infers("SVMClassifier", 1, domain=ML)
@infers("TreeEnsembleClassifier", 1, domain=ML)
def classifier_labels(ctx) -> None:
    labels = _strings(ctx, "classlabels_strings")
    _set_elem(ctx, 0, STRING if labels else INT64)


def _exclusive(ctx, pairs) -> None:
    for name in pairs:
        if ctx.attr(name) is not None and ctx.attr(name + "_as_tensor") is not None:
            raise fail_shape("Only one of the attributes '", name, "', '", name, "_as_tensor' should be specified.")


@infers("TreeEnsembleClassifier", 3, domain=ML)
def tree_classifier3(ctx) -> None:
    _exclusive(ctx, ("nodes_values", "nodes_hitrates", "class_weights", "base_values"))
    labels = _strings(ctx, "classlabels_strings")
    using_strings = bool(labels)
    C.set_output_elem(ctx, 0, STRING if using_strings else INT64)
    C.set_output_elem(ctx, 1, FLOAT)
    C.check_input_rank(ctx, 0, 2)
    n = C.unify_input_dim(ctx, 0, 0, None)
    if using_strings:
        e = D.unify_value(None, len(labels))
    else:
        ints = C.attr_ints(ctx, "classlabels_int64s")
        if not ints:
            raise fail_shape("Non of classlabels_int64s or classlabels_strings is set.")
        e = D.unify_value(None, len(ints))
    C.set_output_shape(ctx, 0, (n,))
    C.set_output_shape(ctx, 1, (n, e))


@infers("TreeEnsembleRegressor", 3, domain=ML)
def tree_regressor3(ctx) -> None:
    _exclusive(ctx, ("nodes_values", "nodes_hitrates", "target_weights", "base_values"))
    C.check_input_rank(ctx, 0, 2)
    n = C.unify_input_dim(ctx, 0, 0, None)
    a = ctx.attr("n_targets")
    e = D.unify_value(None, a.i) if a is not None else None
    C.set_output_elem(ctx, 0, FLOAT)
    C.set_output_shape(ctx, 0, (n, e))


def _assert_attr(a, length: int, elem: int, required: bool) -> None:
    """``AssertAttributeProtoTypeAndLength``."""
    if a is None:
        if required:
            raise fail_shape("Unspecified required attribute.")
        return
    t, n = C.attr_elem_type_and_length(a)
    if t != elem:
        raise fail_shape("Attribute '", a.name, "' must have type ", elem, ".")
    if n != length:
        raise fail_shape("Attribute '", a.name, "' must have ", length, " elements.")


@infers("TreeEnsemble", 5, domain=ML)
def tree_ensemble(ctx) -> None:
    C.check_input_rank(ctx, 0, 2)
    splits = ctx.attr("nodes_splits")
    if splits is None:
        raise fail_shape("Attribute 'nodes_splits' is required.")
    if len(splits.t.dims) != 1:
        raise fail_shape("Attribute 'nodes_splits' must be 1D.")
    elem = _input_elem(ctx)
    if elem != splits.t.data_type:
        raise fail_shape("Attribute 'nodes_splits' must have same type as input. Input type is ", elem,
                         " and attribute type is ", splits.t.data_type)
    length = D.int32(splits.t.dims[0])
    for name, code, required in (("nodes_featureids", INT64, True), ("nodes_hitrates", FLOAT, False),
                                 ("nodes_modes", UINT8, True), ("nodes_truenodeids", INT64, True),
                                 ("nodes_falsenodeids", INT64, True), ("nodes_trueleafs", INT64, True),
                                 ("nodes_falseleafs", INT64, True),
                                 ("nodes_missing_value_tracks_true", INT64, False)):
        _assert_attr(ctx.attr(name), length, code, required)
    membership = ctx.attr("membership_values")
    if membership is not None and membership.t.data_type != elem:
        raise fail_shape("Attribute 'membership_values' must have same type as input. Input type is ", elem,
                         " and attribute type is ", membership.t.data_type)
    _assert_attr(splits, length, elem, True)
    targets, weights = ctx.attr("leaf_targetids"), ctx.attr("leaf_weights")
    if targets is None or weights is None:
        raise fail_shape("Attributes 'leaf_targetids' and 'leaf_weights' must both be set.")
    wdims = list(weights.t.dims)
    if not wdims:
        raise fail_shape("Attribute 'leaf_weights' must be 1D.")
    if len(targets.ints) != wdims[0]:
        raise fail_shape("Attribute 'leaf_targetids' must have same length as attribute 'leaf_weights'. "
                         "'leaf_targetids' length is ", len(targets.ints), " and 'leaf_weights' length is ", wdims[0])
    if weights.t.data_type != elem:
        raise fail_shape("Attribute 'leaf_weights' must have same type as input. Input type is ", elem,
                         " and attribute type is ", weights.t.data_type)
    C.check_input_rank(ctx, 0, 2)
    n = C.unify_input_dim(ctx, 0, 0, None)
    a = ctx.attr("n_targets")
    e = D.unify_value(None, a.i) if a is not None else None
    C.set_output_elem(ctx, 0, elem)
    C.set_output_shape(ctx, 0, (n, e))


@infers("ZipMap", 1, domain=ML)
def zip_map(ctx) -> None:
    labels = _strings(ctx, "classlabels_strings")
    key = None
    if C.has_input_shape(ctx, 0) and len(C.input_shape(ctx, 0)) not in (1, 2):
        raise fail_shape("ZipMap input shape should be 1D or 2D.")
    if labels:
        key = STRING
    ints = C.attr_ints(ctx, "classlabels_int64s")
    if ints:
        key = INT64
    ctx.set_output(0, SequenceType(MapType(key, TensorType(FLOAT, ()))))
