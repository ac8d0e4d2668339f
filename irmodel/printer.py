"""``onnx.printer``: models, graphs, functions and nodes as text.

The text is onnx's wherever onnx's parser reads it back to the same message, and
extends onnx's syntax where onnx would lose something (see ``docs/text-syntax.md``),
so that ``irmodel.parser.parse_model(to_text(m))`` gives back ``m`` byte for byte.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO


def to_text(proto: Any) -> str:
    """The text of a ModelProto, FunctionProto, GraphProto or NodeProto (onnx's
    ``onnx.printer.to_text``); TypeError for any other argument, as onnx."""
    from io import StringIO  # noqa: PLC0415

    buf = StringIO()
    write_text(proto, buf)
    return buf.getvalue()


def write_text(proto: Any, f: TextIO, *, elide_tensors: int | None = None, external: Any = None) -> None:
    """Write the text of ``proto`` to the text file ``f`` as it is made (never whole in
    memory).  ``elide_tensors=N`` replaces the values of raw tensors of more than N
    elements by their type, shape and SHA1 (``@elided{...}``: the parser refuses it
    unless told to accept it); ``external`` is a ``(tensor, data) -> text | None``
    callback that stores a tensor's bytes elsewhere (see `irmodel.cli.print`)."""
    from ._text.printer import Printer  # noqa: PLC0415

    kind = getattr(type(proto), "_type_name", None)
    p = Printer(f.write, elide_tensors, external)
    if kind == "ModelProto":
        p.model(proto)
    elif kind == "FunctionProto":
        p.function(proto)
    elif kind == "GraphProto":
        p.graph(proto, 3)
    elif kind == "NodeProto":
        p.node(proto, 3)
    else:
        raise TypeError("Unsupported argument type.")


__all__ = ["to_text", "write_text"]
