"""The inliner against onnx.inliner, and onnxruntime on what the results compute.

Byte-for-byte differential on the reference corpus (every schema function expanded) and on
generated models with local functions, If and Loop; onnx's bug (a function's attribute
default dropped) shown by onnxruntime.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnx.inliner
import pytest
from onnx import TensorProto, helper as oh

import irmodel
from irmodel import inliner
from irmodel.fuzz.generate import random_model

from surgery_helpers import assert_same_results, random_inputs, run


def _ref(data: bytes, fn: str, *args, **kw):
    try:
        return getattr(onnx.inliner, fn)(onnx.ModelProto.FromString(data), *args, **kw).SerializeToString()
    except Exception:  # noqa: BLE001 - the reference cannot: not a comparison
        return None


def _ours(data: bytes, fn: str, *args, **kw) -> bytes:
    return irmodel.dumps(getattr(inliner, fn)(irmodel.loads(data), *args, **kw))


@pytest.mark.slow
def test_schema_functions_of_the_corpus_match_onnx(node_corpus):
    """Every schema function (static or built for the node) expanded: onnx's bytes exactly,
    wherever onnx succeeds (it fails where a value's type is unknown to it)."""
    same = refused = 0
    for name, data in node_corpus:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = _ref(data, "inline_selected_functions", [], exclude=True, inline_schema_functions=True)
        if ref is None:
            refused += 1
            continue
        assert _ours(data, "inline_selected_functions", [], exclude=True, inline_schema_functions=True) == ref, name
        same += 1
    assert same > 1800 and refused < 100


def test_schema_functions_sample_match_onnx(node_corpus):
    """A fast sample of the test above (every 25th model)."""
    for name, data in node_corpus[::25]:
        ref = _ref(data, "inline_selected_functions", [], exclude=True, inline_schema_functions=True)
        if ref is not None:
            assert _ours(data, "inline_selected_functions", [], exclude=True,
                         inline_schema_functions=True) == ref, name


def test_generated_models_match_onnx_and_compute_the_same():
    with_functions = ran = 0
    for seed in range(40):
        data = irmodel.dumps(random_model(seed))
        ref = _ref(data, "inline_local_functions")
        ours = _ours(data, "inline_local_functions")
        assert ours == ref, seed
        with_functions += bool(len(onnx.ModelProto.FromString(data).functions))
        for ids, exclude in (([("local", "F0")], False), ([("local", "F0")], True)):
            assert _ours(data, "inline_selected_functions", ids, exclude) == \
                _ref(data, "inline_selected_functions", ids, exclude), (seed, ids, exclude)
        feeds = random_inputs(data, seed)
        try:
            expected = run(data, feeds) if feeds is not None else None
        except Exception:  # noqa: BLE001 - an operator onnxruntime lacks: compared with onnx only
            expected = None
        if expected is not None:
            assert_same_results(expected, run(ours, feeds))
            ran += 1
    assert with_functions >= 5 and ran >= 10


def _model(functions, nodes, inputs=("X",), outputs=("Y",), opset=17):
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in inputs],
                      [oh.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in outputs])
    return oh.make_model(g, functions=functions, ir_version=10,
                         opset_imports=[oh.make_opsetid("", opset), oh.make_opsetid("local", 1)])


def test_function_attribute_default_is_kept():
    """onnx drops the attribute when the call does not set it, so LeakyRelu's own default
    (0.01) applies instead of the function's (0.25); onnxruntime runs the function with 0.25."""
    body = oh.make_node("LeakyRelu", ["x"], ["y"])
    body.attribute.append(oh.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    f = oh.make_function("local", "leaky", ["x"], ["y"], [body], [oh.make_opsetid("", 17)],
                         attribute_protos=[oh.make_attribute("alpha", 0.25)])
    data = _model([f], [oh.make_node("leaky", ["X"], ["Y"], domain="local")]).SerializeToString()
    feeds = {"X": np.array([-4.0, -1.0, 0.0, 2.0], np.float32)}
    expected = run(data, feeds)["Y"]
    np.testing.assert_allclose(expected, [-1.0, -0.25, 0.0, 2.0])
    ours = _ours(data, "inline_local_functions")
    np.testing.assert_allclose(run(ours, feeds)["Y"], expected)
    theirs = _ref(data, "inline_local_functions")
    assert not np.allclose(run(theirs, feeds)["Y"], expected)  # onnx's bug, as it stands
    # a call that sets alpha uses its value
    call = oh.make_node("leaky", ["X"], ["Y"], domain="local", alpha=0.5)
    data2 = _model([f], [call]).SerializeToString()
    np.testing.assert_allclose(run(_ours(data2, "inline_local_functions"), feeds)["Y"], [-2.0, -0.5, 0.0, 2.0])
    assert _ours(data2, "inline_local_functions") == _ref(data2, "inline_local_functions")


def test_calls_inside_branches_and_nested_functions():
    sq = oh.make_function("local", "square", ["x"], ["y"], [oh.make_node("Mul", ["x", "x"], ["y"], name="m")],
                          [oh.make_opsetid("", 17)])
    ds = oh.make_function("local", "double_square", ["x"], ["y"],
                          [oh.make_node("Add", ["x", "x"], ["d"], name="a"),
                           oh.make_node("square", ["d"], ["y"], domain="local", name="call")],
                          [oh.make_opsetid("", 17), oh.make_opsetid("local", 1)])
    then_g = oh.make_graph([oh.make_node("double_square", ["X"], ["t"], domain="local")], "then", [],
                           [oh.make_tensor_value_info("t", TensorProto.FLOAT, [4])])
    else_g = oh.make_graph([oh.make_node("square", ["X"], ["e"], domain="local")], "else", [],
                           [oh.make_tensor_value_info("e", TensorProto.FLOAT, [4])])
    nodes = [oh.make_node("ReduceSum", ["X"], ["s"], keepdims=0), oh.make_node("Greater", ["s", "zero"], ["c"]),
             oh.make_node("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g)]
    model = _model([ds, sq], nodes)
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array(0.0, np.float32), "zero"))
    data = model.SerializeToString()
    ours = _ours(data, "inline_local_functions")
    assert ours == _ref(data, "inline_local_functions")
    out = onnx.ModelProto.FromString(ours)
    assert not out.functions
    assert [n.op_type for n in out.graph.node[2].attribute[1].g.node] == ["Add", "Mul"] or \
        [n.op_type for n in out.graph.node[2].attribute[0].g.node] == ["Add", "Mul"]
    for x in ([1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, 0.0, 1.0]):
        feeds = {"X": np.array(x, np.float32)}
        assert_same_results(run(data, feeds), run(ours, feeds))
    # selected: only square, also inside the kept function's body
    sel = _ours(data, "inline_selected_functions", [("local", "square")])
    assert sel == _ref(data, "inline_selected_functions", [("local", "square")])
    kept = onnx.ModelProto.FromString(sel).functions
    assert [f.name for f in kept] == ["double_square"] and [n.op_type for n in kept[0].node] == ["Add", "Mul"]


def test_cycle_is_refused():
    f = oh.make_function("local", "foo", ["x"], ["y"], [oh.make_node("foo", ["x"], ["y"], domain="local")],
                         [oh.make_opsetid("", 17), oh.make_opsetid("local", 1)])
    model = irmodel.loads(_model([f], [oh.make_node("foo", ["X"], ["Y"], domain="local")]).SerializeToString())
    with pytest.raises(irmodel.ValidationError, match="Cycle"):
        inliner.inline_local_functions(model)
    with pytest.raises(irmodel.ValidationError, match="Cycle"):
        inliner.inline_selected_functions(model, [("local", "foo")])


def test_incompatible_function_opsets_are_refused_or_left():
    f = oh.make_function("local", "celu", ["x"], ["y"], [oh.make_node("Celu", ["x"], ["y"])], [oh.make_opsetid("", 12)])
    data = _model([f], [oh.make_node("celu", ["X"], ["Y"], domain="local")], opset=17).SerializeToString()
    # inline_local_functions leaves it (as onnx); with convert_version: Celu is the same at 12 and 17
    assert _ours(data, "inline_local_functions") == _ref(data, "inline_local_functions")
    converted = onnx.ModelProto.FromString(_ours(data, "inline_local_functions", convert_version=True))
    assert [n.op_type for n in converted.graph.node] == ["Celu"] and not converted.functions
    with pytest.raises(inliner.SurgeryError, match="incompatible"):
        inliner.inline_selected_functions(irmodel.loads(data), [("local", "celu")])
    # an operator that changed between the versions (Clip's min and max became inputs at 11)
    # is converted by the version converter: the inlined model computes the function's Clip
    g = oh.make_function("local", "clip", ["x"], ["y"], [oh.make_node("Clip", ["x"], ["y"], min=-1.0, max=1.0)],
                         [oh.make_opsetid("", 9)])
    data = _model([g], [oh.make_node("clip", ["X"], ["Y"], domain="local")], opset=17).SerializeToString()
    converted = onnx.ModelProto.FromString(irmodel.dumps(inliner.inline_local_functions(irmodel.loads(data),
                                                                                         convert_version=True)))
    assert not converted.functions and "Clip" in [n.op_type for n in converted.graph.node]
    onnx.checker.check_model(converted, full_check=True)


def test_source_model_is_unchanged():
    data = irmodel.dumps(random_model(3))
    m = irmodel.loads(data)
    inliner.inline_local_functions(m)
    inliner.inline_selected_functions(m, [], exclude=True, inline_schema_functions=True)
    assert irmodel.dumps(m) == data


def test_bad_function_ids_are_refused():
    m = irmodel.loads(irmodel.dumps(random_model(1)))
    with pytest.raises(TypeError):
        inliner.inline_selected_functions(m, ["local"])
    with pytest.raises(TypeError):
        inliner.inline_local_functions(b"not a model")


def test_attribute_defaults_through_nested_calls_and_branches():
    """outer(alpha=0.25 by default) calls inner(alpha: ref to outer's) whose LeakyRelu sits in
    an If branch and reads inner's alpha: the default reaches it through both levels."""
    leaky = oh.make_node("LeakyRelu", ["x"], ["b"])
    leaky.attribute.append(oh.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    then_g = oh.make_graph([leaky], "then", [], [oh.make_tensor_value_info("b", TensorProto.FLOAT, [4])])
    else_g = oh.make_graph([oh.make_node("Identity", ["x"], ["e"])], "else", [],
                           [oh.make_tensor_value_info("e", TensorProto.FLOAT, [4])])
    inner = oh.make_function("local", "inner", ["x", "c"], ["y"],
                             [oh.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                             [oh.make_opsetid("", 17)], attributes=["alpha"])
    call = oh.make_node("inner", ["x", "c"], ["y"], domain="local")
    call.attribute.append(oh.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    outer = oh.make_function("local", "outer", ["x", "c"], ["y"], [call],
                             [oh.make_opsetid("", 17), oh.make_opsetid("local", 1)],
                             attribute_protos=[oh.make_attribute("alpha", 0.25)])
    g = oh.make_graph([oh.make_node("outer", ["X", "C"], ["Y"], domain="local")], "g",
                      [oh.make_tensor_value_info("X", TensorProto.FLOAT, [4]),
                       oh.make_tensor_value_info("C", TensorProto.BOOL, [])],
                      [oh.make_tensor_value_info("Y", TensorProto.FLOAT, [4])])
    data = oh.make_model(g, functions=[outer, inner], ir_version=10,
                         opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid("local", 1)]).SerializeToString()
    feeds = {"X": np.array([-4.0, -1.0, 0.0, 2.0], np.float32), "C": np.array(True)}
    ours = _ours(data, "inline_local_functions")
    assert not onnx.ModelProto.FromString(ours).functions
    np.testing.assert_allclose(run(ours, feeds)["Y"], [-1.0, -0.25, 0.0, 2.0])
    np.testing.assert_allclose(run(data, feeds)["Y"], [-1.0, -0.25, 0.0, 2.0])


def test_convert_version_uses_the_version_converter_when_there_is_one(monkeypatch):
    """With an ``irmodel.version_converter`` (a stand-in asking the reference's), a function
    whose operators changed (Clip-6's min and max became inputs) is converted and inlined."""
    import sys
    import types

    import onnx.version_converter

    def convert_version(model, target):
        ref = onnx.version_converter.convert_version(onnx.ModelProto.FromString(irmodel.dumps(model)), target)
        return irmodel.loads(ref.SerializeToString())

    stand_in = types.ModuleType("irmodel.version_converter")
    stand_in.convert_version = convert_version
    monkeypatch.setitem(sys.modules, "irmodel.version_converter", stand_in)
    f = oh.make_function("local", "clip", ["x"], ["y"], [oh.make_node("Clip", ["x"], ["y"], min=-1.0, max=1.0)],
                         [oh.make_opsetid("", 9)])
    data = _model([f], [oh.make_node("clip", ["X"], ["Y"], domain="local")], opset=17).SerializeToString()
    out = _ours(data, "inline_local_functions", convert_version=True)
    m = onnx.ModelProto.FromString(out)
    assert not m.functions and "Clip" in [n.op_type for n in m.graph.node]
    onnx.checker.check_model(m, full_check=True)
    x = np.array([-4.0, -0.5, 0.5, 3.0], np.float32)
    np.testing.assert_allclose(run(out, {"X": x})["Y"], np.clip(x, -1, 1))
