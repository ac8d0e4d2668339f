"""Items read from bytes that are not their owner's (`wirefmt.adopt_items`) and where a
list's items are (`wirefmt.item_sources`).

An adopted list must behave as any list read from a file: the same items, every edit
(to an item, to the list, to the owner) reaching the encoding, error paths that name the
owner, nesting measured when the items are written deeper than they were read; and
`item_sources` must name every item whose bytes are stale.  Expected encodings are the
reference's (onnx builds the same model).
"""

from __future__ import annotations

import onnx
import pytest
from onnx import helper as oh

import irmodel
import wirefmt
from irmodel import GraphProto, NodeProto
from wirefmt import DecodeError, EncodeError, adopt_items, item_sources


def _nodes(count: int, prefix: str = "n") -> list:
    return [oh.make_node("Relu", [f"{prefix}{i}"], [f"{prefix}{i + 1}"], name=f"{prefix}{i}") for i in range(count)]


def _model(nodes: list) -> onnx.ModelProto:
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("n0", onnx.TensorProto.FLOAT, [1])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _records(nodes: list) -> bytes:
    """The nodes as GraphProto ``node`` records, encoded by the reference."""
    return onnx.GraphProto(node=nodes).SerializeToString()


@pytest.mark.parametrize("count", [3, 200])  # a short list (held strongly) and a long one (weakly)
def test_adopted_items_read_and_encode_as_the_reference_model(count):
    m = irmodel.loads(_model(_nodes(2, "old")).SerializeToString())
    new = _nodes(count)
    adopt_items(m.graph, "node", _records(new), m.graph._depth)
    assert [n.name for n in m.graph.node] == [n.name for n in new]
    assert irmodel.dumps(m) == _model(new).SerializeToString()


@pytest.mark.parametrize("count", [3, 200])
def test_edits_after_adoption_reach_the_encoding(count):
    m = irmodel.loads(_model(_nodes(1, "old")).SerializeToString())
    adopt_items(m.graph, "node", _records(_nodes(count)), m.graph._depth)
    expected = _model(_nodes(count))
    m.graph.node[1].name = "renamed"  # an item
    expected.graph.node[1].name = "renamed"
    assert irmodel.dumps(m) == expected.SerializeToString()
    m.graph.node.append(NodeProto(op_type="Abs", input=["y"], output=["z"]))  # the list
    expected.graph.node.append(onnx.helper.make_node("Abs", ["y"], ["z"]))
    m.graph.name = "g2"  # the owner
    expected.graph.name = "g2"
    assert irmodel.dumps(m) == expected.SerializeToString()


def test_an_item_edited_while_unreferenced_is_kept():
    m = irmodel.loads(_model(_nodes(1, "old")).SerializeToString())
    adopt_items(m.graph, "node", _records(_nodes(200)), m.graph._depth)
    m.graph.node[150].op_type = "Abs"  # a temporary: only the list can keep it
    expected = _model(_nodes(200))
    expected.graph.node[150].op_type = "Abs"
    assert irmodel.dumps(m) == expected.SerializeToString()


def test_empty_records_leave_no_items():
    m = irmodel.loads(_model(_nodes(3)).SerializeToString())
    adopt_items(m.graph, "node", b"", m.graph._depth)
    assert len(m.graph.node) == 0
    assert irmodel.dumps(m) == _model([]).SerializeToString()


def test_error_paths_name_the_owner():
    m = irmodel.loads(_model([]).SerializeToString())
    bad = b"\x0a\x02\x08\x80"  # one node record whose only field is a truncated varint
    adopt_items(m.graph, "node", bad, m.graph._depth)
    with pytest.raises(DecodeError) as caught:
        m.graph.node[0].op_type
    assert "graph.node[0]" in str(caught.value) or caught.value.path.endswith("graph.node[0]")


@pytest.mark.parametrize("data", [
    onnx.GraphProto(name="g", node=_nodes(1)).SerializeToString(),  # another field as well
    b"\x0a\x05\x0a\x01",  # a record running past the end
    b"\xfa\xff\x03\x00",  # an unknown field
])
def test_records_of_anything_else_are_refused_and_nothing_changes(data):
    m = irmodel.loads(_model(_nodes(2)).SerializeToString())
    before = irmodel.dumps(m)
    with pytest.raises(DecodeError):
        adopt_items(m.graph, "node", data, m.graph._depth)
    assert irmodel.dumps(m) == before


def test_only_repeated_message_fields_adopt():
    with pytest.raises(ValueError, match="not a repeated message field"):
        adopt_items(GraphProto(), "name", b"", 0)
    with pytest.raises(ValueError, match="not a repeated message field"):
        item_sources(GraphProto(), "name")


def _nested(levels: int) -> bytes:
    """A NodeProto whose attribute ``g`` nests graphs ``levels`` deep (node, attribute,
    graph, node, ...), built by the reference."""
    node = oh.make_node("Relu", ["a"], ["b"])
    for _ in range(levels):
        node = oh.make_node("If", ["c"], ["b"], then_branch=oh.make_graph([node], "b", [], []))
    return node.SerializeToString()


def test_items_written_deeper_than_read_are_measured():
    """Items read at depth 1 written 15 levels deeper: the encoder measures them and
    refuses what protobuf could not read back, as for any moved item."""
    holder = GraphProto()
    record = _nested(30)  # 1 + 30 * 3 levels below the list
    adopt_items(holder, "node", b"\x0a" + wirefmt.encode_varint(len(record)) + record, 0)
    assert GraphProto.FromString(holder.SerializeToString()) == holder  # at its own depth: fine
    deep = irmodel.NodeProto()
    inner = deep
    for _ in range(4):  # attribute/graph/node levels above: the items end past the limit
        a = inner.attribute.add(name="g", type=irmodel.AttributeProto.GRAPH)
        inner = a.g.node.add(op_type="If")
    a = inner.attribute.add(name="g", type=irmodel.AttributeProto.GRAPH)
    a.g.CopyFrom(holder)
    with pytest.raises(EncodeError, match="nesting deeper"):
        deep.SerializeToString()


def test_item_sources_of_an_exact_and_of_a_changed_owner():
    data = _model(_nodes(200)).SerializeToString()
    m = irmodel.loads(data)
    exact = item_sources(m.graph, "node")
    assert exact is not None and exact.changed == [] and len(exact.spans) == 400
    m.graph.name = "renamed"  # the owner changes, the list does not
    found = item_sources(m.graph, "node")
    assert found is not None and found.spans == exact.spans and found.changed == []
    m.graph.node[7].name = "x"
    m.graph.node[150].input[0] = "y"
    keep = m.graph.node[20]  # read, unchanged, still referenced: not changed
    assert keep.name == "n20"
    found = item_sources(m.graph, "node")
    assert found is not None and found.changed == [7, 150]
    m.graph.node.append(NodeProto())
    assert item_sources(m.graph, "node") is None  # the list changed: spans say nothing


def test_item_sources_of_short_lists_and_absent_fields():
    m = irmodel.loads(_model(_nodes(3)).SerializeToString())
    m.graph.name = "renamed"
    assert [n.name for n in m.graph.node] == ["n0", "n1", "n2"]  # read: held strongly
    m.graph.node[1].op_type = "Abs"
    found = item_sources(m.graph, "node")
    assert found is not None and found.changed == [1]
    assert item_sources(m.graph, "value_info") == (b"", [], [])
    assert item_sources(GraphProto(node=[NodeProto()]), "node") is None  # made in memory


def test_item_sources_of_adopted_items_are_their_own_buffer():
    m = irmodel.loads(_model(_nodes(2, "old")).SerializeToString())
    data = _records(_nodes(5))
    adopt_items(m.graph, "node", data, m.graph._depth)
    found = item_sources(m.graph, "node")
    assert found is not None and found.buffer == data and found.changed == []
    starts, ends = found.spans[0::2], found.spans[1::2]
    assert [NodeProto.FromString(data[a:b]).name for a, b in zip(starts, ends)] == [f"n{i}" for i in range(5)]
