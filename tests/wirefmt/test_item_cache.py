"""Items of repeated message fields are held weakly until modified.

A walk must not keep the graph it walked alive (memory proportional to the graph, and
no garbage-collector work that grows with it), yet every handle a user holds must see
every edit, and every edit must reach `dumps`.  Each test states one of those promises,
checked against the reference where it can answer.
"""

from __future__ import annotations

import gc

import onnx
import pytest
from onnx import helper as oh

import irmodel
from irmodel import AttributeProto, NodeProto


def _model_bytes(nodes: int = 20) -> bytes:
    node_list = [oh.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}", alpha=float(i), axes=[i, i + 1])
                 for i in range(nodes)]
    graph = oh.make_graph(node_list, "g", [oh.make_tensor_value_info("t0", onnx.TensorProto.FLOAT, [1])],
                          [oh.make_tensor_value_info(f"t{nodes}", onnx.TensorProto.FLOAT, [1])])
    return oh.make_model(graph).SerializeToString()


def _live(cls) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is cls)


def test_a_walk_keeps_nothing_alive():
    m = irmodel.loads(_model_bytes(200))  # a long sequence: items held weakly
    before_nodes, before_attrs = _live(NodeProto), _live(AttributeProto)
    for node in m.graph.node:
        for a in node.attribute:
            assert a.name in ("alpha", "axes")
    del node, a
    assert _live(NodeProto) == before_nodes
    assert _live(AttributeProto) == before_attrs


@pytest.mark.parametrize("nodes", [20, 200])  # held strongly / weakly
def test_handles_to_one_item_are_one_object_while_held(nodes):
    m = irmodel.loads(_model_bytes(nodes))
    a = m.graph.node[3]
    b = m.graph.node[3]
    assert a is b
    assert next(x for i, x in enumerate(m.graph.node) if i == 3) is a
    a.name = "renamed"
    assert b.name == "renamed"


@pytest.mark.parametrize("nodes", [20, 200])
def test_an_edit_survives_when_every_handle_is_dropped(nodes):
    data = _model_bytes(nodes)
    m = irmodel.loads(data)
    m.graph.node[2].name = "x"  # the node is a temporary: only the graph can keep it now
    m.graph.node[4].attribute[1].ints.append(99)  # two levels of temporaries
    m.graph.node[5].input.append("extra")  # through a container
    gc.collect()
    assert m.graph.node[2].name == "x"
    ref = onnx.load_model_from_string(data)
    ref.graph.node[2].name = "x"
    ref.graph.node[4].attribute[1].ints.append(99)
    ref.graph.node[5].input.append("extra")
    assert irmodel.dumps(m) == ref.SerializeToString()


def test_a_dropped_item_is_read_again_equal():
    m = irmodel.loads(_model_bytes())
    first = m.graph.node[7]
    text = repr(first), list(first.input), first.attribute[0].f
    del first
    gc.collect()
    again = m.graph.node[7]
    assert (repr(again), list(again.input), again.attribute[0].f) == text
    assert again._start >= 0  # still clean: will be copied through, not re-encoded


@pytest.mark.parametrize("nodes", [20, 200])
def test_held_item_follows_sequence_edits(nodes):
    data = _model_bytes(nodes)
    m = irmodel.loads(data)
    held = m.graph.node[5]
    del m.graph.node[0]  # indices shift: the held node is now item 4
    held.name = "moved"
    assert m.graph.node[4] is held
    ref = onnx.load_model_from_string(data)
    del ref.graph.node[0]
    ref.graph.node[4].name = "moved"
    assert irmodel.dumps(m) == ref.SerializeToString()


def test_item_removed_from_its_sequence_is_detached():
    data = _model_bytes()
    m = irmodel.loads(data)
    gone = m.graph.node.pop(0)
    gone.name = "not in the model"
    ref = onnx.load_model_from_string(data)
    del ref.graph.node[0]
    assert irmodel.dumps(m) == ref.SerializeToString()


def test_cleared_sequence_ignores_edits_to_old_items():
    m = irmodel.loads(_model_bytes())
    old = m.graph.node[1]
    m.graph.ClearField("node")
    old.name = "orphan"
    assert len(m.graph.node) == 0
    ref = onnx.load_model_from_string(_model_bytes())
    ref.graph.ClearField("node")
    assert irmodel.dumps(m) == ref.SerializeToString()


@pytest.mark.parametrize("nodes", [20, 200])
def test_untouched_walk_writes_the_input_back_verbatim(nodes):
    data = _model_bytes(nodes)
    m = irmodel.loads(data)
    for node in m.graph.node:
        list(node.input)
        for a in node.attribute:
            list(a.ints)
    assert irmodel.dumps(m) == data


@pytest.mark.parametrize("nodes, index", [(20, 0), (20, 19), (200, 7), (200, 150)])
def test_error_path_names_the_item(nodes, index):
    data = bytearray(_model_bytes(nodes))
    m = irmodel.loads(bytes(data))
    node = m.graph.node[index]
    assert (m.graph.node._items[index] is node) == (nodes <= 64)  # strong when short
    # Corrupt a copy: the attribute's last byte (the value of `type`) becomes a varint
    # continuation byte, so the varint runs past the end of the attribute.
    a = node.attribute[0]
    start, end = a._start, a._end
    del node, a
    broken = bytes(data[:end - 1]) + b"\x80" + bytes(data[end:])
    m2 = irmodel.loads(broken)
    with pytest.raises(irmodel.DecodeError) as info:
        for n in m2.graph.node:
            for x in n.attribute:
                x.type
    assert info.value.path == f"ModelProto.graph.node[{index}].attribute[0]"
    assert start < info.value.offset <= end


def test_a_long_sequence_forgets_dead_items_and_keeps_held_ones():
    m = irmodel.loads(_model_bytes(200))  # longer than the threshold for clearing slots
    seq = m.graph.node
    held = seq[150]
    for node in seq:
        node.op_type
    del node
    gc.collect()
    slots = seq._items
    assert sum(1 for s in slots if s is not None) == 1  # only the held item is referenced
    assert seq[150] is held
    held.name = "pinned"
    del held
    gc.collect()
    assert seq[150].name == "pinned"


def test_scan_built_sequences_behave_as_lists():
    m = irmodel.loads(_model_bytes(5))
    node = m.graph.node[0]
    attrs = node.attribute
    assert len(attrs) == 2 and bool(attrs)
    assert [a.name for a in attrs[::-1]] == ["axes", "alpha"]
    assert attrs[-1].name == "axes"
    with pytest.raises(IndexError):
        attrs[2]


@pytest.mark.parametrize("nodes", [20, 200])  # node held strongly / weakly by the graph
def test_a_kept_child_edited_after_its_node_was_dropped_reaches_the_model(nodes):
    # The node is clean and nobody holds it any more, but a child of it is still held: the
    # child's edit must keep the node (and mark node, graph and model changed), whatever
    # links a message keeps upwards.
    data = _model_bytes(nodes)
    m = irmodel.loads(data)
    node = m.graph.node[9]
    attr = node.attribute[1]
    inputs = node.input
    del node
    gc.collect()
    attr.ints.append(7)
    inputs.append("late")
    gc.collect()
    ref = onnx.load_model_from_string(data)
    ref.graph.node[9].attribute[1].ints.append(7)
    ref.graph.node[9].input.append("late")
    assert irmodel.dumps(m) == ref.SerializeToString()
    assert m._start < 0 and m.graph._start < 0


@pytest.mark.parametrize("nodes", [20, 200])
def test_a_kept_node_edited_after_the_graph_handle_was_dropped_reaches_the_model(nodes):
    data = _model_bytes(nodes)
    m = irmodel.loads(data)
    graph = m.graph
    node = graph.node[11]
    ints = node.attribute[1].ints  # a container two levels down, its messages dropped
    del graph
    gc.collect()
    node.op_type = "Sigmoid"
    ints[0] = -1
    gc.collect()
    ref = onnx.load_model_from_string(data)
    ref.graph.node[11].op_type = "Sigmoid"
    ref.graph.node[11].attribute[1].ints[0] = -1
    assert irmodel.dumps(m) == ref.SerializeToString()


def _broken_second_attribute() -> bytes:
    """The bytes of a 20-node model whose node 4 has a malformed second attribute (the
    varint of its `type` runs past the attribute's end), and that attribute's span."""
    data = bytearray(_model_bytes(20))
    m = irmodel.loads(bytes(data))
    a = m.graph.node[4].attribute[1]
    start, end = a._start, a._end
    del m, a
    return bytes(data[:end - 1]) + b"\x80" + bytes(data[end:])


def test_a_short_sequence_raises_only_at_the_malformed_item():
    # Short sequences make their items before they are read (`RepeatedMessages.__iter__`):
    # a reader still gets the first attribute, and the error only when it asks for the
    # second one, as from an item made when reached; a reader that stops before it, none.
    m = irmodel.loads(_broken_second_attribute())
    attrs = m.graph.node[4].attribute
    it = iter(attrs)
    first = next(it)
    assert first.name == "alpha"
    with pytest.raises(irmodel.DecodeError) as info:
        next(it)
    assert info.value.path == "ModelProto.graph.node[4].attribute[1]"
    for a in attrs:  # stopping before the malformed item: no error
        assert a is first
        break
    assert attrs[0] is first
    with pytest.raises(irmodel.DecodeError):
        list(attrs)  # again, and the same error every time


def test_a_short_sequence_iterator_sees_changes_made_while_it_runs():
    # As a generator over the slots would: items appended while iterating are reached,
    # a cleared sequence's iterator finishes the items it had.
    m = irmodel.loads(_model_bytes(20))
    attrs = m.graph.node[0].attribute
    seen = []
    for a in attrs:
        seen.append(a.name)
        if len(attrs) < 3:
            attrs.add(name="late", type=AttributeProto.INT, i=1)
    assert seen == ["alpha", "axes", "late"]
    ref = onnx.load_model_from_string(_model_bytes(20))
    ref.graph.node[0].attribute.add(name="late", type=onnx.AttributeProto.INT, i=1)
    assert irmodel.dumps(m) == ref.SerializeToString()
