"""The streaming census of `inspect` (plain nodes read from their bytes, `irmodel._wireview.nodescan`)
gives exactly the summary of the full walk, on the reference corpus and on every kind of
node the fast path must hand back (subgraphs, external tensors, odd or broken bytes)."""

from __future__ import annotations

import onnx
import onnx.external_data_helper
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from onnx import helper as oh

import irmodel
from irmodel._wireview.nodes import node_op
from irmodel._report.summary import Census, summarize
from wirefmt import DecodeError

from summary_both_ways import summaries_both_ways


def _assert_same(data: bytes) -> None:
    streamed, full = summaries_both_ways(data)
    assert streamed == full


def test_streamed_summary_equals_the_full_walk_on_the_node_corpus(node_corpus):
    mismatched = [name for name, data in node_corpus
                  if (lambda s: s[0] != s[1])(summaries_both_ways(data))]
    assert mismatched == []
    # and the fast path was taken: most of the corpus is plain nodes in a main graph
    streamed = sum(Census(irmodel.loads(data)).streamed for _, data in node_corpus)
    assert streamed >= len(node_corpus)


def test_streamed_summary_equals_the_full_walk_on_the_wheel_models(data_corpus):
    models = [(p, d) for p, t, d in data_corpus if t == "ModelProto"]
    assert models
    assert [p for p, d in models if (lambda s: s[0] != s[1])(summaries_both_ways(d))] == []


def test_streamed_histogram_matches_the_reference_nodes(node_corpus, fast_paths):
    for name, data in node_corpus[::20]:
        ref = onnx.load_from_string(data)
        expected: dict = {}
        for n in ref.graph.node:
            key = (n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type
            expected[key] = expected.get(key, 0) + 1
        assert summarize(irmodel.loads(data))["op_types"] == dict(
            sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))), name


def _model(nodes, initializer=(), functions=()) -> onnx.ModelProto:
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                      [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])], initializer=list(initializer))
    return oh.make_model(g, functions=list(functions))


def _external_constant(name: str, location: str = "w.bin") -> onnx.NodeProto:
    t = oh.make_tensor("c", onnx.TensorProto.FLOAT, [4], b"\0" * 16, raw=True)
    onnx.external_data_helper.set_external_data(t, location, offset=0, length=16)
    t.ClearField("raw_data")
    return oh.make_node("Constant", [], [name], value=t)


def _if_node() -> onnx.NodeProto:
    branch = oh.make_graph([oh.make_node("Relu", ["x"], ["r"]), _external_constant("k", "sub.bin")], "b", [],
                           [oh.make_tensor_value_info("r", onnx.TensorProto.FLOAT, [2])])
    return oh.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=branch)


def test_nodes_the_fast_path_hands_back_are_counted_as_the_full_walk_counts_them():
    sparse = oh.make_sparse_tensor(oh.make_tensor("v", onnx.TensorProto.FLOAT, [1], [1.0]),
                                   oh.make_tensor("i", onnx.TensorProto.INT64, [1], [0]), [3])
    nodes = [oh.make_node("Relu", ["x"], ["a"]), _if_node(), _external_constant("c1"),
             oh.make_node("Constant", [], ["s"], sparse_value=sparse),
             oh.make_node("Custom", ["a"], ["y"], domain="my.domain", alpha=1.0, perm=[0, -1]),
             oh.make_node("Loop", ["m", "c"], ["z"], body=oh.make_graph([], "body", [], []))]
    data = _model(nodes).SerializeToString()
    streamed, full = summaries_both_ways(data)
    assert streamed == full
    assert streamed["subgraph_count"] == 3 and streamed["op_types"]["my.domain::Custom"] == 1
    assert {e["location"] for e in streamed["external_data"]} == {"w.bin", "sub.bin"}
    census = Census(irmodel.loads(data))
    assert census.streamed == 2  # Relu and Custom; the others were walked


def test_data_location_set_to_default_is_still_the_same_summary():
    t = oh.make_tensor("c", onnx.TensorProto.FLOAT, [1], [1.0])
    t.data_location = onnx.TensorProto.DEFAULT
    _assert_same(_model([oh.make_node("Constant", [], ["y"], value=t)]).SerializeToString())


def _node_bytes(*fields: bytes) -> bytes:
    body = b"".join(fields)
    return b"\x0a" + _varint(len(body)) + body


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 127
        n >>= 7
        if n:
            out.append(b | 128)
        else:
            out.append(b)
            return bytes(out)


def _ld(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _model_with_node_bytes(node: bytes) -> bytes:
    graph = _ld(1, node) + _ld(2, b"g")
    return _varint(1 << 3) + b"\x08" + _ld(7, graph)


@pytest.mark.parametrize("node", [
    _ld(4, b"Relu") + _ld(4, b"Sigmoid"),                   # the last op_type wins
    _ld(4, b"Relu") + b"\x20\x05",                          # op_type as a varint: an unknown field
    _ld(4, b"Re\xfflu"),                                    # invalid UTF-8 (proto2: kept as bytes)
    _ld(7, b"ai.onnx") + _ld(4, b"Add"),                    # ai.onnx is the default domain
    _ld(7, b"com.x") + _ld(4, b"Op") + _ld(7, b""),         # the last domain wins, empty
    _ld(4, b"Relu") + _ld(5, _ld(1, b"a") + b"\xa0\x01\x02"),   # a two-byte tag (type)
    _ld(4, b"Relu") + b"\x9a\x10\x00",                      # an unknown field with a long tag
    _ld(4, b"Relu") + b"\x0b\x0c",                          # an empty group
    _ld(4, b"Relu") + b"\x0b",                              # a group never closed
    _ld(4, b"Relu") + b"\x0c",                              # an end-group tag alone
    _ld(4, b"Relu") + b"\x07",                              # wire type 7
    _ld(4, b"Relu") + b"\x00\x00",                          # field number 0
    _ld(4, b"Relu") + b"\x22\x05ab",                        # a length past the node's end
    _ld(4, b"Relu") + b"\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # an 11-byte varint
    _ld(4, b"Relu") + _ld(5, b"\x2a\x02\x70\x01"),          # t with data_location EXTERNAL
    _ld(4, b"Relu") + _ld(5, b"\x2a\x03\x70\x80\x00"),      # data_location 0, in two bytes
    _ld(4, b"Relu") + _ld(5, b"\x2a\x02\x70"),              # t whose varint is cut
    _ld(4, b"Relu") + _ld(5, b"\x32\x00"),                  # an empty graph attribute
    _ld(4, b"Relu") + _ld(5, b"\x30\x01"),                  # g as a varint: unknown, not a graph
    _ld(4, b"Relu") + _ld(5, b"\x52\x01\x07"),              # tensors holding a broken tensor
    _ld(4, b"Relu") + _ld(5, b"\x15\x00\x00"),              # a cut float attribute
])
def test_odd_or_broken_nodes_give_the_full_walks_answer_or_its_error(node):
    _assert_same(_model_with_node_bytes(node))


def test_node_op_reads_a_plain_node_and_refuses_what_it_does_not_answer():
    data = _ld(1, b"x") + _ld(2, b"y") + _ld(3, b"n") + _ld(4, b"Relu") + _ld(5, _ld(1, b"alpha") + b"\x15\0\0\x80\x3f")
    assert node_op(data, 0, len(data), 2) == ("Relu", "")
    assert node_op(data, 0, len(data) - 1, 2) is None  # cut inside the attribute
    graph_attr = _ld(4, b"If") + _ld(5, _ld(6, b""))
    assert node_op(graph_attr, 0, len(graph_attr), 2) is None


def test_a_changed_model_is_walked_in_full():
    m = irmodel.loads(_model([oh.make_node("Relu", ["x"], ["y"])]).SerializeToString())
    m.graph.node[0].op_type = "Sigmoid"
    census = Census(m)
    assert census.streamed == 0 and census.main_ops == {"Sigmoid": 1}


_BASE = _model([oh.make_node("Relu", ["x"], ["a"]), _external_constant("c1"), _if_node(),
                oh.make_node("Transpose", ["a"], ["y"], perm=[1, 0], name="t")]).SerializeToString()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_BASE) - 1), st.integers(0, 255)), min_size=1, max_size=4))
def test_streamed_and_full_agree_on_mutated_bytes(edits):
    data = bytearray(_BASE)
    for pos, value in edits:
        data[pos] = value
    try:
        model = irmodel.loads(bytes(data))
        model.graph  # noqa: B018  (a broken top level is not the census' business)
    except DecodeError:
        return
    del model
    streamed, full = summaries_both_ways(bytes(data))
    assert streamed == full


def test_a_submessage_that_fails_to_decode_fails_again_on_the_next_read():
    # Before, the failed scan had already taken the field's spans: the second read found
    # the field absent and returned a default TensorProto.
    data = _model_with_node_bytes(_ld(4, b"Relu") + _ld(5, _ld(5, b"\x00\x00")))
    attr = irmodel.loads(data).graph.node[0].attribute[0]
    for _ in range(2):
        with pytest.raises(DecodeError):
            attr.t  # noqa: B018
    assert attr.HasField("t")


def test_items_in_buffer_is_the_exact_buffer_and_the_items_spans_or_none():
    from wirefmt import items_in_buffer
    from wirefmt.message import exact_span, item_spans

    nodes = [oh.make_node("Relu", [f"x{i}"], [f"x{i + 1}"], name=f"r{i}") for i in range(3)]
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x0", 1, [2])],
                          [oh.make_tensor_value_info("x3", 1, [2])])
    data = oh.make_model(graph).SerializeToString()
    g = irmodel.loads(data).graph
    src, spans = items_in_buffer(g, "node")
    assert src is exact_span(g)[0] and spans == item_spans(g, "node") and len(spans) == 6
    assert [bytes(src[spans[2 * i]:spans[2 * i + 1]]) for i in range(3)] == [
        n.SerializeToString() for n in onnx.load_from_string(data).graph.node]
    assert items_in_buffer(g, "initializer") == (src, [])
    with pytest.raises(ValueError):
        items_in_buffer(g, "name")  # not a repeated message field
    g.node[1].name = "edited"  # no longer exactly its bytes: the caller takes the message path
    assert items_in_buffer(g, "node") is None
    assert items_in_buffer(irmodel.GraphProto(name="built"), "node") is None
