"""Inlining many calls of one plain function: the body read once, each call's nodes stamped out.

The general way (`inline._Inliner._append`) copies the callee for every call, binds its
attribute references, renames through the message API and appends node by node: a model
whose 3,000 blocks are calls of one 25-node function (what exporters that keep modules as
functions write) then re-reads and re-encodes 75,000 nodes, four times onnx's time.  For a
*plain* body (no value_info, no attribute reference, no sub-graph, no node that is itself a
call to inline) a call needs nothing of that: only the names change.  `BodyTemplate` reads
each body node once into its name, inputs and outputs and the bytes of all its other
fields; `BodyTemplate.stamp` renames with the call's `CallRenamer` in the general way's
order (name, inputs, outputs, node after node: the same fresh names, the same counter) and
makes each node from its bytes (opened lazily, written back as they are).

The bytes are protobuf's layout (fields in number order), so the result is byte for byte
what the general way gives: a body node whose fields are not in that order, or that holds
anything but length-delimited fields, makes the body not plain.
"""

from __future__ import annotations

from wirefmt.reader import iter_fields
from wirefmt.schema import LEN
from wirefmt.varint import encode_varint

from .._wireview.fields import number, tag

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

_INPUT, _OUTPUT, _NAME = (number("NodeProto", f) for f in ("input", "output", "name"))
_INPUT_TAG, _OUTPUT_TAG, _NAME_TAG = (encode_varint(tag("NodeProto", f, LEN)) for f in ("input", "output", "name"))
assert _INPUT < _OUTPUT < _NAME == 3, "a plain node's names are its first three fields"
#: The ``node`` field's tag by the type of what holds the nodes.
_NODE_TAGS = {name: encode_varint(tag(name, "node", LEN)) for name in ("GraphProto", "FunctionProto")}


def _plain_node(node: Any) -> tuple | None:
    """``(name or None, inputs, outputs, other fields' bytes)`` of a plain node, else None."""
    for a in node.attribute:
        if a.ref_attr_name or a.HasField("g") or len(a.graphs):
            return None
    data = node.SerializeToString()
    inputs: list = []
    outputs: list = []
    name = None
    rest = len(data)
    last = 0
    for f in iter_fields(data):
        if f.wire_type != LEN or f.number < last:
            return None
        last = f.number
        if f.number > _NAME:
            rest = min(rest, f.tag_start)
            continue
        text = data[f.start:f.end].decode("utf-8")
        if f.number == _INPUT:
            inputs.append(text)
        elif f.number == _OUTPUT:
            outputs.append(text)
        elif name is None:
            name = text
        else:
            return None  # a repeated name: not what an encoder writes
    return name, inputs, outputs, data[rest:]


def _string_field(tag: bytes, text: str) -> bytes:
    return _string_field_bytes(tag, text.encode("utf-8"))


def _string_field_bytes(tag: bytes, raw: bytes) -> bytes:
    return tag + encode_varint(len(raw)) + raw


class BodyTemplate:
    """A plain function body (see the module), ready to be stamped out once per call."""

    def __init__(self, function: Any, nodes: list) -> None:
        self.function = function
        self.nodes = nodes

    @classmethod
    def make(cls, function: Any, expands: Callable[[Any], bool]) -> BodyTemplate | None:
        """The template of ``function``, or None when its body is not plain (``expands``:
        does the inliner replace this node too?)."""
        if len(function.value_info) or not len(function.node):
            return None
        nodes = []
        for node in function.node:
            if expands(node):
                return None
            plain = _plain_node(node)
            if plain is None:
                return None
            nodes.append(plain)
        return cls(function, nodes)

    def stamp(self, renamer: Any, out: NodeBytes) -> None:
        """Add to ``out`` the body's nodes for one call, renamed by ``renamer`` (bound to
        the call), as the bytes of its holder's ``node`` fields: no message is made here."""
        lookup, unique, node_tag, pieces = renamer._lookup, renamer.unique, out.node_tag, out.pieces
        for name, inputs, outputs, rest in self.nodes:
            new_name = unique(name) if name else name  # the general way's order: name, inputs, outputs
            parts = [_string_field(_INPUT_TAG, lookup(x, False)) for x in inputs]
            parts.extend(_string_field(_OUTPUT_TAG, lookup(x, True)) for x in outputs)
            if new_name is not None:
                parts.append(_string_field(_NAME_TAG, new_name))
            parts.append(rest)
            pieces.append(_string_field_bytes(node_tag, b"".join(parts)))


class NodeBytes:
    """Nodes for a graph or function, gathered as the bytes of its ``node`` fields and
    merged into it in one `MergeFromString`, which keeps them as spans of one buffer,
    decoded when read: making each stamped node a message costs a scan per node (75,000
    nodes: about 2 s), and a save of nodes that are still exactly their bytes copies them
    without walking them.  ``flush`` before anything else appends to the holder, so that
    the order of its nodes is the order they were made in."""

    __slots__ = ("holder", "node_tag", "pieces")

    def __init__(self, holder: Any) -> None:
        self.holder = holder
        self.node_tag = _NODE_TAGS[type(holder).__qualname__]
        self.pieces: list = []

    def flush(self) -> None:
        if self.pieces:
            self.holder.MergeFromString(b"".join(self.pieces))
            self.pieces = []
