"""irmodel.defs as onnx.defs: every public name, schemas made by a program, registration.

Every expectation is asked of the installed reference (onnx 1.23.2) with the same calls;
registrations are undone by the fixtures, in both registries, whatever a test does.
"""

from __future__ import annotations

import contextlib

import onnx
import onnx.defs
import onnx.shape_inference
import pytest
from onnx import TensorProto, helper

import irmodel
import irmodel.shape_inference
from irmodel import defs

from onnx_defs_registries import ranges_unchanged  # noqa: F401 (autouse fixture)

# Registrations go to a domain both registries know, at versions inside its opset range
# (1 to 5): onnx's registry cannot forget a domain or a range once widened, and later tests
# in the process (the table's generator among them) read its ranges.
DOMAIN = "ai.onnx.ml"


def _public(module) -> set:
    return {n for n in dir(module) if not n.startswith("_")} - {"annotations", "onnx"}


def test_every_public_name_of_onnx_defs_is_ours():
    missing = _public(onnx.defs) - _public(defs)
    assert not missing
    assert _public(onnx.defs.OpSchema) - _public(defs.OpSchema) == set()
    assert _public(onnx.defs.OpSchema.FormalParameter) - _public(defs.FormalParameter) == set()
    assert _public(onnx.defs.OpSchema.Attribute) - _public(defs.Attribute) == set()
    assert _public(onnx.defs.OpSchema.TypeConstraintParam) - _public(defs.TypeConstraintParam) == set()
    assert _public(onnx.defs.C) - _public(defs.C) == {"has_schema"} - _public(defs.C)


def test_attr_type_codes_equal_onnx():
    assert {m.name: _code(m) for m in onnx.defs.OpSchema.AttrType} == \
        {m.name: int(m) for m in defs.OpSchema.AttrType}


def test_formal_parameter_types_of_every_schema_equal_onnx():
    ours = {(s.domain, s.name, s.since_version): s for s in defs.get_all_schemas_with_history()}
    checked = 0
    for ref in onnx.defs.get_all_schemas_with_history():
        mine = ours[(ref.domain, ref.name, ref.since_version)]
        for a, b in zip(mine.inputs + mine.outputs, list(ref.inputs) + list(ref.outputs)):
            assert a.types == b.types, (ref.name, a.name)
            checked += 1
    assert checked > 1500


def test_get_function_ops_equals_onnx():
    assert [(s.domain, s.name, s.since_version) for s in defs.get_function_ops()] == \
        sorted((s.domain, s.name, s.since_version) for s in onnx.defs.get_function_ops())


# -- schemas made by a program ------------------------------------------------------------------

def _make(mod, **kw):
    """The same construction with onnx's classes (``mod`` = onnx.defs) or ours."""
    O = mod.OpSchema
    P = O.FormalParameter
    return O(kw.get("name", "DDOp"), kw.get("domain", DOMAIN), kw.get("version", 1), kw.get("doc", ""),
             inputs=[P("a", "float"), P("b", "T", "second", param_option=O.FormalParameterOption.Optional),
                     P("c", "T", param_option=O.FormalParameterOption.Variadic, min_arity=2,
                       is_homogeneous=False)],
             outputs=[P("y", "seq(map(int64, float))")],
             type_constraints=[("T", ["tensor(float)", "seq(map(int64, float))"], "d")],
             attributes=[O.Attribute("k", O.AttrType.INT, "desc", required=False),
                         O.Attribute("j", O.AttrType.INTS)])


def _code(enum_value) -> int:
    """An enum member of either library as its int (onnx's are not IntEnums)."""
    return int(getattr(enum_value, "value", enum_value))


def _fields(s) -> tuple:
    return (s.name, s.domain, s.since_version, s.doc, s.min_input, s.max_input, s.min_output, s.max_output,
            _code(s.node_determinism), s.deprecated, s.has_type_and_shape_inference_function, s.has_function,
            [(p.name, p.type_str, p.description, _code(p.option), p.is_homogeneous, p.min_arity,
              _code(p.differentiation_category), p.types) for p in list(s.inputs) + list(s.outputs)],
            [(c.type_param_str, c.allowed_type_strs, c.description) for c in s.type_constraints],
            [(a.name, _code(a.type), a.required, a.description) for a in s.attributes.values()])


@pytest.mark.parametrize("doc", ["", "what it does"])
def test_a_constructed_schema_has_onnx_fields(doc):
    assert _fields(_make(defs, doc=doc)) == _fields(_make(onnx.defs, doc=doc))


def test_parameters_made_alone_equal_onnx():
    for mod in (defs, onnx.defs):
        p = mod.OpSchema.FormalParameter("x", "tensor(float)", "d")
        assert (p.types, _code(p.option), p.min_arity, p.is_homogeneous) == (set(), 0, 1, True)
        c = mod.OpSchema.TypeConstraintParam("T", ("tensor(float)",), "d")
        assert c.allowed_type_strs == ["tensor(float)"]


def test_an_attribute_with_a_default_is_optional_and_keeps_it():
    ref_default = onnx.defs.get_schema("Gemm").attributes["alpha"].default_value
    ref = onnx.defs.OpSchema.Attribute("alpha", ref_default, "d")
    for default in (defs.get_schema("Gemm").attributes["alpha"].default_value, ref_default):
        ours = defs.OpSchema.Attribute("alpha", default, "d")
        assert (_code(ours.type), ours.required) == (_code(ref.type), ref.required)
        assert irmodel.dumps(ours.default_value) == ref.default_value.SerializeToString()
        assert ours._default_value == ref._default_value


@pytest.mark.parametrize("bad", [
    dict(name=1), dict(domain=None), dict(version="1"),
])
def test_wrong_argument_types_raise_type_error_as_onnx(bad):
    args = {"name": "DDOp", "domain": DOMAIN, "version": 1, **bad}
    with pytest.raises(TypeError):
        onnx.defs.OpSchema(args["name"], args["domain"], args["version"])
    with pytest.raises(TypeError):
        defs.OpSchema(args["name"], args["domain"], args["version"])


@pytest.mark.parametrize("type_str", ["T", "bogus", "seq(nothing)", "map(float16x, float)"])
def test_a_parameter_naming_no_type_raises_value_error_as_onnx(type_str):
    for mod in (onnx.defs, defs):
        with pytest.raises(ValueError):
            mod.OpSchema("DDOp", DOMAIN, 1, inputs=[mod.OpSchema.FormalParameter("a", type_str)])


def test_a_variadic_parameter_before_the_last_is_refused():
    """onnx raises RuntimeError (its schema check); ours a ValueError (documented)."""
    def build(mod):
        P, O = mod.OpSchema.FormalParameter, mod.OpSchema
        return O("DDOp", DOMAIN, 1, inputs=[P("a", "float", param_option=O.FormalParameterOption.Variadic),
                                            P("b", "float")])
    with pytest.raises(RuntimeError):
        build(onnx.defs)
    with pytest.raises(ValueError, match="only the last input may be variadic"):
        build(defs)


def test_a_deeply_nested_type_string_is_refused_not_a_recursion_error():
    with pytest.raises(ValueError, match="nested deeper"):
        defs.normalize_type_str("seq(" * 500 + "float" + ")" * 500)


# -- registration ----------------------------------------------------------------------------

@pytest.fixture
def registries():
    """Registrations made by the test in both registries, undone afterwards."""
    made: list[tuple[str, int, str]] = []
    yield made
    for mod in (onnx.defs, defs):
        for op, version, domain in made:
            with contextlib.suppress(mod.SchemaError):
                mod.deregister_schema(op, version, domain)
    assert not defs.has("DDOp", DOMAIN)


def _both(made, op, version, domain, **kw):
    for mod in (onnx.defs, defs):
        mod.register_schema(mod.OpSchema(op, domain, version, **kw))
    made.append((op, version, domain))


def _grid(op, domain, versions):
    out = []
    for mod in (onnx.defs, defs):
        row = []
        for v in versions:
            row.append(mod.get_schema(op, v, domain).since_version if mod.has(op, v, domain) else None)
        row.append(mod.get_schema(op, domain).since_version if mod.has(op, domain) else None)
        out.append(row)
    return out


@pytest.mark.parametrize("domain", ["", DOMAIN])
def test_registering_and_deregistering_versions_agree_with_onnx(registries, domain):
    for v in [3, 1, 2, 5, 4]:
        _both(registries, "DDOp", v, domain)
    ref, ours = _grid("DDOp", domain, range(0, 8))
    assert ours == ref
    for mod in (onnx.defs, defs):
        mod.deregister_schema("DDOp", 3, domain)
    ref, ours = _grid("DDOp", domain, range(0, 8))
    assert ours == ref
    names = [(s.name, s.since_version) for s in defs.get_all_schemas_with_history() if s.name == "DDOp"]
    assert names == [(s.name, s.since_version) for s in onnx.defs.get_all_schemas_with_history()
                     if s.name == "DDOp"]
    assert [s.since_version for s in defs.get_all_schemas() if s.name == "DDOp"] == \
        [s.since_version for s in onnx.defs.get_all_schemas() if s.name == "DDOp"]
    assert defs.domain_version_range(domain) == onnx.defs.C.schema_version_map()[domain]


def test_a_registered_schema_reads_back_as_it_was_made(registries):
    schema = _make(defs, version=3)
    defs.register_schema(schema)
    registries.append(("DDOp", 3, DOMAIN))
    assert str(defs.get_schema("DDOp", 3, DOMAIN)) == str(schema)
    assert _fields(defs.get_schema("DDOp", 3, DOMAIN)) == _fields(_make(onnx.defs, version=3))


def test_registering_twice_and_deregistering_nothing_raise_schema_error_as_onnx(registries):
    _both(registries, "DDOp", 1, DOMAIN)
    for mod in (onnx.defs, defs):
        with pytest.raises(mod.SchemaError):
            mod.register_schema(mod.OpSchema("DDOp", DOMAIN, 1))
        with pytest.raises(mod.SchemaError):
            mod.deregister_schema("DDOp", 9, DOMAIN)
    with pytest.raises(defs.SchemaError):
        defs.register_schema(defs.get_schema("Relu", 14))  # a generated one is registered too
    with pytest.raises(TypeError):
        defs.register_schema("Relu")


def test_a_generated_schema_can_be_deregistered_and_registered_again():
    """Ours only: onnx's registry, once Relu-14 is registered again, no longer holds its
    original function body (it is rebuilt with each input named twice), and later tests
    read it.  The expectations are onnx's all the same: the lookups of a table without
    Relu-14, and the inference of the same node at opset 13."""
    relu = defs.get_schema("Relu", 14)
    previous = max(s.since_version for s in onnx.defs.get_all_schemas_with_history()
                   if s.name == "Relu" and s.domain == "" and s.since_version < 14)

    def model(opset):
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", 1, [2])], [])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    defs.deregister_schema("Relu", 14, "")
    try:
        assert defs.get_schema("Relu", 14).since_version == defs.get_schema("Relu", 15).since_version == previous
        assert not defs.has("Relu", 14, "ai.onnx")
        got = irmodel.infer_shapes(model(14).SerializeToString()).graph.value_info
        expected = onnx.shape_inference.infer_shapes(model(previous)).graph.value_info
        assert [irmodel.dumps(v) for v in got] == [v.SerializeToString() for v in expected]
        with pytest.raises(defs.SchemaError):
            defs.deregister_schema("Relu", 14, "")
    finally:
        defs.register_schema(relu)
    assert defs.get_schema("Relu", 14) is relu
    assert not defs.registry._removed and not defs.registry._registered  # the fast path again


def test_the_checker_holds_a_node_to_the_registered_schema_of_its_version(registries):
    """onnx's test_using_the_specified_version_in_onnx_check, on both (version 3 of 1 to 5)."""
    P = "FormalParameter"
    for mod in (onnx.defs, defs):
        O = mod.OpSchema
        mod.register_schema(O("DDOp", DOMAIN, 3, inputs=[getattr(O, P)("x", "T"), getattr(O, P)("n", "int32")],
                              outputs=[getattr(O, P)("y", "T")], type_constraints=[("T", ["tensor(float)"], "")],
                              attributes=[O.Attribute("attr1", O.AttrType.INTS)]))
        for trap in (1, 2, 4, 5):  # versions a wrong lookup would pick: refused by the model
            mod.register_schema(O("DDOp", DOMAIN, trap, outputs=[getattr(O, P)("y", "int32")]))
    registries.extend(("DDOp", v, DOMAIN) for v in (3, 1, 2, 4, 5))
    node = helper.make_node("DDOp", ["X", "Y"], ["Z"], domain=DOMAIN, attr1=[1, 2])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", 1, ["N", 128]),
                                            helper.make_tensor_value_info("Y", TensorProto.INT32, [])],
                              [helper.make_tensor_value_info("Z", 1, ["N"])])
    model = helper.make_model(graph, ir_version=7, opset_imports=[helper.make_opsetid(DOMAIN, 3)])
    onnx.checker.check_model(model, check_custom_domain=True)
    irmodel.check_model(model.SerializeToString(), check_custom_domain=True)
    model.graph.node[0].ClearField("attribute")  # the required attribute is missing: both refuse
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(model, check_custom_domain=True)
    with pytest.raises(irmodel.ValidationError, match="attr1"):
        irmodel.check_model(model.SerializeToString(), check_custom_domain=True)


def test_check_type_refuses_a_node_that_does_not_fit_a_registered_empty_schema(registries):
    """onnx's test_check_type_when_schema_has_empty_io, on both."""
    _both(registries, "DDEmpty", 1, "")
    node = helper.make_node("DDEmpty", ["X", "Y"], ["Z"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", 1, [2]),
                                            helper.make_tensor_value_info("Y", 1, [2])],
                              [helper.make_tensor_value_info("Z", 1, [2])])
    model = helper.make_model(graph, ir_version=7, opset_imports=[helper.make_opsetid("", 1)])
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.shape_inference.infer_shapes(model, True)
    with pytest.raises(irmodel.InferenceError, match="input size 2"):
        irmodel.shape_inference.infer_shapes(model, True)


def test_context_dependent_bodies_are_onnx_bytes():
    node = helper.make_node("Attention", ["Q", "K", "V", "attn_mask"], ["Y"], is_causal=1,
                            q_num_heads=2, kv_num_heads=2)
    types = [helper.make_tensor_type_proto(TensorProto.FLOAT16, ["B", 2, "S", 8]).SerializeToString()] * 4
    for version in (23, 24):
        ref = onnx.defs.get_schema("Attention", version)
        ours = defs.get_schema("Attention", version)
        body = ours.get_context_dependent_function(node.SerializeToString(), types)
        assert type(body) is bytes and body
        expected = onnx.FunctionProto.FromString(ref.get_context_dependent_function(node.SerializeToString(), types))
        got = onnx.FunctionProto.FromString(body)
        expected.ClearField("doc_string")
        assert got == expected
        assert ours.get_context_dependent_function_with_opset_version(5, node.SerializeToString(), types) == \
            ref.get_context_dependent_function_with_opset_version(5, node.SerializeToString(), types) == b""
    relu = helper.make_node("Relu", ["x"], ["y"]).SerializeToString()
    assert defs.get_schema("Relu").get_context_dependent_function(relu, []) == b""


@pytest.mark.parametrize("args", [(1, 1, ""), ("Relu", "14", ""), ("Relu", 14, None)])
def test_deregister_with_arguments_of_the_wrong_types_raises_type_error_as_onnx(args):
    with pytest.raises(TypeError):
        onnx.defs.deregister_schema(*args)
    with pytest.raises(TypeError):
        defs.deregister_schema(*args)


@pytest.mark.parametrize("make", [
    lambda mod: mod.OpSchema("x", "", 2**31),
    lambda mod: mod.OpSchema("x", "", 1.0),
    lambda mod: mod.OpSchema.FormalParameter("a", "float", min_arity=2**31),
    lambda mod: mod.OpSchema.FormalParameter("a", "float", param_option=7),
])
def test_out_of_range_or_mistyped_numbers_raise_type_error_as_onnx(make):
    for mod in (onnx.defs, defs):
        with pytest.raises(TypeError):
            make(mod)


@pytest.mark.parametrize("version", [True, -1, 0, 2**31 - 1])
def test_edge_versions_are_kept_as_onnx_keeps_them(version):
    assert defs.OpSchema("x", "", version).since_version == onnx.defs.OpSchema("x", "", version).since_version


def test_an_attribute_of_neither_type_nor_default_raises_type_error():
    """onnx lets an AttributeError out of its binding here (it takes the value for a
    default AttributeProto); ours is a TypeError."""
    with pytest.raises(AttributeError):
        onnx.defs.OpSchema.Attribute("a", "not a type")
    with pytest.raises(TypeError, match="AttrType or a default value"):
        defs.OpSchema.Attribute("a", "not a type")
    with pytest.raises(AttributeError):
        onnx.defs.OpSchema.Attribute("a", 99)  # no such AttrType
    with pytest.raises(TypeError, match="AttrType"):
        defs.OpSchema.Attribute("a", 99)
