"""Unchanged items of a repeated message field are copied as runs, with exact bytes.

The encoder joins unchanged items that lie back to back in the source, each behind the
tag and length it would write, into one copied run.  Whatever the edit around them (an
item changed, removed, added, an item whose length was written longer than it needs),
the output must be what protobuf writes for the same edit.
"""

from __future__ import annotations

import pytest
from onnx import ModelProto, helper as oh

import irmodel
from wirefmt import encoder
from wirefmt.varint import encode_varint


def _model_bytes(n: int) -> bytes:
    nodes = [oh.make_node("Relu", [f"x{i}"], [f"x{i + 1}"], name=f"n{i}") for i in range(n)]
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x0", 1, [2])],
                          [oh.make_tensor_value_info(f"x{n}", 1, [2])])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)]).SerializeToString()


def _both(data: bytes, edit) -> tuple[bytes, bytes]:
    ours = irmodel.loads(data)
    edit(ours)
    ref = ModelProto()
    ref.ParseFromString(data)
    edit(ref)
    return encoder.dumps_message(ours), ref.SerializeToString()


def _rename(i):
    def edit(m):
        m.graph.node[i].name = "changed"
    return edit


def _drop(i):
    def edit(m):
        del m.graph.node[i]
    return edit


def _add_value_info(m):
    vi = m.graph.value_info.add()
    vi.name = "x1"


def _graph_name(m):
    m.graph.name = "renamed"


@pytest.mark.parametrize("edit", [_graph_name, _add_value_info, _rename(0), _rename(7), _rename(19),
                                  _drop(0), _drop(10), _drop(19)],
                         ids=["graph name", "new value_info", "first node", "middle node", "last node",
                              "drop first", "drop middle", "drop last"])
def test_edits_around_unchanged_runs_write_what_protobuf_writes(edit):
    ours, ref = _both(_model_bytes(20), edit)
    assert ours == ref


def test_read_but_unchanged_items_are_still_copied_exactly():
    data = _model_bytes(20)
    m = irmodel.loads(data)
    names = [n.name for n in m.graph.node]  # every item read (held weakly), none changed
    m.graph.name = "renamed"
    ref = ModelProto()
    ref.ParseFromString(data)
    ref.graph.name = "renamed"
    assert names[3] == "n3"
    assert encoder.dumps_message(m) == ref.SerializeToString()


def test_an_item_behind_a_longer_length_than_needed_is_written_canonically():
    """Node 5's length written in two bytes (valid protobuf): the run breaks there and the
    node gets the one-byte length protobuf writes when it re-serializes the graph."""
    data = _model_bytes(12)
    model = irmodel.loads(data)
    graph_start, graph_end = model.graph._start, model.graph._end
    spans = model.graph.node._spans
    a, b = spans[10], spans[11]  # node 5's payload
    assert b - a < 128 and data[a - 1] == b - a and data[a - 2] == 0x0A
    long_len = bytes([0x80 | (b - a), 0x00])
    graph = data[graph_start:a - 1] + long_len + data[a:graph_end]
    # The graph's own length grows by one byte: its header is written anew (tag 7, LEN).
    tag_at = graph_start - len(encode_varint(graph_end - graph_start)) - 1
    assert data[tag_at] == 0x3A
    source = data[:tag_at] + b"\x3a" + encode_varint(len(graph)) + graph + data[graph_end:]
    ref = ModelProto()
    ref.ParseFromString(source)
    ref.graph.name = "renamed"
    assert ref.graph.node[5].name == "n5"
    ours = irmodel.loads(source)  # node 5 left unread: it is planned from its span
    ours.graph.name = "renamed"
    assert encoder.dumps_message(ours) == ref.SerializeToString()
