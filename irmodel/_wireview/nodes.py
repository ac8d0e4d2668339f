"""The NodeProto reader: a node's names, op type, domain and attribute bytes from its wire form.

Two ways in, one set of rules:

* `read_node` (and, in hot loops, the `node_pattern` it is built on: one regular
  expression match per node) answers a `Node` record for a node whose fields are in the
  order exporters write them (input, output, name, op_type, attribute, doc_string,
  domain), each of a one-byte length, names in UTF-8; else None.  The checker, inference's
  node pass and its sub-graph scan read nodes this way, each with its own cache.
* `node_op` reads any *plain* node field by field (the summary's census): its op type
  and domain, if its attributes hold no graph, no sparse tensor and no tensor that sets
  ``data_location``; else None.

Neither raises: whatever they decline takes the message path, which raises the error the
bytes deserve.  What they accept is exactly well formed as protobuf reads it, so the two
paths agree (the tests run every corpus model both ways, `fastpath.use_fast_paths`).

`attribute_kinds` reads what the checker's rules and inference's keys depend on in a run
of attribute fields (numbers, strings and their lists, and for the checker tensors of
dims, data_type and raw_data, by `tensorscan.tensor_kind`; anything else: None).
"""

from __future__ import annotations

from wirefmt.errors import DecodeError
from wirefmt.reader import unpack_varints
from wirefmt.schema import INT64, LEN as _LEN, VARINT as _VARINT
from wirefmt.varint import read_short_varint, read_varint

from . import fields as F
from .fastpath import declined
from .patterns import compiled
from .tensorscan import dims_well_formed, tensor_kind
from .wire import after_varint, field


def node_pattern():
    """The compiled node pattern (`patterns._node`: groups 1 inputs, 2 outputs, 3 kind,
    4 op_type, 5 attributes, 6 domain, each as its fields' bytes)."""
    return compiled("node")


class Node:
    """A node read from its bytes (`read_node`).

    ``kind`` is every field but the names (op_type to domain, as bytes: equal kinds are
    equal nodes but for their names); ``attributes`` the attribute fields' bytes;
    ``plain``: every attribute holds numbers, strings or their lists only (no tensor, no
    graph), exactly well formed (`attribute_kinds`).
    """

    __slots__ = ("inputs", "outputs", "op_type", "domain", "attributes", "kind", "plain")

    def __init__(self, inputs: list, outputs: list, op_type: str, domain: str, attributes: bytes, kind: bytes,
                 plain: bool):
        self.inputs = inputs
        self.outputs = outputs
        self.op_type = op_type
        self.domain = domain
        self.attributes = attributes
        self.kind = kind
        self.plain = plain


def read_node(src, start: int, end: int, index: int = -1) -> Node | None:
    """The `Node` in ``src[start:end]``, or None (declined: see `fastpath.trace`)."""
    m = node_pattern().fullmatch(src, start, end)
    if m is None:
        declined("node", index, "fields out of order, a field of 128 bytes or more, or another field")
        return None
    ins, outs, kind, op, attrs, dom = m.group(1, 2, 3, 4, 5, 6)
    try:
        inputs, outputs = names_of(ins), names_of(outs)
        op_type = op[2:].decode()
        domain = dom[2:].decode() if dom else ""
    except UnicodeDecodeError:
        declined("node", index, "a name that is not UTF-8")
        return None
    plain = not attrs or attribute_kinds(attrs) is not None
    return Node(inputs, outputs, op_type, domain, attrs, kind, plain)


def has_no_graph(m) -> bool:
    """A node pattern match whose attributes are plain (`Node.plain`): it holds no graph."""
    attrs = m.group(5)
    return not attrs or attribute_kinds(attrs) is not None


# -- names -----------------------------------------------------------------------------------


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


# -- attributes ------------------------------------------------------------------------------

#: The tag of an attribute's ``f`` as bytes: attribute bytes without it hold no float value.
FLOAT_TAG = bytes((F.ATTR_F,))


def masked_floats(fields: bytes) -> bytes:
    """A run of attribute fields (the node pattern's group 5) with the value of each
    attribute's ``f`` set to zero where it directly follows the attribute's name.

    No rule reads a float attribute's value (only that ``f`` is set, and the declared
    type), so two nodes differing only there have the same verdict: a Gemm's ``alpha`` or
    a LayerNormalization's ``epsilon`` that varies from node to node does not make every
    node a kind of its own.  Lengths and tags are kept, so the masked bytes still tell the
    structure apart: only the four bytes of a fixed32 ``f`` that follows a name field
    with a one-byte length, inside the attribute, are zeroed.
    """
    if FLOAT_TAG not in fields:
        return fields
    return _masked_from(fields, 0)


def masked_kind(kind: bytes) -> bytes:
    """A node's kind (the node pattern's group 3) with its attribute fields masked as
    `masked_floats` masks them; ``kind`` itself (the same object) when nothing is masked."""
    if FLOAT_TAG not in kind:
        return kind
    return _masked_from(kind, kind[1] + 2)  # past the op_type field


def may_hold_float(data: bytes) -> bool:
    """``data`` (attribute bytes) may hold a float ``f`` (`masked_floats` would mask it)."""
    return FLOAT_TAG in data


def _masked_from(fields: bytes, pos: int) -> bytes:
    """`masked_floats` of the attribute fields from ``pos`` on, up to the first field that
    is not an attribute (fields with one-byte lengths, as the node pattern matched them)."""
    end = len(fields)
    attribute, name, f = F.NODE_ATTRIBUTE, F.ATTR_NAME, F.ATTR_F
    while pos < end and fields[pos] == attribute:
        a = pos + 2
        pos = a + fields[pos + 1]
        if a + 2 <= pos and fields[a] == name:
            n = fields[a + 1]
            v = a + 2 + n
            if n < 128 and v + 5 <= pos and fields[v] == f:
                fields = fields[:v + 1] + b"\x00\x00\x00\x00" + fields[v + 5:]
    return fields


_TYPE, _TYPE_SECOND = F.ATTR_TYPE_BYTES
_REF = F.ATTR_REF_BYTES[0]
_LENGTH_FIELDS = frozenset({F.ATTR_NAME, F.ATTR_S, F.ATTR_FLOATS_PACKED, F.ATTR_INTS_PACKED, F.ATTR_STRINGS,
                            F.ATTR_DOC_STRING, F.ATTR_T})


def attribute_kinds(fields: bytes, tensors: bool = False) -> tuple | None:
    """What the rules depend on in a run of AttributeProto fields (the node's field 5):
    per attribute its name, its ``type`` as read, which value fields occur on the wire
    (and whether each is empty) and whether ``ref_attr_name`` is absent, empty or set.

    With ``tensors``, an attribute's ``t`` (a Constant's ``value``) is read too, if
    `tensorscan.tensor_kind` reads it (dims, data_type, raw_data, a name or none) and its
    packed dims decode: its entry then holds the tensor's kind key, all the checker's
    tensor rules read of it (never its values).

    None for anything else (tensors unless so read, graphs, type protos, unknown or
    repeated singular fields, malformed bytes): the node goes to the full path.
    """
    out = []
    pos = 0
    end = len(fields)
    try:
        while pos < end:  # each attribute: its tag, a one-byte length (the node pattern's)
            a = pos + 2
            pos = a + fields[pos + 1]
            kind = _one_attribute(fields, a, pos, tensors)
            if kind is None:
                return None
            out.append(kind)
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    return tuple(out)


def _one_attribute(src: bytes, pos: int, end: int, tensors: bool) -> tuple | None:
    name = attr_type = None
    ref = 0
    values: list = []  # (tag, non-empty) per value field; a tensor adds its kind key
    name_tag, floats_packed, ints_packed, doc = F.ATTR_NAME, F.ATTR_FLOATS_PACKED, F.ATTR_INTS_PACKED, F.ATTR_DOC_STRING
    while pos < end:
        tag = src[pos]
        if tag == _TYPE or tag == _REF:
            if src[pos + 1] != _TYPE_SECOND:
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
            if tag == name_tag:
                if name is not None:
                    return None
                name = src[a:pos].decode()
            elif tag == floats_packed:
                if n % 4:
                    return None
                values.append((tag, n > 0))
            elif tag == ints_packed:
                unpack_varints(INT64, src, a, pos)  # DecodeError where protobuf fails
                values.append((tag, n > 0))
            elif tag == _T_TAG:  # (defined with the plain-node reader's tags below)
                if not tensors:
                    return None
                read = tensor_kind(src, a, pos, named=False)
                if read is None or not dims_well_formed(read[1]):
                    return None
                values.append((tag, n > 0, read[1]))
            elif tag != doc:
                values.append((tag, n > 0))
            continue
        if tag == F.ATTR_F or tag == F.ATTR_FLOATS_ONE:
            pos += 5
        elif tag == F.ATTR_I or tag == F.ATTR_INTS_ONE:
            _, pos = read_varint(src, pos + 1, end)
        else:
            return None
        values.append((tag, True))
    if pos != end:
        return None
    return name, attr_type, tuple(values), ref


def attribute_items(fields: bytes) -> dict | None:
    """Name -> the whole attribute's bytes, for a run of AttributeProto fields (the node
    pattern's group 5; a later attribute of a name replaces an earlier one, as a node's
    attributes by name do).  None unless every attribute is one `attribute_kinds` reads
    (so making the node's attributes raises nothing) and has a name."""
    kinds = attribute_kinds(fields)
    if kinds is None:
        return None
    out = {}
    pos = 0
    for kind in kinds:
        a = pos + 2
        pos = a + fields[pos + 1]
        name = kind[0]
        if name is None:
            return None
        out[name] = fields[a:pos]
    return out


# -- a plain node, field by field (the summary's census) -------------------------------------

_OP_TYPE_TAG, _DOMAIN_TAG, _ATTRIBUTE_TAG = F.NODE_OP_TYPE, F.NODE_DOMAIN, F.NODE_ATTRIBUTE
_OP_TYPE, _DOMAIN, _ATTRIBUTE = F.NODE_OP_TYPE_NUMBER, F.NODE_DOMAIN_NUMBER, F.NODE_ATTRIBUTE_NUMBER
_T, _TENSORS, _NOT_PLAIN = F.ATTR_T_NUMBER, F.ATTR_TENSORS_NUMBER, F.ATTR_GRAPH_NUMBERS
_T_TAG, _TENSORS_TAG = F.ATTR_T, F.ATTR_TENSORS
_DATA_LOCATION, _DATA_LOCATION_TAG = F.TENSOR_DATA_LOCATION, F.TENSOR_DATA_LOCATION_TAG
#: The one-byte tags among `_NOT_PLAIN` (the others are two bytes long and take the generic path).
_NOT_PLAIN_TAGS = frozenset(n << 3 | _LEN for n in _NOT_PLAIN if n << 3 < 128)

# The loops below read one-byte tags of length-delimited and varint fields inline (a
# ``Constant``'s attribute and tensor are nothing else; an attribute's ``type`` has a
# two-byte tag, read inline too) and every other field through `wire.field`.  A read
# past the end leaves ``pos > end`` or raises: not well formed, False.


def _plain_tensor(src, pos: int, end: int, depth: int) -> bool:
    """A well-formed TensorProto that does not set ``data_location`` (so it is not external)."""
    while pos < end:
        tag = src[pos]
        if 7 < tag < 128:
            wt = tag & 7
            if wt == _LEN:
                n = src[pos + 1]
                pos = pos + 2 + n if n < 128 else sum(read_short_varint(src, pos + 1, end))
                continue
            if wt == _VARINT:
                if tag == _DATA_LOCATION_TAG:
                    return False
                pos = pos + 2 if src[pos + 1] < 128 else after_varint(src, pos + 1, end)
                continue
        number, wt, _, pos = field(src, pos, end, depth)
        if number == _DATA_LOCATION and wt == _VARINT:
            return False
    return pos == end


def _plain_attribute(src, pos: int, end: int, depth: int) -> bool:
    while pos < end:
        tag = src[pos]
        if 7 < tag < 128:
            wt = tag & 7
            if wt == _LEN:
                n = src[pos + 1]
                if n < 128:
                    a = pos + 2
                else:
                    n, a = read_short_varint(src, pos + 1, end)
                pos = a + n
                if pos > end:
                    return False
                if tag == _T_TAG or tag == _TENSORS_TAG:
                    if not _plain_tensor(src, a, pos, depth + 1):
                        return False
                elif tag in _NOT_PLAIN_TAGS:
                    return False
                continue
            if wt == _VARINT:
                pos = pos + 2 if src[pos + 1] < 128 else after_varint(src, pos + 1, end)
                continue
        elif tag > 127 and src[pos + 1] < 128 and tag & 7 == _VARINT:  # a two-byte tag: `type`
            pos = pos + 3 if src[pos + 2] < 128 else after_varint(src, pos + 2, end)
            continue
        number, wt, a, pos = field(src, pos, end, depth)
        if wt != _LEN:
            continue
        if number in _NOT_PLAIN:
            return False
        if (number == _T or number == _TENSORS) and not _plain_tensor(src, a, pos, depth + 1):
            return False
    return pos == end


def node_op(src, start: int, end: int, depth: int) -> tuple | None:
    """``(op_type, domain)`` of the plain NodeProto in ``src[start:end]``, else None.

    ``depth`` is the node's nesting depth as the full path would see it (2 in a model's
    main graph); it bounds group skipping as there.  Protobuf's rules hold: the last
    ``op_type`` wins, a field with an unexpected wire type is an unknown field, and
    invalid UTF-8 (kept as bytes by the full path) declines the node.  Deeper levels
    than the full path's scan (a tensor's ``raw_data``, packed ``ints``) are not read.
    """
    op_type = domain = ""
    pos = start
    try:
        while pos < end:
            tag = src[pos]
            if tag & 7 == _LEN and 7 < tag < 128:  # a node's own fields: inline (hot loop)
                n = src[pos + 1]
                if n < 128:
                    a = pos + 2
                else:
                    n, a = read_short_varint(src, pos + 1, end)
                pos = a + n
                if pos > end:
                    return None
                if tag == _OP_TYPE_TAG:
                    op_type = src[a:pos].decode()
                elif tag == _ATTRIBUTE_TAG:
                    if not _plain_attribute(src, a, pos, depth + 1):
                        return None
                elif tag == _DOMAIN_TAG:
                    domain = src[a:pos].decode()
                continue
            number, wt, a, pos = field(src, pos, end, depth)
            if wt != _LEN:
                continue
            if number == _OP_TYPE:
                op_type = src[a:pos].decode()
            elif number == _DOMAIN:
                domain = src[a:pos].decode()
            elif number == _ATTRIBUTE and not _plain_attribute(src, a, pos, depth + 1):
                return None
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    if pos != end:
        return None
    return op_type, domain
