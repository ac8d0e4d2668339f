"""Inference on mutated and hostile models raises only our errors.

Hypothesis picks corpus models and mutates them where inference looks (attribute
values, initializer dims and types, input types and shapes, node inputs and outputs,
op types, opset versions, raw bytes); `infer_shapes` in every mode must return a model
or raise `InferenceError` (or `DecodeError` for bytes that do not decode) -- never
anything else, never a hang.  The reference itself crashes on some of these (it is run
against them in development, in a child process, by a mutation script; a test cannot
survive its segfaults), so only the error contract is asserted here.  The same mutants go through
``check_model(full_check=True)`` (the checker, then strict inference with type checks):
only ``ValidationError`` (``InferenceError`` is one) or ``DecodeError``.
"""

from __future__ import annotations

import pytest

import irmodel
from irmodel.inference import InferenceError, infer_shapes

onnx = pytest.importorskip("onnx")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_INTS = st.sampled_from([0, 1, 2, 3, -1, -2, 5, 100, -100, 2**31, -2**31, 2**40, 2**62])
_OPS = st.sampled_from(["Relu", "Add", "Reshape", "Concat", "Slice", "Gather", "Conv", "If", "Loop", "Scan",
                        "Split", "Squeeze", "Pad", "Resize", "Einsum", "TopK", "Unsqueeze", "Expand", "Tile",
                        "Range", "Shape", "Cast", "SequenceAt", "Optional", "LSTM", "Attention", "MaxPool"])


@pytest.fixture(scope="module")
def models(node_corpus) -> list:
    return [data for _, data in node_corpus[::4]]


def _mutate(m, draw) -> None:
    g = m.graph
    nodes = list(g.node)
    kind = draw(st.integers(0, 7))
    if kind == 0 and nodes:
        n = nodes[draw(st.integers(0, len(nodes) - 1))]
        for a in n.attribute:
            if a.type == onnx.AttributeProto.INT:
                a.i = draw(_INTS)
            elif a.type == onnx.AttributeProto.INTS:
                del a.ints[:]
                a.ints.extend(draw(st.lists(_INTS, max_size=5)))
    elif kind == 1 and g.initializer:
        t = g.initializer[draw(st.integers(0, len(g.initializer) - 1))]
        if t.dims and draw(st.booleans()):
            t.dims[draw(st.integers(0, len(t.dims) - 1))] = draw(_INTS)
        else:
            t.data_type = draw(st.integers(0, 30))
    elif kind == 2 and g.input:
        tt = g.input[draw(st.integers(0, len(g.input) - 1))].type.tensor_type
        if tt.HasField("shape") and tt.shape.dim and draw(st.booleans()):
            d = tt.shape.dim[draw(st.integers(0, len(tt.shape.dim) - 1))]
            if draw(st.booleans()):
                d.dim_value = draw(_INTS)
            else:
                d.dim_param = draw(st.sampled_from(["N", "M", ""]))
        else:
            tt.elem_type = draw(st.integers(0, 30))
    elif kind == 3 and nodes:
        n = nodes[draw(st.integers(0, len(nodes) - 1))]
        if n.input and draw(st.booleans()):
            n.input[draw(st.integers(0, len(n.input) - 1))] = draw(st.sampled_from(["", "nope", n.input[0]]))
        elif n.input:
            del n.input[-1]
    elif kind == 4 and nodes:
        nodes[draw(st.integers(0, len(nodes) - 1))].op_type = draw(_OPS)
    elif kind == 5:
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = draw(st.integers(1, 30))
    elif kind == 6 and nodes:
        n = nodes[draw(st.integers(0, len(nodes) - 1))]
        if n.output and draw(st.booleans()):
            del n.output[-1]
        else:
            n.output.append(draw(st.sampled_from(["", "extra"])))
    elif kind == 7 and g.input:
        vi = g.input[draw(st.integers(0, len(g.input) - 1))]
        choice = draw(st.integers(0, 2))
        if choice == 0:
            vi.type.Clear()
        elif choice == 1:
            vi.type.sequence_type.elem_type.tensor_type.elem_type = 1
        else:
            vi.type.tensor_type.shape.dim.add().dim_value = draw(_INTS)


def _run(data: bytes, **options) -> None:
    try:
        infer_shapes(irmodel.loads(data), **options)
    except (InferenceError, irmodel.DecodeError):
        pass


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_models_raise_only_our_errors(models, data):
    m = onnx.load_from_string(models[data.draw(st.integers(0, len(models) - 1))])
    del m.graph.value_info[:]
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate(m, data.draw)
    blob = m.SerializeToString()
    _run(blob, strict_mode=data.draw(st.booleans()), check_type=data.draw(st.booleans()),
         data_prop=data.draw(st.booleans()))


def _full_check(data: bytes) -> None:
    try:
        irmodel.check_model(data, full_check=True)
    except (irmodel.ValidationError, irmodel.DecodeError):  # InferenceError is a ValidationError
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_models_fail_the_full_check_only_with_our_errors(models, data):
    m = onnx.load_from_string(models[data.draw(st.integers(0, len(models) - 1))])
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate(m, data.draw)
    _full_check(m.SerializeToString())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_corrupted_bytes_fail_the_full_check_only_with_our_errors(models, data):
    blob = bytearray(models[data.draw(st.integers(0, len(models) - 1))])
    for _ in range(data.draw(st.integers(1, 4))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    _full_check(bytes(blob))


def test_the_full_check_fuzzing_reaches_inference(models):
    """The fuzzed full checks are not all stopped before inference: unmutated models pass it."""
    passed = 0
    for data in models[:40]:
        irmodel.check_model(data, full_check=True)
        passed += 1
    assert passed == 40


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_corrupted_bytes_raise_only_our_errors(models, data):
    blob = bytearray(models[data.draw(st.integers(0, len(models) - 1))])
    for _ in range(data.draw(st.integers(1, 4))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    _run(bytes(blob), strict_mode=True, data_prop=True)


def _nested_ifs(depth: int) -> bytes:
    from onnx import helper as oh
    small = oh.make_graph([oh.make_node("Identity", ["x"], ["y"])], "g", [], [oh.make_tensor_value_info("y", 1, [1])])
    inner = small
    for _ in range(depth):
        node = oh.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=small)
        inner = oh.make_graph([node], "g", [], [oh.make_tensor_value_info("y", 1, [1])])
    m = oh.make_model(inner, opset_imports=[oh.make_opsetid("", 18)])
    m.graph.input.extend([oh.make_tensor_value_info("c", 9, []), oh.make_tensor_value_info("x", 1, [1])])
    return m.SerializeToString()


def test_nested_subgraphs_infer_as_the_reference_up_to_the_nesting_limit():
    from onnx import shape_inference
    data = _nested_ifs(20)
    ref = shape_inference.infer_shapes(onnx.load_from_string(data), strict_mode=True).SerializeToString()
    assert irmodel.dumps(infer_shapes(irmodel.loads(data), strict_mode=True)) == ref
    with pytest.raises(irmodel.DecodeError, match="nesting deeper"):  # the reference refuses it too
        infer_shapes(irmodel.loads(_nested_ifs(32)), strict_mode=True)


@pytest.mark.parametrize("version", [2**32, 2**32 + 14, 2**31, 2**31 + 13, -1, 2**63 - 1])
def test_opset_versions_outside_a_c_int_are_narrowed_as_the_reference_narrows_them(version):
    """The reference keeps opset versions in a C int: 2^32 + 14 works as 14, 2^32 as 0 (no
    schema).  Found by the plain-loop smoke campaign (a TypeError escaped before)."""
    import onnx
    from onnx import TensorProto, helper as oh, shape_inference

    x = oh.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = oh.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = oh.make_node("Relu", ["x"], ["y"])
    model = oh.make_model(oh.make_graph([node], "g", [x], [y]), opset_imports=[oh.make_opsetid("", version)])
    ref = shape_inference.infer_shapes(model, data_prop=True)
    ours = irmodel.infer_shapes(irmodel.loads(model.SerializeToString()), data_prop=True)
    assert ours.SerializeToString() == ref.SerializeToString()
    assert onnx.load_from_string(ours.SerializeToString()) == ref
