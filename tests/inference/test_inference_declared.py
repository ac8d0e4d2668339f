"""The types a graph declares, read from their bytes (`irmodel.inference.declared`), are what
the messages give: for plain tensor values and every other shape of a ValueInfoProto (no
type, no element type, no shape, dim params, a dim with both members, sparse and sequence
types, invalid UTF-8, merged occurrences, values changed in memory), and whole inference
runs give the same bytes either way."""

from __future__ import annotations

import pytest

import irmodel
from irmodel import helper
from irmodel._wireview.fastpath import use_fast_paths
from irmodel._wireview.fields import tag
from irmodel.inference import declared, infer_shapes
from wirefmt import encode_varint

FLOAT = irmodel.TensorProto.FLOAT


def _len_field(type_name: str, field: str, payload: bytes) -> bytes:
    return encode_varint(tag(type_name, field, 2)) + encode_varint(len(payload)) + payload


def _odd_value_infos() -> list:
    """Serialized ValueInfoProtos of every kind the byte reader must answer or decline."""
    plain = [helper.make_tensor_value_info(f"v{i}", FLOAT, [i, "batch", None]) for i in range(5)]
    out = [vi.SerializeToString() for vi in plain]
    out.append(irmodel.ValueInfoProto(name="no_type").SerializeToString())
    no_elem = irmodel.ValueInfoProto(name="no_elem")
    no_elem.type.tensor_type.shape.dim.add(dim_value=3)
    out.append(no_elem.SerializeToString())
    out.append(helper.make_tensor_value_info("no_shape", FLOAT, None).SerializeToString())
    out.append(helper.make_tensor_value_info("scalar", FLOAT, []).SerializeToString())
    out.append(helper.make_sparse_tensor_value_info("sparse", FLOAT, [2, 2]).SerializeToString())
    out.append(helper.make_value_info("seq", helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(FLOAT, [2]))).SerializeToString())
    both = helper.make_tensor_value_info("both", FLOAT, [1])
    dim = both.SerializeToString()
    # A Dimension with dim_value then dim_param: the oneof keeps the last.
    dim_bytes = (encode_varint(tag("TensorShapeProto.Dimension", "dim_value", 0)) + encode_varint(4)
                 + _len_field("TensorShapeProto.Dimension", "dim_param", b"late"))
    shape = _len_field("TensorShapeProto", "dim", dim_bytes)
    tensor = encode_varint(tag("TypeProto.Tensor", "elem_type", 0)) + encode_varint(FLOAT) + \
        _len_field("TypeProto.Tensor", "shape", shape)
    tp = _len_field("TypeProto", "tensor_type", tensor)
    out.append(_len_field("ValueInfoProto", "name", b"last_member") + _len_field("ValueInfoProto", "type", tp))
    # Two type occurrences: merged by the message path (the reader declines).
    out.append(dim + _len_field("ValueInfoProto", "type", tp))
    # A dim_param of invalid UTF-8.
    bad = _len_field("TensorShapeProto.Dimension", "dim_param", b"\xff\xfe")
    bad_tensor = _len_field("TypeProto.Tensor", "shape", _len_field("TensorShapeProto", "dim", bad))
    out.append(_len_field("ValueInfoProto", "name", b"bad_param")
               + _len_field("ValueInfoProto", "type", _len_field("TypeProto", "tensor_type", bad_tensor)))
    return out


def _graph_bytes(value_infos: list) -> bytes:
    g = b"".join(_len_field("GraphProto", "output", vi) for vi in value_infos)
    return _len_field("ModelProto", "graph", g)


@pytest.mark.parametrize("changed", [False, True])
def test_bytes_and_messages_declare_the_same_types(changed, monkeypatch):
    data = _graph_bytes(_odd_value_infos())
    made = []
    real = declared._from_message

    def counted(vi):
        made.append(vi.name)
        return real(vi)

    monkeypatch.setattr(declared, "_from_message", counted)
    results = []
    for fast in (True, False):
        use_fast_paths(fast, threshold=1)
        m = irmodel.loads(data)
        if changed:
            m.graph.output[2].type.tensor_type.elem_type = irmodel.TensorProto.INT64
        made.clear()
        results.append([entry[:2] for entry in declared.declared_types(m.graph, "output")])
        if fast:
            from_bytes = [name for name, _ in results[-1] if name not in made]
    use_fast_paths(True)
    assert results[0] == results[1]
    assert "v0" in from_bytes and "last_member" in from_bytes and "no_elem" in from_bytes
    assert ("v2" in from_bytes) != changed  # a value changed since read is made
    for declined in ("no_type", "sparse", "seq", "both", "bad_param"):
        assert declined not in from_bytes
    by_name = dict(results[0])
    assert by_name["no_elem"].elem is None and by_name["no_type"] is None
    assert by_name["last_member"].shape == ("late",)


def test_skipped_values_are_not_read():
    use_fast_paths(True, threshold=1)
    m = irmodel.loads(_graph_bytes(_odd_value_infos()))
    out = declared.declared_types(m.graph, "output", {0: "given"})
    assert out[0] == ("v0", None, False) and out[1][1] is not None


def test_denotations_are_noticed_in_the_bytes():
    use_fast_paths(True, threshold=1)
    plain = helper.make_tensor_value_info("p", FLOAT, [1])
    typed = helper.make_tensor_value_info("t", FLOAT, [1])
    typed.type.denotation = "TENSOR"
    dim = helper.make_tensor_value_info("d", FLOAT, [1])
    dim.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    empty = helper.make_tensor_value_info("e", FLOAT, [1])
    empty.type.denotation = ""  # present but empty: no denotation, as the message path reads it
    m = irmodel.loads(_graph_bytes([v.SerializeToString() for v in (plain, typed, dim, empty)]))
    assert [bare for _, _, bare in declared.declared_types(m.graph, "output")] == [True, False, False, True]


@pytest.mark.parametrize("outputs", [70, 1000])
def test_inference_of_many_declared_outputs_is_the_same_both_ways(outputs):
    names = [f"o{i}" for i in range(outputs)]
    split = helper.make_node("Split", ["x"], names, num_outputs=outputs)
    outs = [helper.make_tensor_value_info(n, FLOAT, [1] if i % 2 else ["d"]) for i, n in enumerate(names)]
    outs[3].type.denotation = "TENSOR"  # kept through the merge: the message path decides
    outs[4].type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"  # a dim replaced whole: dropped
    g = helper.make_graph([split], "g", [helper.make_tensor_value_info("x", FLOAT, [outputs])], outs)
    data = irmodel.dumps(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
    results = []
    for fast in (True, False):
        use_fast_paths(fast)
        results.append(irmodel.dumps(infer_shapes(irmodel.loads(data))))
    use_fast_paths(True)
    assert results[0] == results[1]
    onnx = pytest.importorskip("onnx")
    import onnx.shape_inference

    assert results[0] == onnx.shape_inference.infer_shapes(onnx.load_from_string(data)).SerializeToString()


def test_a_value_whose_dims_would_pass_the_nesting_limit_is_left_to_the_messages():
    """The message path refuses a Dimension deeper than the decoder's limit (and the
    reference with it, tests/inference/test_inference_fuzz.py); the byte reader declines."""
    from irmodel._wireview.infoscan import value_info_type
    from wirefmt import MAX_DEPTH

    data = helper.make_tensor_value_info("v", FLOAT, [1]).SerializeToString()
    assert value_info_type(data, 0, len(data), MAX_DEPTH - 4) is not None
    assert value_info_type(data, 0, len(data), MAX_DEPTH - 3) is None
