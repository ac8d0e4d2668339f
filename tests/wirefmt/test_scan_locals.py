"""The container locals of the generated scan (`wirefmt.scansource._new_list`, `_with_reloads`):
a field's container is kept in a local from its first element on, and reloaded after every
field the generic path (``slow``) handles, which may create or extend the same container.

Each input mixes inline elements with elements only the generic path takes (invalid UTF-8,
packed chunks, unknown fields between items); the values must be the generic scan's and
protobuf's, in order.
"""

from __future__ import annotations

import onnx
import pytest

import irmodel
from wirefmt import use_generated_scanners


def _s(tag: int, payload: bytes) -> bytes:
    return bytes([tag, len(payload)]) + payload


def _attr(*fields: bytes) -> bytes:
    return _s(0x2A, b"".join(fields))


_UNKNOWN = b"\xf8\x07\x01"  # field 127, varint 1: an unknown field, always the generic path
CASES = {
    # input strings around one with invalid UTF-8 (proto2: kept as bytes by the generic path)
    "strings around invalid utf-8": _s(0x0A, b"a") + _s(0x0A, b"\xff") + _s(0x0A, b"c") + _s(0x12, b"y"),
    "invalid utf-8 first": _s(0x0A, b"\xfe") + _s(0x0A, b"b") + _s(0x12, b"\xff") + _s(0x12, b"z"),
    "unknown field between inputs": _s(0x0A, b"a") + _UNKNOWN + _s(0x0A, b"b"),
    "unknown field between attributes": _attr(_s(0x0A, b"k")) + _UNKNOWN + _attr(_s(0x0A, b"m")),
    # AttributeProto.ints: unpacked, packed, unpacked again; and packed first
    "ints unpacked packed unpacked": _attr(_s(0x0A, b"p"), b"\x40\x01", _s(0x42, b"\x02\x03"), b"\x40\x04"),
    "ints packed first": _attr(_s(0x0A, b"p"), _s(0x42, b"\x05"), b"\x40\x06", _s(0x42, b"\x07")),
    "floats after an unknown field": _attr(_s(0x0A, b"f"), b"\x3d\x00\x00\x80\x3f", _UNKNOWN,
                                           b"\x3d\x00\x00\x00\x40"),
}


def _values(node) -> tuple:
    attrs = [(a.name, list(a.ints), list(a.floats)) for a in node.attribute]
    return list(node.input), list(node.output), attrs


@pytest.mark.parametrize("data", CASES.values(), ids=CASES.keys())
def test_container_locals_keep_the_generic_scans_values_and_order(data):
    got = []
    for generated in (True, False, True):  # the second generated pass: memo hits for attributes
        use_generated_scanners(generated)
        try:
            got.append(_values(irmodel.NodeProto.FromString(data)))
        finally:
            use_generated_scanners(True)
    assert got[0] == got[1] == got[2]
    ref = onnx.NodeProto.FromString(data)
    want = [(a.name, list(a.ints), list(a.floats)) for a in ref.attribute]
    assert got[0][2] == want
    # protobuf's upb hands out invalid UTF-8 of a proto2 string as bytes, as we do
    assert [x if isinstance(x, str) else x.decode("latin-1") for x in got[0][0]] == \
           [x if isinstance(x, str) else x.decode("latin-1") for x in ref.input]
