"""wirefmt.rawtext: the text ``irmodel raw`` prints, and the exact form, turned back into bytes."""

from __future__ import annotations

import onnx
import pytest
from onnx import helper as oh
from hypothesis import given, settings, strategies as st

from irmodel import cli
from irmodel.fuzz.sample_model import sample_model_bytes
from irmodel.fuzz.strategies import wire_fields
from wirefmt import encode_varint
from wirefmt.raw import dump_lines
from wirefmt.rawtext import RawTextError, encode, render, render_lines, varint_of_width

LOSSY = ("...>", '"...', "{...}")


def printed_is_exact(lines: list) -> bool:
    return not any(marker in line for line in lines for marker in LOSSY)


@pytest.mark.slow
def test_the_corpus_round_trips_through_the_exact_form(corpus):
    for name, _type, data in corpus:
        assert encode(render(data)) == data, name
    for name, _type, data in corpus[::8]:
        assert encode(render(data, offsets=True)) == data, name


def test_the_printed_form_encodes_back_and_is_the_exact_form_where_nothing_is_lost(corpus):
    printed_exact = 0
    for name, _type, data in corpus[::4]:
        printed = list(dump_lines(data))
        if printed_is_exact(printed):
            printed_exact += 1
            assert encode(printed) == data, name
            assert printed == list(render_lines(data)), name
    assert printed_exact > len(corpus) // 16


def test_the_printed_form_with_offsets_encodes_back(node_corpus):
    for name, data in node_corpus[::10]:
        printed = list(dump_lines(data, offsets=True))
        if printed_is_exact(printed):
            assert encode(printed) == data, name


def test_the_cli_output_encodes_back(tmp_path, capsys):
    graph = oh.make_graph([oh.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                          [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 3])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 3])])
    path = tmp_path / "m.onnx"
    path.write_bytes(oh.make_model(graph).SerializeToString())
    for flags in ([], ["--offsets"]):
        assert cli.main(["raw", str(path), *flags]) == 0
        assert encode(capsys.readouterr().out) == path.read_bytes()
    path.write_bytes(sample_model_bytes())  # 48 bytes of packed floats: printed as a preview
    assert cli.main(["raw", str(path)]) == 0
    with pytest.raises(RawTextError, match="preview"):
        encode(capsys.readouterr().out)


# -- generated wire structures ------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(wire_fields(), st.booleans(), st.booleans())
def test_generated_wire_structures_round_trip(data, offsets, expand_partial):
    assert encode(render(data, offsets=offsets, expand_partial=expand_partial)) == data


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=120), st.booleans())
def test_any_bytes_round_trip_malformed_parts_as_raw_lines(data, expand_partial):
    assert encode(render(data, expand_partial=expand_partial)) == data


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="0123456789{}:[]<>\"#x, -abcdefglnrtuvw\\", max_size=20), max_size=6))
def test_arbitrary_text_gives_bytes_or_raw_text_error(lines):
    try:
        assert isinstance(encode(lines), bytes)
    except RawTextError as exc:
        assert exc.line is None or 1 <= exc.line <= max(1, len(lines))


# -- what the exact form adds --------------------------------------------------------------

def test_redundant_varint_bytes_are_written_as_widths():
    data = (varint_of_width(1 << 3, 2) + varint_of_width(5, 10)          # 1[tag:2,val:10]: 5
            + b"\x12" + varint_of_width(2, 3) + b"\x08\x01"                # 2[len:3] { 1: 1 }
            + b"\x1b\x08\x07" + varint_of_width(3 << 3 | 4, 4))            # 3[end:4] { 1: 7 } group
    text = render(data)
    assert text.splitlines()[0] == "1[tag:2,val:10]: 5"
    assert "2[len:3] {" in text and "3[end:4] {  # group" in text
    assert encode(text) == data


def test_a_tenth_varint_byte_with_bits_above_64_is_a_raw_line():
    data = b"\x08" + b"\xff" * 9 + b"\x7f"  # decodes to 2^64 - 1; the top bits are dropped
    text = render(data)
    assert text.startswith("raw: 08 ff") and encode(text) == data


def test_malformed_rest_of_a_message_is_raw_with_the_reason():
    data = b"\x08\x01\x00\x05garbage"
    assert render(data).splitlines() == ["1: 1", "raw: 00 05 67 61 72 62 61 67 65  # field number 0 is not allowed"]
    nested = b"\x3a\x05\x08\x01\x07\x07\x07"  # 7 { 1: 1, then wire type 7 }
    assert "7 {" not in render(nested) and "7 {" in render(nested, expand_partial=True)
    assert encode(render(nested, expand_partial=True)) == nested


def test_long_strings_and_bytes_are_written_whole():
    text = "word " * 100
    blob = bytes(range(200))
    data = b"\x0a" + encode_varint(len(text)) + text.encode() + b"\x12" + encode_varint(len(blob)) + blob
    printed = list(dump_lines(data))
    assert not printed_is_exact(printed)
    exact = render(data)
    assert text in exact and blob.hex(" ") in exact and encode(exact) == data


# -- the printed form's lossy parts are refused --------------------------------------------

@pytest.mark.parametrize("line, reason", [
    ('1: "word word"...  # 500 characters, cut', "cut string"),
    ("1: <300 bytes: 00 01 02 ...>", "preview"),
    ("1 {...}  # message of 40 bytes below the depth limit", "elided"),
    ("1: {...}", "elided"),
])
def test_lossy_printed_parts_raise_with_the_line_number(line, reason):
    with pytest.raises(RawTextError, match=reason) as info:
        encode(["1: 5", line])
    assert info.value.line == 2


@pytest.mark.parametrize("text, reason", [
    ("1 {\n2: 3", "not closed"), ("}", "closes nothing"), ("raw: 0g", "not hex"),
    ("1[tag:0]: 5", "out of range"), ("1[foo:2]: 5", "bad width"), ("1[val:1]: 300", "needs 2 bytes"),
    ("1: 0x123", "bad fixed"), ('1: "abc', "unterminated"), ('1: "a\\q"', "unknown escape"),
    ("1: <2 bytes: 00>", "holds 1 bytes"), ("1: 5 6", "unexpected"), ("x: 5", "not a field line"),
    ("1: 18446744073709551616", "out of range"),
])
def test_bad_text_raises_raw_text_error(text, reason):
    with pytest.raises(RawTextError, match=reason):
        encode(text)


# -- editing a reproducer as text -----------------------------------------------------------

def test_an_edit_made_in_the_text_is_the_edit_protobuf_makes():
    model = onnx.ModelProto.FromString(sample_model_bytes())
    text = render(model.SerializeToString())
    edited = text.replace('2: "irmodel.fuzz"', '2: "edited \\"by hand\\"\\n"', 1).replace("1: 14\n", "1: 9\n", 1)
    model.producer_name = 'edited "by hand"\n'
    model.ir_version = 9
    assert encode(edited) == model.SerializeToString()


def test_negative_numbers_and_hex_escapes_are_accepted_for_hand_edits():
    assert encode("1: -1") == b"\x08" + b"\xff" * 9 + b"\x01"
    assert encode('1: "\\xff\\x00a"') == b"\x0a\x03\xff\x00a"
