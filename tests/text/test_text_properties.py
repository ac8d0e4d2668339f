"""Properties: print-then-parse is the identity on generated messages, and any text
makes the parser return a message or raise `ParseError`, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import irmodel
from irmodel.fuzz.strategies import messages, valid_models
from irmodel.parser import ParseError, parse_function, parse_graph, parse_model, parse_node
from irmodel.printer import to_text

_PARSERS = {"ModelProto": parse_model, "GraphProto": parse_graph, "FunctionProto": parse_function,
            "NodeProto": parse_node}
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _round_trip(msg, type_name: str) -> None:
    data = irmodel.dumps(msg)
    msg = irmodel.loads(data, type_name)
    try:
        text = to_text(msg)
    except ValueError:
        return  # nested deeper than the printer walks (a clean error)
    assert irmodel.dumps(_PARSERS[type_name](text)) == data, text


@_SETTINGS
@given(valid_models())
def test_valid_models_round_trip(model):
    _round_trip(model, "ModelProto")


@pytest.mark.parametrize("type_name", sorted(_PARSERS))
def test_any_message_round_trips(type_name):
    @_SETTINGS
    @given(messages(type_name, max_depth=4, max_items=3))
    def check(msg):
        _round_trip(msg, type_name)

    check()


_PIECES = st.sampled_from([
    "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", "=", "=>", ".", "?", "@", "@{", "@raw", "0x1f", "-",
    "float", "int64", "seq", "map", "graph", "ints", "tensor", "x", "y", "Relu", "nan", "-inf", "1", "-2",
    "1.5e3", "1e999", "99999999999999999999", '"s"', 'b"\\xff"', '"\\"', "\n", " ", "#c\n", "ir_version",
    "opset_import", "\ud800", "\x00", "@TypeProto{", "doc_string", "-name",
])


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_PIECES, max_size=40), st.sampled_from(sorted(_PARSERS)))
def test_generated_text_parses_or_raises_parse_error(pieces, type_name):
    try:
        _PARSERS[type_name]("".join(pieces))
    except ParseError:
        pass


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=200))
def test_any_text_parses_or_raises_parse_error(text):
    for parse in _PARSERS.values():
        try:
            parse(text)
        except ParseError:
            pass


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(valid_models(), st.data())
def test_mutated_model_text_parses_or_raises_parse_error(model, data):
    text = to_text(model)
    i = data.draw(st.integers(0, max(0, len(text) - 1)))
    j = data.draw(st.integers(i, min(len(text), i + 20)))
    piece = data.draw(st.sampled_from(["", "@", "{", "(", "[", "<", "0", "x", '"', "-", "@{", "nan(0x1)"]))
    try:
        parse_model(text[:i] + piece + text[j:])
    except ParseError:
        pass
