"""onnxruntime's com.microsoft schemas (irmodel/defs/contrib_microsoft.json) and the checker.

The table is generated from onnxruntime's registered schemas (tools/gen_contrib_schemas.py);
the test regenerates it and fails on any byte of difference, then compares every
schema's facts with onnxruntime's.  The checker keeps onnx's verdicts: without
``check_custom_domain`` a com.microsoft node is skipped whatever it holds (onnx has no
schema for it); with it, the node is held to onnxruntime's schema instead of being an
unknown op.
"""

from __future__ import annotations


import onnx
import pytest
from onnx import helper as oh

import irmodel
from irmodel import checker, defs

ort_c = pytest.importorskip("onnxruntime.capi.onnxruntime_pybind11_state")

from generated_files import assert_generated_file_is_current  # noqa: E402
MS = "com.microsoft"


def test_the_table_is_what_the_script_generates():
    assert_generated_file_is_current("gen_contrib_schemas.py")


def test_every_schema_has_onnxruntime_s_facts():
    reference = {(s.name, s.since_version): s for s in ort_c.get_all_operator_schema() if s.domain == MS}
    ours = defs.get_contrib_schemas()
    assert sorted((s.name, s.since_version) for s in ours) == sorted(reference)
    for s in ours:
        ref = reference[(s.name, s.since_version)]
        assert defs.get_schema(s.name, s.since_version, MS) is s
        assert (s.min_input, s.max_input, s.min_output, s.max_output) == \
            (ref.min_input, ref.max_input, ref.min_output, ref.max_output)
        for mine, theirs in ((s.inputs, ref.inputs), (s.outputs, ref.outputs)):
            assert [(p.name, p.type_str, int(p.option), p.is_homogeneous) for p in mine] == \
                [(p.name, p.typeStr, int(p.option.value), p.isHomogeneous) for p in theirs]
        assert {c.type_param_str: sorted(c.allowed_type_strs) for c in s.type_constraints} == \
            {c.type_param_str: sorted(c.allowed_type_strs) for c in ref.type_constraints}
        assert sorted(s.attributes) == sorted(ref.attributes)
        for name, a in s.attributes.items():
            r = ref.attributes[name]
            assert (int(a.type), a.required) == (int(r.type.value), r.required)
            assert (a.default_value.SerializeToString() if a.default_value is not None else b"") == r._default_value


def test_lookups_find_contrib_schemas_only_in_their_domain():
    assert defs.has_schema("SkipLayerNormalization", 1, MS)
    assert not defs.has_schema("SkipLayerNormalization", 1, "")
    assert not defs.has_schema("NoSuchOp", 1, MS)
    with pytest.raises(defs.SchemaError):
        defs.get_schema("Attention", 0, MS)
    attention = defs.get_schema("Attention", domain=MS)
    assert attention.domain == MS and attention.attributes["num_heads"].required
    assert [p.option for p in attention.inputs[:3]] == [0, 0, 1]  # input, weights single; bias optional
    assert all(s.domain != MS for s in defs.get_all_schemas_with_history())
    assert defs.domain_version_range(MS) is None  # onnx's map; the contrib table is version 1


def _contrib_model(attrs=None, inputs=("x", "w")):
    node = oh.make_node("Attention", list(inputs), ["y"], domain=MS, **(attrs or {}))
    graph = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2, 4]),
                                        oh.make_tensor_value_info("w", onnx.TensorProto.FLOAT, [4, 12])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 2, 4])])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid(MS, 1)])


def _verdict(check, model, **kwargs):
    try:
        check(model, **kwargs)
    except (onnx.checker.ValidationError, irmodel.ValidationError) as exc:
        return False, str(exc)
    return True, ""


@pytest.mark.parametrize("attrs,inputs", [({"num_heads": 2}, ("x", "w")),  # valid
                                          ({}, ("x", "w")),  # required attribute missing
                                          ({"num_heads": 2, "bogus": 1}, ("x", "w")),  # undeclared attribute
                                          ({"num_heads": 2}, ("x",))])  # too few inputs
def test_without_check_custom_domain_the_checker_keeps_onnx_s_verdict(attrs, inputs):
    model = _contrib_model(attrs, inputs)
    ours = _verdict(checker.check_model, irmodel.loads(model.SerializeToString()))
    ref = _verdict(onnx.checker.check_model, model)
    assert ours[0] == ref[0] is True


def test_with_check_custom_domain_contrib_nodes_meet_onnxruntime_s_schema():
    good = irmodel.loads(_contrib_model({"num_heads": 2}).SerializeToString())
    checker.check_model(good, check_custom_domain=True)
    for attrs, inputs in (({}, ("x", "w")), ({"num_heads": 2}, ("x",))):
        bad = irmodel.loads(_contrib_model(attrs, inputs).SerializeToString())
        with pytest.raises(irmodel.ValidationError):
            checker.check_model(bad, check_custom_domain=True)


@pytest.mark.parametrize("op", ["FusedMatMul", "Rfft"])  # a rule onnxruntime has / has not
def test_a_contrib_op_without_our_rule_is_unsupported_as_onnx_sees_an_unknown_op(op):
    """Its outputs stay untyped and, as after any op the reference has no schema for, later
    node errors are not recorded: strict inference passes where onnx's passes."""
    from irmodel.inference import explain, infer_shapes
    node = oh.make_node(op, ["x", "x"] if op == "FusedMatMul" else ["x"], ["y"], domain=MS)
    add = oh.make_node("Add", ["y", "x"], ["z"])
    graph = oh.make_graph([node, add], "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 2])],
                          [oh.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None)])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid(MS, 1)])
    onnx.shape_inference.infer_shapes(model, strict_mode=True)  # the reference: no error
    ours = infer_shapes(irmodel.loads(model.SerializeToString()), strict_mode=True)
    assert [vi.name for vi in ours.graph.value_info] == []
    losses = explain(model.SerializeToString()).losses
    assert [(loss.value, loss.reason) for loss in losses][:1] == [("y", "no-inference-function")]
