"""onnx's short ``repr()`` of ModelProto, GraphProto and FunctionProto.

A model's repr names its parts and counts its lists instead of printing them (a repr of
a 5 GB model must not be a 5 GB string); the text is onnx's, so that doctests and logs
read the same.  `irmodel.messages` installs these on the classes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


def _opsets(msg: Any) -> str:
    return repr({o.domain: o.version for o in msg.opset_import})


def _parts(msg: Any, parts: list[tuple[str, Callable[[Any], str]]]) -> str:
    """``, name=value`` for each part whose field is set (non-empty)."""
    out = []
    for field, show in parts:
        value = getattr(msg, field)
        if value if not hasattr(value, "__len__") else len(value):
            out.append(f", {show(msg)}")
    return "".join(out)


def _count(field: str, noun: str) -> tuple[str, Callable[[Any], str]]:
    return field, lambda m: f"{field}=<{len(getattr(m, field))} {noun}>"


def _quoted(field: str) -> tuple[str, Callable[[Any], str]]:
    return field, lambda m: f"{field}='{getattr(m, field)}'"


_MODEL_PARTS = [("opset_import", lambda m: f"opset_import={_opsets(m)}"), _quoted("domain"),
                _quoted("producer_name"), _quoted("producer_version")]
_GRAPH_PARTS = [_count("input", "inputs"), _count("output", "outputs"), _count("initializer", "initializers"),
                _count("node", "nodes"), _count("value_info", "value_info")]
_FUNCTION_PARTS = [_quoted("domain"), _quoted("overload"), ("opset_import", lambda m: f"opset_import={_opsets(m)}"),
                   _count("input", "inputs"), _count("output", "outputs"),
                   ("attribute", lambda m: f"attribute={list(m.attribute)}"), _count("node", "nodes")]


def model_repr(self: Any) -> str:
    # The graph is always shown, as onnx (whose message objects are always true) shows it.
    functions = f", functions=<{len(self.functions)} functions>" if len(self.functions) else ""
    return (f"ModelProto(ir_version={self.ir_version}{_parts(self, _MODEL_PARTS)}, graph={self.graph!r}"
            f"{functions})")


def graph_repr(self: Any) -> str:
    return f"GraphProto('{self.name}'{_parts(self, _GRAPH_PARTS)})"


def function_repr(self: Any) -> str:
    return f"FunctionProto('{self.name}'{_parts(self, _FUNCTION_PARTS)})"
