"""Inference and the full check on files over 2 GiB, without reading the weights.

Two models whose initializer data exceeds 2 GiB, both made of file holes (sparse files:
the disk holds a few kilobytes, the tests never write the 2 GiB):

- weights inside the model file (``raw_data``): protobuf cannot parse it, so the
  reference cannot answer; ours must infer it and check it, and its output file must be
  the reference's answer for the same graph without the weights, plus the weights;
- weights in an external data file: the reference's ``infer_shapes_path`` and
  ``check_model(path, full_check=True)`` can answer, and ours must agree byte for byte.
"""

from __future__ import annotations

import os

import pytest

import irmodel
from wirefmt.varint import encode_varint

onnx = pytest.importorskip("onnx")
from onnx import helper as oh, shape_inference  # noqa: E402

ELEMENTS = (1 << 29) + 1024  # float32 elements: 2 GiB + 4 KiB of data
RAW_SIZE = ELEMENTS * 4


def _len_prefix(number: int, length: int) -> bytes:
    return encode_varint(number << 3 | 2) + encode_varint(length)


def _graph(weights_outside: bool):
    """W (the big initializer, declared as an input too) feeds Reshape, Shape, Add and Gather."""
    nodes = [
        oh.make_node("Shape", ["W"], ["w_shape"]),
        oh.make_node("Reshape", ["W", "new_shape"], ["w2"]),
        oh.make_node("Gather", ["w2", "idx"], ["rows"], axis=0),
        oh.make_node("Add", ["rows", "X"], ["Y"]),
        oh.make_node("ReduceSum", ["Y"], ["Z"], keepdims=0),
    ]
    inits = [oh.make_tensor("new_shape", onnx.TensorProto.INT64, [2], [-1, 1024]),
             oh.make_tensor("idx", onnx.TensorProto.INT64, [3], [0, 5, 7])]
    if weights_outside:
        w = onnx.TensorProto(name="W", dims=[ELEMENTS], data_type=onnx.TensorProto.FLOAT,
                             data_location=onnx.TensorProto.EXTERNAL)
        for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", str(RAW_SIZE))):
            w.external_data.add(key=k, value=v)
        inits.append(w)
    g = oh.make_graph(nodes, "big", [oh.make_tensor_value_info("X", onnx.TensorProto.FLOAT, ["N", 1024])],
                      [oh.make_tensor_value_info("Z", onnx.TensorProto.FLOAT, [])], inits)
    return g


def _model(graph):
    m = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 21)], ir_version=10)
    return m


def _sparse(path: str, head: bytes, hole: int, tail: bytes = b"") -> None:
    with open(path, "wb") as f:
        f.write(head)
        f.seek(hole, os.SEEK_CUR)
        f.write(tail)
        f.truncate()


def _initializer_field_head() -> bytes:
    """A GraphProto ``initializer`` field (5) holding W, its raw_data a hole of RAW_SIZE."""
    body_head = (encode_varint(1 << 3) + encode_varint(ELEMENTS)  # dims
                 + encode_varint(2 << 3) + encode_varint(onnx.TensorProto.FLOAT)  # data_type
                 + _len_prefix(8, 1) + b"W" + _len_prefix(9, RAW_SIZE))
    return _len_prefix(5, len(body_head) + RAW_SIZE) + body_head


@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    """(inline model path, small reference model bytes, external model path)."""
    d = tmp_path_factory.mktemp("bigger")
    small = _model(_graph(False))
    model_bytes = small.SerializeToString()
    inline = str(d / "inline.onnx")
    # The model without its graph, then the graph field: the small graph's fields followed
    # by the big initializer (fields of a message may come in any order).
    graph_bytes = small.graph.SerializeToString()
    no_graph = onnx.ModelProto()
    no_graph.CopyFrom(small)
    no_graph.ClearField("graph")
    init_head = _initializer_field_head()
    outer = _len_prefix(7, len(graph_bytes) + len(init_head) + RAW_SIZE)
    external = str(d / "external.onnx")
    try:
        _sparse(inline, no_graph.SerializeToString() + outer + graph_bytes + init_head, RAW_SIZE)
        _sparse(str(d / "weights.bin"), b"", RAW_SIZE)
        with open(external, "wb") as f:
            f.write(_model(_graph(True)).SerializeToString())
    except OSError as exc:
        pytest.fail(f"cannot create the sparse test files: {exc}")
    yield inline, model_bytes, external
    for name in os.listdir(d):
        os.unlink(d / name)


def test_inline_weights_over_2_gib_infer_as_the_reference_infers_the_graph(big_files, tmp_path):
    inline, small_bytes, _ = big_files
    assert os.path.getsize(inline) > 1 << 31
    out = str(tmp_path / "inferred.onnx")
    irmodel.infer_shapes_path(inline, out, strict_mode=True, data_prop=True)
    try:
        assert os.path.getsize(out) > 1 << 31
        got = irmodel.load(out)
        # The reference on the same graph with W declared by its type instead of its data.
        small = onnx.load_from_string(small_bytes)
        small.graph.input.append(oh.make_tensor_value_info("W", onnx.TensorProto.FLOAT, [ELEMENTS]))
        ref = shape_inference.infer_shapes(small, strict_mode=True, data_prop=True).graph
        assert [irmodel.dumps(v) for v in got.graph.value_info] == [v.SerializeToString() for v in ref.value_info]
        assert [irmodel.dumps(v) for v in got.graph.output] == [v.SerializeToString() for v in ref.output]
        assert len(got.graph.value_info) == 4
        w = got.graph.initializer[-1]
        assert w.name == "W" and len(w.raw_data) == RAW_SIZE
    finally:
        os.unlink(out)


def test_inline_weights_over_2_gib_pass_the_full_check(big_files):
    inline, _, _ = big_files
    irmodel.check_model(inline, full_check=True)


def test_external_weights_over_2_gib_infer_exactly_as_the_reference(big_files, tmp_path):
    _, _, external = big_files
    ours, theirs = str(tmp_path / "ours.onnx"), str(tmp_path / "theirs.onnx")
    irmodel.infer_shapes_path(external, ours, strict_mode=True, data_prop=True)
    shape_inference.infer_shapes_path(external, theirs, strict_mode=True, data_prop=True)
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        assert a.read() == b.read()


def test_external_weights_over_2_gib_pass_the_full_check_as_the_reference(big_files):
    _, _, external = big_files
    onnx.checker.check_model(external, full_check=True)
    irmodel.check_model(external, full_check=True)


def test_external_weights_over_2_gib_with_a_bad_node_fail_both_full_checks(big_files):
    _, _, external = big_files
    m = onnx.load(external, load_external_data=False)
    m.graph.node[2].attribute[0].i = 5  # Gather on axis 5 of a rank-2 tensor
    bad = os.path.join(os.path.dirname(external), "bad.onnx")  # next to its weights
    onnx.save(m, bad)
    try:
        with pytest.raises(onnx.shape_inference.InferenceError):
            onnx.checker.check_model(bad, full_check=True)
        with pytest.raises(irmodel.InferenceError, match="Gather"):
            irmodel.check_model(bad, full_check=True)
    finally:
        os.unlink(bad)
