"""Built bodies on arbitrary nodes: the same answer as onnx's builder, or our documented error.

Hypothesis makes nodes of every operator we build for, with any subset of inputs and
outputs, the schema's attributes (and a stray one) holding values of any kind, and input
types of any kind (tensors of any element type and rank, sequences, empty, none).  Our
`build_function_body` must give onnx's body byte for byte, None where onnx's builder
refuses (an empty or half-built body), and `irmodel.ValidationError` (with onnx's message)
where onnx's raises; never another exception.  The one node the reference cannot take is a
SequenceMap without the first input's type (onnx 1.23.2 crashes on it): there we only
check that ours raises.
"""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
onnx = pytest.importorskip("onnx")

from hypothesis import HealthCheck, event, given, settings, strategies as st  # noqa: E402
from onnx import helper as oh  # noqa: E402

import irmodel  # noqa: E402
from irmodel import defs  # noqa: E402
from irmodel.defs.bodies import BUILDERS, build_function_body  # noqa: E402

_SCHEMAS = sorted((s.domain, s.name, v) for s in defs.get_all_schemas_with_history()
                  if (s.domain, s.name) in BUILDERS for v in s.context_dependent_function_opset_versions)

_STRINGS = ["none", "silu", "swish", "mean", "sum", "DCR", "CRD", "linear", "gated", "delta", "gated_delta", "tanh", ""]
_INTS = [0, 1, 2, 3, -1, -2, 7, 10, 11, 16, 1 << 40, (1 << 32) + 1, 1 << 31]
_FLOATS = [0.0, 1.0, 0.1, -2.5, 1e-5, float("inf")]


def _graph(n_inputs: int, n_outputs: int, with_node: bool):
    inputs = [oh.make_tensor_value_info(f"i{k}", 1, None) for k in range(n_inputs)]
    outputs = [oh.make_tensor_value_info(f"o{k}", 1, None) for k in range(n_outputs)]
    nodes = [oh.make_node("Identity", [f"i{k % max(n_inputs, 1)}"], [f"o{k}"], name=f"n{k}")
             for k in range(n_outputs)] if with_node and n_inputs else []
    return oh.make_graph(nodes, "g", inputs, outputs)


_VALUES = st.one_of(
    st.sampled_from(_INTS), st.sampled_from(_FLOATS), st.sampled_from(_STRINGS),
    st.lists(st.sampled_from(_INTS[:6]), min_size=1, max_size=3),
    st.builds(_graph, st.integers(0, 2), st.integers(0, 2), st.booleans()))


@st.composite
def _types(draw, count: int) -> list:
    out = []
    for _ in range(count):
        kind = draw(st.sampled_from(["tensor", "tensor", "tensor", "sequence", "empty"]))
        t = onnx.TypeProto()
        if kind != "empty":
            tensor = t.tensor_type if kind == "tensor" else t.sequence_type.elem_type.tensor_type
            tensor.elem_type = draw(st.sampled_from([1, 1, 10, 11, 16, 7, 9, 6]))
            rank = draw(st.one_of(st.none(), st.integers(0, 5)))
            if rank is not None:
                shape = tensor.shape
                shape.SetInParent()
                for _ in range(rank):
                    d = shape.dim.add()
                    if draw(st.booleans()):
                        d.dim_value = draw(st.sampled_from([1, 2, 4, 8]))
                    else:
                        d.dim_param = "n"
        out.append(t)
    return out


@st.composite
def _nodes(draw):
    domain, op, version = draw(st.sampled_from(_SCHEMAS))
    schema = onnx.defs.get_schema(op, version, domain)
    n_in = draw(st.integers(0, min(len(schema.inputs), 6) + 1))
    n_out = draw(st.integers(0, len(schema.outputs) + 1))
    inputs = [draw(st.sampled_from([f"x{k}", f"x{k}", ""])) for k in range(n_in)]
    outputs = [draw(st.sampled_from([f"y{k}", f"y{k}", ""])) for k in range(n_out)]
    names = draw(st.lists(st.sampled_from(sorted(schema.attributes) + ["stray"]), unique=True, max_size=5))
    node = oh.make_node(op, inputs, outputs, domain=domain)
    for name in names:
        node.attribute.append(oh.make_attribute(name, draw(_VALUES)))
    types = draw(_types(draw(st.integers(0, n_in))))
    return domain, op, version, node, types


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_nodes())
def test_arbitrary_nodes_get_the_references_body_or_its_error(case):
    domain, op, version, node, types = case
    node_bytes = node.SerializeToString()
    type_bytes = [t.SerializeToString() for t in types]
    schema = defs.get_schema(op, version, domain)

    def ours():
        return build_function_body(schema, irmodel.loads(node_bytes, "NodeProto"),
                                   [irmodel.loads(t, "TypeProto") for t in type_bytes], version)

    if op == "SequenceMap" and not (types and types[0].WhichOneof("value")):
        with pytest.raises(irmodel.ValidationError):
            ours()
        event("raised (the reference would crash)")
        return
    try:
        ref = onnx.defs.get_schema(op, version, domain).get_context_dependent_function_with_opset_version(
            version, node_bytes, type_bytes)
    except (ValueError, onnx.shape_inference.InferenceError) as error:
        with pytest.raises(irmodel.ValidationError) as raised:
            ours()
        assert str(raised.value) in str(error)
        event("raised as the reference")
        return
    expected = onnx.FunctionProto.FromString(ref) if ref else None
    got = ours()
    if expected is None or not expected.name:  # refused (an empty or half-built body)
        assert got is None
        event("refused")
        return
    expected.ClearField("doc_string")
    assert got is not None
    assert irmodel.dumps(got) == expected.SerializeToString()
    event("built")
