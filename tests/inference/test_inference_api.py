"""The inference API: names and parameters as onnx.shape_inference, copy-on-write results,
errors (which, when, and how reported), limits.  Expected types come from the reference.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import irmodel
from irmodel.inference import InferenceError, infer_node_outputs, infer_shapes, infer_shapes_path

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper as oh, numpy_helper, shape_inference  # noqa: E402

np = pytest.importorskip("numpy")


def _model(nodes, inputs, outputs, initializers=(), opset=18, **kw):
    g = oh.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)], **kw)


def _both(m, **kw):
    """(reference bytes, our bytes) of inferring ``m`` (an onnx ModelProto)."""
    ref = shape_inference.infer_shapes(m, **kw).SerializeToString()
    ours = irmodel.dumps(infer_shapes(irmodel.loads(m.SerializeToString()), **kw))
    return ref, ours


def _chain_model():
    """Shape -> Gather -> Concat -> Reshape: resolved only with data propagation."""
    x = oh.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        oh.make_node("Concat", ["n", "m1"], ["target"], axis=0),
        oh.make_node("Reshape", ["x", "target"], ["y"]),
        oh.make_node("Relu", ["y"], ["z"]),
    ]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "i0"),
             numpy_helper.from_array(np.array([12], np.int64), "m1")]
    return _model(nodes, [x], [oh.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)


# -- names and results --------------------------------------------------------------------------

def test_names_are_exported_from_irmodel_lazily():
    assert irmodel.infer_shapes is infer_shapes
    assert issubclass(irmodel.InferenceError, irmodel.ValidationError)
    code = ("import sys, irmodel; assert 'irmodel.inference' not in sys.modules; "
            "irmodel.infer_shapes; assert 'irmodel.inference' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("data_prop", [False, True])
def test_data_propagation_resolves_shape_arithmetic_as_the_reference(data_prop):
    ref, ours = _both(_chain_model(), data_prop=data_prop)
    assert ours == ref
    z = irmodel.loads(ours).graph.output[0]
    dims = [d.WhichOneof("value") for d in z.type.tensor_type.shape.dim]
    assert dims == (["dim_param", "dim_value"] if data_prop else ["dim_param", "dim_param"])


def test_bytes_in_model_out_and_the_callers_model_is_untouched():
    m = _chain_model()
    data = m.SerializeToString()
    ours = irmodel.loads(data)
    result = infer_shapes(ours, data_prop=True)
    assert irmodel.dumps(ours) == data  # the argument was not changed
    assert result is not ours
    assert irmodel.dumps(infer_shapes(data, data_prop=True)) == irmodel.dumps(result)


def test_only_the_graph_is_reencoded_weights_are_copied_as_they_are():
    w = numpy_helper.from_array(np.arange(1 << 16, dtype=np.float32), "w")
    m = _model([oh.make_node("Relu", ["w"], ["y"])], [], [oh.make_tensor_value_info("y", 1, None)], [w])
    loaded = irmodel.loads(m.SerializeToString())
    result = infer_shapes(loaded)
    raw = result.graph.initializer[0].raw_data
    assert isinstance(raw, memoryview) and raw.obj is loaded.graph.initializer[0].raw_data.obj


def test_infer_shapes_path_writes_what_the_reference_writes(tmp_path):
    m = _chain_model()
    src = tmp_path / "m.onnx"
    src.write_bytes(m.SerializeToString())
    shape_inference.infer_shapes_path(str(src), str(tmp_path / "ref.onnx"), data_prop=True)
    infer_shapes_path(src, tmp_path / "ours.onnx", data_prop=True)
    assert (tmp_path / "ours.onnx").read_bytes() == (tmp_path / "ref.onnx").read_bytes()
    infer_shapes_path(src, data_prop=True)  # in place
    assert src.read_bytes() == (tmp_path / "ref.onnx").read_bytes()


def test_infer_node_outputs_gives_the_references_types():
    from irmodel import defs
    node = oh.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    types = {"x": oh.make_tensor_type_proto(1, [1, 3, 8, 8]), "w": oh.make_tensor_type_proto(1, [4, 3, 3, 3])}
    ref = shape_inference.infer_node_outputs(onnx.defs.get_schema("Conv", 22), node, types)
    ours = infer_node_outputs(defs.get_schema("Conv", 22), irmodel.loads(node.SerializeToString(), "NodeProto"),
                              {k: irmodel.loads(v.SerializeToString(), "TypeProto") for k, v in types.items()})
    assert {k: irmodel.dumps(v) for k, v in ours.items()} == {k: v.SerializeToString() for k, v in ref.items()}
    bad = {"x": oh.make_tensor_type_proto(1, [1, 3]), "w": types["w"]}
    with pytest.raises(onnx.shape_inference.InferenceError):
        shape_inference.infer_node_outputs(onnx.defs.get_schema("Conv", 22), node, bad)
    with pytest.raises(InferenceError):
        infer_node_outputs(defs.get_schema("Conv", 22), irmodel.loads(node.SerializeToString(), "NodeProto"),
                           {k: irmodel.loads(v.SerializeToString(), "TypeProto") for k, v in bad.items()})


# -- errors ---------------------------------------------------------------------------------------

def _two_bad_nodes():
    x = oh.make_tensor_value_info("x", 1, [2, 3])
    nodes = [oh.make_node("MatMul", ["x", "x"], ["a"], name="first"),
             oh.make_node("Relu", ["x"], ["b"]),
             oh.make_node("Concat", ["x", "c"], ["d"], axis=5, name="third")]
    c = oh.make_tensor_value_info("c", 1, [2, 3])
    return _model(nodes, [x, c], [oh.make_tensor_value_info("d", 1, None)])


def test_strict_mode_reports_every_node_error_with_index_name_and_op_type():
    m = _two_bad_nodes()
    with pytest.raises(onnx.shape_inference.InferenceError):
        shape_inference.infer_shapes(m, strict_mode=True)
    with pytest.raises(InferenceError) as info:
        infer_shapes(irmodel.loads(m.SerializeToString()), strict_mode=True)
    problems = info.value.problems
    assert len(problems) == 2
    assert problems[0].message.startswith("node 0 (op_type:MatMul, node name: first)")
    assert problems[1].message.startswith("node 2 (op_type:Concat, node name: third)")
    assert [(p.path, p.node_name, p.op_type) for p in problems] == [
        ("graph.node[0]", "first", "MatMul"), ("graph.node[2]", "third", "Concat")]
    assert all(p.code in ("I101", "I102") for p in problems)
    assert str(info.value).startswith(problems[0].message)  # onnx's wording comes first


def test_lenient_mode_keeps_going_as_the_reference():
    ref, ours = _both(_two_bad_nodes())
    assert ours == ref


def test_a_domain_without_opset_import_is_an_error_in_every_mode():
    m = _model([oh.make_node("Relu", ["x"], ["y"], domain="foo")], [oh.make_tensor_value_info("x", 1, [2])],
               [oh.make_tensor_value_info("y", 1, None)])
    with pytest.raises(onnx.shape_inference.InferenceError):
        shape_inference.infer_shapes(m)
    with pytest.raises(InferenceError, match="No opset import for domain foo"):
        infer_shapes(irmodel.loads(m.SerializeToString()))


def test_recursive_model_local_functions_are_refused():
    f = oh.make_function("local", "F", ["x"], ["y"], [oh.make_node("F", ["x"], ["y"], domain="local")],
                         [oh.make_opsetid("", 18), oh.make_opsetid("local", 1)])
    m = _model([oh.make_node("F", ["a"], ["b"], domain="local")], [oh.make_tensor_value_info("a", 1, [2])],
               [oh.make_tensor_value_info("b", 1, None)], functions=[f])
    m.opset_import.append(oh.make_opsetid("local", 1))
    with pytest.raises(Exception):  # the reference's checker error
        shape_inference.infer_shapes(m)
    with pytest.raises(InferenceError, match="Cycle"):
        infer_shapes(irmodel.loads(m.SerializeToString()))


def test_deeply_nested_function_calls_stop_at_the_limit_with_our_error():
    """A chain of 150 model-local functions: past MAX_CALL_DEPTH the call is a node error."""
    from irmodel.inference.engine import MAX_CALL_DEPTH
    imports = [oh.make_opsetid("", 18), oh.make_opsetid("local", 1)]
    funcs = [oh.make_function("local", f"F{i}", ["x"], ["y"], [oh.make_node(f"F{i + 1}", ["x"], ["y"],
                                                                            domain="local")], imports)
             for i in range(150)]
    funcs.append(oh.make_function("local", "F150", ["x"], ["y"], [oh.make_node("Relu", ["x"], ["y"])], imports))
    m = _model([oh.make_node("F0", ["a"], ["b"], domain="local")], [oh.make_tensor_value_info("a", 1, [2])],
               [oh.make_tensor_value_info("b", 1, None)], functions=funcs)
    m.opset_import.append(oh.make_opsetid("local", 1))
    assert MAX_CALL_DEPTH < 150
    with pytest.raises(InferenceError, match="nested deeper"):
        infer_shapes(irmodel.loads(m.SerializeToString()), strict_mode=True)
    lenient = irmodel.loads(irmodel.dumps(infer_shapes(irmodel.loads(m.SerializeToString()))))
    assert not lenient.graph.output[0].type.tensor_type.HasField("shape")  # not inferred, no crash


def test_unknown_operators_leave_outputs_untyped_as_the_reference():
    m = _model([oh.make_node("Mystery", ["x"], ["y"], domain="custom"), oh.make_node("Relu", ["y"], ["z"])],
               [oh.make_tensor_value_info("x", 1, [2])], [oh.make_tensor_value_info("z", 1, None)])
    m.opset_import.append(oh.make_opsetid("custom", 1))
    for strict in (False, True):
        ref, ours = _both(m, strict_mode=strict)
        assert ours == ref


def test_large_constants_are_not_read():
    """A shape tensor past MAX_CONSTANT_ELEMENTS counts as unknown: its bytes are never unpacked."""
    from irmodel.inference.tensordata import MAX_CONSTANT_ELEMENTS
    n = MAX_CONSTANT_ELEMENTS + 1
    big = numpy_helper.from_array(np.ones(n, np.int64), "big")
    m = _model([oh.make_node("Reshape", ["x", "big"], ["y"])], [oh.make_tensor_value_info("x", 1, [n])],
               [oh.make_tensor_value_info("y", 1, None)], [big])
    out = irmodel.loads(irmodel.dumps(infer_shapes(irmodel.loads(m.SerializeToString()))))
    y = out.graph.output[0].type.tensor_type
    assert y.elem_type == 1 and not y.HasField("shape")


def test_initializer_contradicting_its_input_is_an_error_in_every_mode():
    w = numpy_helper.from_array(np.ones((2, 2), np.float32), "w")
    m = _model([oh.make_node("Relu", ["w"], ["y"])], [oh.make_tensor_value_info("w", 1, [3, 3])],
               [oh.make_tensor_value_info("y", 1, None)], [w])
    with pytest.raises(onnx.shape_inference.InferenceError):
        shape_inference.infer_shapes(m)
    with pytest.raises(InferenceError):
        infer_shapes(irmodel.loads(m.SerializeToString()))


def test_wrong_argument_types_are_refused():
    with pytest.raises(TypeError):
        infer_shapes("model.onnx")


# -- function bodies ----------------------------------------------------------------------------

def _local_function_model():
    """A model-local function with attribute references (in its body and in a sub-graph),
    a default attribute, an unused optional input, called twice."""
    imports = [oh.make_opsetid("", 18), oh.make_opsetid("local", 1)]
    const = onnx.NodeProto(op_type="Constant", output=["s"])
    const.attribute.add(name="value_ints", ref_attr_name="shape", type=onnx.AttributeProto.INTS)
    transpose = onnx.NodeProto(op_type="Transpose", input=["r"], output=["y"])
    transpose.attribute.add(name="perm", ref_attr_name="perm", type=onnx.AttributeProto.INTS)
    then_g = oh.make_graph([onnx.NodeProto(op_type="Flatten", input=["x"], output=["t"])], "then", [],
                           [oh.make_tensor_value_info("t", 0, None)])
    then_g.node[0].attribute.add(name="axis", ref_attr_name="ax", type=onnx.AttributeProto.INT)
    else_g = oh.make_graph([oh.make_node("Flatten", ["x"], ["e"], axis=1)], "else", [],
                           [oh.make_tensor_value_info("e", 0, None)])
    body = [const, oh.make_node("Reshape", ["x", "s"], ["r"]), transpose,
            oh.make_node("If", ["c"], ["z"], then_branch=then_g, else_branch=else_g)]
    f = oh.make_function("local", "F", ["x", "c", "opt"], ["y", "z"], body, imports, attributes=["shape", "perm"])
    f.attribute_proto.append(oh.make_attribute("ax", 1))
    g = oh.make_graph([
        oh.make_node("F", ["a", "cond"], ["y1", "z1"], domain="local", shape=[6, 4], perm=[1, 0]),
        oh.make_node("F", ["b", "cond"], ["y2", "z2"], domain="local", shape=[2, -1], ax=2),
    ], "g", [oh.make_tensor_value_info("a", 1, [2, 3, 4]), oh.make_tensor_value_info("b", 1, ["N", 3, 4]),
             oh.make_tensor_value_info("cond", 9, [])],
        [oh.make_tensor_value_info(n, 0, None) for n in ("y1", "z1", "y2", "z2")])
    return oh.make_model(g, opset_imports=imports, functions=[f])


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("data_prop", [False, True])
def test_model_local_functions_bind_attributes_as_the_reference(strict, data_prop):
    ref, ours = _both(_local_function_model(), strict_mode=strict, data_prop=data_prop)
    assert ours == ref
    assert b"unk__" in ours  # names made inside the function bodies are numbered as the reference's


def test_every_reference_inference_function_has_ours():
    """Computed from the registry and the schema data: no schema is left out."""
    from irmodel import defs
    from irmodel.inference.coverage import schema_covered
    with_inference = [s for s in defs.get_all_schemas_with_history() if s.has_type_and_shape_inference_function]
    assert len(with_inference) > 600
    assert [f"{s.domain}::{s.name}-{s.since_version}" for s in with_inference if not schema_covered(s)] == []


def test_lengths_read_from_declared_shapes_never_size_an_allocation():
    """A 1-D shape input declared with 10**15 elements: its value stays unknown."""
    x = oh.make_tensor_value_info("x", 1, [2, 3])
    s = oh.make_tensor_value_info("s", TensorProto.INT64, [10**15])
    for op in ("Expand", "Reshape", "ConstantOfShape"):
        inputs = ["s"] if op == "ConstantOfShape" else ["x", "s"]
        m = _model([oh.make_node(op, inputs, ["y"])], [x, s], [oh.make_tensor_value_info("y", 1, None)],
                   opset=18 if op != "Expand" else 8)
        for data_prop in (False, True):
            infer_shapes(irmodel.loads(m.SerializeToString()), data_prop=data_prop)
