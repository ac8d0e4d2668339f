"""ai.onnx.ml LabelEncoder 1 <-> 2 <-> 4: a list of classes and a map of keys to values.

Differential in onnxruntime (which runs every version): the model converted up or down
computes what the original computes on the same inputs, unknown keys included.  Converting
ai.onnx.ml is `irmodel._converter.driver.convert_model(model, {"ai.onnx.ml": N})`
(`convert_version` moves the default domain only, as onnx's).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as oh

import irmodel
from irmodel._converter.driver import convert_model
from irmodel.version_converter import ConversionError

import converter_sweep as cs

ML = "ai.onnx.ml"


def _encoder(version: int, in_elem, out_elem, **attrs):
    g = oh.make_graph([oh.make_node("LabelEncoder", ["x"], ["y"], domain=ML, **attrs)], "g",
                      [oh.make_tensor_value_info("x", in_elem, [6])], [oh.make_tensor_value_info("y", out_elem, [6])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13), oh.make_opsetid(ML, version)], ir_version=8)
    return irmodel.loads(m.SerializeToString(), "ModelProto")


def _run(m, x):
    return cs.run(irmodel.dumps(m), [x])[0]


STRINGS_IN = np.array(["c", "a", "zz", "b", "a", ""], dtype=object)
INDICES_IN = np.array([2, 0, 5, -1, 1, 3], dtype=np.int64)

CASES = [
    ("strings to indices", T.STRING, T.INT64, STRINGS_IN, {"classes_strings": ["a", "b", "c"]}),
    ("strings to indices, default", T.STRING, T.INT64, STRINGS_IN, {"classes_strings": ["a", "b", "c"],
                                                                    "default_int64": 7}),
    ("indices to strings", T.INT64, T.STRING, INDICES_IN, {"classes_strings": ["a", "b", "c"]}),
    ("indices to strings, default", T.INT64, T.STRING, INDICES_IN, {"classes_strings": ["x", "y", "z", "w"],
                                                                    "default_string": "?"}),
]


@pytest.mark.parametrize("what, in_elem, out_elem, x, attrs", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("target", [2, 4])
def test_label_encoder_1_up_and_back_computes_the_same(what, in_elem, out_elem, x, attrs, target):
    m = _encoder(1, in_elem, out_elem, **attrs)
    expected = _run(m, x)
    up = convert_model(m, {ML: target})
    assert [o.version for o in up.opset_import if o.domain == ML] == [target]
    assert not any(a.name == "classes_strings" for a in up.graph.node[0].attribute)
    np.testing.assert_array_equal(_run(up, x), expected)
    down = convert_model(up, {ML: 1})
    assert [a.name for a in down.graph.node[0].attribute if a.name == "classes_strings"] == ["classes_strings"]
    np.testing.assert_array_equal(_run(down, x), expected)


@pytest.mark.parametrize("attrs, why", [
    ({"keys_strings": ["a", "b"], "values_int64s": [1, 0]}, "not 0, 1, 2"),
    ({"keys_strings": ["a", "b"], "values_floats": [0.0, 1.0]}, "is not one"),
    ({"keys_int64s": [0, 2], "values_strings": ["a", "b"]}, "not 0, 1, 2"),
])
def test_label_encoder_2_maps_that_are_no_list_of_classes_are_reported(attrs, why):
    out_elem = T.FLOAT if "values_floats" in attrs else T.INT64 if "values_int64s" in attrs else T.STRING
    in_elem = T.STRING if "keys_strings" in attrs else T.INT64
    with pytest.raises(ConversionError) as info:
        convert_model(_encoder(2, in_elem, out_elem, **attrs), {ML: 1})
    (p,) = info.value.problems
    assert p.code == "V003" and why in p.message


def test_label_encoder_1_with_a_repeated_class_is_reported_going_up():
    with pytest.raises(ConversionError) as info:
        convert_model(_encoder(1, T.STRING, T.INT64, classes_strings=["a", "b", "a"]), {ML: 2})
    assert info.value.problems[0].code == "V003"
