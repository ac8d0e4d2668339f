"""onnx.helper's ``printable_*`` one-line and graph summaries, and ``strip_doc_string``.

`irmodel.helper` re-exports these under onnx's names.  The text is onnx's (its tests and
users compare it), the code ours.  Strings from a file are shown as onnx shows them
(decoded, cut at 64 characters); ``printer.to_text`` is the syntax meant for reading.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from wirefmt.schema import MESSAGE

from ._dtypes import rows as _dt
from .messages import TensorProto

_CUT = 64  # characters of a string shown before "...<+len=N>"


def _short(s: Any) -> str:
    text = s if isinstance(s, str) else bytes(s).decode("utf-8", errors="ignore") \
        if isinstance(s, (bytes, bytearray, memoryview)) else str(s)
    return text if len(text) < _CUT else text[:_CUT] + f"...<+len={len(text) - _CUT}>"


def _text(msg: Any) -> str:
    """A message as onnx's ``str()`` of it shows: protobuf's text format."""
    from wirefmt.textform import to_text  # noqa: PLC0415

    return to_text(msg)


def _float(f: float) -> str:
    return f"{f:.15g}"  # the same digits on every Python version


def _listing(items: list, show) -> str:
    """``[a, b]``-style items separated by ", " with a comma after all but the last."""
    return " ".join(["[", *(f"{show(x)}{',' if i < len(items) - 1 else ''}" for i, x in enumerate(items)), "]"])


def _scalar_tensor(t: Any) -> str:
    field = _dt.ELEM_TYPES[t.data_type].field if t.data_type in _dt.ELEM_TYPES else "raw_data"
    return f"<Scalar Tensor {getattr(t, field)}>"


def printable_attribute(attr: Any, subgraphs: bool = False) -> str | tuple[str, list]:
    """``name = value`` of an attribute; with ``subgraphs``, also the graphs it holds."""
    text, graphs = _attribute_and_graphs(attr)
    return (text, graphs) if subgraphs else text


def _attribute_and_graphs(attr: Any) -> tuple[str, list]:
    graphs: list = []
    if attr.HasField("f"):
        value = _float(attr.f)
    elif attr.HasField("i"):
        value = str(attr.i)
    elif attr.HasField("s"):
        value = repr(_short(attr.s))
    elif attr.HasField("t"):
        value = "<Tensor>" if len(attr.t.dims) else _scalar_tensor(attr.t)
    elif attr.HasField("g"):
        value = f"<graph {attr.g.name}>"
        graphs.append(attr.g)
    elif attr.HasField("tp"):
        value = f"<Type Proto {_text(attr.tp)}>"
    elif attr.HasField("sparse_tensor"):
        value = "<Sparse Tensor>"
    elif attr.floats:
        value = "[" + ", ".join(map(_float, attr.floats)) + "]"
    elif attr.ints:
        value = "[" + ", ".join(map(str, attr.ints)) + "]"
    elif attr.strings:
        value = str([_short(s) for s in attr.strings])
    elif attr.tensors:
        value = "[<Tensor>, ...]"
    elif attr.sparse_tensors:
        value = "[<Sparse Tensor>, ...]"
    elif attr.type_protos:
        value = _listing(list(attr.type_protos), lambda tp: f"<Type Proto {_text(tp)}>")
    elif attr.graphs:
        value = _listing(list(attr.graphs), lambda g: f"<graph {g.name}>")
        graphs.extend(attr.graphs)
    else:
        value = "<Unknown>"
    return f"{attr.name} = {value}", graphs


def printable_dim(dim: Any) -> str:
    which = dim.WhichOneof("value")
    return "?" if which is None else str(getattr(dim, which))


def _shape_text(dims: list) -> str:
    return ", " + "x".join(dims) if dims else ", scalar"


def printable_type(t: Any) -> str:
    which = t.WhichOneof("value")
    if which is None:
        return ""
    if which != "tensor_type":
        return f"Unknown type {which}"
    text = TensorProto.DataType.Name(t.tensor_type.elem_type)
    if t.tensor_type.HasField("shape"):
        text += _shape_text([printable_dim(d) for d in t.tensor_type.shape.dim])
    return text


def printable_value_info(v: Any) -> str:
    return f"%{v.name}[{printable_type(v.type)}]"  # brackets even without a type, as onnx


def printable_tensor_proto(t: Any) -> str:
    return f"%{t.name}[{TensorProto.DataType.Name(t.data_type)}{_shape_text([str(d) for d in t.dims])}]"


def printable_node(node: Any, prefix: str = "", subgraphs: bool = False) -> str | tuple[str, list]:
    """``%out = Op[attrs](%in)``; with ``subgraphs``, also the graphs its attributes hold."""
    text, graphs = _node_and_graphs(node, prefix)
    return (text, graphs) if subgraphs else text


def _node_and_graphs(node: Any, prefix: str) -> tuple[str, list]:
    graphs: list = []
    attrs = []
    for attr in node.attribute:
        text, held = _attribute_and_graphs(attr)
        attrs.append(text)
        graphs.extend(held)
    call = node.op_type + (f"[{', '.join(sorted(attrs))}]" if len(node.attribute) else "")
    call += "(" + ", ".join(f"%{n}" for n in node.input) + ")"
    outputs = ", ".join(f"%{n}" for n in node.output)
    return prefix + (f"{outputs} = {call}" if outputs else call), graphs


def printable_graph(graph: Any, prefix: str = "") -> str:
    """A graph as onnx's old summary text (inputs, initializers, nodes, return), its
    subgraphs after it.  onnx deprecates it for ``printer.to_text``; kept for callers."""
    lines: list[str] = []
    header = ["graph", graph.name]
    initializer_names = {t.name for t in graph.initializer}
    if len(graph.input):
        header.append("(")
        required = [printable_value_info(i) for i in graph.input if i.name not in initializer_names]
        defaulted = [printable_value_info(i) for i in graph.input if i.name in initializer_names]

        def section(title: list[str], entries: list[str]) -> None:
            nonlocal header
            lines.append(prefix + " ".join(header + title))
            lines.extend(prefix + "  " + e for e in entries)
            header = [")"]

        if required:
            section([], required)
        else:
            header.append(")")
        if defaulted:
            section(["optional inputs with matching initializers ("], defaulted)
        if len(defaulted) < len(initializer_names):
            input_names = {i.name for i in graph.input}
            section(["initializers ("], [printable_tensor_proto(t) for t in graph.initializer
                                         if t.name not in input_names])
    lines.append(prefix + " ".join(header + ["{"]))
    subgraphs: list = []
    for node in graph.node:
        text, held = _node_and_graphs(node, prefix + "  ")
        lines.append(text)
        subgraphs.extend(held)
    tail = "return" + (" " + ", ".join(f"%{o.name}" for o in graph.output) if len(graph.output) else "")
    lines.append(prefix + "  " + tail)
    lines.append(prefix + "}")
    lines.extend("\n" + printable_graph(g) for g in subgraphs)
    return "\n".join(lines)


def strip_doc_string(proto: Any) -> None:
    """Clear every ``doc_string`` in ``proto`` and the messages under it (iteratively:
    depth is bounded by the decoder's nesting limit, not by Python's stack)."""
    if not hasattr(proto, "_spec"):
        raise TypeError(f"proto must be an instance of an irmodel message, not {type(proto).__name__}.")
    pending = [proto]
    while pending:
        msg = pending.pop()
        for field in msg._spec.fields:
            if field.name == "doc_string":
                if msg.HasField("doc_string"):
                    msg.ClearField("doc_string")
            elif field.kind == MESSAGE:
                if field.repeated:
                    pending.extend(getattr(msg, field.name))
                elif msg.HasField(field.name):
                    pending.append(getattr(msg, field.name))
