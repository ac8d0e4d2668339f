"""The varint reader against protobuf, on every length and on malformed input.

`read_varint` has a word-at-a-time path for varints of three bytes or more; these
tests hold both paths to what protobuf decodes from the same bytes.
"""

from __future__ import annotations

import onnx
import pytest
from google.protobuf.message import DecodeError as RefDecodeError
from hypothesis import given, settings, strategies as st

import irmodel
from wirefmt import DecodeError
from wirefmt.varint import read_varint

# A varint body: up to 11 continuation bytes then a final byte (or none: truncated).
varint_bytes = st.builds(lambda conts, last: bytes(conts) + bytes(last),
                         st.lists(st.integers(0x80, 0xFF), max_size=11),
                         st.lists(st.integers(0, 0x7F), max_size=1))


def _dims_of(tensor_bytes: bytes):
    """``TensorProto.dims`` as (ours, the reference's): the varint payload decoded by both."""
    ref = onnx.TensorProto()
    try:
        ref.ParseFromString(tensor_bytes)
        expected = list(ref.dims)
    except RefDecodeError:
        expected = DecodeError
    try:
        ours = list(irmodel.loads(tensor_bytes, "TensorProto").dims)
    except DecodeError:
        ours = DecodeError
    return ours, expected


@settings(max_examples=500, deadline=None)
@given(body=varint_bytes, pad=st.binary(max_size=12), prefix=st.integers(0, 3))
def test_varint_field_decodes_as_protobuf_does(body, pad, prefix):
    # dims (field 1, int64) given `prefix` times as 0, then the varint under test; `pad`
    # follows in a field protobuf and we both skip (an unknown length-delimited field).
    data = b"\x08\x00" * prefix + b"\x08" + body + b"\xfa\x07" + bytes([len(pad)]) + pad
    ours, expected = _dims_of(data)
    assert ours == expected


@settings(max_examples=500, deadline=None)
@given(value=st.integers(0, (1 << 64) - 1), tail=st.binary(max_size=12))
def test_read_varint_of_every_uint64(value, tail):
    from wirefmt.varint import encode_varint

    enc = encode_varint(value)
    buf = b"\x01" + enc + tail
    assert read_varint(buf, 1, len(buf)) == (value, 1 + len(enc))


@pytest.mark.parametrize("buf, reason", [
    (b"\x80" * 10, "longer than 10 bytes"),
    (b"\xff" * 11 + b"\x01", "longer than 10 bytes"),
    (b"\x80" * 12 + b"\x00" * 8, "longer than 10 bytes"),  # the word-at-a-time path
    (b"\x80\x80\x80", "truncated"),
    (b"\xff" * 9, "truncated"),
])
def test_read_varint_refuses_long_and_truncated(buf, reason):
    with pytest.raises(DecodeError, match=reason):
        read_varint(buf, 0, len(buf))
