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


#: The one-byte lengths, ready made (names and nodes are short).
_SHORT_LENGTHS = [bytes((n,)) for n in range(128)]


class BodyTemplate:
    """A plain function body (see the module), ready to be stamped out once per call."""

    def __init__(self, function: Any, nodes: list) -> None:
        self.function = function
        self.nodes = nodes
        self.node_type = type(function.node[0])  # `make` gives no template to an empty body

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

    def stamp(self, renamer: Any) -> list:
        """The body's nodes for one call, renamed by ``renamer`` (bound to the call)."""
        make = self.node_type.FromString
        return [make(data) for data in self.node_bytes(renamer)]

    def node_bytes(self, renamer: Any) -> list:
        """The serialized nodes of `stamp` (a list's records of them: `records`).

        Tuned: the inliner's hot loop (75,000 nodes for 3,000 calls of a 25-node body),
        so each name's field is written inline, with no call per name
        (benchmarks/RESULTS.md, inline).
        """
        node_names = renamer.node_names
        short = _SHORT_LENGTHS
        out: list = []
        for name, inputs, outputs, rest in self.nodes:
            new_name, new_inputs, new_outputs = node_names(name, inputs, outputs)
            parts: list = []
            add = parts.append
            for field_tag, names in ((_INPUT_TAG, new_inputs), (_OUTPUT_TAG, new_outputs),
                                     (_NAME_TAG, () if new_name is None else (new_name,))):
                for x in names:
                    raw = x.encode("utf-8")
                    n = len(raw)
                    add(field_tag)
                    add(short[n] if n < 128 else encode_varint(n))
                    add(raw)
            add(rest)
            out.append(b"".join(parts))
        return out


def records(tag: bytes, items: list) -> list:
    """``items`` (serialized messages) as the records of a repeated field: tag, length,
    bytes each, as parts to join."""
    short = _SHORT_LENGTHS
    out = []
    for data in items:
        n = len(data)
        out.append(tag)
        out.append(short[n] if n < 128 else encode_varint(n))
        out.append(data)
    return out
