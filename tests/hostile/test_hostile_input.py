"""Malformed and hostile input: every kind raises DecodeError with offset and path.

Never IndexError, RecursionError, MemoryError, a hang, or an allocation sized by a
length read from the input.
"""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import irmodel
from corpus_mutations import draw_mutated_model_bytes
from irmodel import DecodeError
from wirefmt import iter_fields
from wirefmt.varint import encode_varint


def _tag(number: int, wt: int) -> bytes:
    return encode_varint(number << 3 | wt)


def _len_field(number: int, body: bytes) -> bytes:
    return _tag(number, 2) + encode_varint(len(body)) + body


def full_walk(msg) -> None:
    """Decode everything: the dict form reads every field of every message."""
    irmodel.to_dict(msg)
    for f, value in msg.ListFields():
        if f.kind == 11:
            for child in (value if f.repeated else [value]):
                full_walk(child)
    msg._touch()
    irmodel.dumps(msg)


def decode_error(data: bytes, type_name: str = "ModelProto") -> DecodeError:
    with pytest.raises(DecodeError) as info:
        full_walk(irmodel.loads(data, type_name))
    return info.value


@pytest.mark.parametrize("data, reason, offset", [
    (_tag(1, 0), "truncated varint", 1),
    (_tag(1, 0) + b"\xff" * 11, "varint longer than 10 bytes", 1),
    (_tag(2, 2) + b"\x05ab", "length 5 but only 2 bytes remain", 1),
    (b"\x0e\x00", "invalid wire type 6", 0),
    (b"\x0f\x00", "invalid wire type 7", 0),
    (b"\x00\x01", "field number 0", 0),
    (encode_varint((1 << 29) << 3) + b"\x00", "above the maximum", 0),
    (_tag(300, 3) + _tag(301, 4), "does not match start-group 300", 2),
    (_tag(300, 4), "unexpected end-group", 0),
    (_tag(300, 3) + _tag(1, 0) + b"\x01", "is not closed", 4),  # at the end of the input
    (_tag(300, 5) + b"\x01\x02", "truncated fixed32", 2),
    (_tag(300, 1) + b"\x01\x02", "truncated fixed64", 2),
])
def test_malformed_top_level_raises_decode_error_with_offset(data, reason, offset):
    err = decode_error(data)
    assert reason in str(err)
    assert err.offset == offset
    assert err.path == "ModelProto"


def test_error_path_names_the_nested_field():
    bad_attribute = _len_field(1, b"x") + _tag(3, 0)  # truncated varint in AttributeProto.i
    node = _len_field(4, b"Relu") + _len_field(5, bad_attribute)
    graph = _len_field(1, node) + _len_field(1, node)
    data = _len_field(7, graph)
    model = irmodel.loads(data)
    assert model.graph.node[0].op_type == "Relu"
    with pytest.raises(DecodeError) as info:
        model.graph.node[1].attribute[0]
    assert info.value.path == "ModelProto.graph.node[1].attribute[0]"
    assert info.value.offset == len(data)
    assert "truncated varint" in str(info.value)


def test_packed_fixed_width_data_of_a_wrong_length():
    tensor = _len_field(4, b"\x00" * 7)  # float_data: 7 bytes is not a multiple of 4
    t = irmodel.loads(tensor, "TensorProto")
    with pytest.raises(DecodeError, match="not a multiple of 4") as info:
        t.float_data
    assert info.value.path == "TensorProto.float_data"


@pytest.mark.parametrize("length, reason", [
    (1 << 34, r"length 17179869184 but only 32 bytes remain"),  # the largest in 5 bytes is 2^35 - 1
    (1 << 60, r"length varint longer than 5 bytes"),  # as upb, a length takes at most 5 bytes
])
def test_huge_length_prefix_raises_without_allocating(length, reason):
    data = _tag(7, 2) + encode_varint(length) + b"\x00" * 32
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match=reason):
            irmodel.loads(data)
        for _ in iter([0]):
            with pytest.raises(DecodeError):
                list(iter_fields(data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def _depth_bomb(levels: int) -> bytes:
    """A model whose graph holds a node whose attribute holds a graph ... ``levels`` deep."""
    graph = b""
    for _ in range(levels):
        attribute = _len_field(1, b"body") + _tag(20, 0) + b"\x05" + _len_field(6, graph)
        node = _len_field(4, b"If") + _len_field(5, attribute)
        graph = _len_field(1, node)
    return _len_field(7, graph)


def test_depth_bomb_of_nested_graphs_raises_decode_error_like_protobuf():
    import onnx
    from google.protobuf.message import DecodeError as RefDecodeError

    data = _depth_bomb(5000)
    with pytest.raises(RefDecodeError):
        onnx.ModelProto.FromString(data)
    err = decode_error(data)
    assert "nesting deeper than 100" in str(err)
    assert err.path.startswith("ModelProto.graph.node[0].attribute[0].g.node[0]")


def test_nesting_just_under_the_limit_decodes():
    data = _depth_bomb(30)  # 3 message levels per step: 91 deep
    import onnx

    from reference_helpers import reference_dict
    assert irmodel.to_dict(irmodel.loads(data)) == reference_dict("ModelProto", data)
    assert onnx.ModelProto.FromString(data).ByteSize() == len(data)


def test_deeply_nested_groups_raise_decode_error():
    data = b"".join(_tag(5 + i, 3) for i in range(10000))
    err = decode_error(data)
    assert "nesting deeper than 100" in str(err)


def test_hand_built_tree_deeper_than_the_limit_refuses_to_encode():
    g = irmodel.GraphProto(name="leaf")
    for _ in range(200):
        attr = irmodel.AttributeProto(name="body", type=irmodel.AttributeProto.GRAPH)
        attr.g = g
        g = irmodel.GraphProto(node=[irmodel.NodeProto(op_type="If", attribute=[attr])])
    with pytest.raises(irmodel.EncodeError, match="deeper than 100"):
        irmodel.dumps(g)
    with pytest.raises(irmodel.EncodeError, match="deeper than 100"):
        irmodel.to_dict(g)


def test_non_onnx_bytes_and_random_text():
    with pytest.raises(DecodeError):
        full_walk(irmodel.loads(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20))


def test_invalid_utf8_in_a_proto2_string_reads_as_bytes_as_upb_does():
    import onnx

    from reference_helpers import reference_dict
    data = _len_field(4, b"\xff\xfe")
    node = irmodel.loads(data, "NodeProto")
    assert node.op_type == b"\xff\xfe" == onnx.NodeProto.FromString(data).op_type
    assert irmodel.to_dict(node) == reference_dict("NodeProto", data)


# -- hypothesis: mutations of real models ------------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_corpus_models_decode_or_raise_decode_error(node_corpus, data):
    buf = draw_mutated_model_bytes(data, node_corpus)
    try:
        full_walk(irmodel.loads(bytes(buf)))
    except DecodeError as exc:
        assert exc.offset is None or 0 <= exc.offset <= len(buf)
        assert exc.path and exc.path.startswith("ModelProto")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=512), st.sampled_from(["ModelProto", "TensorProto", "GraphProto", "NodeProto",
                                                  "TypeProto", "SequenceProto", "OperatorSetProto"]))
def test_random_bytes_as_any_message_type(data, type_name):
    try:
        full_walk(irmodel.loads(data, type_name))
    except DecodeError:
        pass


@pytest.mark.parametrize("field", [
    _tag(3, 2) + b"\x80",  # name: a length varint cut short
    _tag(3, 2) + b"\xff\xff",  # name: a length varint that runs off the end
    _tag(5, 2) + b"\x80",  # attribute: the same, for a submessage
    _tag(9, 0) + b"\x80",  # an unknown varint field cut short
])
def test_truncated_multibyte_varint_in_a_nested_message_names_it(field):
    node = _len_field(4, b"Relu") + field
    data = _len_field(7, _len_field(1, _len_field(4, b"Add")) + _len_field(1, node))
    model = irmodel.loads(data)
    assert model.graph.node[0].op_type == "Add"
    with pytest.raises(DecodeError) as info:
        model.graph.node[1]
    assert info.value.path == "ModelProto.graph.node[1]"
    assert 0 < info.value.offset <= len(data)


def test_a_malformed_oneof_member_replaced_by_a_sibling_is_refused_like_protobuf():
    """protobuf parses a submessage as it reads it, so a malformed oneof member is refused
    even when a sibling read later replaces it; the lazy decoder checks what it drops."""
    import onnx
    from google.protobuf.message import DecodeError as RefDecodeError

    bad_tensor_type = _len_field(1, _tag(1, 0))  # TypeProto.tensor_type: a truncated varint
    data = bad_tensor_type + _len_field(4, b"")  # then sequence_type: replaces tensor_type
    with pytest.raises(RefDecodeError):
        onnx.TypeProto.FromString(data)
    err = decode_error(data, "TypeProto")
    assert "truncated varint" in str(err) and err.path == "TypeProto.tensor_type"
    good = _len_field(1, _tag(1, 0) + b"\x01") + _len_field(4, b"")
    t = irmodel.loads(good, "TypeProto")
    assert t.WhichOneof("value") == "sequence_type" == onnx.TypeProto.FromString(good).WhichOneof("value")
