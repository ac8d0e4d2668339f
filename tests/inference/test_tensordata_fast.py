"""The wire fast path of constant reading (`tensordata.read_small_fast`) against the slow path.

The fast path may decline (None) but never answer differently: on every constant tensor of
the reference corpus, for each of the four types, its answer equals `parse_data_slow`'s;
on malformed tensors `parse_data` raises exactly the slow path's error.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmodel
from irmodel.inference.errors import NodeInferenceError
from irmodel.inference.tensordata import (DOUBLE, FLOAT, INT32, INT64, parse_data, parse_data_slow,
                                          read_small_fast)
from wirefmt import DecodeError, encode_varint

CODES = (INT64, INT32, FLOAT, DOUBLE)


def _outcome(fn, tensor, code):
    try:
        return "ok", fn(tensor, code)
    except (NodeInferenceError, DecodeError) as e:  # a malformed packed field fails on first read
        return "error", f"{type(e).__name__}: {e}"


def _same_outcome(a, b) -> bool:
    return a[0] == b[0] and (a[1] == b[1] if a[0] == "error" else _same(a[1], b[1]))


def _same(a, b) -> bool:
    """Equal lists, NaN equal to NaN bit for bit (struct round trip)."""
    if len(a) != len(b):
        return False
    return all(x == y or (x != x and y != y and struct.pack("<d", x) == struct.pack("<d", y))
               for x, y in zip(a, b))


def _constant_tensors(model):
    graphs = [model.graph]
    while graphs:
        g = graphs.pop()
        yield from g.initializer
        for node in g.node:
            for a in node.attribute:
                if a.HasField("t"):
                    yield a.t
                if a.HasField("g"):
                    graphs.append(a.g)
                graphs.extend(a.graphs)


@pytest.fixture(scope="module")
def corpus_tensors(corpus):
    out = []
    for name, type_name, data in corpus:
        if type_name == "TensorProto":
            out.append((name, irmodel.TensorProto.FromString(data)))
        else:
            try:
                model = irmodel.ModelProto.FromString(data)
            except DecodeError:
                continue
            out.extend((name, t) for t in _constant_tensors(model))
    return out


def test_fast_path_equals_slow_path_on_corpus(corpus_tensors):
    answered = 0
    for name, tensor in corpus_tensors:
        for code in CODES:
            fast = read_small_fast(tensor, code)
            if fast is None:
                continue
            answered += 1
            kind, slow = _outcome(parse_data_slow, tensor, code)
            assert kind == "ok", (name, code, slow)
            assert _same(fast, slow), (name, code)
    # the fast path is worth having only if it answers for the common constants
    assert answered > 1000, answered


def test_parse_data_same_outcome_as_slow_on_corpus(corpus_tensors):
    for name, tensor in corpus_tensors[:3000]:
        for code in CODES:  # corpus tensors are well-formed: one copy serves both paths
            a = _outcome(parse_data, tensor, code)
            b = _outcome(parse_data_slow, tensor, code)
            assert _same_outcome(a, b), (name, code, a, b)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    return encode_varint(number << 3 | wire) + payload


def _ld(number: int, data: bytes) -> bytes:
    return _field(number, 2, encode_varint(len(data)) + data)


def _vi(number: int, value: int) -> bytes:
    return _field(number, 0, encode_varint(value & ((1 << 64) - 1)))


MALFORMED = {
    "too few int64_data": _vi(1, 3) + _vi(2, INT64) + _ld(7, encode_varint(1) + encode_varint(2)) + _ld(8, b"t"),
    "too many int64_data": _vi(1, 1) + _vi(2, INT64) + _ld(7, encode_varint(1) + encode_varint(2)),
    "short raw_data": _vi(1, 2) + _vi(2, INT64) + _ld(9, b"\x00" * 15) + _ld(8, b"t"),
    "negative dim": _vi(1, -2) + _vi(2, INT64) + _ld(9, b"\x00" * 16),
    "type mismatch": _vi(1, 2) + _vi(2, FLOAT) + _ld(9, b"\x00" * 16),
    "no type": _vi(1, 2) + _ld(9, b"\x00" * 16),
    "type 0": _vi(1, 2) + _vi(2, 0) + _ld(9, b"\x00" * 16),
    "external": _vi(1, 2) + _vi(2, INT64) + _vi(14, 1) + _ld(8, b"w"),
    "overflowing dims": _vi(1, 1 << 62) + _vi(1, 1 << 62) + _vi(2, INT64) + _ld(9, b""),
    "too large": _vi(1, 5000) + _vi(2, INT64) + _ld(9, b"\x00" * 40000),
    "truncated packed int64_data": _vi(2, INT64) + _ld(7, b"\x80"),
    "negative raw length": _vi(1, 1) + _vi(2, INT64) + _field(9, 2, encode_varint((1 << 64) - 1)),
}

# Well-formed but unusual: repeated scalars (the last wins), unpacked and packed int64_data
# mixed, multi-byte varints, an unknown field: the fast path answers like the slow one or declines.
UNUSUAL = {
    "data_type twice": _vi(2, FLOAT) + _vi(2, INT64) + _vi(1, 1) + _ld(9, struct.pack("<q", -7)),
    "raw_data twice": _vi(2, INT64) + _vi(1, 1) + _ld(9, struct.pack("<q", 1)) + _ld(9, struct.pack("<q", 2)),
    "mixed int64_data": _vi(2, INT64) + _vi(1, 3) + _vi(7, -1) + _ld(7, encode_varint(300) + encode_varint(5)),
    "dims split": _vi(1, 2) + _vi(2, INT64) + _ld(1, encode_varint(200)) + _ld(9, b"\x01" * 3200),
    "unknown field": _vi(2, INT64) + _vi(1, 1) + _vi(99, 5) + _ld(9, struct.pack("<q", 3)),
    "dims with a wrong wire type": _field(1, 1, b"\x02" + b"\x00" * 7) + _vi(2, INT64) + _ld(9, b"\x00" * 16),
    "no dims (a scalar)": _vi(2, INT64) + _ld(9, struct.pack("<q", 9)),
}


@pytest.mark.parametrize("case", sorted(UNUSUAL))
def test_unusual_same_values(case):
    data = UNUSUAL[case]
    slow = _outcome(parse_data_slow, irmodel.TensorProto.FromString(data), INT64)
    fast = read_small_fast(irmodel.TensorProto.FromString(data), INT64)
    assert fast is None or (slow[0] == "ok" and _same(fast, slow[1])), (fast, slow)
    assert _same_outcome(_outcome(parse_data, irmodel.TensorProto.FromString(data), INT64), slow)


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("code", CODES)
def test_malformed_raises_the_slow_paths_error(case, code):
    data = MALFORMED[case]
    try:
        tensor = irmodel.TensorProto.FromString(data)
    except DecodeError:
        return  # rejected while reading: parse_data is never reached
    # each path on its own copy: a second read of a field whose decoding failed is not the first
    slow = _outcome(parse_data_slow, irmodel.TensorProto.FromString(data), code)
    fast = read_small_fast(tensor, code)
    if slow[0] == "error":
        assert fast is None
    else:
        assert fast is None or _same(fast, slow[1])
    assert _same_outcome(_outcome(parse_data, irmodel.TensorProto.FromString(data), code), slow)


def test_malformed_cases_fail_as_int64():
    """Each case is malformed for the type it declares (else the test above proves little)."""
    for case, data in MALFORMED.items():
        try:
            tensor = irmodel.TensorProto.FromString(data)
        except DecodeError:
            continue
        assert read_small_fast(tensor, INT64) is None, case
        assert _outcome(parse_data, tensor, INT64)[0] == "error", case


def test_changed_tensor_reads_the_change():
    tensor = irmodel.TensorProto.FromString(_vi(1, 2) + _vi(2, INT64) + _ld(7, encode_varint(4) + encode_varint(5)))
    assert read_small_fast(tensor, INT64) == [4, 5]
    tensor.int64_data = [6, 7]
    assert read_small_fast(tensor, INT64) is None  # no longer its bytes
    assert parse_data(tensor, INT64) == [6, 7]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=6), st.booleans(), st.data())
def test_fuzzed_bytes_same_outcome(values, raw, data):
    """Valid int64 constants, then one byte changed or the bytes cut: same outcome both ways."""
    body = _vi(1, len(values)) + _vi(2, INT64) + _ld(8, b"c")
    body += _ld(9, struct.pack(f"<{len(values)}q", *values)) if raw else \
        _ld(7, b"".join(encode_varint(v & ((1 << 64) - 1)) for v in values))
    tensor = irmodel.TensorProto.FromString(body)
    assert read_small_fast(tensor, INT64) == values == parse_data_slow(tensor, INT64)
    i = data.draw(st.integers(0, len(body) - 1))
    if data.draw(st.booleans()):
        body = body[:i] + bytes([data.draw(st.integers(0, 255))]) + body[i + 1:]
    else:
        body = body[:i]
    try:
        tensor = irmodel.TensorProto.FromString(body)
    except DecodeError:
        return
    for code in CODES:
        # each path on its own copy: a second read of a field whose decoding failed is not the first
        fast = read_small_fast(tensor, code)
        slow = _outcome(parse_data_slow, irmodel.TensorProto.FromString(body), code)
        if fast is not None:
            assert slow[0] == "ok" and _same(fast, slow[1])
        assert _same_outcome(_outcome(parse_data, irmodel.TensorProto.FromString(body), code), slow)
