"""The checker's fast path for the nodes of a graph: read from their bytes, verdicts cached.

A 75,000-node graph holds a few dozen kinds of node.  The full path makes a NodeProto of
each node and applies every rule to it (tens of microseconds a node).  This path reads
what the rules depend on straight from the node's wire form, with one regular expression
match per node (`NODE`): the input and output names, and a *kind* key (op_type, domain,
the attributes, how many inputs and outputs and which are empty).  A node's own rules and
its schema's rules (`graph.Walker._node`) depend on nothing else but the check's context,
so the full path runs once per kind, on the first node of that kind, against a scratch
reporter, and its verdict ("no problem") is cached: every later node of that kind costs
a dict lookup.  The scope rules (topological order, single assignment) are set lookups
on the names read.

Whatever is unusual sends a node to the full path, in its place in the walk, so every
problem is reported exactly as the full path reports it: a node whose kind has problems,
whose names break a scope rule, whose fields are out of the usual order, longer than 127
bytes or not UTF-8, or whose attributes hold anything but numbers, strings and their
lists (tensors and graphs: the full path checks and recurses into them).  What the
regular expression and `attribute_kinds` accept is exactly well formed as protobuf reads
it (every length inside the node, every varint at most ten bytes, packed numbers whole),
so a node read here is a node the full path decodes without error.
"""

from __future__ import annotations

from wirefmt import DecodeError
from wirefmt.reader import unpack_varints
from wirefmt.schema import INT64
from wirefmt.varint import read_short_varint, read_varint

_PATTERNS: list = []
#: The node pattern's entry in the code cache (`codecache.compiled_pattern`).
PATTERN_NAME = "checker-node"
_LONGEST = 127  # names and fields up to this many bytes: a one-byte length


def node_pattern():
    """A NodeProto in canonical field order, compiled on first use (`re` is imported then).

    Groups: 1 the input fields, 2 the output fields, 3 the node's kind (op_type to domain:
    everything but its names), within it 4 the op_type field, 5 the attribute fields, 6 the
    domain field.  Each field is its tag, a one-byte length and exactly that many
    bytes: a length byte selects the branch of the same length, the only one that can
    match there (each branch starts with its own byte and then has no choice), so the
    alternation needs no atomic group (one cost 7% of the matching); the repetitions are
    possessive, and the first match is the only one.
    """
    if not _PATTERNS:
        from .._files.codecache import DOTALL, compiled_pattern  # noqa: PLC0415 - the checker's fast path only

        field = b"(?:" + b"|".join(b"\\x%02x" % n + (b".{%d}" % n if n else b"")
                                   for n in range(_LONGEST + 1)) + b")"
        node = (rb"((?:\x0a" + field + rb")*+)"      # input
                rb"((?:\x12" + field + rb")*+)"      # output
                rb"(?:\x1a" + field + rb")?+"        # name
                rb"((\x22" + field + rb")"           # op_type
                rb"((?:\x2a" + field + rb")*+)"      # attribute
                rb"(?:\x32" + field + rb")?+"        # doc_string
                rb"(\x3a" + field + rb")?+)")        # domain
        # Compiling it costs a noticeable share of a large check (benchmarks/RESULTS.md):
        # its compiled form is kept in the code cache (`codecache.compiled_pattern`).
        _PATTERNS.append(compiled_pattern(PATTERN_NAME, node, DOTALL))
    return _PATTERNS[0]


def skeleton(names: list | tuple) -> bytes:
    """How many names and which are empty, as a node's kind key holds them."""
    if "" not in names:
        return b"i" * len(names)
    return b"".join(b"i" if name else b"i\x00" for name in names)


def names_of(fields: bytes) -> list:
    """The names in a run of well-formed string fields of one-byte lengths (UTF-8 or
    UnicodeDecodeError)."""
    end = len(fields)
    if not end:
        return []
    a = fields[1] + 2
    if a + 2 <= end and a + 2 + fields[a + 1] == end:  # two names: inline
        return [fields[2:a].decode(), fields[a + 2:].decode()]
    out = []
    pos = 0
    while pos < end:
        a = pos + 2
        pos = a + fields[pos + 1]
        out.append(fields[a:pos].decode())
    return out


def masked_floats(fields: bytes) -> bytes:
    """A run of attribute fields (the node pattern's group 5) with the value of each
    attribute's ``f`` set to zero where it directly follows the attribute's name.

    No rule reads a float attribute's value (only that ``f`` is set, and the declared
    type), so two nodes differing only there have the same verdict: a Gemm's ``alpha`` or
    a LayerNormalization's ``epsilon`` that varies from node to node does not make every
    node a kind of its own.  Lengths and tags are kept, so the masked bytes still tell the
    structure apart: only the four bytes of a fixed32 field 2 (tag 0x15) that follows a
    name field with a one-byte length, inside the attribute, are zeroed.
    """
    if b"\x15" not in fields:
        return fields
    return _masked_from(fields, 0)


def masked_kind(kind: bytes) -> bytes:
    """A node's kind (the node pattern's group 3: its op_type field, attribute fields,
    doc_string and domain fields) with its attribute fields masked as `masked_floats`
    masks them; ``kind`` itself (the same object) when nothing is masked."""
    if b"\x15" not in kind:
        return kind
    return _masked_from(kind, kind[1] + 2)  # past the op_type field


def _masked_from(fields: bytes, pos: int) -> bytes:
    """`masked_floats` of the attribute fields from ``pos`` on, up to the first field that
    is not an attribute (fields with one-byte lengths, as the node pattern matched them)."""
    end = len(fields)
    while pos < end and fields[pos] == 0x2A:
        a = pos + 2
        pos = a + fields[pos + 1]
        if a + 2 <= pos and fields[a] == 0x0A:
            n = fields[a + 1]
            f = a + 2 + n
            if n < 128 and f + 5 <= pos and fields[f] == 0x15:
                fields = fields[:f + 1] + b"\x00\x00\x00\x00" + fields[f + 5:]
    return fields


# AttributeProto's fields on the wire: tag -> what the kind key keeps of it.
_NAME, _TYPE, _REF, _DOC = 0x0A, 0xA0, 0xAA, 0x6A
_F, _I, _S, _FLOATS_PACKED, _FLOATS_ONE, _INTS_PACKED, _INTS_ONE, _STRINGS = (
    0x15, 0x18, 0x22, 0x3A, 0x3D, 0x42, 0x40, 0x4A)
_LENGTH_FIELDS = frozenset({_NAME, _S, _FLOATS_PACKED, _INTS_PACKED, _STRINGS, _DOC})


def attribute_kinds(fields: bytes) -> tuple | None:
    """What the rules depend on in a run of AttributeProto fields (the node's field 5):
    per attribute its name, its ``type`` as read, which value fields occur on the wire
    (and whether each is empty) and whether ``ref_attr_name`` is absent, empty or set.

    None for anything else (tensors, graphs, type protos, unknown or repeated singular
    fields, malformed bytes): the node goes to the full path.
    """
    out = []
    pos = 0
    end = len(fields)
    try:
        while pos < end:  # each attribute: tag 0x2a, one-byte length (the node pattern's)
            a = pos + 2
            pos = a + fields[pos + 1]
            kind = _one_attribute(fields, a, pos)
            if kind is None:
                return None
            out.append(kind)
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    return tuple(out)


def _one_attribute(src: bytes, pos: int, end: int) -> tuple | None:
    name = attr_type = None
    ref = 0
    values = []
    while pos < end:
        tag = src[pos]
        if tag == _TYPE or tag == _REF:
            if src[pos + 1] != 1:
                return None
            if tag == _TYPE:
                if attr_type is not None:
                    return None
                attr_type, pos = read_varint(src, pos + 2, end)
            else:
                if ref:
                    return None
                n = src[pos + 2]
                if n > 127:
                    return None
                a = pos + 3
                pos = a + n
                ref = 2 if n else 1
            continue
        if tag in _LENGTH_FIELDS:
            n = src[pos + 1]
            if n > 127:
                return None
            a = pos + 2
            pos = a + n
            if pos > end:
                return None
            if tag == _NAME:
                if name is not None:
                    return None
                name = src[a:pos].decode()
            elif tag == _FLOATS_PACKED:
                if n % 4:
                    return None
                values.append((tag, n > 0))
            elif tag == _INTS_PACKED:
                unpack_varints(INT64, src, a, pos)  # DecodeError where protobuf fails
                values.append((tag, n > 0))
            elif tag != _DOC:
                values.append((tag, n > 0))
            continue
        if tag == _F or tag == _FLOATS_ONE:
            pos += 5
        elif tag == _I or tag == _INTS_ONE:
            _, pos = read_varint(src, pos + 1, end)
        else:
            return None
        values.append((tag, True))
    if pos != end:
        return None
    return name, attr_type, tuple(values), ref


def dims_well_formed(key: tuple) -> bool:
    """The packed dims runs of a `tensor_kind` key decode (as protobuf decodes them).

    Asked before the full path checks the first tensor of a key, so that a malformed run
    sends the tensor to the full path, which reports it where the reference would.
    """
    try:
        for tag, value in key:
            if tag == _DIMS_PACKED:
                unpack_varints(INT64, value, 0, len(value))
    except DecodeError:
        return False
    return True


# TensorProto's fields an initializer of weights usually has (anything else: the full path).
_DIMS_PACKED, _DIMS_ONE, _DATA_TYPE, _TENSOR_NAME, _RAW_DATA = 0x0A, 0x08, 0x10, 0x42, 0x4A


def tensor_kind(src, pos: int, end: int) -> tuple | None:
    """``(name, kind key)`` of the TensorProto in ``src[pos:end]``, or None.

    Read only when it holds nothing but dims, data_type, one non-empty UTF-8 name and
    raw_data.  The key is every field but the name, in wire order, with raw_data by its
    length: all that the tensor rules read (they never read the weights).  Packed dims are
    in the key as their bytes, not decoded here: `dims_well_formed` is asked once per key.
    """
    name = None
    key = []
    try:
        while pos < end:
            tag = src[pos]
            if tag == _DIMS_ONE or tag == _DATA_TYPE:
                value = src[pos + 1]
                if value < 128:
                    pos += 2
                else:
                    value, pos = read_varint(src, pos + 1, end)
                key.append((tag, value))
                continue
            if tag != _DIMS_PACKED and tag != _TENSOR_NAME and tag != _RAW_DATA:
                return None
            n = src[pos + 1]
            if n < 128:
                a = pos + 2
            else:
                n, a = read_short_varint(src, pos + 1, end)
            pos = a + n
            if pos > end:
                return None
            if tag == _RAW_DATA:
                key.append((tag, n))
            elif tag == _TENSOR_NAME:
                if name is not None:
                    return None
                name = src[a:pos].decode()
            else:
                key.append((tag, src[a:pos]))
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    if pos != end or not name:
        return None
    return name, tuple(key)
