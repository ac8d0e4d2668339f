"""``irmodel.inference.explain`` and ``irmodel infer --explain``: one test per reason.

Each model is built so that exactly one cause loses a type or dim; the test checks the
value, the origin node and the reason, and that values downstream inherit the origin
(``via``).  The explanation must not change inference: the same run without the
collector gives the same model.
"""

from __future__ import annotations

import json

import pytest

import irmodel
from irmodel import cli, dumps, helper as h
from irmodel.inference import REASONS, explain, infer_shapes

F = 1


def _model(nodes, inputs, value_info=(), opsets=(("", 17),)):
    graph = h.make_graph(nodes, "g", inputs, [h.make_empty_tensor_value_info(nodes[-1].output[0])],
                         value_info=list(value_info))
    return h.make_model(graph, opset_imports=[h.make_opsetid(d, v) for d, v in opsets])


def _losses(model) -> dict:
    return {loss.value: loss for loss in explain(model).losses}


def test_data_dependent_operator_and_inheritance():
    m = _model([h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Relu", ["nz"], ["r"], name="act")],
               [h.make_tensor_value_info("x", F, [2, 3])])
    losses = _losses(m)
    nz, r = losses["nz"], losses["r"]
    assert (nz.reason, nz.node_index, nz.op_type, nz.what, nz.dims, nz.via) == \
        ("data-dependent", 0, "NonZero", "dims", (1,), None)
    assert (r.reason, r.node_index, r.op_type, r.via, r.dims) == ("data-dependent", 0, "NonZero", "nz", (1,))
    assert set(losses) == {"nz", "r"}


def test_reshape_with_a_runtime_shape_is_data_dependent_and_a_constant_one_is_known():
    inputs = [h.make_tensor_value_info("x", F, [2, 3]), h.make_tensor_value_info("s", 7, [2])]
    runtime = _model([h.make_node("Reshape", ["x", "s"], ["y"])], inputs)
    assert _losses(runtime)["y"].reason == "data-dependent"
    const = _model([h.make_node("Constant", [], ["c"], value=h.make_tensor("c", 7, [2], [3, 2])),
                    h.make_node("Reshape", ["x", "c"], ["y"])], inputs[:1])
    assert _losses(const) == {}


def test_unknown_operator_is_the_origin_and_is_listed():
    m = _model([h.make_node("Foo", ["x"], ["f"], domain="x.example"), h.make_node("Add", ["f", "x"], ["a"])],
               [h.make_tensor_value_info("x", F, [2])], opsets=(("", 17), ("x.example", 1)))
    result = explain(m)
    losses = {loss.value: loss for loss in result.losses}
    assert (losses["f"].reason, losses["f"].what, losses["f"].domain) == ("unknown-op", "type", "x.example")
    assert (losses["a"].reason, losses["a"].via, losses["a"].op_type) == ("unknown-op", "f", "Foo")
    assert result.operators_without_inference == [("x.example", "Foo", None, "unknown-op")]


def test_operator_with_a_schema_but_no_inference_function():
    # com.microsoft FusedConv: onnxruntime's schema is in irmodel.defs, no rule infers it
    m = _model([h.make_node("FusedConv", ["x", "w"], ["y"], domain="com.microsoft")],
               [h.make_tensor_value_info("x", F, [1, 1, 4, 4]), h.make_tensor_value_info("w", F, [1, 1, 3, 3])],
               opsets=(("", 17), ("com.microsoft", 1)))
    result = explain(m)
    assert [(loss.value, loss.reason) for loss in result.losses] == [("y", "no-inference-function")]
    assert result.operators_without_inference == [("com.microsoft", "FusedConv", 1, "no-inference-function")]


def test_missing_input():
    m = _model([h.make_node("Relu", ["nowhere"], ["y"])], [])
    loss = _losses(m)["y"]
    assert (loss.reason, loss.what) == ("missing-input", "type") and "nowhere" in loss.detail


@pytest.mark.parametrize("vi", [h.make_empty_tensor_value_info("x"),  # no type
                                h.make_tensor_value_info("x", F, None),  # no shape
                                h.make_tensor_value_info("x", F, [2, None])])  # an unnamed dim
def test_untyped_input(vi):
    m = _model([h.make_node("Relu", ["x"], ["y"])], [vi])
    loss = _losses(m)["y"]
    assert loss.reason == "untyped-input" and "'x'" in loss.detail


def test_inference_error():
    m = _model([h.make_node("MatMul", ["a", "b"], ["y"])],
               [h.make_tensor_value_info("a", F, [2, 3]), h.make_tensor_value_info("b", F, [4, 5])])
    loss = _losses(m)["y"]
    assert loss.reason == "inference-error" and "Incompatible dimensions" in loss.detail


def test_rule_that_does_not_determine_a_dim():
    # QOrderedMatMul's last output dim depends on order_B's layout: the rule leaves it unknown
    m = _model([h.make_node("QOrderedMatMul", ["a", "sa", "b", "sb", "sy"], ["y"], domain="com.microsoft",
                            order_A=1, order_B=0, order_Y=1)],
               [h.make_tensor_value_info("a", 3, [2, 3, 4]), h.make_tensor_value_info("b", 3, [5, 4])]
               + [h.make_tensor_value_info(n, F, []) for n in ("sa", "sb", "sy")],
               opsets=(("", 17), ("com.microsoft", 1)))
    loss = _losses(m)["y"]
    assert (loss.reason, loss.dims, loss.op_type) == ("not-determined", (2,), "QOrderedMatMul")


def test_a_declared_dim_is_not_lost():
    m = _model([h.make_node("NonZero", ["x"], ["nz"])], [h.make_tensor_value_info("x", F, [2, 3])],
               value_info=[h.make_tensor_value_info("nz", 7, [2, "n"])])
    assert _losses(m) == {}


def test_every_reason_is_documented_and_explaining_changes_nothing():
    assert set(REASONS) == {"unknown-op", "no-inference-function", "inference-error", "missing-input",
                            "untyped-input", "data-dependent", "value-budget", "not-determined"}
    m = _model([h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Relu", ["nz"], ["r"])],
               [h.make_tensor_value_info("x", F, [2, 3])])
    before = dumps(infer_shapes(m))
    explain(m)
    assert dumps(infer_shapes(m)) == before


def test_cli_explain_text_and_json(capsys, tmp_path):
    m = _model([h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Foo", ["nz"], ["f"], domain="x.example")],
               [h.make_tensor_value_info("x", F, [2, 3])], opsets=(("", 17), ("x.example", 1)))
    path = tmp_path / "m.onnx"
    irmodel.save(m, str(path))
    assert cli.main(["infer", str(path), "--explain"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith("nz: dim 1 unknown, lost at node 0 NonZero: data-dependent")
    assert text[1].startswith("f: type unknown, lost at node 1 x.example::Foo: unknown-op")
    assert text[-2:] == ["operators without an inference function: 1", "  x.example::Foo: unknown-op"]
    assert cli.main(["infer", str(path), "--explain", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [v["value"] for v in data["values"]] == ["nz", "f"]
    assert data["operators_without_inference"] == [
        {"domain": "x.example", "op_type": "Foo", "since_version": None, "reason": "unknown-op"}]


def test_cli_explain_of_a_fully_known_model(capsys, tmp_path):
    m = _model([h.make_node("Relu", ["x"], ["y"])], [h.make_tensor_value_info("x", F, [2])])
    path = tmp_path / "m.onnx"
    irmodel.save(m, str(path))
    assert cli.main(["infer", str(path), "--explain"]) == 0
    assert capsys.readouterr().out.splitlines() == ["every type and dim is known",
                                                    "operators without an inference function: 0"]


def _unknown_part(tp, declared_names: set):
    """What is unknown in a TypeProto: "type" (none, or no element type), "shape" (no
    shape), "dims" (a dim without value named by inference: unk__N), or None."""
    which = tp.WhichOneof("value")
    if which is None:
        return "type"
    if which in ("sequence_type", "optional_type"):
        inner = getattr(tp, which)
        return _unknown_part(inner.elem_type, declared_names) if inner.HasField("elem_type") else "type"
    if which not in ("tensor_type", "sparse_tensor_type"):
        return None
    t = getattr(tp, which)
    if not t.elem_type:
        return "type"
    if not t.HasField("shape"):
        return "shape"
    for d in t.shape.dim:
        if not d.HasField("dim_value") and (not d.dim_param or (
                d.dim_param.startswith("unk__") and d.dim_param not in declared_names)):
            return "dims"
    return None


def _unknown_values(graph, declared_names: set) -> dict:
    """``{value: what}`` of the main graph's typed values with an unknown part."""
    out = {}
    for vi in list(graph.value_info) + list(graph.output):
        part = _unknown_part(vi.type, declared_names)
        if part is not None:
            out[vi.name] = part
    return out


def _dim_params(model) -> set:
    names = set()
    g = model.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.WhichOneof("value") == "tensor_type" and vi.type.tensor_type.HasField("shape"):
            names.update(d.dim_param for d in vi.type.tensor_type.shape.dim if d.dim_param)
    return names


@pytest.mark.slow
def test_explain_accounts_for_every_unknown_of_the_node_test_models(node_corpus):
    """On every reference node test model, the values explain reports as lost in the main
    graph are exactly those infer_shapes leaves with an unknown type, rank or dim, and what
    it says is unknown matches; explain fails exactly where infer_shapes fails."""
    from irmodel.inference import InferenceError
    mismatches = []
    for name, data in node_corpus:
        model = irmodel.loads(data)
        try:
            inferred = infer_shapes(model)
        except InferenceError:
            with pytest.raises(InferenceError):
                explain(model)
            continue
        unknown = _unknown_values(inferred.graph, _dim_params(model))
        main = {vi.name for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
        losses = {loss.value: loss.what for loss in explain(model).losses if loss.value in main}
        if losses != unknown:
            mismatches.append((name, losses, unknown))
    assert mismatches == [], mismatches[:5]
