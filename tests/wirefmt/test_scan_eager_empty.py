"""The empty containers `make_child` puts in place for absent repeated fields: scalar ones
(the ``eager_empty`` scan hint in `irmodel.messages.SCAN_HINTS`: an AttributeProto's ints,
floats and strings) and those of the ``eager_items`` hint (a NodeProto's attribute).

They must be exactly what reading the absent field would have made: the instance's own
container (owner, element check, the same object on every read), and a change through
them must reach the model and encode as protobuf's does the same change, whether the
attribute came from the scan or from the memo, and whatever the generic scan does.
"""

from __future__ import annotations

import onnx
import pytest
from onnx import helper

import irmodel
from wirefmt import use_generated_scanners
from wirefmt.containers import MessageList, RepeatedScalars

_FIELDS = ("ints", "floats", "strings")


def _model_bytes() -> bytes:
    nodes = [helper.make_node("Softmax", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}",
                              axis=-1 if i % 2 else 3,  # repeated bytes: memo hits from the third node
                              **({"perm": [1, 0]} if i % 4 == 0 else {}))
             for i in range(80)]  # more than 64 nodes: items held weakly
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t0", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("t80", onnx.TensorProto.FLOAT, [1])])
    return helper.make_model(graph).SerializeToString()


@pytest.fixture(params=[True, False], ids=["generated", "generic"])
def scanners(request):
    use_generated_scanners(request.param)
    yield request.param
    use_generated_scanners(True)


def test_absent_fields_read_as_the_instances_own_empty_containers(scanners):
    m = irmodel.ModelProto.FromString(_model_bytes())
    built = irmodel.AttributeProto()
    for node in m.graph.node:
        for a in node.attribute:
            for name in _FIELDS:
                value = getattr(a, name)
                assert type(value) is RepeatedScalars and value._owner is a and value is getattr(a, name)
                assert value._check is getattr(built, name)._check
                if name != "ints" or a.name != "perm":
                    assert value == []
            assert a._start >= 0  # reading changed nothing


@pytest.mark.parametrize("node_index", [1, 3, 5, 4])  # memo hits (axis -1 and 3 seen before), a list
def test_a_change_through_an_eager_container_reaches_the_model_and_encodes_as_protobuf(scanners, node_index):
    data = _model_bytes()
    m = irmodel.ModelProto.FromString(data)
    ref = onnx.load_from_string(data)
    a = m.graph.node[node_index].attribute[0]
    floats, strings = a.floats, a.strings
    del a  # the containers alone keep the change alive
    floats.append(0.25)
    strings.extend([b"x", b"y"])
    r = ref.graph.node[node_index].attribute[0]
    r.floats.append(0.25)
    r.strings.extend([b"x", b"y"])
    assert list(m.graph.node[node_index].attribute[0].floats) == [0.25]
    assert m.SerializeToString() == ref.SerializeToString()
    # the other attributes with the same bytes (memo copies) are untouched
    assert all(len(n.attribute[0].floats) == 0 for i, n in enumerate(m.graph.node) if i != node_index)


def test_an_eager_container_checks_elements_as_a_read_one_does(scanners):
    m = irmodel.ModelProto.FromString(_model_bytes())
    a = m.graph.node[3].attribute[0]
    errors = []
    for target in (a, irmodel.AttributeProto()):
        with pytest.raises(Exception) as info:
            target.ints.append("not an int")
        errors.append(type(info.value))
    assert errors[0] is errors[1] and m.graph.node[3].attribute[0]._start >= 0


def test_packed_ints_stay_lazy_and_decode():
    # proto3 writers pack AttributeProto.ints: the chunk waits in _lazy, no empty list hides it.
    attr = b"\x0a\x04perm" + b"\x42\x03\x01\x00\x02" + b"\xa0\x01\x07"  # ints packed [1, 0, 2], type INTS
    node = b"\x22\x09Transpose" + b"\x2a" + bytes([len(attr)]) + attr
    for _ in range(2):  # the second time through the memo's lookup
        a = irmodel.NodeProto.FromString(node).attribute[0]
        assert "ints" not in a.__dict__ and list(a.ints) == [1, 0, 2] and list(a.floats) == []
        ref = onnx.NodeProto.FromString(node).attribute[0]
        assert list(ref.ints) == [1, 0, 2] and a.SerializeToString() == attr  # clean: its own bytes


def test_clearing_an_empty_container_leaves_the_bytes_exact(scanners):
    data = _model_bytes()
    m = irmodel.ModelProto.FromString(data)
    a = m.graph.node[3].attribute[0]
    a.ClearField("floats")
    assert a._start >= 0 and m.SerializeToString() == data
    a.ints.append(2)
    a.ints.pop()  # emptied by a change: the change counts
    a.ClearField("ints")
    ref = onnx.load_from_string(data)
    assert a._start == -1 and m.SerializeToString() == ref.SerializeToString()


# -- a node's absent ``attribute`` (the ``eager_items`` hint: an empty list put in place) --

def _nodes_without_attributes_bytes() -> bytes:
    nodes = [helper.make_node("Relu" if i % 3 else "Softmax", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}",
                              **({"axis": -1} if i % 3 == 0 else {}))
             for i in range(80)]  # more than 64 nodes: items held weakly
    nodes.append(helper.make_node("Relu", ["t80"], ["t81"], name="long" + "x" * 5000))  # over eager_span
    nodes.append(helper.make_node("Source", [], ["s"], name="no_input", domain="test"))  # no input either
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t0", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("t81", onnx.TensorProto.FLOAT, [1])])
    return helper.make_model(graph).SerializeToString()


def test_an_absent_attribute_field_reads_as_the_nodes_own_empty_sequence(scanners):
    m = irmodel.ModelProto.FromString(_nodes_without_attributes_bytes())
    for i, node in enumerate(m.graph.node):
        attrs = node.attribute
        assert attrs is node.attribute and attrs._owner is node and attrs._name == "attribute"
        assert attrs._cls is irmodel.AttributeProto
        assert len(attrs) == (1 if i % 3 == 0 and i < 80 else 0) and list(attrs) == list(node.attribute)
        inputs = node.input
        assert inputs is node.input and type(inputs) is RepeatedScalars and inputs._owner is node
        assert inputs._check is irmodel.NodeProto().input._check
        if scanners and i < 80:  # a short node: the list its scan made, iterated in C
            assert type(attrs) is MessageList
        assert node._start >= 0  # reading changed nothing
    assert m.SerializeToString() == _nodes_without_attributes_bytes()


@pytest.mark.parametrize("node_index", [1, 2, 80, 81])  # plain nodes without attributes; the long one; no input
def test_an_attribute_added_through_the_empty_sequence_encodes_as_protobuf(scanners, node_index):
    data = _nodes_without_attributes_bytes()
    m = irmodel.ModelProto.FromString(data)
    ref = onnx.load_from_string(data)
    attrs = m.graph.node[node_index].attribute  # the node itself is not held here: the sequence keeps it
    attrs.append(irmodel.helper.make_attribute("alpha", 0.5))
    ref.graph.node[node_index].attribute.append(helper.make_attribute("alpha", 0.5))
    if node_index == 81:  # the node without input: its empty input list takes one too
        m.graph.node[node_index].input.append("x")
        ref.graph.node[node_index].input.append("x")
    assert [a.name for a in m.graph.node[node_index].attribute] == ["alpha"]
    assert m.SerializeToString() == ref.SerializeToString()
    others = [n for i, n in enumerate(m.graph.node) if i != node_index and i % 3]
    assert all(len(n.attribute) == 0 for n in others) and list(m.graph.node[-1].input) == (["x"] if node_index == 81 else [])
