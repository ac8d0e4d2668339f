"""irmodel.shape_inference as onnx.shape_inference, and Python inference functions on schemas.

Every expectation is asked of the installed reference (onnx 1.23.2) with the same calls.
A Python inference function is written once against the context's API and registered
in both registries; both inferences must give the same model bytes.
"""

from __future__ import annotations

import contextlib

import onnx
import onnx.defs
import onnx.shape_inference
import pytest
from onnx import TensorProto, helper

import irmodel
import irmodel.shape_inference as si
from irmodel import defs
from irmodel.inference import lookup

from onnx_defs_registries import ranges_unchanged  # noqa: F401 (autouse fixture)

# A domain both registries know, at its one version: onnx's registry cannot forget a
# domain or a widened range, and later tests in the process read its ranges.
DOMAIN = "ai.onnx.preview"


def _public(module) -> set:
    return {n for n in dir(module) if not n.startswith("_")} - {"annotations", "onnx", "os", "TYPE_CHECKING",
                                                                "IR_VERSION", "AttributeProto", "FunctionProto",
                                                                "ModelProto", "TypeProto", "C"}


def test_every_public_name_of_onnx_shape_inference_is_ours():
    assert _public(onnx.shape_inference) - _public(si) == set()


# -- infer_function_output_types ---------------------------------------------------------------

def _body_cases():
    """(name, FunctionProto, input types) for every static body onnx registers, with every
    count of inputs from the schema's minimum (absent ones as empty TypeProtos)."""
    t = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3, 4])
    for s in onnx.defs.get_all_schemas_with_history():
        for v in s.function_opset_versions:
            f = onnx.FunctionProto.FromString(s.get_function_with_opset_version(v))
            for n in range(s.min_input, len(f.input) + 1):
                yield f"{s.name}-{v}-{n}", f, [t] * n + [onnx.TypeProto()] * (len(f.input) - n)


def test_function_output_types_equal_onnx_on_every_registered_body():
    cases = 0
    for name, function, types in _body_cases():
        try:
            expected = [x.SerializeToString()
                        for x in onnx.shape_inference.infer_function_output_types(function, types, [])]
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
            expected = None
        if expected is None:
            with pytest.raises(irmodel.ValidationError):
                si.infer_function_output_types(function, types, [])
        else:
            got = [irmodel.dumps(x) for x in si.infer_function_output_types(function, types, [])]
            assert got == expected, name
        cases += 1
    assert cases >= 40


def test_function_output_types_use_the_attributes_given():
    node = helper.make_node("Transpose", ["x"], ["y"])
    node.attribute.append(helper.make_attribute_ref("perm", onnx.AttributeProto.INTS))
    f = helper.make_function("local", "F", ["x"], ["y"], [node], [helper.make_opsetid("", 18)], attributes=["perm"])
    types = [helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3, 4])]
    attrs = [helper.make_attribute("perm", [2, 0, 1])]
    expected = onnx.shape_inference.infer_function_output_types(f, types, attrs)
    got = si.infer_function_output_types(f, types, attrs)
    assert [irmodel.dumps(x) for x in got] == [x.SerializeToString() for x in expected]


def test_function_output_types_refuse_what_is_not_a_function():
    with pytest.raises(TypeError):
        si.infer_function_output_types(helper.make_node("Relu", ["x"], ["y"]), [], [])


# -- onnx's wrappers' argument checks ------------------------------------------------------------

def test_infer_shapes_refuses_a_path_with_onnx_message(tmp_path):
    for mod in (onnx.shape_inference, si):
        with pytest.raises(TypeError, match=r"use infer_shapes_path\(\)"):
            mod.infer_shapes(tmp_path / "model.onnx")
        with pytest.raises(TypeError):
            mod.infer_shapes(3)


def test_infer_shapes_path_refuses_a_model_and_fills_the_file(tmp_path):
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", 1, [2])], []))
    for mod in (onnx.shape_inference, si):
        with pytest.raises(TypeError):
            mod.infer_shapes_path(model)
        with pytest.raises(TypeError):
            mod.infer_shapes_path(str(tmp_path / "m.onnx"), 5)
    onnx.save(model, tmp_path / "a.onnx")
    onnx.save(model, tmp_path / "b.onnx")
    onnx.shape_inference.infer_shapes_path(tmp_path / "a.onnx")
    si.infer_shapes_path(tmp_path / "b.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()


def test_infer_shapes_takes_the_reference_model_as_onnx():
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", 1, [2])], []))
    assert irmodel.dumps(si.infer_shapes(model)) == onnx.shape_inference.infer_shapes(model).SerializeToString()


def test_infer_node_outputs_needs_every_input_type_as_onnx():
    schema_ref, schema = onnx.defs.get_schema("Add", 14), defs.get_schema("Add", 14)
    node = helper.make_node("Add", ["A", "B"], ["C"])
    types = {"A": helper.make_tensor_type_proto(TensorProto.FLOAT, [3, 4])}
    with pytest.raises(KeyError):
        onnx.shape_inference.infer_node_outputs(schema_ref, node, types)
    with pytest.raises(KeyError):
        si.infer_node_outputs(schema, node, types)
    types["B"] = helper.make_tensor_type_proto(TensorProto.FLOAT, [1, 4])
    got = si.infer_node_outputs(schema, node, types)
    expected = onnx.shape_inference.infer_node_outputs(schema_ref, node, types)
    assert {k: irmodel.dumps(v) for k, v in got.items()} == {k: v.SerializeToString() for k, v in expected.items()}


@pytest.mark.parametrize("shapes, equation", [
    (((), (2, 3)), "...,...->..."), (((2, 3), ()), "...,...->..."), (((3, 4), (2, 3, 4)), "...ij,...ij->...ij"),
    (((), (2, 3)), "...,..."), (((2, 3), (2, 3)), "...,...->..."),
])
def test_einsum_ellipses_of_different_ranks_fail_as_onnx(shapes, equation):
    graph = helper.make_graph([helper.make_node("Einsum", ["x", "y"], ["z"], equation=equation)], "g",
                              [helper.make_tensor_value_info("x", 1, shapes[0]),
                               helper.make_tensor_value_info("y", 1, shapes[1])], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    try:
        expected = onnx.shape_inference.infer_shapes(model, strict_mode=True).SerializeToString()
    except onnx.shape_inference.InferenceError as exc:
        message = str(exc).split("] ", 1)[-1].split("\n")[0]
        with pytest.raises(irmodel.InferenceError) as info:
            si.infer_shapes(model, strict_mode=True)
        assert message.split(": ", 1)[-1] in str(info.value)
    else:
        assert irmodel.dumps(si.infer_shapes(model, strict_mode=True)) == expected


def test_a_cyclic_function_is_refused_as_onnx():
    f = helper.make_function("local", "foo", ["x"], ["y"], [helper.make_node("foo", ["x"], ["y"], domain="local")],
                             [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    graph = helper.make_graph([helper.make_node("foo", ["X"], ["Y"], domain="local")], "g",
                              [helper.make_tensor_value_info("X", 1, ["N"])], [helper.make_tensor_value_info("Y", 1, ["N"])])
    model = helper.make_model(graph, ir_version=8, functions=[f],
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    with pytest.raises(onnx.checker.ValidationError):
        onnx.shape_inference.infer_shapes(model)
    with pytest.raises(irmodel.ValidationError, match="Cycle detected"):
        si.infer_shapes(model)


# -- Python inference functions on registered schemas -------------------------------------------

@pytest.fixture
def registered():
    """``register(op, make_schema)``: register in both registries, undone afterwards."""
    made = []

    def register(op: str, make) -> None:
        for mod in (onnx.defs, defs):
            mod.register_schema(make(mod))
        made.append(op)
    yield register
    for mod in (onnx.defs, defs):
        for op in made:
            with contextlib.suppress(mod.SchemaError):
                mod.deregister_schema(op, 1, DOMAIN)


def _custom_schema(mod, infer, op="DDCustom"):
    O = mod.OpSchema
    schema = O(op, DOMAIN, 1, inputs=[O.FormalParameter("a", "float"), O.FormalParameter("b", "float")],
               outputs=[O.FormalParameter("out", "float", param_option=O.FormalParameterOption.Variadic)],
               attributes=[O.Attribute("out_len", O.AttrType.INTS)])
    schema.set_type_and_shape_inference_function(infer)
    return schema


def _outer_product(ctx):
    """Written once for both libraries: out_i is [N, La * Lb, out_len[i]]."""
    a, b = ctx.get_input_type(0), ctx.get_input_type(1)
    n, la = [d.dim_value for d in a.tensor_type.shape.dim]
    lb = b.tensor_type.shape.dim[1].dim_value
    lengths = ctx.get_attribute("out_len").ints
    for i in range(ctx.get_num_outputs()):
        out = ctx.get_output_type(i)
        out.tensor_type.elem_type = a.tensor_type.elem_type
        for d in (n, la * lb, lengths[i]):
            out.tensor_type.shape.dim.add().dim_value = d
        ctx.set_output_type(i, out)


def _model(nodes, n=3, la=4, lb=5, extra_inputs=()):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", 1, [n, la]),
                                           helper.make_tensor_value_info("b", 1, [n, lb]), *extra_inputs], [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(DOMAIN, 1)])


def _same_inference(model, **options):
    expected = onnx.shape_inference.infer_shapes(model, **options).SerializeToString()
    got = irmodel.dumps(si.infer_shapes(model, **options))
    assert got == expected
    return got


def test_a_registered_python_function_infers_as_in_onnx(registered):
    node = helper.make_node("DDCustom", ["a", "b"], ["o0", "o1"], domain=DOMAIN, out_len=[1, 2])
    before = _same_inference(_model([node]))  # unknown op: nothing inferred, in both
    registered("DDCustom", lambda mod: _custom_schema(mod, _outer_product))
    after = _same_inference(_model([node]), check_type=True, strict_mode=True)
    assert after != before
    irmodel.check_model(irmodel.loads(after), check_custom_domain=True)


def test_a_python_function_runs_at_every_node_of_a_large_graph(registered):
    """The node pass (64 nodes or more) caches outcomes per kind of node; not a Python
    function's, which onnx calls at every node."""
    calls = []

    def infer(ctx):
        calls.append(1)
        _outer_product(ctx)
    registered("DDCustom", lambda mod: _custom_schema(mod, infer))
    nodes = [helper.make_node("DDCustom", ["a", "b"], [f"o{i}"], domain=DOMAIN, out_len=[i % 3 + 1])
             for i in range(100)]
    _same_inference(_model(nodes))
    assert len(calls) == 200  # onnx's 100 and ours


def test_the_rule_of_an_operator_is_looked_up_once_per_run(registered, monkeypatch):
    registered("DDCustom", lambda mod: _custom_schema(mod, _outer_product))
    looked_up = []
    original = lookup.rule_for
    monkeypatch.setattr(lookup, "rule_for", lambda *a: looked_up.append(a[1:]) or original(*a))
    nodes = [helper.make_node("DDCustom", ["a", "b"], [f"o{i}"], domain=DOMAIN, out_len=[2]) for i in range(10)]
    nodes += [helper.make_node("Relu", [f"o{i}"], [f"r{i}"]) for i in range(10)]
    si.infer_shapes(_model(nodes))
    assert sorted(looked_up) == [("", "Relu"), (DOMAIN, "DDCustom")]


def test_a_graph_attribute_is_inferred_through_the_context(registered):
    """onnx's DummyGraph: a node whose outputs are its graph attribute's outputs."""
    registered("DDCustom", lambda mod: _custom_schema(mod, _outer_product))

    def through_graph(ctx):
        assert ctx.get_attribute("graph") is not None
        inferencer = ctx.get_graph_attribute_inferencer("graph")
        outs = inferencer.do_inferencing([ctx.get_input_type(i) for i in range(ctx.get_num_inputs())],
                                         [ctx.get_input_data(i) for i in range(ctx.get_num_inputs())])
        for i, t in enumerate(outs):
            ctx.set_output_type(i, t)

    def make(mod):
        O = mod.OpSchema
        s = O("DDGraph", DOMAIN, 1,
              inputs=[O.FormalParameter("in", "float", param_option=O.FormalParameterOption.Variadic)],
              outputs=[O.FormalParameter("out", "float", param_option=O.FormalParameterOption.Variadic)],
              attributes=[O.Attribute("graph", O.AttrType.GRAPH)])
        return s.set_type_and_shape_inference_function(through_graph)
    registered("DDGraph", make)
    body = helper.make_graph([helper.make_node("DDCustom", ["a", "b"], ["o0", "o1"], domain=DOMAIN, out_len=[1, 2])],
                             "body", [helper.make_tensor_value_info("a", 1, [3, 4]),
                                      helper.make_tensor_value_info("b", 1, [3, 5])],
                             [helper.make_tensor_value_info("o0", 1, None), helper.make_tensor_value_info("o1", 1, None)])
    _same_inference(_model([helper.make_node("DDGraph", ["a", "b"], ["y0", "y1"], domain=DOMAIN, graph=body)]),
                    check_type=True, strict_mode=True)


def test_the_context_refuses_bad_indices_as_onnx(registered):
    """onnx's test_invalid_field_in_inference_func: the same probes, on both libraries."""
    seen = []

    def probe(ctx):
        _outer_product(ctx)
        got = [ctx.get_attribute("not-exist-attr") is None, ctx.has_input(0), ctx.has_input(2), ctx.has_output(0),
               ctx.has_output(1), ctx.get_input_data(0) is None, ctx.get_input_sparse_data(0) is None,
               ctx.get_symbolic_input(0) is None, ctx.get_num_inputs(), ctx.get_num_outputs()]
        for call, error in ((lambda: ctx.has_input(-1), TypeError), (lambda: ctx.has_output(-1), TypeError),
                            (lambda: ctx.get_input_data(10), RuntimeError),
                            (lambda: ctx.get_input_sparse_data(10), RuntimeError),
                            (lambda: ctx.get_input_type(10), RuntimeError),
                            (lambda: ctx.get_symbolic_input(10), RuntimeError),
                            (lambda: ctx.get_output_type(10), RuntimeError)):
            try:
                call()
                got.append(None)
            except error:
                got.append(error.__name__)
        try:
            ctx.get_graph_attribute_inferencer("not-exist-attr")
        except (onnx.shape_inference.InferenceError, irmodel.InferenceError):
            got.append("InferenceError")
        seen.append(got)
    registered("DDCustom", lambda mod: _custom_schema(mod, probe))
    _same_inference(_model([helper.make_node("DDCustom", ["a", "b"], ["o0"], domain=DOMAIN, out_len=[1])]))
    assert len(seen) == 2 and seen[0] == seen[1]


def test_a_python_functions_own_exception_reaches_the_caller_as_in_onnx(registered):
    def boom(ctx):
        raise ValueError("boom")
    registered("DDCustom", lambda mod: _custom_schema(mod, boom))
    model = _model([helper.make_node("DDCustom", ["a", "b"], ["o0"], domain=DOMAIN, out_len=[1])])
    for strict in (False, True):
        with pytest.raises(ValueError, match="boom"):
            onnx.shape_inference.infer_shapes(model, strict_mode=strict)
        with pytest.raises(ValueError, match="boom"):
            si.infer_shapes(model, strict_mode=strict)


def test_the_symbolic_input_is_a_tensor_shape_proto(registered):
    """onnx's test_get_symbolic_input_returns_tensor_shape_proto, on both."""
    seen = []

    def infer(ctx):
        sym = ctx.get_symbolic_input(0)
        seen.append([d.dim_value for d in sym.dim])
        ctx.set_output_type(0, ctx.get_input_type(0))

    def make(mod):
        O = mod.OpSchema
        s = O("DDSym", DOMAIN, 1, inputs=[O.FormalParameter("s", "T")], outputs=[O.FormalParameter("y", "T")],
              type_constraints=[("T", ["tensor(int64)"], "")])
        return s.set_type_and_shape_inference_function(infer)
    registered("DDSym", make)
    graph = helper.make_graph([helper.make_node("Shape", ["x"], ["s"]), helper.make_node("DDSym", ["s"], ["y"],
                                                                                         domain=DOMAIN)],
                              "g", [helper.make_tensor_value_info("x", 1, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(DOMAIN, 1)])
    _same_inference(model, data_prop=True, strict_mode=True)
    assert seen == [[2, 3], [2, 3]]
