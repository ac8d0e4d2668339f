"""wirefmt.raw: the schema-less view, checked against the reference protobuf runtime.

Offsets and lengths are computed independently from the reference: the offset of a field
is the serialized size of a message holding only the fields before it (protobuf writes
known fields in field-number order), and its header size is the size of a message
holding only that field minus the payload's size.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from wirefmt import DecodeError, MAX_DEPTH
from wirefmt.raw import (MAX_TEXT_BYTES, MAX_TEXT_CHARS, PREVIEW_BYTES, dump_lines, format_item,
                         parses_as_message, walk)
from wirefmt.varint import encode_varint
from protobuf_layout import reference_layout, sample_file_descriptor


def items_of(data: bytes, **kw) -> list:
    return list(walk(data, **kw))


def test_top_level_offsets_and_lengths_match_the_reference():
    fdp = sample_file_descriptor()
    data = fdp.SerializeToString()
    ours = [(i.field.number, i.field.tag_start, i.field.start, i.field.end - i.field.start)
            for i in walk(data) if i.depth == 0 and i.kind != "end"]
    assert ours == reference_layout(fdp)


def test_nested_offsets_match_the_reference_at_every_level():
    fdp = sample_file_descriptor()
    data = fdp.SerializeToString()
    items = items_of(data)
    # message_type[1] (Polygon) and, inside it, nested_type[0] (Meta) and its field[0].
    poly_entry = [e for e in reference_layout(fdp) if e[0] == 4][1]
    poly_items = [i for i in items if i.depth == 1 and poly_entry[2] <= i.field.tag_start < poly_entry[2] + poly_entry[3]
                  and i.kind != "end"]
    expected = [(n, poly_entry[2] + t, poly_entry[2] + d, ln) for n, t, d, ln in reference_layout(fdp.message_type[1])]
    assert [(i.field.number, i.field.tag_start, i.field.start, i.field.end - i.field.start)
            for i in poly_items] == expected
    meta = [e for e in expected if e[0] == 3][0]  # DescriptorProto.nested_type = 3
    meta_items = [i for i in items if i.depth == 2 and meta[2] <= i.field.tag_start < meta[2] + meta[3]
                  and i.kind != "end"]
    assert [(i.field.number, i.field.tag_start) for i in meta_items] == \
        [(n, meta[2] + t) for n, t, _, _ in reference_layout(fdp.message_type[1].nested_type[0])]


def test_values_are_shown_as_protoc_shows_them():
    fdp = sample_file_descriptor()
    text = "\n".join(dump_lines(fdp.SerializeToString()))
    assert '1: "shapes/geometry.proto"' in text
    assert '2: "demo.geometry"' in text
    assert '1: "org.example.geometry"' in text  # inside options (field 8)
    assert "9: 3" in text  # optimize_for = LITE_RUNTIME
    # enum value number -3: an int32 written as a 10-byte varint, shown unsigned plus a hint
    assert f"2: {(1 << 64) - 3}  # int64 -3" in text
    assert "4 {" in text and "8 {" in text


def test_every_wire_type_is_rendered():
    data = (b"\x08\x96\x01"                      # 1: 150
            + b"\x15" + struct.pack("<f", 1.5)    # 2: fixed32
            + b"\x19" + struct.pack("<d", -2.25)  # 3: fixed64
            + b"\x22\x00"                         # 4: ""
            + b"\x2a\x03\x00\xff\x01"             # 5: bytes
            + b"\x33\x08\x01\x34"                 # 6: group { 1: 1 }
            + b"\x3a\x02\x08\x05")                # 7: message { 1: 5 }
    lines = list(dump_lines(data))
    assert lines == [
        "1: 150",
        "2: 0x3fc00000  # float 1.5",
        "3: 0xc002000000000000  # double -2.25",
        '4: ""',
        "5: <3 bytes: 00 ff 01>",
        "6 {  # group",
        "  1: 1",
        "}",
        "7 {",
        "  1: 5",
        "}",
    ]


def test_offsets_columns_give_tag_offset_data_offset_and_length():
    data = b"\x08\x96\x01\x3a\x02\x08\x05"
    lines = list(dump_lines(data, offsets=True))
    assert lines[0].split() == ["offset", "data", "length", "field"]
    assert lines[1].split() == ["0", "1", "2", "1:", "150"]
    assert lines[2].split() == ["3", "5", "2", "7", "{"]
    assert lines[3].split() == ["5", "6", "1", "1:", "5"]
    assert lines[4].strip() == "}"


def test_short_printable_payloads_are_strings_even_when_they_parse():
    # "p1" is 0x70 0x31: field 14, varint 49.  protoc would show {14: 49}.
    assert parses_as_message(b"p1", 0, 2)
    assert list(dump_lines(b"\x0a\x02p1")) == ['1: "p1"']


def test_a_binary_payload_is_previewed_not_printed():
    blob = bytes(range(256)) * 64
    data = b"\x0a" + encode_varint(len(blob)) + blob
    (line,) = dump_lines(data)
    assert line == f"1: <{len(blob)} bytes: {blob[:PREVIEW_BYTES].hex(' ')} ...>"


def test_long_text_is_cut_and_text_above_the_limit_is_bytes():
    text = "word " * 100
    (line,) = dump_lines(b"\x0a" + encode_varint(len(text)) + text.encode())
    assert line == f'1: "{text[:MAX_TEXT_CHARS]}"...  # {len(text)} characters, cut'
    big = b"a\n" * (MAX_TEXT_BYTES // 2 + 1)
    (line,) = dump_lines(b"\x0a" + encode_varint(len(big)) + big)
    assert line.startswith(f"1: <{len(big)} bytes: 61 0a")


def test_depth_bomb_of_length_delimited_fields_stops_at_the_depth_limit():
    payload = b"\x08\x01"
    for _ in range(5000):
        payload = b"\x0a" + encode_varint(len(payload)) + payload
    items = items_of(payload)
    assert max(i.depth for i in items) == MAX_DEPTH
    assert [i.kind for i in items if i.depth == MAX_DEPTH] == ["elided"]
    assert sum(i.kind == "message" for i in items) == MAX_DEPTH
    assert sum(i.kind == "end" for i in items) == MAX_DEPTH


def test_max_depth_zero_shows_only_the_top_level():
    data = sample_file_descriptor().SerializeToString()
    items = items_of(data, max_depth=0)
    assert {i.depth for i in items} == {0}
    assert {i.kind for i in items if i.field.number == 4} == {"elided"}
    with pytest.raises(ValueError):
        items_of(data, max_depth=MAX_DEPTH + 1)


def test_group_bomb_at_top_level_is_a_decode_error_not_a_recursion_error():
    with pytest.raises(DecodeError) as info:
        items_of(b"\x0b" * 5000)
    assert "nesting deeper than" in info.value.reason and info.value.offset is not None


def test_group_bomb_inside_a_payload_is_shown_as_bytes():
    bomb = b"\x0b" * 5000
    data = b"\x08\x01" + b"\x0a" + encode_varint(len(bomb)) + bomb
    items = items_of(data)
    assert [(i.kind, i.field.number) for i in items] == [("varint", 1), ("bytes", 1)]


@pytest.mark.parametrize("length", [(1 << 32) - 1, (1 << 63) + 5, (1 << 64) - 1])
def test_huge_declared_length_is_a_decode_error_with_its_offset(length):
    data = b"\x08\x01\x0a" + encode_varint(length) + b"abc"
    items = []
    with pytest.raises(DecodeError) as info:
        for item in walk(data):
            items.append(item)
    assert [i.field.number for i in items] == [1]  # the valid prefix came first
    assert info.value.offset == 3
    # a length takes at most 5 bytes (as in upb); within them, it must fit what remains
    expected = "bytes remain" if len(encode_varint(length)) <= 5 else "length varint longer than 5 bytes"
    assert expected in info.value.reason


def test_huge_declared_length_inside_a_payload_is_shown_as_bytes():
    inner = b"\x0a" + encode_varint((1 << 63) + 5) + b"abc"
    data = b"\x12" + encode_varint(len(inner)) + inner
    assert [i.kind for i in items_of(data)] == ["bytes"]


def test_truncated_input_yields_the_valid_prefix_then_raises():
    fdp = sample_file_descriptor()
    data = fdp.SerializeToString()
    layout = reference_layout(fdp)
    cut = layout[3][1] + 3  # inside the fourth top-level field
    got = []
    with pytest.raises(DecodeError) as info:
        for item in walk(data[:cut]):
            if item.depth == 0 and item.kind != "end":
                got.append(item.field.tag_start)
    assert got == [e[1] for e in layout[:3]]
    assert info.value.offset is not None and info.value.offset >= layout[3][1]


class CountingBytes(bytes):
    """bytes that count the bytes read through indexing and slicing (what the reader uses)."""

    reads = 0

    def __getitem__(self, index):
        value = bytes.__getitem__(self, index)
        CountingBytes.reads += len(value) if isinstance(index, slice) else 1
        return value


def _reads_to_walk(data: bytes) -> int:
    CountingBytes.reads = 0
    for _ in walk(CountingBytes(data)):
        pass
    return CountingBytes.reads


def test_nested_payloads_are_read_a_bounded_number_of_times():
    # 90 levels, each with a few fields around the next: every payload is tested and
    # expanded.  Reading it all once per level would cost ~90x the size.
    payload = b"\x08\x01"
    for level in range(90):
        payload = b"\x08" + encode_varint(level) + b"\x0a" + encode_varint(len(payload)) + payload + b"\x10\x02"
    assert _reads_to_walk(payload) <= 3 * len(payload)


def test_a_large_blob_costs_a_few_bytes_of_reading():
    blob = bytes(range(256)) * 40000  # 10 MB of binary data
    data = b"\x08\x01\x12" + encode_varint(len(blob)) + blob
    assert _reads_to_walk(data) < 100


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_give_items_or_a_decode_error(data):
    try:
        for item in walk(data):
            format_item(item, data, 6)
    except DecodeError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, (1 << 29) - 1), st.binary(max_size=40)), max_size=8))
def test_valid_length_delimited_fields_are_found_at_their_offsets(fields):
    data = b""
    expected = []
    for number, payload in fields:
        tag = encode_varint(number << 3 | 2)
        expected.append((number, len(data), len(data) + len(tag) + len(encode_varint(len(payload)))))
        data += tag + encode_varint(len(payload)) + payload
    top = [(i.field.number, i.field.tag_start, i.field.start) for i in walk(data) if i.depth == 0 and i.kind != "end"]
    assert top == expected
