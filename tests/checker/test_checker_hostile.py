"""The checker never crashes: any bytes end in DecodeError, ValidationError or success.

Byte-level mutations of corpus models and random bytes (hypothesis), random models built
from the operator schemas (hypothesis, compared with onnx's verdict), and the model
shapes that crashed onnx's checker or inference: Conv/Gemm with missing or ill-ranked
inputs, recursive functions, huge ranks, deep nesting.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import irmodel
from corpus_mutations import draw_mutated_model_bytes
from irmodel.fuzz.strategies import loose_models
from irmodel import AttributeProto, TensorProto, helper


def check_outcome(data, **kwargs) -> str:
    """'valid', 'invalid' or 'undecodable'; anything else raised fails the test."""
    try:
        irmodel.check_model(data, **kwargs)
    except irmodel.ValidationError as exc:
        assert exc.problems and all(p.code for p in exc.problems)
        str(exc)
        return "invalid"
    except irmodel.DecodeError:
        return "undecodable"
    return "valid"


# -- bytes ---------------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_corpus_bytes_never_crash_the_checker(node_corpus, data):
    buf = draw_mutated_model_bytes(data, node_corpus)
    outcome = check_outcome(bytes(buf), check_custom_domain=data.draw(st.booleans()))
    if outcome == "valid":  # what we accept, protobuf parses and onnx accepts
        import onnx

        onnx.checker.check_model(bytes(buf))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=512))
def test_random_bytes_never_crash_the_checker(data):
    check_outcome(data)


# -- random models from the schemas, compared with onnx ---------------------------------------

@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loose_models())
def test_random_models_same_verdict_as_onnx(model):
    import onnx

    data = irmodel.dumps(model)
    try:
        onnx.checker.check_model(data)
        ref = "valid"
    except Exception:  # noqa: BLE001
        ref = "invalid"
    assert check_outcome(data) == ref


# -- shapes that crashed the reference -----------------------------------------------------------

def _model(nodes, inputs, outputs, inits=(), opset=18, functions=()):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
                              list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("local", 1)],
                             functions=list(functions))


@pytest.mark.parametrize("op, inputs", [
    ("Conv", ["x"]), ("Conv", ["", "w"]), ("Conv", ["x", ""]), ("Conv", ["x", "w", "", ""]),
    ("Gemm", ["x"]), ("Gemm", ["", "", ""]), ("Gemm", ["x", "w", "b", "x"]),
])
@pytest.mark.parametrize("full_check", [False, True])
def test_conv_gemm_with_missing_inputs(op, inputs, full_check):
    m = _model([helper.make_node(op, inputs, ["y"])], [("x", [1, 1, 4, 4]), ("w", [1]), ("b", [1])], ["y"])
    assert check_outcome(m, full_check=full_check) == "invalid"


@pytest.mark.parametrize("op", ["Conv", "Gemm", "MatMul", "ConvTranspose", "MaxPool"])
def test_ill_ranked_inputs_are_checked_without_inference(op):
    """Ranks are inference's concern: the checker passes them, as onnx's checker does."""
    import onnx

    inputs = ["x", "w"] if op not in ("MaxPool",) else ["x"]
    attrs = {"kernel_shape": [1]} if op == "MaxPool" else {}
    m = _model([helper.make_node(op, inputs, ["y"], **attrs)], [("x", []), ("w", [1, 2, 3, 4, 5, 6, 7])], ["y"])
    outcome = check_outcome(m, full_check=True)
    assert outcome == check_outcome(m)
    try:
        onnx.checker.check_model(irmodel.dumps(m))
        assert outcome == "valid"
    except onnx.checker.ValidationError:
        assert outcome == "invalid"


@pytest.mark.parametrize("through_subgraph", [False, True])
def test_recursive_functions_are_a_problem_not_a_crash(through_subgraph):
    call = helper.make_node("F", ["a"], ["b"], domain="local")
    if through_subgraph:
        branch = helper.make_graph([call], "branch", [], [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
        cond = helper.make_node("Constant", [], ["c"], value=helper.make_tensor("c", TensorProto.BOOL, [], [True]))
        body = [cond, helper.make_node("If", ["c"], ["b"], then_branch=branch, else_branch=branch)]
    else:
        body = [call]
    f = helper.make_function("local", "F", ["a"], ["b"], body,
                             [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    m = _model([helper.make_node("F", ["x"], ["y"], domain="local")], [("x", [1])], ["y"], functions=[f])
    with pytest.raises(irmodel.ValidationError) as info:
        irmodel.check_model(m, full_check=True)
    assert "F903" in {p.code for p in info.value.problems}


def test_huge_ranks_and_dims():
    dims = [1] * 20_000
    big = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    t = irmodel.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 40], raw_data=b"\0" * 8)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g", [big],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)], [t])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(irmodel.ValidationError) as info:
        irmodel.check_model(m, full_check=True)
    assert [p.code for p in info.value.problems] == ["T604"]  # the product overflows int64
    t.dims[:] = [-1] + [2] * 20_000
    with pytest.raises(irmodel.ValidationError):
        irmodel.check_model(m)


def test_many_nodes_and_long_names_report_bounded_messages():
    name = "n" * 1_000_000
    m = _model([helper.make_node("Relu", [name], ["y"])], [("x", [1])], ["y"])
    with pytest.raises(irmodel.ValidationError) as info:
        irmodel.check_model(m)
    assert len(str(info.value)) < 2000


def test_attribute_with_every_value_field():
    attr = AttributeProto(name="a", type=AttributeProto.FLOAT, f=1.0, i=1, s=b"x", floats=[1.0], ints=[1],
                          strings=[b"x"], t=helper.make_tensor("t", 1, [1], [1.0]),
                          g=helper.make_graph([], "sub", [], []), tp=irmodel.TypeProto())
    node = irmodel.NodeProto(op_type="Relu", input=["x"], output=["y"], attribute=[attr])
    m = _model([node], [("x", [1])], ["y"])
    assert check_outcome(m) == "invalid"
    import onnx

    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(irmodel.dumps(m))
