"""convert_version's contract: onnx's semantics, every problem at once, untouched parts kept."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as oh
from onnx import numpy_helper

import irmodel
from irmodel import version_converter as vc

import converter_sweep as cs


def _ours(model: onnx.ModelProto):
    return irmodel.loads(model.SerializeToString(), "ModelProto")


def _run(m, feeds: dict):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(irmodel.dumps(m) if not isinstance(m, bytes) else m, so,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _transformer_block(opset: int) -> onnx.ModelProto:
    """LayerNormalization and Gelu (no versions before 17 and 20) around a Softmax on axis 1."""
    nodes = [
        oh.make_node("LayerNormalization", ["x", "s", "b"], ["ln"], axis=-1, epsilon=1e-5),
        oh.make_node("Softmax", ["ln"], ["sm"], axis=1),
        oh.make_node("Gelu", ["sm"], ["y"]),
    ]
    g = oh.make_graph(nodes, "block", [oh.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
                      [oh.make_tensor_value_info("y", T.FLOAT, [2, 3, 4])],
                      [numpy_helper.from_array(np.linspace(0.5, 1.5, 4).astype(np.float32), "s"),
                       numpy_helper.from_array(np.linspace(-1, 1, 4).astype(np.float32), "b")])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)], ir_version=8)


@pytest.mark.parametrize("target", [13, 14, 17, 18, 21])
def test_decomposed_block_computes_the_same_below_its_opset(target):
    """onnx cannot take this below 17 ("No Previous Version of LayerNormalization"); ours
    expands the function bodies and moves Softmax's axis semantics across 13."""
    m = _transformer_block(20)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    expected = _run(m.SerializeToString(), {"x": x})
    out = vc.convert_version(_ours(m), target)
    assert [o.version for o in out.opset_import if o.domain == ""] == [target]
    onnx.checker.check_model(onnx.load_from_string(irmodel.dumps(out)), full_check=True)
    got = _run(out, {"x": x})
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-5)


def test_every_problem_is_reported_at_once_with_path_op_and_versions():
    nodes = [
        oh.make_node("ReduceMax", ["x", "axes"], ["a"], name="r1"),
        oh.make_node("Relu", ["a"], ["b"], name="ok"),
        oh.make_node("ReduceMean", ["b", "axes"], ["y"], name="r2"),
    ]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", T.FLOAT, [2, 3]),
                                   oh.make_tensor_value_info("axes", T.INT64, [1])],
                      [oh.make_tensor_value_info("y", T.FLOAT, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)], ir_version=8)
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(m), 17)
    err = info.value
    assert isinstance(err, irmodel.ValidationError) and isinstance(err, ValueError)
    assert vc.ConvertError is vc.ConversionError
    assert [(p.code, p.path, p.node_name, p.op_type) for p in err.problems] == [
        ("V002", "graph.node[0]", "r1", "ReduceMax"), ("V002", "graph.node[2]", "r2", "ReduceMean")]
    assert all("from opset 18 to 17" in p.message for p in err.problems)


def test_constant_axes_become_attributes_going_down_and_inputs_going_up():
    g = oh.make_graph([oh.make_node("ReduceSum", ["x"], ["y"], axes=[1], keepdims=0)], "g",
                      [oh.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                      [oh.make_tensor_value_info("y", T.FLOAT, [2])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 11)], ir_version=8)
    up = vc.convert_version(_ours(m), 13)
    assert [n.op_type for n in up.graph.node] == ["Constant", "ReduceSum"]
    assert [a.name for a in up.graph.node[1].attribute] == ["keepdims"]
    down = vc.convert_version(up, 11)
    assert [n.op_type for n in down.graph.node] == ["ReduceSum"]  # the Constant went with its last reader
    assert sorted(a.name for a in down.graph.node[0].attribute) == ["axes", "keepdims"]
    assert list(down.graph.node[0].input) == ["x"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for model in (up, down):
        np.testing.assert_array_equal(_run(model, {"x": x})[0], x.sum(axis=1))


def test_unchanged_nodes_keep_their_bytes_and_the_input_model_is_not_touched():
    nodes = [oh.make_node("Relu", ["x"], ["a"], name="keep", doc_string="d"),
             oh.make_node("Unsqueeze", ["a"], ["y"], axes=[0], name="moves")]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", T.FLOAT, [3])],
                      [oh.make_tensor_value_info("y", T.FLOAT, [1, 3])],
                      [numpy_helper.from_array(np.ones(1000, np.float32), "w")])
    m = _ours(oh.make_model(g, opset_imports=[oh.make_opsetid("", 12)], ir_version=8))
    before = irmodel.dumps(m)
    out = vc.convert_version(m, 13)
    assert irmodel.dumps(m) == before
    ref = onnx.load_from_string(irmodel.dumps(out))
    src = onnx.load_from_string(before)
    relu = [n for n in ref.graph.node if n.name == "keep"][0]
    assert relu.SerializeToString() == src.graph.node[0].SerializeToString()
    assert ref.graph.initializer[0].SerializeToString() == src.graph.initializer[0].SerializeToString()


def test_external_data_is_not_read(tmp_path):
    """A loaded model with external weights converts and saves without their file."""
    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32), "w")
    g = oh.make_graph([oh.make_node("Add", ["x", "w"], ["a"]),
                       oh.make_node("Softmax", ["a"], ["y"], axis=-1)], "g",
                      [oh.make_tensor_value_info("x", T.FLOAT, [4096])],
                      [oh.make_tensor_value_info("y", T.FLOAT, [4096])], [w])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 12)], ir_version=8)
    path = tmp_path / "m.onnx"
    onnx.save_model(m, str(path), save_as_external_data=True, location="m.data", size_threshold=0)
    loaded = irmodel.load(str(path), load_external_data=False)
    (tmp_path / "m.data").rename(tmp_path / "moved.data")  # reading the weights now would fail
    out = vc.convert_version(loaded, 13)
    assert out.graph.initializer[0].data_location == T.EXTERNAL
    assert [o.version for o in out.opset_import] == [13]


def test_functions_and_subgraphs_are_converted_with_their_imports():
    then = oh.make_graph([oh.make_node("Unsqueeze", ["x"], ["t"], axes=[0])], "then", [],
                         [oh.make_tensor_value_info("t", T.FLOAT, None)])
    other = oh.make_graph([oh.make_node("Unsqueeze", ["x"], ["e"], axes=[2])], "else", [],
                          [oh.make_tensor_value_info("e", T.FLOAT, None)])
    f = oh.make_function("local", "Squeeze0", ["a"], ["b"],
                         [oh.make_node("Squeeze", ["a"], ["b"], axes=[0])],
                         [oh.make_opsetid("", 12)])
    nodes = [oh.make_node("If", ["c"], ["u"], then_branch=then, else_branch=other),
             oh.make_node("Squeeze0", ["u"], ["y"], domain="local")]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("c", T.BOOL, []),
                                   oh.make_tensor_value_info("x", T.FLOAT, [1, 3])],
                      [oh.make_tensor_value_info("y", T.FLOAT, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 12), oh.make_opsetid("local", 1)], ir_version=8,
                      functions=[f])
    out = vc.convert_version(_ours(m), 13)
    assert [o.version for o in out.functions[0].opset_import] == [13]
    assert [n.op_type for n in out.functions[0].node] == ["Constant", "Squeeze"]
    assert [n.op_type for n in out.graph.node[0].attribute[0].g.node] == ["Constant", "Unsqueeze"]
    x = np.arange(3, dtype=np.float32).reshape(1, 3)
    assert _run(out, {"c": np.array(True), "x": x})[0].shape == (1, 3)
    assert _run(out, {"c": np.array(False), "x": x})[0].shape == (3, 1)


@pytest.mark.parametrize("bad", [None, "m", b"", 3])
def test_not_a_model_is_a_type_error(bad):
    with pytest.raises(TypeError):
        vc.convert_version(bad, 13)


@pytest.mark.parametrize("target", [0, -1, 29, 10**9, 13.0])
def test_target_outside_the_opsets_is_reported_or_a_type_error(target):
    m = _ours(_transformer_block(20))
    with pytest.raises((vc.ConversionError, TypeError)):
        vc.convert_version(m, target)


def test_model_without_default_domain_import_is_reported():
    g = oh.make_graph([], "g", [], [])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("ai.onnx.ml", 3)], ir_version=8)
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(m), 13)
    assert info.value.problems[0].code == "V008"


def test_unknown_operator_in_default_domain_is_reported_not_guessed():
    g = oh.make_graph([oh.make_node("NoSuchOp", ["x"], ["y"])], "g",
                      [oh.make_tensor_value_info("x", T.FLOAT, [1])],
                      [oh.make_tensor_value_info("y", T.FLOAT, [1])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], ir_version=8)
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(m), 12)
    assert info.value.problems[0].code == "V006"


def test_types_the_target_does_not_allow_are_reported():
    g = oh.make_graph([oh.make_node("Relu", ["x"], ["y"])], "g",
                      [oh.make_tensor_value_info("x", T.INT8, [2])],
                      [oh.make_tensor_value_info("y", T.INT8, [2])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 14)], ir_version=8)
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(m), 13)
    p = info.value.problems[0]
    assert p.code == "V004" and "tensor(int8)" in p.message


def test_same_version_returns_an_equal_model():
    m = _ours(_transformer_block(20))
    assert irmodel.dumps(vc.convert_version(m, 20)) == irmodel.dumps(m)


@pytest.mark.slow
def test_node_corpus_models_convert_or_raise_only_the_documented_error(node_corpus):
    """Every 11th node test model, to three targets: a model or ConversionError, nothing else."""
    for name, data in node_corpus[::11]:
        m = irmodel.loads(data, "ModelProto")
        for target in (7, 13, 21):
            try:
                vc.convert_version(m, target)
            except vc.ConversionError:
                pass
    assert cs.ORT_MIN_OPSET == 7


def test_scan_9_to_8_and_back_computes_the_same():
    """Scan-8 has a batch axis; a batch of one is put on and taken off around the scan
    (onnx's converter only rewrites the declared shapes, changing the inputs' rank)."""
    body = oh.make_graph(
        [oh.make_node("Add", ["s_in", "x_t"], ["s_out"]), oh.make_node("Identity", ["s_out"], ["y_t"])],
        "body", [oh.make_tensor_value_info("s_in", T.FLOAT, [2]), oh.make_tensor_value_info("x_t", T.FLOAT, [2])],
        [oh.make_tensor_value_info("s_out", T.FLOAT, [2]), oh.make_tensor_value_info("y_t", T.FLOAT, [2])])
    g = oh.make_graph([oh.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1)], "g",
                      [oh.make_tensor_value_info("s0", T.FLOAT, [2]), oh.make_tensor_value_info("xs", T.FLOAT, [3, 2])],
                      [oh.make_tensor_value_info("s", T.FLOAT, [2]), oh.make_tensor_value_info("ys", T.FLOAT, [3, 2])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 9)], ir_version=4)
    feeds = {"s0": np.array([1, 2], np.float32), "xs": np.arange(6, dtype=np.float32).reshape(3, 2)}
    expected = _run(m.SerializeToString(), feeds)
    down = vc.convert_version(_ours(m), 8)
    assert "Scan" in [n.op_type for n in down.graph.node]
    for got_model in (down, vc.convert_version(down, 9)):
        got = _run(got_model, feeds)
        for e, g_ in zip(expected, got):
            np.testing.assert_array_equal(g_, e)


def test_constant_axes_in_a_function_become_an_attribute_and_the_constant_goes():
    f = oh.make_function("local", "SumRows", ["a"], ["b"],
                         [oh.make_node("Constant", [], ["ax"], value_ints=[1]),
                          oh.make_node("ReduceSum", ["a", "ax"], ["b"], keepdims=0)],
                         [oh.make_opsetid("", 13)])
    g = oh.make_graph([oh.make_node("SumRows", ["x"], ["y"], domain="local")], "g",
                      [oh.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                      [oh.make_tensor_value_info("y", T.FLOAT, [2])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13), oh.make_opsetid("local", 1)],
                      ir_version=8, functions=[f])
    out = vc.convert_version(_ours(m), 12)
    assert [n.op_type for n in out.functions[0].node] == ["ReduceSum"]
    assert [o.version for o in out.functions[0].opset_import] == [12]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(_run(out, {"x": x})[0], x.sum(axis=1))
