"""Bad text raises `ParseError` (a ValueError) naming line, column and what was
expected: never another exception, a recursion overflow, a hang, or an allocation
sized by a number in the text."""

from __future__ import annotations

import time

import pytest

import irmodel

from irmodel.parser import ParseError, parse_graph, parse_model, parse_node

GRAPH = "g (float[2] x) => (float[2] y) {\n   y = Relu (x)\n}"


def _error(parse, text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert isinstance(info.value, ValueError)
    return info.value


def test_error_names_line_column_and_what_was_expected():
    err = _error(parse_graph, "g (float[2] x) => (float[2] y) {\n   y = Relu (x\n}")
    assert (err.line, err.column) == (3, 1)
    assert "line: 3 column: 1" in str(err) and "expected" in str(err) and "')'" in str(err)


@pytest.mark.parametrize("text", [
    "y = Relu <a: int = 99999999999999999999> (x)",  # past int64
    "y = Relu <a: float = 1e999> (x)",  # past float
    "y = Relu <a: ints = [1, -99999999999999999999]> (x)",
    "y = Relu <a: string = \"\ud800\"> (x)",  # a lone surrogate
    "y = Relu <a = \"unterminated> (x)",
    "y = Relu <a: tensor = float[2] @raw 0x123> (x)",  # odd hex
    "y = Relu <a: tensor = float[2] @raw {1, nan(0x1)}> (x)",  # bits that are not a NaN
    "y = Relu <a: tensor = int8[2] @raw {1, 300}> (x)",
    "y = Relu <a: tensor = float[2] @elided{sha1: \"00\", bytes: 8}> (x)",
    "y = Relu <a: foo = 1> (x)",
    "y = Relu <a: ints = []",
    "y = Relu <a = []> (x)",
    "y = Relu (x) junk",
    "@{nope: 1} y = Relu (x)",
    "@NodeProto{input: [1]}",
    "y = Relu <a: tensor = float[N] {1}> (x)",
    "y = Relu <a: int = " + "9" * 100000 + "> (x)",  # no conversion sized by the input
    "\x00",
])
def test_bad_values_are_parse_errors(text):
    _error(parse_node, text)


def test_int64_bounds_are_accepted_exactly():
    n = parse_node("y = Relu <a: ints = [-9223372036854775808, 9223372036854775807]> (x)")
    assert list(n.attribute[0].ints) == [-(1 << 63), (1 << 63) - 1]


@pytest.mark.parametrize("depth", [50, 10_000])
def test_deeply_nested_graphs_are_a_clean_error_or_a_model(depth):
    text = "g () => () { y = If (c) <then_branch: graph = " * depth + "g () => () {}" + "> }" * depth
    start = time.perf_counter()
    try:
        parse_graph(text)
    except ParseError as err:
        assert "nest" in str(err)
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("depth", [30, 10_000])
def test_deeply_nested_types_are_a_clean_error_or_a_model(depth):
    text = "g (" + "seq(" * depth + "float" + ")" * depth + " x) => () {}"
    try:
        parse_graph(text)
    except ParseError as err:
        assert "nest" in str(err)


@pytest.mark.parametrize("text", ["", "<", "<ir_version: 1", "<ir_version: x>", "<foo: 1> g () => () {}",
                                  "g () => () {", "g (float x => () {}", "g () > () {}"])
def test_truncated_or_malformed_models_are_parse_errors(text):
    _error(parse_model, text)


def test_graph_text_round_trip_of_onnx_style_text():
    g = parse_graph(GRAPH)
    assert g.node[0].op_type == "Relu" and g.node[0].HasField("domain") and g.node[0].domain == ""


def test_printing_the_deepest_message_ends_in_text_or_a_value_error():
    from irmodel.printer import to_text

    root = g = irmodel.GraphProto(name="g")
    try:
        for _ in range(200):  # built downwards, as deep as the message classes allow
            n = g.node.add()
            n.op_type = "If"
            a = n.attribute.add()
            a.name = "then_branch"
            a.type = 5
            g = a.g
            g.name = "g"
    except ValueError:
        pass  # the classes refuse nesting past the wire format's limit
    try:
        text = to_text(root)
    except ValueError as err:
        assert "deeper" in str(err)
    else:
        assert text.count("If") > 10
