"""Protobuf semantics of the generic codec, checked against protobuf itself.

The oracle is the reference protobuf runtime parsing the same bytes: whatever it makes
of them (last-one-wins, merges, unknown fields, closed-enum handling, packed/unpacked
mixes), our decoded dict and our re-encoding must match.
"""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import irmodel
from wirefmt import to_dict
from kitchen_sink import NUMERIC, SCALARS, our_class, reference_class
from wirefmt import DecodeError
from wirefmt.varint import encode_varint

#: Every test here runs with the generated scanners and with the generic scan loop.
pytestmark = pytest.mark.usefixtures("scan_path")

SYNTAXES = ("proto2", "proto3")
REF = {s: reference_class(s) for s in SYNTAXES}
OURS = {s: our_class(s) for s in SYNTAXES}


def ref_dict(msg) -> dict:
    from google.protobuf import json_format

    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def parse_ours(syntax: str, data: bytes):
    return OURS[syntax]._from_buffer(data, memoryview(data), 0, len(data))


def touch_all(msg) -> None:
    """Materialise and mark every message, forcing a full canonical re-encode."""
    for f, value in msg.ListFields():
        if f.kind == 11:
            for child in (value if f.repeated else [value]):
                touch_all(child)
    msg._touch()


# -- values -------------------------------------------------------------------------

def _int(bits: int, signed: bool):
    if signed:
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return st.integers(0, (1 << bits) - 1)


def _float32():
    return st.floats(width=32, allow_nan=False)


VALUE = {
    "int32": _int(32, True), "int64": _int(64, True), "uint32": _int(32, False),
    "uint64": _int(64, False), "sint32": _int(32, True), "sint64": _int(64, True),
    "fixed32": _int(32, False), "fixed64": _int(64, False), "sfixed32": _int(32, True),
    "sfixed64": _int(64, True), "bool": st.booleans(), "float": _float32(),
    "double": st.floats(allow_nan=False), "string": st.text(max_size=8), "bytes": st.binary(max_size=8),
}


@st.composite
def contents(draw, depth=0):
    """A dict ``field name -> python value`` describing a Sink message."""
    out = {}
    for k in draw(st.lists(st.sampled_from(SCALARS), max_size=5, unique=True)):
        out[f"s_{k}"] = draw(VALUE[k])
    for k in draw(st.lists(st.sampled_from(SCALARS), max_size=3, unique=True)):
        out[f"r_{k}"] = draw(st.lists(VALUE[k], max_size=4))
    for k in draw(st.lists(st.sampled_from(NUMERIC), max_size=3, unique=True)):
        out[f"p_{k}"] = draw(st.lists(VALUE[k], max_size=4))
    if draw(st.booleans()):
        out["s_enum"] = draw(st.sampled_from([0, 1, 2, 1000]))
    if draw(st.booleans()):
        out["r_enum"] = draw(st.lists(st.sampled_from([0, 1, 2, 1000]), max_size=3))
    choice = draw(st.sampled_from(["", "o_int", "o_str", "o_msg"]))
    if choice == "o_int":
        out["o_int"] = draw(VALUE["int64"])
    elif choice == "o_str":
        out["o_str"] = draw(VALUE["string"])
    if depth < 2:
        if draw(st.booleans()):
            out["child"] = draw(contents(depth + 1))
        out["children"] = draw(st.lists(contents(depth + 1), max_size=2))
        if choice == "o_msg":
            out["o_msg"] = draw(contents(depth + 1))
    return out


def build_reference(cls, content: dict):
    msg = cls()
    for name, value in content.items():
        if name in ("child", "o_msg"):
            getattr(msg, name).CopyFrom(build_reference(cls, value))
        elif name == "children":
            for c in value:
                getattr(msg, name).add().CopyFrom(build_reference(cls, c))
        elif isinstance(value, list):
            getattr(msg, name).extend(value)
        else:
            setattr(msg, name, value)
    return msg


def build_ours(cls, content: dict):
    msg = cls()
    for name, value in content.items():
        if name in ("child", "o_msg"):
            setattr(msg, name, build_ours(cls, value))
        elif name == "children":
            for c in value:
                getattr(msg, name).append(build_ours(cls, c))
        elif isinstance(value, list):
            getattr(msg, name).extend(value)
        else:
            setattr(msg, name, value)
    return msg


@pytest.mark.slow
@pytest.mark.parametrize("syntax", SYNTAXES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=contents())
def test_messages_built_through_our_api_serialize_like_protobuf(syntax, content):
    ref = build_reference(REF[syntax], content)
    ours = build_ours(OURS[syntax], content)
    assert irmodel.dumps(ours) == ref.SerializeToString()
    assert to_dict(ours) == ref_dict(ref)


@pytest.mark.slow
@pytest.mark.parametrize("syntax", SYNTAXES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=contents())
def test_decoding_protobuf_output_matches_and_round_trips(syntax, content):
    data = build_reference(REF[syntax], content).SerializeToString()
    ours = parse_ours(syntax, data)
    ref = REF[syntax].FromString(data)
    assert to_dict(ours) == ref_dict(ref)
    assert irmodel.dumps(ours) == data
    touch_all(ours)
    assert irmodel.dumps(ours) == data


# -- raw wire bytes: non-canonical, unknown, mismatched ----------------------------------

def _tag(number: int, wt: int) -> bytes:
    return encode_varint(number << 3 | wt)


@st.composite
def varint_bytes(draw):
    v = draw(st.one_of(st.integers(0, 300), st.integers(0, (1 << 64) - 1)))
    enc = bytearray(encode_varint(v))
    pad = draw(st.integers(0, 2))  # non-minimal encodings are valid input
    if pad and len(enc) + pad <= 10:
        enc[-1] |= 0x80
        enc += b"\x80" * (pad - 1) + b"\x00"
    return bytes(enc)


@st.composite
def wire_fields(draw, depth=0):
    parts = []
    for _ in range(draw(st.integers(0, 6))):
        number = draw(st.one_of(st.sampled_from([1, 2, 5, 6, 11, 12, 13, 14, 15, 21, 22, 32, 33, 34,
                                                 40, 41, 51, 52, 60, 61, 62, 63, 70, 71, 72]),
                                st.integers(1, 200), st.just((1 << 29) - 1)))
        wt = draw(st.sampled_from([0, 0, 1, 2, 2, 2, 3, 5]))
        if wt == 0:
            parts.append(_tag(number, 0) + draw(varint_bytes()))
        elif wt == 1:
            parts.append(_tag(number, 1) + draw(st.binary(min_size=8, max_size=8)))
        elif wt == 5:
            parts.append(_tag(number, 5) + draw(st.binary(min_size=4, max_size=4)))
        elif wt == 2:
            if depth < 3 and draw(st.booleans()):
                body = draw(wire_fields(depth + 1))
            elif draw(st.booleans()):
                body = b"".join(draw(st.lists(varint_bytes(), max_size=4)))
            else:
                body = draw(st.binary(max_size=16))
            parts.append(_tag(number, 2) + encode_varint(len(body)) + body)
        elif depth < 3:
            parts.append(_tag(number, 3) + draw(wire_fields(depth + 1)) + _tag(number, 4))
    return b"".join(parts)


def _reference_parse(syntax: str, data: bytes):
    from google.protobuf.message import DecodeError as RefDecodeError

    try:
        return REF[syntax].FromString(data)
    except RefDecodeError:
        return None


@pytest.mark.parametrize("syntax", SYNTAXES)
# Random runs: bodies may hold tag or length varints longer than 5 bytes, which upb
# refuses and so do we (wirefmt.limits.MAX_TAG_LENGTH_BYTES, docs/wire-format.md).
@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=wire_fields())
def test_arbitrary_wire_bytes_decode_like_protobuf(syntax, data):
    ref = _reference_parse(syntax, data)
    if ref is None:
        with pytest.raises(DecodeError):
            touch_all(parse_ours(syntax, data))
            to_dict(parse_ours(syntax, data))
        return
    ours = parse_ours(syntax, data)
    assert to_dict(ours) == ref_dict(ref)
    assert irmodel.dumps(ours) == data  # untouched: the input bytes, exactly
    touch_all(ours)
    assert irmodel.dumps(ours) == ref.SerializeToString()  # re-encoded: protobuf's bytes


# -- named semantics, one test each -------------------------------------------------------

def test_last_occurrence_of_a_singular_scalar_wins():
    data = _tag(2, 0) + encode_varint(5) + _tag(14, 2) + b"\x01a" + _tag(2, 0) + encode_varint(7)
    ours = parse_ours("proto2", data)
    assert ours.s_int64 == 7 == REF["proto2"].FromString(data).s_int64


def test_repeated_occurrences_of_a_singular_message_are_merged():
    first = _tag(1, 0) + encode_varint(3) + _tag(20, 0) + encode_varint(1)
    second = _tag(2, 0) + encode_varint(4) + _tag(20, 0) + encode_varint(2)
    data = _tag(62, 2) + bytes([len(first)]) + first + _tag(62, 2) + bytes([len(second)]) + second
    ours = parse_ours("proto2", data)
    assert (ours.child.s_int32, ours.child.s_int64, list(ours.child.r_int32)) == (3, 4, [1, 2])
    assert to_dict(ours) == ref_dict(REF["proto2"].FromString(data))


def test_unknown_fields_are_kept_and_written_back_after_known_ones():
    unknown = _tag(999, 2) + b"\x03abc" + _tag(1000, 5) + b"\x01\x02\x03\x04"
    data = unknown + _tag(2, 0) + encode_varint(9)
    ours = parse_ours("proto2", data)
    assert irmodel.dumps(ours) == data
    ours.s_int32 = 1
    expected = REF["proto2"].FromString(data)
    expected.s_int32 = 1
    assert irmodel.dumps(ours) == expected.SerializeToString()
    assert irmodel.dumps(ours).endswith(unknown)


def test_open_enum_keeps_unknown_values_as_ints_and_closed_enum_as_unknown_field():
    data = _tag(60, 0) + encode_varint(77)
    open_msg = parse_ours("proto3", data)
    assert open_msg.s_enum == 77 and to_dict(open_msg) == {"s_enum": 77}
    closed = parse_ours("proto2", data)
    assert not closed.HasField("s_enum") and closed.s_enum == 0
    assert to_dict(closed) == ref_dict(REF["proto2"].FromString(data)) == {}
    closed._touch()
    assert irmodel.dumps(closed) == data


def test_packed_and_unpacked_encodings_are_both_accepted_whatever_the_schema_says():
    unpacked = b"".join(_tag(40, 0) + encode_varint(v) for v in (1, 300))  # p_int32 declared packed
    packed_body = encode_varint(5) + encode_varint(6)
    packed = _tag(20, 2) + bytes([len(packed_body)]) + packed_body  # r_int32 declared unpacked
    ours = parse_ours("proto2", unpacked + packed)
    assert list(ours.p_int32) == [1, 300] and list(ours.r_int32) == [5, 6]


def test_negative_int32_and_int64_are_ten_byte_varints():
    ref = REF["proto2"](s_int32=-1, s_int64=-(1 << 63))
    data = ref.SerializeToString()
    assert len(data) == 2 * (1 + 10)
    ours = parse_ours("proto2", data)
    assert (ours.s_int32, ours.s_int64) == (-1, -(1 << 63))
    built = OURS["proto2"](s_int32=-1, s_int64=-(1 << 63))
    assert irmodel.dumps(built) == data


@pytest.mark.parametrize("value", [0, -1, 1, -(1 << 31), (1 << 31) - 1])
def test_zigzag_sint32_edges(value):
    data = REF["proto2"](s_sint32=value, r_sint64=[value, -value]).SerializeToString()
    ours = parse_ours("proto2", data)
    assert (ours.s_sint32, list(ours.r_sint64)) == (value, [value, -value])
    assert irmodel.dumps(OURS["proto2"](s_sint32=value, r_sint64=[value, -value])) == data


def test_float_fields_hold_float32_values_and_special_values_round_trip():
    for x in (0.1, -0.0, math.inf, -math.inf, 3.4e38, 1e-45):
        ref = REF["proto2"](s_float=x)
        ours = OURS["proto2"](s_float=x)
        assert struct.pack("<f", ours.s_float) == struct.pack("<f", ref.s_float)
        assert irmodel.dumps(ours) == ref.SerializeToString()
        assert to_dict(ours) == ref_dict(ref)
    nan = parse_ours("proto2", REF["proto2"](s_float=math.nan).SerializeToString())
    assert to_dict(nan) == {"s_float": "NaN"}


def test_proto3_implicit_presence_skips_defaults_but_keeps_negative_zero():
    for content in ({"s_int32": 0}, {"s_double": -0.0}, {"s_string": ""}, {"opt_int": 0}):
        ref = build_reference(REF["proto3"], content)
        ours = build_ours(OURS["proto3"], content)
        assert irmodel.dumps(ours) == ref.SerializeToString()
        assert to_dict(ours) == ref_dict(ref)


def test_oneof_last_member_wins_on_parse_and_assignment_clears_siblings():
    data = _tag(70, 0) + encode_varint(5) + _tag(71, 2) + b"\x01z"
    ours = parse_ours("proto2", data)
    assert ours.WhichOneof("o") == "o_str" and not ours.HasField("o_int")
    ours.o_int = 3
    assert ours.WhichOneof("o") == "o_int" and ours.o_str == ""
    ref = REF["proto2"].FromString(data)
    ref.o_int = 3
    assert irmodel.dumps(ours) == ref.SerializeToString()


def test_groups_in_unknown_fields_are_skipped_and_preserved():
    group = _tag(300, 3) + _tag(1, 0) + b"\x05" + _tag(2, 3) + _tag(2, 4) + _tag(300, 4)
    data = group + _tag(2, 0) + b"\x01"
    ours = parse_ours("proto2", data)
    assert ours.s_int64 == 1
    ours._touch()
    assert irmodel.dumps(ours) == REF["proto2"].FromString(data).SerializeToString()


@pytest.mark.parametrize("bits", [0x7F800001, 0xFF800D00, 0x7FC00001, 0xFFFFFFF9])
def test_float32_nan_payloads_survive_a_re_encode(bits):
    raw = struct.pack("<I", bits)
    body = raw + struct.pack("<f", 1.5) + raw
    data = (_tag(12, 5) + raw  # s_float
            + _tag(51, 2) + bytes([len(body)]) + body  # p_float, packed
            + _tag(31, 5) + raw)  # r_float, unpacked
    ours = parse_ours("proto2", data)
    ours._touch()
    expected = REF["proto2"].FromString(data).SerializeToString()
    assert irmodel.dumps(ours) == expected
    copy = OURS["proto2"](s_float=ours.s_float, p_float=list(ours.p_float), r_float=list(ours.r_float))
    assert irmodel.dumps(copy) == expected


def test_a_packed_field_that_fails_to_decode_fails_on_every_read():
    """Its chunks stay undecoded after the failure: a second read raises again, never reads
    as an empty field (the checker read dims twice and saw [] the second time)."""
    import irmodel
    from wirefmt import DecodeError

    tensor = irmodel.loads(bytes([0x0A, 0x01, 0x81, 0x10, 0x01]), "TensorProto")  # dims: a cut varint
    for _ in range(3):
        with pytest.raises(DecodeError, match="TensorProto.dims"):
            list(tensor.dims)
    assert tensor.data_type == 1


# -- the rest of protobuf's message methods ---------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("syntax", SYNTAXES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=contents(), other=contents())
def test_byte_size_merge_from_string_and_partial_serialization_match_protobuf(syntax, content, other):
    data = build_reference(REF[syntax], content).SerializeToString()
    more = build_reference(REF[syntax], other).SerializeToString()
    ours, ref = parse_ours(syntax, data), REF[syntax].FromString(data)
    assert ours.ByteSize() == ref.ByteSize()  # from its span: still exactly its bytes
    assert ours.IsInitialized() is ref.IsInitialized() is True
    assert ours.SerializePartialToString() == ref.SerializePartialToString()
    built = build_ours(OURS[syntax], content)  # never had bytes: from the encoder's plan
    assert built.ByteSize() == ref.ByteSize()
    assert ours.MergeFromString(more) == ref.MergeFromString(more) == len(more)
    assert irmodel.dumps(ours) == ref.SerializeToString()
    assert ours.ByteSize() == ref.ByteSize()  # changed: from the encoder's plan
    touch_all(ours)
    assert ours.ByteSize() == ref.ByteSize()


@pytest.mark.parametrize("syntax", SYNTAXES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=contents(), where=st.lists(st.integers(0, 3), max_size=4))
def test_discard_unknown_fields_matches_protobuf(syntax, content, where):
    # Unknown fields put at the top level (0), in the child (1) and in each of the children (2, 3).
    unknown = _tag(999, 2) + b"\x03abc" + _tag(1000, 0) + encode_varint(5)
    ref = build_reference(REF[syntax], content)
    for w in where:
        if w == 1:
            ref.child.MergeFromString(unknown)
        elif w >= 2 and len(ref.children) > w - 2:
            ref.children[w - 2].MergeFromString(unknown)
    data = ref.SerializeToString() + (unknown if 0 in where else b"")
    ours, theirs = parse_ours(syntax, data), REF[syntax].FromString(data)
    ours.DiscardUnknownFields()
    theirs.DiscardUnknownFields()
    assert irmodel.dumps(ours) == theirs.SerializeToString()


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_set_in_parent_makes_an_absent_submessage_present_and_leaves_a_present_one(syntax):
    ours, theirs = parse_ours(syntax, b""), REF[syntax].FromString(b"")
    ours.child.child.SetInParent()
    theirs.child.child.SetInParent()
    assert ours.HasField("child") and ours.child.HasField("child")
    assert irmodel.dumps(ours) == theirs.SerializeToString()
    data = theirs.SerializeToString() + _tag(2, 0) + encode_varint(3)
    again = parse_ours(syntax, data)
    again.child.SetInParent()  # present already: nothing changes, the bytes stay exact
    assert again._start == 0 and irmodel.dumps(again) == data
