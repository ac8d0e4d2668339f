"""Graph inputs, outputs and opsets read from their bytes (`irmodel._wireview.infoscan`) give exactly
what the message path reports and what the reference reads: on generated values (every
kind of dim, unknown fields, repeated occurrences, other types), on mutated bytes, and
bad bytes raise the message path's error."""

from __future__ import annotations

import onnx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from onnx import helper as oh

import irmodel
from irmodel._wireview.infoscan import opset_entry, value_info_tensor
from irmodel._report.summary import dtype_name, summarize, type_info
from irmodel._wireview.fastpath import use_fast_paths

from test_summary_initializers import _varint

_VI = {f.name: f.number for f in onnx.ValueInfoProto.DESCRIPTOR.fields}
_TP = {f.name: f.number for f in onnx.TypeProto.DESCRIPTOR.fields}
_TT = {f.name: f.number for f in onnx.TypeProto.Tensor.DESCRIPTOR.fields}
_DIM = {f.name: f.number for f in onnx.TensorShapeProto.Dimension.DESCRIPTOR.fields}
_OP = {f.name: f.number for f in onnx.OperatorSetIdProto.DESCRIPTOR.fields}
_SHAPE_DIM = onnx.TensorShapeProto.DESCRIPTOR.fields_by_name["dim"].number


def _ld(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _vi(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _message_path(data: bytes) -> tuple:
    """(name, type_info) of a serialized ValueInfoProto as the message path reads it, or the
    error it raises."""
    try:
        v = irmodel.ValueInfoProto.FromString(data)
        return v.name, type_info(v.type)
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _bytes_path(data: bytes):
    got = value_info_tensor(data, 0, len(data), 2)
    if got is None:
        return None
    name, elem_type, shape = got
    return name, {"kind": "tensor", "elem_type": dtype_name(elem_type), "shape": shape}


def _agree(data: bytes, plain: bool | None = None) -> None:
    """The bytes path answers the message path's result or None (never something else);
    ``plain``: it must answer (True) or must decline (False)."""
    ours, theirs = _bytes_path(data), _message_path(data)
    assert ours is None or ours == theirs, (data, ours, theirs)
    if plain is not None:
        assert (ours is not None) == plain, (data, ours, theirs)


_dims = st.lists(st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.text(max_size=12), st.none()), max_size=6)


@settings(max_examples=300, deadline=None)
@given(name=st.text(max_size=20), elem=st.integers(0, 30), dims=st.one_of(st.none(), _dims),
       denotation=st.booleans(), doc=st.booleans())
def test_a_tensor_value_reads_as_the_message_path_and_the_reference_read_it(name, elem, dims, denotation, doc):
    v = oh.make_tensor_value_info(name, elem, dims)
    if denotation and dims:
        v.type.tensor_type.shape.dim[0].denotation = "N"
        v.type.denotation = "TENSOR"
    if doc:
        v.doc_string = "why"
        v.metadata_props.add(key="k", value="v")
    elif denotation:
        v.doc_string = "a doc_string alone is read past"
    data = v.SerializeToString()
    _agree(data, plain=not doc)  # metadata_props: messages the checker decodes, so declined
    if doc:
        return
    ref = onnx.ValueInfoProto.FromString(data)
    ref_shape = (None if not ref.type.tensor_type.HasField("shape") else
                 [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
                  for d in ref.type.tensor_type.shape.dim])
    assert _bytes_path(data) == (ref.name, {"kind": "tensor", "elem_type": dtype_name(ref.type.tensor_type.elem_type),
                                            "shape": ref_shape})


@pytest.mark.parametrize("data, plain", [
    # unknown fields at every level are skipped, as the message path keeps them aside
    (_ld(_VI["name"], b"x") + _vi(99, 7) + _ld(_VI["type"], _vi(98, 1) + _ld(_TP["tensor_type"], _vi(97, 3)
     + _vi(_TT["elem_type"], 1) + _ld(_TT["shape"], _vi(96, 0) + _ld(_SHAPE_DIM, _vi(95, 1) + _vi(_DIM["dim_value"], 4))))),
     True),
    # the last name and elem_type win; of a dim's value and param, the last one read
    (_ld(_VI["name"], b"a") + _ld(_VI["name"], b"b") + _ld(_VI["type"], _ld(_TP["tensor_type"], _vi(_TT["elem_type"], 1)
     + _vi(_TT["elem_type"], 7) + _ld(_TT["shape"], _ld(_SHAPE_DIM, _vi(_DIM["dim_value"], 4) + _ld(_DIM["dim_param"], b"n"))
     + _ld(_SHAPE_DIM, _ld(_DIM["dim_param"], b"n") + _vi(_DIM["dim_value"], 5)) + _ld(_SHAPE_DIM, b"")))), True),
    (_ld(_VI["name"], b"x"), False),  # no type: the message path reports it
    (_ld(_VI["name"], b"x") + _ld(_VI["type"], b""), False),  # a type without a value
    (_ld(_VI["type"], _ld(_TP["tensor_type"], b"")) * 2, False),  # a type twice: merged
    (_ld(_VI["type"], _ld(_TP["tensor_type"], b"") * 2), False),  # a tensor type twice
    (_ld(_VI["type"], _ld(_TP["tensor_type"], _ld(_TT["shape"], b"") * 2)), False),  # a shape twice
    (_ld(_VI["type"], _ld(_TP["sequence_type"], b"") + _ld(_TP["tensor_type"], b"")), False),  # another member
    (_ld(_VI["type"], _ld(_TP["sparse_tensor_type"], _vi(1, 1))), False),
    (_ld(_VI["type"], _ld(_TP["map_type"], _vi(1, 7))), False),
    (_vi(_VI["name"], 3) + _ld(_VI["type"], _ld(_TP["tensor_type"], b"")), False),  # misfitting wire types
    (_ld(_VI["type"], _ld(_TP["tensor_type"], _ld(_TT["elem_type"], b"\x01"))), False),
    (_ld(_VI["type"], _ld(_TP["tensor_type"], _vi(_TT["elem_type"], -1))), False),  # int32 from 10 bytes
    (_ld(_VI["type"], _ld(_TP["tensor_type"], _ld(_TT["shape"], _ld(_SHAPE_DIM, _ld(_DIM["dim_value"], b""))))),
     False),
    (_ld(_VI["name"], b"\xff") + _ld(_VI["type"], _ld(_TP["tensor_type"], b"")), False),  # invalid UTF-8
    (_ld(_VI["type"], _ld(_TP["tensor_type"], _ld(_TT["shape"], _ld(_SHAPE_DIM, _ld(_DIM["dim_param"], b"\xc3"))))),
     False),
    (_ld(_VI["type"], _ld(_TP["tensor_type"], b"")) + b"\x0b\x0c", False),  # an open group: bad bytes
    (_ld(_VI["type"], _ld(_TP["tensor_type"], _vi(_TT["elem_type"], 1)))[:-1], False),  # truncated
])
def test_edges_read_as_the_message_path_reads_them_or_are_left_to_it(data, plain):
    _agree(data, plain=plain)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dims=_dims, cut=st.integers(0, 200), flips=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)),
                                                            max_size=4))
def test_mutated_bytes_read_as_the_message_path_or_are_left_to_it(dims, cut, flips):
    data = bytearray(oh.make_tensor_value_info("value", 1, dims).SerializeToString())
    for at, byte in flips:
        if data:
            data[at % len(data)] = byte
    _agree(bytes(data[:cut] if cut < len(data) else data))


@settings(max_examples=200, deadline=None)
@given(domain=st.text(max_size=12), version=st.integers(-(1 << 63), (1 << 63) - 1), extra=st.booleans())
def test_an_opset_reads_as_the_message_path_reads_it(domain, version, extra):
    data = oh.make_opsetid(domain, version).SerializeToString() + (_vi(9, 1) + _ld(_OP["domain"], b"d") if extra else b"")
    o = irmodel.OperatorSetIdProto.FromString(data)
    assert opset_entry(data, 0, len(data), 1) == (o.domain, o.version)
    for bad in (_vi(_OP["domain"], 1), _ld(_OP["version"], b"\x01"), _ld(_OP["domain"], b"\xff"), data[:-1] + b"\x80"):
        assert opset_entry(bad, 0, len(bad), 1) is None or opset_entry(bad, 0, len(bad), 1) == (
            (lambda m: (m.domain, m.version))(irmodel.OperatorSetIdProto.FromString(bad)))


def _model(inputs, outputs, opsets=(("", 21),)) -> bytes:
    g = oh.make_graph([oh.make_node("Identity", ["x"], ["y"])], "g", inputs, outputs,
                      [oh.make_tensor("w", 1, [1], [1.0])])
    return oh.make_model(g, opset_imports=[oh.make_opsetid(d, v) for d, v in opsets]).SerializeToString()


@pytest.mark.parametrize("inputs, outputs", [
    ([oh.make_tensor_value_info("x", 1, ["n", 3, None])], [oh.make_tensor_value_info("y", 1, [2])]),
    ([oh.make_tensor_value_info("x", 1, None), oh.make_tensor_value_info("w", 1, [1])],
     [oh.make_tensor_value_info("y", 7, [])]),
    ([oh.make_tensor_sequence_value_info("x", 1, [2])], [oh.make_tensor_value_info("y", 1, [2])]),  # one refused
    ([oh.make_sparse_tensor_value_info("x", 1, [2])], [oh.make_empty_tensor_value_info("y")]),
])
def test_a_summary_reads_values_and_opsets_as_the_message_path_does(inputs, outputs):
    data = _model(inputs, outputs, opsets=(("", 21), ("com.microsoft", 1), ("ai.onnx.ml", 3)))
    streamed = summarize(irmodel.loads(data), base_dir=None)
    use_fast_paths(False)
    assert streamed == summarize(irmodel.loads(data), base_dir=None)
    assert [v["name"] for v in streamed["inputs"]] == [v.name for v in inputs]
    assert streamed["opset_import"][1] == {"domain": "com.microsoft", "version": 1}
    m = irmodel.loads(data)  # an edited model is not its bytes any more: the message path
    m.graph.input[0].name = "renamed"
    assert summarize(m, base_dir=None)["inputs"][0]["name"] == "renamed"
