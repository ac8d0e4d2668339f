"""The byte reader layer (`irmodel._wireview`) against the reference: each reader's record is
what onnx's protobuf message says, on the whole node corpus; on any bytes a reader answers a
record or None and never raises; the one switch, the one threshold and the tracer."""

from __future__ import annotations

import os

import onnx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from onnx import helper as oh

import irmodel
from irmodel._wireview import fastpath, fields, graphscan, nodes, patterns, tensorscan
from irmodel._wireview.fastpath import trace, use_fast_paths
from wirefmt.message import items_in_buffer
from wirefmt.varint import encode_varint

from repo_paths import REPO as ROOT  # noqa: E402
_NOT_PLAIN = {onnx.AttributeProto.TENSOR, onnx.AttributeProto.GRAPH, onnx.AttributeProto.TENSORS,
              onnx.AttributeProto.GRAPHS, onnx.AttributeProto.SPARSE_TENSOR, onnx.AttributeProto.SPARSE_TENSORS,
              onnx.AttributeProto.TYPE_PROTO, onnx.AttributeProto.TYPE_PROTOS}


# -- field numbers: the reference's --------------------------------------------------------

@pytest.mark.parametrize("type_name", ["GraphProto", "NodeProto", "AttributeProto", "TensorProto", "ModelProto",
                                       "ValueInfoProto", "OperatorSetIdProto"])
def test_every_field_number_is_the_references(type_name):
    descriptor = getattr(onnx, type_name).DESCRIPTOR
    for f in descriptor.fields:
        assert fields.number(type_name, f.name) == f.number, (type_name, f.name)


def test_named_tags_are_the_references():
    def tag(message, name, wire):
        return message.DESCRIPTOR.fields_by_name[name].number << 3 | wire

    assert fields.NODE_OP_TYPE == tag(onnx.NodeProto, "op_type", 2)
    assert fields.NODE_DOMAIN == tag(onnx.NodeProto, "domain", 2)
    assert fields.GRAPH_NODE == tag(onnx.GraphProto, "node", 2)
    assert fields.ATTR_F == tag(onnx.AttributeProto, "f", 5)
    assert fields.ATTR_TYPE_BYTES == encode_varint(tag(onnx.AttributeProto, "type", 0))
    assert fields.TENSOR_RAW_DATA_TAG == tag(onnx.TensorProto, "raw_data", 2)
    assert fields.MODEL_GRAPH == tag(onnx.ModelProto, "graph", 2)
    assert fields.GRAPH_NUMBERS == {f.number for f in onnx.GraphProto.DESCRIPTOR.fields}


def test_patterns_are_compiled_in_one_module():
    """Every pattern over wire bytes is made by `patterns.compiled` (one cache): no other
    module compiles one (a byte class of continuation bytes is wire syntax)."""
    found = []
    for base, _dirs, files in os.walk(os.path.join(ROOT, "irmodel")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(base, name)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                if "compiled_pattern(" in text or "\\x80-\\xff" in text:
                    found.append(os.path.relpath(path, ROOT))
    assert sorted(found) == [os.path.join("irmodel", "_files", "codecache.py"),
                             os.path.join("irmodel", "_wireview", "patterns.py")]


# -- records against the reference's messages ---------------------------------------------

def _graph_items(data: bytes, field: str):
    model = irmodel.loads(data)
    if not model.HasField("graph"):
        return None
    return items_in_buffer(model.graph, field)


def test_read_node_gives_the_references_node_on_the_corpus(node_corpus):
    read = declined = 0
    for name, data in node_corpus:
        found = _graph_items(data, "node")
        assert found is not None, name
        src, spans = found
        ref = onnx.ModelProto.FromString(data).graph.node
        for k in range(len(spans) >> 1):
            node = nodes.read_node(src, spans[2 * k], spans[2 * k + 1], k)
            if node is None:
                declined += 1
                continue
            read += 1
            r = ref[k]
            assert (node.inputs, node.outputs, node.op_type, node.domain) == (
                list(r.input), list(r.output), r.op_type, r.domain), name
            assert node.plain == all(a.type not in _NOT_PLAIN for a in r.attribute), name
            assert nodes.node_op(src, spans[2 * k], spans[2 * k + 1], 2) is None or \
                nodes.node_op(src, spans[2 * k], spans[2 * k + 1], 2) == (r.op_type, r.domain)
    assert read > 2000 and declined < read // 10, (read, declined)


def test_initializer_heads_and_values_give_the_references_tensors():
    import numpy as np

    tensors = []
    for i in range(12):
        values = np.arange(i % 4 + 1, dtype=np.int64)
        tensors.append(oh.make_tensor(f"w{i}", onnx.TensorProto.INT64, values.shape,
                                      values.tobytes() if i % 2 else values.tolist(), raw=bool(i % 2)))
    tensors.append(oh.make_tensor("é", onnx.TensorProto.FLOAT, [2, 2], np.ones(4, np.float32).tobytes(), raw=True))
    graph = oh.make_graph([], "g", [], [], initializer=tensors)
    found = _graph_items(oh.make_model(graph).SerializeToString(), "initializer")
    assert found is not None
    src, spans = found
    heads = list(tensorscan.initializer_heads(src, spans))
    for t, head, i in zip(tensors, heads, range(len(tensors))):
        start, end = spans[2 * i], spans[2 * i + 1]
        if t.raw_data:  # dims, data_type, name, raw_data: the layout the head pattern reads
            assert head is not None and head.name == t.name
        else:
            assert head is None  # typed data after the name
        values = tensorscan.tensor_values(src, start, end, int64_data=True)
        assert values is not None
        assert (values.dims, values.data_type) == (list(t.dims), t.data_type)
        assert values.int64_data == list(t.int64_data)
        assert (values.raw is None) == (not t.raw_data)
        assert tensorscan.tensor_header(src, start, end, 2) == (t.name, t.data_type, list(t.dims))
        kind = tensorscan.tensor_kind(src, start, end)
        assert (kind is not None) == bool(t.raw_data) and (kind is None or kind[0] == t.name)


def test_insertion_point_is_after_the_last_field_up_to_value_info():
    graph = oh.make_graph([oh.make_node("Relu", ["x"], ["y"])], "g",
                          [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    data = graph.SerializeToString()
    at = graphscan.insertion_point(data, 0, len(data))
    assert at == len(data)  # nothing numbered after value_info
    padded = bytes((0x0A, 0x80, 0x00)) + data  # a node of a padded length: not canonical
    assert graphscan.insertion_point(padded, 0, len(padded)) is None


def _attribute_fields(*attrs) -> bytes:
    """The node's attribute fields (field 5) of reference AttributeProtos."""
    out = b""
    for a in attrs:
        body = a.SerializeToString()
        out += bytes([fields.NODE_ATTRIBUTE]) + encode_varint(len(body)) + body
    return out


def test_attribute_kinds_reads_a_constants_tensor_only_when_asked():
    """A Constant's ``value`` is read (with ``tensors``) into the tensor's kind key, the one
    `tensorscan.tensor_kind` gives: dims, data_type and raw_data's length, never the
    values or the name."""
    def value(t):
        return _attribute_fields(oh.make_attribute("value", t))

    one = value(onnx.TensorProto(data_type=1, raw_data=b"\x00\x00\x00?"))
    two = value(onnx.TensorProto(data_type=1, raw_data=b"\xf3\x04\xb5?", name="c"))
    assert nodes.attribute_kinds(one) is None  # without ``tensors``: not plain
    kinds = nodes.attribute_kinds(one, tensors=True)
    assert kinds is not None and kinds == nodes.attribute_kinds(two, tensors=True)
    (name, attr_type, values, ref), = kinds
    assert (name, attr_type, ref) == ("value", onnx.AttributeProto.TENSOR, 0)
    t_body = onnx.TensorProto(data_type=1, raw_data=b"abcd").SerializeToString()
    assert values == ((fields.ATTR_T, True, tensorscan.tensor_kind(t_body, 0, len(t_body), named=False)[1]),)
    # other shapes, types or lengths: other keys
    for other in (onnx.TensorProto(data_type=1, raw_data=b"\x00" * 8, dims=[2]),
                  onnx.TensorProto(data_type=11, raw_data=b"\x00" * 8), onnx.TensorProto(data_type=1)):
        assert nodes.attribute_kinds(value(other), tensors=True) not in (None, kinds)
    # declined: typed data, external data, malformed packed dims, FLOAT6 (rules read its bytes)
    tensor = b"\x0a\x01\x81" + onnx.TensorProto(data_type=1, raw_data=b"abcd").SerializeToString()  # dims cut
    attr = b"\x0a\x05value" + bytes([fields.ATTR_T, len(tensor)]) + tensor + b"\xa0\x01\x04"
    bad_dims = bytes([fields.NODE_ATTRIBUTE, len(attr)]) + attr
    good = tensor.replace(b"\x81", b"\x01")
    assert nodes.attribute_kinds(bad_dims.replace(tensor, good), tensors=True) is not None
    for declined in (value(onnx.TensorProto(data_type=1, float_data=[1.0])),
                     value(onnx.TensorProto(data_type=1, raw_data=b"abcd", data_location=1)),
                     bad_dims,
                     value(onnx.TensorProto(data_type=27, raw_data=b"\x3f", dims=[1]))):
        assert nodes.attribute_kinds(declined, tensors=True) is None, declined


def test_tensor_kind_of_an_unnamed_tensor():
    """An initializer's tensor needs a non-empty name; an attribute's (``named=False``) may
    have none (its name is then None)."""
    for t, named, unnamed in ((onnx.TensorProto(data_type=1, raw_data=b"abcd"), None, None),
                              (onnx.TensorProto(data_type=1, raw_data=b"abcd", name="w"), "w", "w")):
        data = t.SerializeToString()
        kind = tensorscan.tensor_kind(data, 0, len(data))
        assert (kind and kind[0]) == named
        assert tensorscan.tensor_kind(data, 0, len(data), named=False)[0] == unnamed


# -- never raising ------------------------------------------------------------------------

_READERS = [
    lambda b: nodes.read_node(b, 0, len(b)),
    lambda b: nodes.node_op(b, 0, len(b), 2),
    lambda b: nodes.attribute_kinds(b),
    lambda b: nodes.attribute_kinds(b, tensors=True),
    lambda b: nodes.attribute_items(b),
    lambda b: tensorscan.tensor_header(b, 0, len(b), 2),
    lambda b: tensorscan.tensor_kind(b, 0, len(b)),
    lambda b: tensorscan.tensor_kind(b, 0, len(b), named=False),
    lambda b: tensorscan.tensor_values(b, 0, len(b), True),
    lambda b: list(tensorscan.initializer_heads(b, [0, len(b)])),
    lambda b: tensorscan.unnamed_bytes(b),
    lambda b: graphscan.insertion_point(b, 0, len(b)),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=64) | st.lists(st.sampled_from(
    [b"\x0a\x01x", b"\x12\x01y", b"\x22\x04Relu", b"\x2a\x05\x0a\x01a\x18\x01", b"\x08\x02", b"\x10\x07",
     b"\x42\x01w", b"\x4a\x02\x00\x00", b"\xa0\x01\x02", b"\x80", b"\xff\xff", b"\x0b", b"\x3a\x00"]),
    max_size=8).map(b"".join))
def test_readers_answer_a_record_or_none_and_never_raise(data):
    for read in _READERS:
        read(data)  # an exception fails the test


# -- the switch, the threshold, the tracer ------------------------------------------------

def _relu_chain(n: int, odd_at: int | None = None) -> bytes:
    node_list = [oh.make_node("Relu", [f"v{i}"], [f"v{i + 1}"]) for i in range(n)]
    graph = oh.make_graph(node_list, "g", [oh.make_tensor_value_info("v0", onnx.TensorProto.FLOAT, [2])],
                          [oh.make_tensor_value_info(f"v{n}", onnx.TensorProto.FLOAT, [2])])
    data = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)]).SerializeToString()
    if odd_at is None:
        return data
    model = irmodel.loads(data)
    node = model.graph.node[odd_at]
    node.doc_string = "x" * 200  # a field of 128 bytes or more: not the node pattern's
    return irmodel.dumps(model)


def test_items_follow_the_switch_and_the_threshold():
    model = irmodel.loads(_relu_chain(10))
    assert fastpath.items(model.graph, "node") is None  # 10 < FAST_FROM
    use_fast_paths(True, threshold=10)
    assert fastpath.items(model.graph, "node") is not None
    assert fastpath.items(model.graph, "node", 9) is None
    use_fast_paths(False, threshold=1)
    assert fastpath.items(model.graph, "node") is None and not fastpath.enabled(1000)
    use_fast_paths()
    assert fastpath.enabled(fastpath.FAST_FROM) and not fastpath.enabled(fastpath.FAST_FROM - 1)


def test_the_tracer_says_which_node_took_the_message_path():
    data = _relu_chain(80, odd_at=41)
    with trace() as log:
        irmodel.check_model(data)
        irmodel.infer_shapes(irmodel.loads(data))
    assert [(d.reader, d.index) for d in log] == [("node", 41), ("node", 41)]
    assert "pattern" in log[0].reason
    with trace() as quiet:
        use_fast_paths(False)
        irmodel.check_model(data)
    assert quiet == []


def test_patterns_compile_once_per_process():
    first = patterns.compiled("node")
    assert patterns.compiled("node") is first
    assert first.fullmatch(oh.make_node("Relu", ["a"], ["b"]).SerializeToString()) is not None
