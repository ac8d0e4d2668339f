"""Plain function bodies stamped out per call (`irmodel._surgery.stamp`) give what the general
inlining gives, byte for byte, and what onnx's inliner gives."""

from __future__ import annotations

import pytest

import irmodel
from irmodel import helper, inliner
from irmodel._surgery import inline as inline_module
from irmodel._surgery.stamp import BodyTemplate

F = irmodel.TensorProto.FLOAT


def _general(model):
    """inline_local_functions with the stamp path turned off."""
    saved = BodyTemplate.make
    BodyTemplate.make = classmethod(lambda cls, f, e: None)
    try:
        return inliner.inline_local_functions(model)
    finally:
        BodyTemplate.make = saved


def _model(calls: int, clash: bool, refs: bool = False):
    """``calls`` chained calls of one function; with ``clash`` the main graph already uses
    names the renaming suggests (``t__1``, ``Mul__2``), so the counter suffixes come in."""
    body = [helper.make_node("Mul", ["x", "x"], ["t"], name="Mul"),
            helper.make_node("Constant", [], ["c"], value=helper.make_tensor("", F, [], [0.5])),
            helper.make_node("Add", ["t", "c"], ["y"], name="")]
    attrs = []
    if refs:
        alpha = irmodel.AttributeProto(name="alpha", type=irmodel.AttributeProto.FLOAT, ref_attr_name="a")
        body.append(helper.make_node("LeakyRelu", ["y"], ["z"], name="act"))
        body[-1].attribute.append(alpha)
        attrs = ["a"]
    out = "z" if refs else "y"
    fn = helper.make_function("local", "Block", ["x"], [out], body, [helper.make_opsetid("", 17)], attrs)
    nodes, prev = [], "in"
    if clash:
        nodes.append(helper.make_node("Identity", [prev], ["t__1"], name="Mul__2"))
        prev = "t__1"
    for i in range(calls):
        nxt = f"h{i}"
        nodes.append(helper.make_node("Block", [prev], [nxt], name=f"/blocks.{i}", domain="local"))
        prev = nxt
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("in", F, [2])],
                          [helper.make_tensor_value_info(prev, F, [2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                             functions=[fn])


@pytest.mark.parametrize("clash", [False, True])
def test_stamped_result_is_the_general_result(clash):
    m = irmodel.loads(irmodel.dumps(_model(7, clash)), "ModelProto")
    assert BodyTemplate.make(m.functions[0], lambda n: False) is not None
    assert irmodel.dumps(inliner.inline_local_functions(m)) == irmodel.dumps(_general(m))


def test_body_with_attribute_references_is_not_plain():
    m = irmodel.loads(irmodel.dumps(_model(3, False, refs=True)), "ModelProto")
    assert BodyTemplate.make(m.functions[0], lambda n: False) is None
    assert irmodel.dumps(inliner.inline_local_functions(m)) == irmodel.dumps(_general(m))


def test_body_calling_another_function_is_not_plain():
    m = irmodel.loads(irmodel.dumps(_model(2, False)), "ModelProto")
    assert BodyTemplate.make(m.functions[0], lambda n: n.op_type == "Mul") is None


@pytest.mark.parametrize("clash", [False, True])
def test_stamped_result_is_onnx_result(clash):
    onnx = pytest.importorskip("onnx")
    import onnx.inliner

    data = irmodel.dumps(_model(5, clash))
    ours = irmodel.dumps(inliner.inline_local_functions(irmodel.loads(data, "ModelProto")))
    theirs = onnx.inliner.inline_local_functions(onnx.load_from_string(data)).SerializeToString()
    assert ours == theirs


def test_inliner_uses_the_stamp_for_plain_bodies(monkeypatch):
    """The path is taken (a call counted by the template), not only equal by accident."""
    stamped = []
    real = BodyTemplate.stamp

    def counting(self, renamer):
        stamped.append(1)
        return real(self, renamer)

    monkeypatch.setattr(BodyTemplate, "stamp", counting)
    inliner.inline_local_functions(irmodel.loads(irmodel.dumps(_model(4, False)), "ModelProto"))
    assert len(stamped) == 4
    assert inline_module.BodyTemplate is BodyTemplate
