"""Whatever the model, convert_version returns a model or raises ConversionError.

Models of real operator names with arbitrary inputs, attributes (wrong types included),
initializers and opsets (`irmodel.fuzz.strategies.loose_models`), and valid generated
models (`valid_models`), to every target: never IndexError, TypeError or a hang.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmodel import version_converter as vc
from irmodel.fuzz.strategies import loose_models, valid_models


def _converts_or_reports(model, target: int) -> None:
    try:
        out = vc.convert_version(model, target)
    except vc.ConversionError as e:
        assert e.problems and all(p.code.startswith("V") for p in e.problems)
        return
    assert [o.version for o in out.opset_import if o.domain in ("", "ai.onnx")][:1] == [target]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loose_models(), st.integers(1, 28))
def test_loose_models_convert_or_report(model, target):
    _converts_or_reports(model, target)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_models(max_nodes=8), st.integers(1, 28))
def test_valid_generated_models_convert_or_report(model, target):
    _converts_or_reports(model, target)


@pytest.mark.slow
def test_node_tests_with_attributes_of_the_wrong_type_are_reported(node_corpus):
    """Each node test's first attribute replaced by a value of another type (a string, an
    int, a float, a list): the schema's declared type is checked before any step reads it."""
    from irmodel import helper, loads

    for name, data in node_corpus[::25]:
        for value in ("s", 3, 2.5, [1, 2], [0.5]):
            m = loads(data, "ModelProto")
            for n in m.graph.node:
                if len(n.attribute) and n.attribute[0].name not in ("body", "then_branch", "else_branch"):
                    n.attribute[0] = helper.make_attribute(n.attribute[0].name, value)
            for target in (7, 12, 21):
                _converts_or_reports(m, target)


@pytest.mark.parametrize("dims, axis", [([], -1), ([], 0), ([2, 3], 2), ([2, 3], -3)])
def test_softmax_down_from_13_with_an_axis_the_input_does_not_have_is_reported(dims, axis):
    """Found by the loose models above: a rank-0 input (no axis at all) indexed an empty
    permutation; an axis past the rank was taken modulo the rank."""
    from irmodel import TensorProto, helper

    g = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=axis)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(m, 12)
    assert [p.code for p in info.value.problems] == ["V003"]
