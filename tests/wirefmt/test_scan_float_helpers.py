"""Generated scan code names ``unpack_float`` and ``StructError`` only where it reads a
float32 inline, and gets them only then (`wirefmt.scangen.float_helpers`): `struct` is a
shared library that a summary of a model (which reads no float) never loads.

What must hold: every scanner that names them has them; a scanner that reads no float
names neither (else its ``except`` clause would fail with NameError on the first
overrun); and a float cut short by the end of the buffer is the same DecodeError as
protobuf refuses it with, under both scan paths.
"""

from __future__ import annotations

import struct

import onnx
import pytest
from google.protobuf.message import DecodeError as ProtobufDecodeError

import irmodel
from irmodel.messages import CLASSES, REGISTRY
from wirefmt import DecodeError, scangen, use_generated_scanners
from wirefmt.scan import _SCANNER_HELPERS


@pytest.mark.parametrize("name", sorted(n for n in CLASSES if "." not in n))
@pytest.mark.parametrize("which", ["make_child", "scan"])
def test_the_float_helpers_are_given_to_exactly_the_code_that_names_them(name, which):
    fn = scangen.build_scanner(CLASSES[name], REGISTRY, _SCANNER_HELPERS, which)
    names = {n for n in ("unpack_float", "StructError") if scangen._names(fn.__code__, n)}
    assert names in (set(), {"unpack_float", "StructError"})
    for helper in ("unpack_float", "StructError"):
        assert (helper in fn.__globals__) == (helper in names)
    if "StructError" in names:
        assert fn.__globals__["StructError"] is struct.error


def test_the_types_a_summary_scans_read_no_float_and_an_attribute_does():
    def named(name):
        return scangen._names(scangen.build_scanner(CLASSES[name], REGISTRY, _SCANNER_HELPERS, "make_child").__code__,
                              "unpack_float")
    assert not any(map(named, ("ModelProto", "GraphProto", "ValueInfoProto", "NodeProto", "TypeProto")))
    assert named("AttributeProto")  # its f is read inline


@pytest.fixture(params=[True, False], ids=["generated", "generic"])
def scanners(request):
    use_generated_scanners(request.param)
    yield request.param
    use_generated_scanners(True)


@pytest.mark.parametrize("cut", [1, 2, 3, 4])
def test_a_float_cut_short_by_the_end_of_the_buffer_is_a_decode_error(scanners, cut):
    # An AttributeProto alone: name "alpha", then f (tag 0x15) and its four bytes, the last
    # ``cut`` of them missing.  Reading the attribute's f reads past the buffer's end.
    whole = onnx.helper.make_attribute("alpha", 0.25)
    whole.ClearField("type")  # f last: the cut falls inside its value
    data = whole.SerializeToString()
    assert data[-5] == 0x15
    short = data[:-cut]
    with pytest.raises(ProtobufDecodeError):
        onnx.AttributeProto.FromString(short)
    with pytest.raises(DecodeError):
        irmodel.AttributeProto.FromString(short).f
