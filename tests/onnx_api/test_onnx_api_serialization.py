"""onnx's formats and load/save functions: protobuf, JSON and text proto, against protobuf's own."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings, strategies as st

import irmodel
from irmodel import serialization
from irmodel.fuzz.strategies import message_bytes
from wirefmt import ParseError
from wirefmt.textform import merge_text, to_text


@pytest.fixture(scope="module")
def models(node_corpus):
    """Every 7th model of the reference's node tests (the session's corpus), as protobuf messages."""
    import onnx

    return [onnx.ModelProto.FromString(data) for _name, data in node_corpus[::7]]


def test_text_proto_is_protobufs_text_byte_for_byte_and_reads_back(models):
    from google.protobuf import text_format

    fmt = serialization.registry.get("textproto")
    for model in models:
        data = model.SerializeToString()
        expected = text_format.MessageToString(model)
        assert fmt.serialize_proto(irmodel.loads(data)).decode() == expected
        assert fmt.deserialize_proto(expected, irmodel.ModelProto()).SerializeToString() == data


def test_json_is_protobufs_json_text(models):
    from google.protobuf import json_format

    fmt = serialization.registry.get("json")
    for model in models[:40]:
        data = model.SerializeToString()
        ours = fmt.serialize_proto(irmodel.loads(data))
        assert ours.decode() == json_format.MessageToJson(model, preserving_proto_field_name=True)
        assert fmt.deserialize_proto(ours, irmodel.ModelProto()).SerializeToString() == data


@pytest.mark.parametrize("fmt", ["protobuf", "textproto", "json"])
def test_save_and_load_through_each_format_and_extension(tmp_path, models, fmt):
    model = irmodel.loads(models[0].SerializeToString())
    extension = {"protobuf": ".onnx", "textproto": ".textproto", "json": ".json"}[fmt]
    path = tmp_path / f"m{extension}"
    irmodel.save_model(model, path)  # the format from the extension
    assert irmodel.load_model(path).SerializeToString() == model.SerializeToString()
    buf = io.BytesIO()
    irmodel.save_model(model, buf, format=fmt)
    assert irmodel.load_model_from_string(buf.getvalue(), fmt).SerializeToString() == model.SerializeToString()


def test_unknown_formats_and_bad_text_raise_value_errors():
    with pytest.raises(ValueError, match="Unsupported format: 'nope'"):
        serialization.registry.get("nope")
    fmt = serialization.registry.get("textproto")
    for bad in ("ir_version: x", "graph {", "no_such_field: 1", "graph { node { op_type: 'a\\q' } }", "@"):
        with pytest.raises(ValueError):
            fmt.deserialize_proto(bad, irmodel.ModelProto())
    with pytest.raises(ValueError):
        fmt.deserialize_proto("graph { " * 200, irmodel.ModelProto())  # deeper than the limit, no RecursionError
    with pytest.raises(TypeError):
        serialization.registry.get("protobuf").deserialize_proto("text", irmodel.ModelProto())
    as_json = serialization.registry.get("json")
    for bad in ("{", "[1]", '{"ir_version": "x"}', '{"no_such_field": 1}', b"\xff"):
        with pytest.raises(ValueError):
            as_json.deserialize_proto(bad, irmodel.ModelProto())
    with pytest.raises(TypeError):
        as_json.deserialize_proto(12, irmodel.ModelProto())
    with pytest.raises(ValueError):  # a DecodeError: the bytes are not a model
        irmodel.load_model_from_string(b"\xff\xff")


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(message_bytes("ModelProto", max_depth=3, max_items=3))
def test_text_proto_of_any_model_is_protobufs_and_reads_back(data):
    """Every field kind, odd strings and bytes, NaN and infinities, unknown enum values."""
    import onnx
    from google.protobuf import text_format

    ours = irmodel.loads(data)
    text = to_text(ours)
    assert text == text_format.MessageToString(onnx.ModelProto.FromString(data))
    # Read back as protobuf reads it (text keeps no NaN payload or sign, so not always `data`).
    expected = text_format.Parse(text, onnx.ModelProto()).SerializeToString()
    assert merge_text(text, irmodel.ModelProto()).SerializeToString() == expected


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_text_proto_parser_raises_parse_errors_only(text):
    try:
        merge_text(text, irmodel.ModelProto())
    except ParseError:
        pass
