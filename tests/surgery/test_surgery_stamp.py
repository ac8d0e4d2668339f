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
    real = BodyTemplate.node_bytes

    def counting(self, *args):
        stamped.append(1)
        return real(self, *args)

    monkeypatch.setattr(BodyTemplate, "node_bytes", counting)
    inliner.inline_local_functions(irmodel.loads(irmodel.dumps(_model(4, False)), "ModelProto"))
    assert len(stamped) == 4
    assert inline_module.BodyTemplate is BodyTemplate


def test_stamped_nodes_are_read_from_their_bytes_by_the_external_data_walk():
    """The inlined graph's nodes are one adopted list (`wirefmt.adopt_items`): the walk
    for external data reads them from their bytes (none may hold an external tensor: the
    Constants hold theirs in the node) and makes only a node changed since."""
    from irmodel._wireview.holders import tensor_holders

    m = inliner.inline_local_functions(irmodel.loads(irmodel.dumps(_model(40, True)), "ModelProto"))
    assert tensor_holders(m.graph, 2) == []
    m.graph.node[5].name = "edited"
    assert tensor_holders(m.graph, 2) == [5]


def test_stamped_model_with_external_data_saves_elsewhere_as_the_general_one(tmp_path):
    """Saved to another directory, the stamped result carries its data file along and
    reads back as the general way's result."""
    src_dir, a, b = tmp_path / "src", tmp_path / "a", tmp_path / "b"
    for d in (src_dir, a, b):
        d.mkdir()
    model = _model(30, False)
    import numpy as np
    model.graph.initializer.append(irmodel.numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "in"))
    irmodel.save(model, str(src_dir / "m.onnx"), save_as_external_data=True, size_threshold=0,
                 location="w.bin")
    loaded = irmodel.load(str(src_dir / "m.onnx"))
    irmodel.save(inliner.inline_local_functions(loaded), str(a / "m.onnx"))
    irmodel.save(_general(loaded), str(b / "m.onnx"))
    assert (a / "w.bin").read_bytes() == (src_dir / "w.bin").read_bytes()
    assert (a / "m.onnx").read_bytes() == (b / "m.onnx").read_bytes()
    back = irmodel.load(str(a / "m.onnx"))
    assert irmodel.numpy_helper.to_array(back.graph.initializer[0]).tolist() == [1.0, 2.0]


def test_a_holder_with_a_sub_graph_takes_the_general_way():
    m = _model(3, False)
    then = helper.make_graph([helper.make_node("Identity", ["h2"], ["o"])], "then", [],
                             [helper.make_tensor_value_info("o", F, [2])])
    m.graph.node.append(helper.make_node("If", ["cond"], ["r"], then_branch=then, else_branch=then))
    m = irmodel.loads(irmodel.dumps(m), "ModelProto")
    from wirefmt import item_sources

    result = inliner.inline_local_functions(m)
    assert item_sources(result.graph, "node") is None  # built node by node
    assert irmodel.dumps(result) == irmodel.dumps(_general(m))


def test_a_kept_function_gets_its_calls_stamped_as_the_general_way_does():
    """``inline_selected_functions`` inlines the calls in the bodies of the functions it keeps:
    a kept function's node list is adopted from stamped bytes too, with the same result."""
    m = _model(4, True)
    outer_body = [helper.make_node("Block", ["a"], ["b"], domain="local"),
                  helper.make_node("Block", ["b"], ["c"], domain="local", name="second")]
    outer = helper.make_function("local", "Outer", ["a"], ["c"], outer_body,
                                 [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    m.functions.append(outer)
    m.graph.node.append(helper.make_node("Outer", [m.graph.output[0].name], ["z"], domain="local"))
    m.graph.output[0].name = "z"
    m = irmodel.loads(irmodel.dumps(m), "ModelProto")
    ours = inliner.inline_selected_functions(m, [("local", "Block")])
    from wirefmt import item_sources

    kept = ours.functions[0]
    assert kept.name == "Outer" and [n.op_type for n in kept.node] == ["Mul", "Constant", "Add"] * 2
    assert item_sources(kept, "node") is not None  # adopted, not built node by node
    saved = BodyTemplate.make
    BodyTemplate.make = classmethod(lambda cls, f, e: None)
    try:
        general = inliner.inline_selected_functions(m, [("local", "Block")])
    finally:
        BodyTemplate.make = saved
    assert irmodel.dumps(ours) == irmodel.dumps(general)
    onnx = pytest.importorskip("onnx")
    import onnx.inliner

    theirs = onnx.inliner.inline_selected_functions(onnx.load_from_string(irmodel.dumps(m)), [("local", "Block")])
    assert irmodel.dumps(ours) == theirs.SerializeToString()


def test_initializer_names_from_headers_are_the_messages_names():
    """`scope.initializer_names` reads simple tensors' names from their headers, the rest
    (external, with a segment, changed since read) from their messages: the same names."""
    import numpy as np

    from irmodel._surgery.scope import initializer_names
    from irmodel._wireview.fastpath import use_fast_paths

    tensors = [irmodel.numpy_helper.from_array(np.ones(2, np.float32), f"w{i}") for i in range(6)]
    tensors[1].data_location = irmodel.TensorProto.EXTERNAL
    tensors[1].external_data.add(key="location", value="w.bin")
    tensors[2].segment.begin = 0
    tensors[3].name = "\u00e9t\u00e9"
    g = helper.make_graph([], "g", [], [], initializer=tensors)
    data = irmodel.dumps(helper.make_model(g))
    names = []
    for fast in (True, False):
        use_fast_paths(fast)
        m = irmodel.loads(data)
        m.graph.initializer[4].name = "renamed"
        names.append(initializer_names(m.graph))
    use_fast_paths(True)
    assert names[0] == names[1] == ["w0", "w1", "w2", "\u00e9t\u00e9", "renamed", "w5"]
