"""Initializers read from their bytes (`irmodel._wireview.tensorscan`) give exactly the summary of
the message path and the reference's facts: on generated models (external data, packed
and unpacked dims, non-canonical varints, unknown fields, field orders), on mutated
bytes, and bad bytes raise the message path's error."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.external_data_helper
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from onnx import helper as oh

import irmodel
from irmodel._report.summary import Census, summarize
from irmodel._wireview.tensorscan import tensor_header
from wirefmt import DecodeError

from summary_both_ways import summaries_both_ways

_T = onnx.TensorProto
_NUM = {f.name: f.number for f in _T.DESCRIPTOR.fields}
_GRAPH_INIT = onnx.GraphProto.DESCRIPTOR.fields_by_name["initializer"].number
_MODEL_GRAPH = onnx.ModelProto.DESCRIPTOR.fields_by_name["graph"].number


def _varint(n: int, pad: int = 0) -> bytes:
    """``n`` as a varint (negative: 64-bit two's complement), ``pad`` redundant bytes added."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append(n & 127)
        n >>= 7
        if not n:
            break
        out[-1] |= 128
    for _ in range(pad):
        out[-1] |= 128
        out.append(0)
    return bytes(out)


def _key(name: str, wt: int) -> bytes:
    return _varint(_NUM[name] << 3 | wt)


def _ld(name: str, payload: bytes) -> bytes:
    return _key(name, 2) + _varint(len(payload)) + payload


def _model_with_initializers(*tensors: bytes, input_name: str = "w") -> bytes:
    """A model with one input (``input_name``) whose graph's initializers are ``tensors``."""
    g = oh.make_graph([oh.make_node("Identity", [input_name], ["y"])], "g",
                      [oh.make_tensor_value_info(input_name, _T.FLOAT, None)],
                      [oh.make_tensor_value_info("y", _T.FLOAT, None)])
    graph = g.SerializeToString() + b"".join(
        _varint(_GRAPH_INIT << 3 | 2) + _varint(len(t)) + t for t in tensors)
    model = oh.make_model(onnx.GraphProto())
    model.ClearField("graph")
    return model.SerializeToString() + _varint(_MODEL_GRAPH << 3 | 2) + _varint(len(graph)) + graph


def _bits(code: int) -> int:
    return np.dtype(oh.tensor_dtype_to_np_dtype(code)).itemsize * 8


def _reference_facts(data: bytes) -> tuple:
    """(by-dtype counts and bytes, initializer names) as the reference reads the model."""
    g = onnx.load_from_string(data).graph
    by_dtype: dict = {}
    for t in g.initializer:
        entry = by_dtype.setdefault(_T.DataType.Name(t.data_type), {"count": 0, "bytes": 0})
        entry["count"] += 1
        count = 1
        for d in t.dims:
            count *= d
        entry["bytes"] += count * _bits(t.data_type) // 8
    return by_dtype, {t.name for t in g.initializer}


def _assert_all_agree(data: bytes, fast: int | None = None) -> dict:
    streamed, full = summaries_both_ways(data)
    assert streamed == full
    by_dtype, names = _reference_facts(data)
    assert streamed["initializers_by_dtype"] == by_dtype
    assert streamed["initializer_count"] == len(onnx.load_from_string(data).graph.initializer)
    assert streamed["inputs"][0]["initializer"] == (streamed["inputs"][0]["name"] in names)
    if fast is not None:  # how many were read from the bytes (not made)
        census = Census(irmodel.loads(data))
        assert sum(f[3] is None for f in census.initializers) == fast
    return streamed


def test_the_reference_corpus_initializers_are_read_from_bytes_with_the_same_summary(data_corpus):
    models = [d for p, t, d in data_corpus if t == "ModelProto" and onnx.load_from_string(d).graph.initializer]
    assert models
    fast = 0
    for data in models:
        streamed, full = summaries_both_ways(data)
        assert streamed == full
        fast += sum(f[3] is None for f in Census(irmodel.loads(data)).initializers)
    assert fast > 0


_W = "w"


@pytest.mark.parametrize("tensor, fast", [
    # as exporters write them: dims unpacked, data type, name, raw_data
    (_key("dims", 0) + _varint(3) + _key("dims", 0) + _varint(4) + _key("data_type", 0) + _varint(1)
     + _ld("name", b"w") + _ld("raw_data", b"\0" * 48), 1),
    # dims packed, name first
    (_ld("name", b"w") + _ld("dims", _varint(3) + _varint(4)) + _key("data_type", 0) + _varint(7), 1),
    # packed and unpacked dims mixed: in order
    (_ld("dims", _varint(2)) + _key("dims", 0) + _varint(5) + _ld("dims", _varint(7)) + _ld("name", b"w")
     + _key("data_type", 0) + _varint(10), 1),
    # non-canonical varints: padded dims, data type, tag-free padding inside packed dims
    (_key("dims", 0) + _varint(3, pad=3) + _ld("dims", _varint(4, pad=1)) + _key("data_type", 0)
     + _varint(6, pad=8) + _ld("name", b"w"), 1),
    # unknown fields of every wire type, and a group
    (_ld("name", b"w") + _varint(99 << 3 | 0) + _varint(5) + _varint(98 << 3 | 1) + b"\0" * 8
     + _varint(97 << 3 | 5) + b"\0" * 4 + _varint(96 << 3 | 2) + b"\x01x" + _varint(95 << 3 | 3)
     + _varint(95 << 3 | 4) + _key("data_type", 0) + _varint(1) + _key("dims", 0) + _varint(2), 1),
    # the last name and data type win
    (_ld("name", b"a") + _key("data_type", 0) + _varint(7) + _ld("name", b"w") + _key("data_type", 0)
     + _varint(1), 1),
    # no dims: a scalar; zero dims: no bytes
    (_ld("name", b"w") + _key("data_type", 0) + _varint(11), 1),
    (_ld("name", b"w") + _key("data_type", 0) + _varint(1) + _key("dims", 0) + _varint(0)
     + _key("dims", 0) + _varint(9), 1),
    # data_location written as DEFAULT
    (_ld("name", b"w") + _key("data_type", 0) + _varint(1) + _key("data_location", 0) + _varint(0), 1),
    # typed data fields and a doc string, skipped
    (_ld("name", b"w") + _key("data_type", 0) + _varint(7) + _key("dims", 0) + _varint(2)
     + _ld("int64_data", _varint(1) + _varint(2)) + _ld("doc_string", b"d"), 1),
    # handed to the message path: segment, STRING, unknown data type, negative dim, a
    # negative data type in ten bytes, a name of invalid UTF-8, dims of the wrong wire type
    (_ld("name", b"w") + _key("data_type", 0) + _varint(1) + _ld("segment", _varint(1 << 3) + _varint(0)), 0),
    (_ld("name", b"w") + _key("data_type", 0) + _varint(8) + _ld("string_data", b"abc"), 0),
    (_ld("name", b"w") + _key("data_type", 0) + _varint(1000) + _ld("raw_data", b"12"), 0),
    (_ld("name", b"w") + _key("data_type", 0) + _varint(1) + _key("dims", 0) + _varint(-3), 0),
    (_ld("name", b"w") + _key("data_type", 0) + _varint(-1), 0),
    (_ld("name", b"w") + _key("data_type", 0) + _varint((1 << 32) + 1), 0),
    (_ld("name", b"w\xff") + _key("data_type", 0) + _varint(1), 0),
    (_ld("name", b"w") + _key("data_type", 0) + _varint(1) + _key("dims", 5) + b"\0" * 4, 0),
])
def test_generated_initializers_agree_with_the_message_path_and_the_reference(tensor, fast):
    data = _model_with_initializers(tensor)
    if fast:
        _assert_all_agree(data, fast)
        return
    # handed back: the same summary as the message path (the reference cannot name an
    # unknown or negative data type, nor read invalid UTF-8), and no header taken
    streamed, full = summaries_both_ways(data)
    assert streamed == full
    assert [f[3] is None for f in Census(irmodel.loads(data)).initializers] == [False]


def test_unknown_data_location_is_left_to_the_message_path():
    tensor = _ld("name", b"w") + _key("data_type", 0) + _varint(1) + _key("data_location", 0) + _varint(5)
    data = _model_with_initializers(tensor)
    streamed, full = summaries_both_ways(data)
    assert streamed == full
    assert [f[3] is None for f in Census(irmodel.loads(data)).initializers] == [False]


def test_external_initializers_are_made_and_measured_as_before(tmp_path):
    tensors = []
    for i, (loc, length) in enumerate([("a.bin", 16), ("a.bin", 8), ("b.bin", 4), ("../out.bin", 4)]):
        t = oh.make_tensor(f"e{i}", _T.FLOAT, [length // 4], b"\0" * length, raw=True)
        onnx.external_data_helper.set_external_data(t, loc, offset=0, length=length)
        t.ClearField("raw_data")
        t.data_location = _T.EXTERNAL
        tensors.append(t.SerializeToString())
    plain = oh.make_tensor("w", _T.INT64, [2, 3], list(range(6)))
    (tmp_path / "a.bin").write_bytes(b"\0" * 24)
    data = _model_with_initializers(plain.SerializeToString(), *tensors)
    streamed, full = summaries_both_ways(data, base_dir=str(tmp_path))
    assert streamed == full
    assert [(e["location"], e["status"], e["tensors"], e["bytes"]) for e in streamed["external_data"]][:2] == [
        ("a.bin", "ok", 2, 24), ("b.bin", "missing", 1, 4)]
    assert streamed["initializers_by_dtype"] == _reference_facts(data)[0]
    assert [f[3] is None for f in Census(irmodel.loads(data)).initializers] == [True] + [False] * 4


@pytest.mark.parametrize("tensor", [
    _ld("name", b"w") + _key("data_type", 0),                          # a varint cut off
    _ld("name", b"w") + b"\x0a\x05\x01",                               # packed dims past the end
    _ld("name", b"w") + _ld("dims", b"\x80"),                          # a varint cut inside packed dims
    _ld("name", b"w") + _key("dims", 0) + b"\xff" * 10 + b"\x01",      # an 11-byte varint
    _ld("name", b"w") + b"\x00\x01",                                   # field number 0
    _ld("name", b"w") + b"\x07",                                       # wire type 7
    _ld("name", b"w") + b"\x0c",                                       # an end-group tag alone
    _ld("name", b"w") + _varint(95 << 3 | 3),                          # a group never closed
])
def test_bad_initializer_bytes_raise_the_message_paths_decode_error(tensor):
    data = _model_with_initializers(tensor)
    streamed, full = summaries_both_ways(data)
    assert streamed == full
    assert streamed[0] == "DecodeError"
    with pytest.raises(DecodeError):
        summarize(irmodel.loads(data))


def test_tensor_header_answers_only_for_simple_tensors():
    t = _ld("name", b"w") + _ld("dims", _varint(2) + _varint(-1)) + _key("data_type", 0) + _varint(3)
    assert tensor_header(t, 0, len(t), 2) == ("w", 3, [2, -1])
    assert tensor_header(t, 0, len(t) - 1, 2) is None  # cut inside the data type
    external = t + _key("data_location", 0) + _varint(1)
    assert tensor_header(external, 0, len(external), 2) is None


# -- generated by hypothesis: valid tensors in any field order, and mutated bytes ----------------

_DTYPES = [_T.FLOAT, _T.UINT8, _T.INT8, _T.INT32, _T.INT64, _T.DOUBLE, _T.FLOAT16, _T.BOOL, _T.UINT64]


@st.composite
def _tensor_bytes(draw) -> bytes:
    dims = draw(st.lists(st.integers(0, 1 << 12), max_size=4))
    fields = [_key("data_type", 0) + _varint(draw(st.sampled_from(_DTYPES)), draw(st.integers(0, 3))),
              _ld("name", draw(st.sampled_from([b"w", b"v", b"\xc3\xa9"])))]
    if draw(st.booleans()):
        fields.append(_ld("dims", b"".join(_varint(d, draw(st.integers(0, 2))) for d in dims)))
    else:
        fields += [_key("dims", 0) + _varint(d, draw(st.integers(0, 2))) for d in dims]
    fields += draw(st.lists(st.sampled_from([
        _ld("raw_data", b"\0" * 5), _ld("doc_string", b"doc"), _varint(77 << 3 | 0) + _varint(300),
        _varint(78 << 3 | 5) + b"abcd", _ld("int32_data", _varint(1)), _key("data_location", 0) + b"\0"]),
        max_size=3))
    return b"".join(draw(st.permutations(fields)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_tensor_bytes(), min_size=1, max_size=3))
def test_generated_tensors_in_any_field_order_agree(tensors):
    _assert_all_agree(_model_with_initializers(*tensors), fast=len(tensors))


_BASE = _model_with_initializers(
    _key("dims", 0) + _varint(3) + _ld("dims", _varint(4)) + _key("data_type", 0) + _varint(1) + _ld("name", b"w")
    + _ld("raw_data", b"\0" * 8) + _varint(77 << 3 | 1) + b"\0" * 8,
    oh.make_tensor("v", _T.INT64, [2], [1, 2]).SerializeToString())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_BASE) - 1), st.integers(0, 255)), min_size=1, max_size=4))
def test_mutated_bytes_give_the_message_paths_summary_or_error(edits):
    data = bytearray(_BASE)
    for pos, value in edits:
        data[pos] = value
    try:
        irmodel.loads(bytes(data)).graph  # noqa: B018  (a broken top level is not the summary's business)
    except DecodeError:
        return
    streamed, full = summaries_both_ways(bytes(data))
    assert streamed == full


def test_after_a_run_of_refused_tensors_the_rest_are_made_with_the_same_summary(tmp_path):
    external = []
    for i in range(12):
        t = oh.make_tensor(f"e{i}", _T.FLOAT, [1], b"\0" * 4, raw=True)
        onnx.external_data_helper.set_external_data(t, "a.bin", offset=4 * i, length=4)
        t.ClearField("raw_data")
        t.data_location = _T.EXTERNAL
        external.append(t.SerializeToString())
    plain = oh.make_tensor("w", _T.INT64, [2], [1, 2]).SerializeToString()
    (tmp_path / "a.bin").write_bytes(b"\0" * 48)
    data = _model_with_initializers(plain, *external, plain)
    streamed, full = summaries_both_ways(data, base_dir=str(tmp_path))
    assert streamed == full
    assert streamed["external_data"][0]["tensors"] == 12
    assert streamed["initializers_by_dtype"] == _reference_facts(data)[0]
    # the first is read from its bytes; after 8 refusals in a row the rest are made
    assert [f[3] is None for f in Census(irmodel.loads(data)).initializers] == [True] + [False] * 13
