"""``onnx.parser``: models, graphs, functions and nodes from text.

Reads onnx's syntax as onnx's parser does, and our extension of it (see
``docs/text-syntax.md``) with which `irmodel.printer.to_text` says everything onnx's
syntax cannot.  Every failure is a `ParseError` (a ValueError) naming the line, the
column and what was expected.
"""

from __future__ import annotations

from ._text.errors import ParseError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


def _parse(kind: str, text: str, accept_elided: bool = False, load_file: Callable | None = None) -> Any:
    from ._text.parser import Parser  # noqa: PLC0415

    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"the text is not UTF-8: {exc}") from None
    p = Parser(text, accept_elided, load_file)
    try:
        if kind == "ModelProto":
            msg = p.model()
        else:
            msg = p.c[kind]()
            if kind == "GraphProto":
                p.graph_into(msg)
            elif kind == "FunctionProto":
                p.function_into(msg)
            else:
                p.node_into(msg)
            p.end()
    except RecursionError:  # a safety net: the depth budget keeps well inside the stack
        raise p.lx.fail("nested too deeply") from None
    return msg


def parse_model(model_text: str, *, accept_elided: bool = False, load_file: Callable | None = None) -> Any:
    """A ModelProto from its text (onnx's ``parse_model``).  ``accept_elided``: read
    tensors printed without their values as tensors without data; ``load_file``:
    ``(location, offset, length) -> bytes`` for tensors whose data the printer wrote
    to a file."""
    return _parse("ModelProto", model_text, accept_elided, load_file)


def parse_graph(graph_text: str) -> Any:
    """A GraphProto from its text (onnx's ``parse_graph``)."""
    return _parse("GraphProto", graph_text)


def parse_function(function_text: str) -> Any:
    """A FunctionProto from its text (onnx's ``parse_function``)."""
    return _parse("FunctionProto", function_text)


def parse_node(node_text: str) -> Any:
    """A NodeProto from its text (onnx's ``parse_node``)."""
    return _parse("NodeProto", node_text)


__all__ = ["ParseError", "parse_model", "parse_graph", "parse_function", "parse_node"]
