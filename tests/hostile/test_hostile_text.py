"""Issue 14, strings: a model's strings never drive the terminal, and invalid UTF-8 in a
proto2 string field (which protobuf's upb backend accepts) is shown, never a crash.

The one rule lives in `wirefmt.safetext`; these tests pin it down (every class of
character it must escape, unambiguity by round trip) and check that every output
goes through it: ``inspect``, ``inspect --json``, ``dump``, ``dump --json``, ``raw``,
the CLI's error messages, and the JSON dict of `irmodel.to_dict` (against protobuf's
``MessageToDict``).
"""

from __future__ import annotations

import json
import os
import re

import onnx
import pytest
from google.protobuf import json_format
from hypothesis import given, settings, strategies as st

import irmodel
from wirefmt.safetext import json_bytes, json_ready, name_text, one_line, quote, safe_text

import rich_mutants as hm
from cli_helpers import run_cli

STRING_KEYS = ("op_type", "domain", "node", "input", "doc", "producer", "meta", "dim", "graph",
               "fname", "fdomain", "attr", "tensor")


def _unquote(text: str) -> bytes:
    """The bytes a `quote` result stands for (UTF-8 of its characters, ``\\xNN`` from 80
    up as raw bytes): the inverse the escapes must allow, for the round-trip property."""
    assert text[0] == '"' and text[-1] == '"', text
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = body[i + 1]
        if e in '\\"':
            out += e.encode()
            i += 2
        elif e in "ntr":
            out += {"n": b"\n", "t": b"\t", "r": b"\r"}[e]
            i += 2
        elif e == "x":
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif e == "u":
            out += chr(int(body[i + 2:i + 6], 16)).encode()
            i += 6
        else:
            assert e == "U", text
            out += chr(int(body[i + 2:i + 10], 16)).encode()
            i += 10
    return bytes(out)


# -- the rule ---------------------------------------------------------------------------------

@pytest.mark.parametrize("char, escape", [
    ("\x1b", "\\x1b"), ("\x07", "\\x07"), ("\x00", "\\x00"), ("\n", "\\n"), ("\t", "\\t"),
    ("\r", "\\r"), ("\x7f", "\\x7f"),                                 # C0 and DEL
    ("\x85", "\\u0085"), ("\x9b", "\\u009b"),                          # C1 (CSI)
    ("\u202e", "\\u202e"), ("\u2066", "\\u2066"), ("\u200b", "\\u200b"),  # bidi, zero width
    ("\ufeff", "\\ufeff"), ("\u2028", "\\u2028"), ("\u00a0", "\\u00a0"),
    ("\U000e0001", "\\U000e0001"),                                     # a tag character (Cf)
])
def test_every_kind_of_non_printable_character_is_escaped(char, escape):
    assert safe_text(f"a{char}b") == f"a{escape}b"
    assert quote(f"a{char}b") == f'"a{escape}b"'


def test_printable_text_is_left_as_it_is():
    for text in ("Conv", "ünïcödé", "名前", "emoji 🙂", "a-b.c:d/e_f"):
        assert safe_text(text) == text
    assert name_text("conv1/weight:0") == "conv1/weight:0"
    assert name_text("my tensor") == '"my tensor"'
    assert name_text("a\x1b[2J") == '"a\\x1b[2J"'


def test_invalid_utf8_bytes_are_shown_as_byte_escapes_and_valid_parts_as_text():
    assert safe_text(b"caf\xc3\xa9 \xff\xfe!") == "café \\xff\\xfe!"
    assert quote(b"a\xffb") == '"a\\xffb"'
    # a C1 character and the raw byte 0x9b cannot be confused
    assert quote("\x9b") == '"\\u009b"' and quote(b"\x9b") == '"\\x9b"'
    assert quote(b"\xc2\x9b") == '"\\u009b"'  # valid UTF-8 for U+009B


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.binary()))
def test_quote_is_printable_and_unambiguous(value):
    q = quote(value)
    assert q.isprintable()
    expected = value if isinstance(value, bytes) else value.encode()
    assert _unquote(q) == expected


def test_cut_strings_say_how_long_they_were():
    assert quote("x" * 10, limit=4) == '"xxxx"... (10 characters)'
    assert quote(b"\xff" * 10, limit=4) == '"\\xff\\xff\\xff\\xff"... (10 bytes)'


def test_json_form_of_bytes_is_json_formats_and_keys_are_converted_too():
    assert json_bytes(b"a\xffb") == "b'a\\xffb'"
    doc = json_ready({"k": [b"\xff", {"n": b"x"}], b"\x1b": 1, "s": "\x1b"})
    assert doc == {"k": ["b'\\xff'", {"n": "b'x'"}], "b'\\x1b'": 1, "s": "\x1b"}
    assert json.dumps(doc).isascii()


def test_error_lines_are_one_safe_line():
    assert one_line("bad\n name \x1b[2J\u202e") == "bad name \\x1b[2J\\u202e"


# -- every output goes through it ---------------------------------------------------------------

def _write(tmp_path, name: str, data: bytes) -> str:
    path = os.path.join(tmp_path, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


@pytest.mark.parametrize("key", STRING_KEYS)
def test_invalid_utf8_in_each_string_field_is_shown_by_every_command(tmp_path, key):
    path = _write(tmp_path, "m.onnx", hm.with_strings(**{key: b"a\xff\xfeb"}))
    onnx.load(path)  # the reference accepts the file
    for argv in (["inspect"], ["inspect", "--json"], ["dump"], ["dump", "--json"], ["raw"]):
        status, out, err = run_cli([*argv, path])
        assert status == 0, (argv, err)
        assert out.isascii() or all(c.isprintable() or c == "\n" for c in out)
    status, out, _ = run_cli(["dump", path])
    assert "a\\xff\\xfeb" in out
    status, out, _ = run_cli(["inspect", "--json", path])
    json.loads(out)


def test_dump_json_of_invalid_utf8_is_the_references_dict(tmp_path):
    data = hm.with_strings(op_type=b"a\xffb", producer=b"\xfe", meta=b"v\x80")
    ours = json.loads(run_cli(["dump", "--json", _write(tmp_path, "m.onnx", data)])[1])
    reference = json_format.MessageToDict(onnx.ModelProto.FromString(data), preserving_proto_field_name=True)
    assert ours == reference
    assert ours["producer_name"] == "b'\\xfe'"


def test_inspect_json_uses_the_documented_form_for_bytes(tmp_path):
    s = json.loads(run_cli(["inspect", "--json", _write(tmp_path, "m.onnx",
                                                          hm.with_strings(op_type=b"a\xffb", producer=b"\xfe"))])[1])
    assert s["producer_name"] == "b'\\xfe'"
    assert s["op_types"] == {"b'a\\xffb'": 1}


@pytest.mark.parametrize("key", STRING_KEYS)
def test_control_characters_in_each_string_field_are_escaped(tmp_path, key):
    path = _write(tmp_path, "m.onnx", hm.with_strings(**{key: hm.CONTROL_TEXT.encode()}))
    for argv in (["inspect"], ["inspect", "--json"], ["dump"], ["dump", "--json"], ["raw"],
                 ["raw", "--offsets"]):
        status, out, err = run_cli([*argv, path])
        assert status == 0, (argv, err)
        assert not [c for c in out + err if not c.isprintable() and c != "\n"], argv
    out = run_cli(["dump", path])[1]
    assert "\\x1b]0;pwned\\x07" in out


def test_op_types_domains_function_names_and_dim_params_are_escaped_in_dump(tmp_path):
    data = hm.with_strings(op_type=b"Op\x1b[31m", domain=b"dom\x07", fname=b"fn\x1b]0;t\x07",
                           fdomain=b"fd\xe2\x80\xae", dim=b"batch\x1b[2J")
    out = run_cli(["dump", _write(tmp_path, "m.onnx", data)])[1]
    for escaped in ("Op\\x1b[31m", "dom\\x07", "fn\\x1b]0;t\\x07", "fd\\u202e", "batch\\x1b[2J"):
        assert escaped in out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


def test_error_messages_escape_the_models_strings(tmp_path):
    data = hm.external_model([("location", "\x1b]0;pwned\x07/w.bin")], name="\x1b[2J")
    path = _write(tmp_path, "m.onnx", data)
    status, out, err = run_cli(["convert", path, os.path.join(tmp_path, "out.onnx")])
    assert status == 1
    assert "\x1b" not in err and "\x07" not in err and "pwned" in err


def test_raw_never_prints_a_control_character_as_text(tmp_path):
    path = _write(tmp_path, "m.onnx", hm.with_strings(doc=b"\x1b[2J" + b"x" * 20,
                                                      producer="\u202eexe.onnx".encode()))
    out = run_cli(["raw", path])[1]
    assert all(c.isprintable() or c == "\n" for c in out)
    assert re.search(r"<\d+ bytes: 1b 5b 32 4a", out)  # the doc_string: shown as bytes


def test_save_with_a_tensor_per_file_survives_a_non_utf8_tensor_name(tmp_path):
    data = hm.with_strings(tensor=b"t\xff")
    m = irmodel.loads(data)
    irmodel.save(m, os.path.join(tmp_path, "out.onnx"), save_as_external_data=True,
                 all_tensors_to_one_file=False, size_threshold=0)
    back = irmodel.load(os.path.join(tmp_path, "out.onnx"))
    t = back.graph.initializer[0]
    assert t.name == b"t\xff"
    assert irmodel.to_array(t).tobytes() == b"\x00" * 4
    location = [e.value for e in t.external_data if e.key == "location"][0]
    assert re.fullmatch(r"[0-9a-f-]{36}", location)  # a random name, as the README promises
