"""Full checks of models whose schemas spell map and sequence types loosely, against onnx.

ZipMap, DictVectorizer and CastMap declare allowed types such as ``seq(map(int64, float))``;
a value's type reads ``seq(map(int64,tensor(float)))``.  onnx compares the two after
normalising both; so must ``check_model(full_check=True)`` and ``infer_shapes(check_type=True)``.
Also: which domains the checker holds to schemas (ai.onnx.preview.training is not one).
"""

from __future__ import annotations

import glob
import os

import onnx
import pytest
from onnx import TensorProto, helper

import irmodel

ML = "ai.onnx.ml"


def _model(nodes, inputs, outputs, opsets=(("", 17), (ML, 3))):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])


def _seq_map(key, elem):
    return helper.make_sequence_type_proto(
        helper.make_map_type_proto(key, helper.make_tensor_type_proto(elem, None)))


def _classifier(label_key: str, zipmap_attr: str, labels) -> onnx.ModelProto:
    """A scikit-learn classifier as skl2onnx converts it with default options."""
    label_type = TensorProto.INT64 if label_key == "classlabels_ints" else TensorProto.STRING
    linear = helper.make_node("LinearClassifier", ["X"], ["label", "probs"], domain=ML,
                              coefficients=[0.5] * (3 * len(labels)), intercepts=[0.1] * len(labels),
                              post_transform="LOGISTIC", **{label_key: labels})
    norm = helper.make_node("Normalizer", ["probs"], ["probs_n"], domain=ML, norm="L1")
    zipmap = helper.make_node("ZipMap", ["probs_n"], ["output_probability"], domain=ML,
                              **{zipmap_attr: labels})
    return _model([linear, norm, zipmap], [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3])],
                  [helper.make_tensor_value_info("label", label_type, ["N"]),
                   helper.make_value_info("output_probability", _seq_map(label_type, TensorProto.FLOAT))])


def _dict_vectorizer() -> onnx.ModelProto:
    node = helper.make_node("DictVectorizer", ["D"], ["Y"], domain=ML, string_vocabulary=["a", "b"])
    in_type = helper.make_map_type_proto(TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.INT64, None))
    return _model([node], [helper.make_value_info("D", in_type)],
                  [helper.make_tensor_value_info("Y", TensorProto.INT64, ["R", "C"])])


def _cast_map() -> onnx.ModelProto:
    node = helper.make_node("CastMap", ["M"], ["Y"], domain=ML, cast_to="TO_FLOAT", map_form="DENSE")
    in_type = helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    return _model([node], [helper.make_value_info("M", in_type)],
                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["R", "C"])])


def _wrong_cast_map() -> onnx.ModelProto:
    """CastMap's input a map to double, a value type CastMap does not take."""
    node = helper.make_node("CastMap", ["M"], ["Y"], domain=ML, cast_to="TO_FLOAT", map_form="DENSE")
    in_type = helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.DOUBLE, None))
    return _model([node], [helper.make_value_info("M", in_type)],
                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["R", "C"])])


def _logreg_iris() -> onnx.ModelProto:
    ort = pytest.importorskip("onnxruntime")
    paths = glob.glob(os.path.join(os.path.dirname(ort.__file__), "datasets", "logreg_iris.onnx"))
    assert paths, "onnxruntime ships datasets/logreg_iris.onnx"
    return onnx.load(paths[0])


MODELS = {
    "classifier-int-labels": lambda: _classifier("classlabels_ints", "classlabels_int64s", [0, 1, 2]),
    "classifier-string-labels": lambda: _classifier("classlabels_strings", "classlabels_strings", ["a", "b"]),
    "dict-vectorizer": _dict_vectorizer,
    "cast-map": _cast_map,
    "wrong-cast-map": _wrong_cast_map,
    "logreg-iris": _logreg_iris,
}


def _onnx_verdict(call):
    try:
        return True, call()
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError):
        return False, None


@pytest.mark.parametrize("name", sorted(MODELS))
def test_full_check_agrees_with_onnx(name):
    model = MODELS[name]()
    ok, _ = _onnx_verdict(lambda: onnx.checker.check_model(model, full_check=True))
    if ok:
        irmodel.check_model(model.SerializeToString(), full_check=True)
    else:
        with pytest.raises(irmodel.ValidationError, match="unsupported type"):
            irmodel.check_model(model.SerializeToString(), full_check=True)
    assert ok == (name != "wrong-cast-map")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_check_type_inference_agrees_with_onnx(name):
    model = MODELS[name]()
    ok, expected = _onnx_verdict(lambda: onnx.shape_inference.infer_shapes(model, check_type=True,
                                                                           strict_mode=True))
    data = model.SerializeToString()
    if ok:
        got = irmodel.infer_shapes(data, check_type=True, strict_mode=True)
        assert irmodel.dumps(got) == expected.SerializeToString()
    else:
        with pytest.raises(irmodel.InferenceError, match="unsupported type"):
            irmodel.infer_shapes(data, check_type=True, strict_mode=True)


DOMAINS = ["ai.onnx.preview.training", "ai.onnx.training", "ai.onnx.preview", ML, "", "com.example"]


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("full_check", [False, True])
def test_unknown_op_domains_held_to_schemas_as_onnx(domain, full_check):
    node = helper.make_node("NoSuchOp", ["x"], ["y"], domain=domain)
    opsets = (("", 21),) + (((domain, 1),) if domain else ())
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], opsets)
    try:
        onnx.checker.check_model(model, full_check=full_check)
        accepted = True
    except onnx.checker.ValidationError:
        accepted = False
    if accepted:
        irmodel.check_model(model.SerializeToString(), full_check=full_check)
    else:
        with pytest.raises(irmodel.ValidationError, match="No Op registered for NoSuchOp"):
            irmodel.check_model(model.SerializeToString(), full_check=full_check)
    # only ai.onnx, ai.onnx.ml and ai.onnx.training are held to schemas
    assert accepted == (domain not in ("", ML, "ai.onnx.training"))
