"""A protobuf buffer parsed once into a tree of byte spans, and splicing edits into it.

The wire mutator and the reducer both work by replacing one byte range inside one
message (a *container*) and re-encoding the length prefixes of the length-delimited
fields that enclose it.  `parse_spans` records, for every field, where its tag, length
prefix and value lie; `Node.splice` builds the edited buffer from slices of the original plus
the new prefixes, so a mutant costs a few slices and one join, never a re-encode of the
message.

What counts as a container: the top level, every length-delimited field the schema
declares a message (parsed even when only a prefix of it parses: the rest is its
``tail``), every group, and, for fields the schema does not know (or with no schema),
every length-delimited payload that parses completely as fields and is not a short
control-free text (the rule ``irmodel raw`` follows).  Nesting stops at `MAX_DEPTH`.
"""

from __future__ import annotations

from typing import cast

from wirefmt import (DecodeError, MAX_DEPTH, Registry, encode_varint, read_tag,
                     read_varint, skip_group)

from ._wire_internals import GROUP, I32, I64, LEN, MESSAGE, PACKABLE, SGROUP, STRING, VARINT

_SMALL = [bytes((i,)) for i in range(128)]  # one-byte varints, prebuilt for `Node.splice`
#: Short payloads without control bytes are text, not messages (as in ``irmodel raw``).
_SHORT_TEXT = 256


class Node:
    """One field occurrence (or the top level, ``number == 0``), as spans of the buffer.

    ``tag_start:head_end`` is the tag, ``head_end:start`` the length prefix (empty unless
    length-delimited), ``start:end`` the value (the payload, or a group's body) and
    ``tag_start:stop`` the whole field (a group's end tag included).  ``children`` is the
    list of fields inside, for containers (else None), and ``tail`` where their unparsed
    rest starts (``end`` when everything parsed).  ``chain`` holds, outermost first,
    ``(prefix_start, prefix_end, payload_length)`` of every length-delimited field that
    encloses this node's *value* (itself included): what `Node.splice` re-encodes.
    """

    __slots__ = ("number", "wire_type", "value", "tag_start", "head_end", "start", "end", "stop",
                 "parent", "index", "depth", "field_spec", "message_spec", "children", "tail",
                 "chain", "is_text", "_plan", "_path")

    def __init__(self, number, wire_type, value, tag_start, head_end, start, end, stop, parent,
                 index, depth, field_spec):
        self.number = number
        self.wire_type = wire_type
        self.value = value
        self.tag_start = tag_start
        self.head_end = head_end
        self.start = start
        self.end = end
        self.stop = stop
        self.parent = parent
        self.index = index
        self.depth = depth
        self.field_spec = field_spec
        self.message_spec = None
        self.children = None
        self.tail = end
        self.chain = ()
        self.is_text = False
        self._plan = None
        self._path = None

    def path(self) -> tuple:
        """Child indexes from the top level down to this node."""
        if self._path is None:
            self._path = () if self.parent is None else self.parent.path() + (self.index,)
        return self._path

    def splice(self, buf: bytes, start: int, end: int, new: bytes) -> tuple[bytes, int]:
        """``buf`` with ``buf[start:end]`` (inside this node's value) replaced by ``new``.

        Every length prefix in ``chain`` is re-encoded for the new size.  A prefix that
        was written longer than needed keeps its width when the new length fits, so an
        overlong prefix made by an earlier mutation survives later ones; a canonical one
        stays canonical.  Returns ``(mutant, offset)``: ``offset`` is where ``new`` starts
        in the mutant.  The slices of ``buf`` between the enclosing length prefixes are
        the same for every edit inside one node, so they are cut once; an edit then costs
        one varint per enclosing level and one join.
        """
        delta = len(new) - (end - start)
        if not delta or not self.chain:  # no length prefix changes
            return b"".join((buf[:start], new, buf[end:])), start
        plan = self._plan
        if plan is None:
            pieces, pos = [], 0
            for ps, pe, _ in self.chain:
                pieces.append(buf[pos:ps])
                pos = pe
            # a prefix keeps its width only if it was written longer than needed
            plan = self._plan = (pieces, pos, [n for _, _, n in self.chain],
                                 [pe - ps if pe - ps > len(encode_varint(n)) else 0
                                  for ps, pe, n in self.chain],
                                 [pe - ps for ps, pe, _ in self.chain])
        pieces, last, lengths, overlong, widths = plan
        k = len(lengths)
        parts = cast("list[bytes]", [None] * (2 * k + 3))  # every slot is set below
        grown = 0
        for i in range(k - 1, -1, -1):
            n = lengths[i] + delta + grown
            p = _SMALL[n] if n < 128 else encode_varint(n)
            w = widths[i]
            if len(p) != w:
                if len(p) < overlong[i] <= 10:
                    p = padded_varint(n, overlong[i])
                grown += len(p) - w
            parts[2 * i] = pieces[i]
            parts[2 * i + 1] = p
        parts[2 * k] = buf[last:start]
        parts[2 * k + 1] = new
        parts[2 * k + 2] = buf[end:]
        return b"".join(parts), start + grown

    def __repr__(self) -> str:
        return (f"Node({self.number}, wt={self.wire_type}, {self.tag_start}:{self.stop}, "
                f"path={self.path()})")


class SpanTree:
    """Every node of one buffer, with lists of nodes by what mutations can do to them."""

    def __init__(self, buf: bytes, registry: Registry | None, root_type: str | None):
        self.buf = buf
        self.registry = registry
        self.root_type = root_type
        self.fields: list = []
        self.containers: list = []
        self.by_wire_type: dict = {VARINT: [], I64: [], LEN: [], SGROUP: [], I32: []}
        self.messages_by_type: dict = {}
        self.texts: list = []
        self.packed: list = []
        self.derived: dict = {}  # lists computed from the tree by their users, cached with it
        spec = registry.message(root_type) if registry is not None and root_type else None
        self.root = Node(0, LEN, None, 0, 0, 0, len(buf), len(buf), None, -1, -1, None)
        self.root.message_spec = spec
        self._fill(self.root, 0, len(buf), 0)
        self.end = self.root.tail  # where the parseable top level ends

    def _fill(self, node: Node, start: int, end: int, depth: int) -> None:
        """Parse ``buf[start:end]`` as the fields of container ``node`` (recursively)."""
        buf = self.buf
        spec = node.message_spec
        by_number = spec.by_number if spec is not None else None
        children: list[Node]
        node.children = children = []
        self.containers.append(node)
        pos = start
        while pos < end:
            tag_start = pos
            try:
                number, wt, pos = read_tag(buf, pos, end)
                head_end = pos
                if wt == VARINT:
                    value, pos = read_varint(buf, pos, end)
                    vstart, vend, stop = head_end, pos, pos
                elif wt == LEN:
                    value, vstart = read_varint(buf, pos, end)
                    if value > end - vstart:
                        raise DecodeError("length past the end", pos)
                    vend = stop = pos = vstart + value
                elif wt == I32 or wt == I64:
                    width = 4 if wt == I32 else 8
                    if end - pos < width:
                        raise DecodeError("truncated", pos)
                    value = int.from_bytes(buf[pos:pos + width], "little")
                    vstart, vend = pos, pos + width
                    stop = pos = vend
                elif wt == SGROUP:
                    value = None
                    vstart = pos
                    vend, pos = skip_group(buf, pos, end, number, depth + 1)
                    stop = pos
                else:  # a stray end-group tag
                    raise DecodeError("unexpected end-group", tag_start)
            except DecodeError:
                pos = tag_start
                break
            fs = by_number.get(number) if by_number is not None else None
            child = Node(number, wt, value, tag_start, head_end, vstart, vend, stop, node,
                         len(children), depth, fs)
            children.append(child)
            self.fields.append(child)
            self.by_wire_type[wt].append(child)
            if wt == LEN:
                child.chain = node.chain + ((head_end, vstart, value),)
                self._classify_payload(child, depth)
            elif wt == SGROUP:
                child.chain = node.chain
                if depth + 1 < MAX_DEPTH:
                    if fs is not None and fs.kind == GROUP:
                        # a field spec comes from a message spec, so from the registry
                        assert self.registry is not None
                        child.message_spec = self.registry.message(fs.type_name)
                    self._fill(child, vstart, vend, depth + 1)
        node.tail = pos

    def _classify_payload(self, node: Node, depth: int) -> None:
        fs = node.field_spec
        if fs is not None:
            if fs.kind == MESSAGE:
                if depth + 1 < MAX_DEPTH:
                    assert self.registry is not None  # fs came from a message spec of the registry
                    node.message_spec = self.registry.message(fs.type_name)
                    self.messages_by_type.setdefault(fs.type_name, []).append(node)
                    self._fill(node, node.start, node.end, depth + 1)
                return
            if fs.kind == STRING:
                node.is_text = True
                self.texts.append(node)
            elif fs.repeated and fs.kind in PACKABLE:
                self.packed.append(node)
            return
        start, end = node.start, node.end
        if start < end and depth + 1 < MAX_DEPTH:
            text = _looks_like_text(self.buf, start, end)
            if not (text and end - start <= _SHORT_TEXT) and _parses_completely(self.buf, start, end, depth + 1):
                self._fill(node, start, end, depth + 1)
                return
            if text:
                node.is_text = True
                self.texts.append(node)
        elif start == end:
            node.is_text = True
            self.texts.append(node)


def _parses_completely(buf, start: int, end: int, depth: int) -> bool:
    pos = start
    try:
        while pos < end:
            number, wt, pos = read_tag(buf, pos, end)
            if wt == VARINT:
                pos = read_varint(buf, pos, end)[1]
            elif wt == LEN:
                n, pos = read_varint(buf, pos, end)
                if n > end - pos:
                    return False
                pos += n
            elif wt == I32 or wt == I64:
                pos += 4 if wt == I32 else 8
                if pos > end:
                    return False
            elif wt == SGROUP:
                pos = skip_group(buf, pos, end, number, depth + 1)[1]
            else:
                return False
    except DecodeError:
        return False
    return True


def _looks_like_text(buf, start: int, end: int) -> bool:
    """Printable UTF-8 without control bytes other than tab and line breaks."""
    chunk = bytes(buf[start:end])
    if any(b < 32 and b not in (9, 10, 13) or b == 127 for b in chunk[:64]):
        return False
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return text.isascii() or text.translate({9: None, 10: None, 13: None}).isprintable()


def padded_varint(n: int, width: int) -> bytes:
    """``n`` as a varint of exactly ``width`` bytes (redundant continuation bytes added).

    ``width`` may exceed 10, giving a varint no conforming reader accepts.
    """
    enc = encode_varint(n)
    if width <= len(enc):
        return enc
    return enc[:-1] + bytes((enc[-1] | 0x80,)) + b"\x80" * (width - len(enc) - 1) + b"\x00"


def message_cycles(registry: Registry) -> dict:
    """For each message type that can contain itself, the shortest way to do it.

    ``{type_name: [(field_number, wire_type), ...]}``: the fields to nest, outermost
    first, to get from a message of that type back to one.  Used to nest past the depth
    limit along fields a schema-aware parser really descends into.
    """
    out: dict = {}
    edges = {name: [(f.number, LEN if f.kind == MESSAGE else SGROUP, f.type_name)
                    for f in spec.fields if f.kind in (MESSAGE, GROUP)]
             for name, spec in registry.messages.items()}
    for origin in edges:
        # breadth-first search for the shortest path from origin back to origin
        seen = {origin}
        frontier: list[tuple[str, list[tuple[int, int]]]] = [(origin, [])]
        found = None
        while frontier and found is None:
            nxt = []
            for name, path in frontier:
                for number, wt, target in edges.get(name, ()):
                    step = path + [(number, wt)]
                    if target == origin:
                        found = step
                        break
                    if target not in seen:
                        seen.add(target)
                        nxt.append((target, step))
                if found is not None:
                    break
            frontier = nxt
        if found is not None:
            out[origin] = found
    return out


__all__ = ["Node", "SpanTree", "padded_varint", "message_cycles"]

