"""The mutation kinds of the wire mutator (`irmodel.fuzz.wire`), one function each.

Each function takes the span tree of the input, the mutant's RNG and the mutator, and
returns an `Edit`: one byte range of one node's value to replace (the enclosing length
prefixes are re-encoded by `Node.splice`), where it is (path and index, for reports and
tests) and what the kind's claim is about; or None when the input has nothing the kind
applies to.  The claims are listed with the kinds in `irmodel.fuzz.wire.KINDS`.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from wirefmt import MAX_DEPTH, encode_varint, read_varint

from ._wire_internals import (BOOL, BYTES, DOUBLE, EGROUP, ENUM, FIXED_WIDTH_OF_KIND,
                              FIXED_WIDTH_OF_WIRE_TYPE, FLOAT, GROUP, I32, I64, INT32, INT64, LEN,
                              MESSAGE, PACKABLE, SGROUP, STRING, VARINT, WIRE_TYPE)
from .spans import Node, SpanTree, padded_varint

_MASK64 = (1 << 64) - 1
#: Integers that find off-by-one and sign bugs in varint consumers.
INTERESTING_VARINTS = (0, 1, 2, 127, 128, 255, 16383, 16384, (1 << 31) - 1, 1 << 31, (1 << 32) - 1,
                       1 << 32, (1 << 63) - 1, 1 << 63, _MASK64, _MASK64 - 1)
#: Byte sequences that are not UTF-8: a lone continuation byte, 0xff, an overlong "/",
#: a UTF-16 surrogate, a code point above U+10FFFF, a cut three-byte sequence.
INVALID_UTF8 = (b"\x80", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82")


class Edit(NamedTuple):
    """Replace ``buf[start:end]`` (inside the value of ``host``) by ``new``."""

    host: Node  # the node whose value holds the edited bytes (its ``chain`` is re-encoded)
    start: int
    end: int
    new: bytes
    path: tuple
    index: int  # type: ignore[assignment]  # public field name; shadowing tuple.index is intended
    detail: dict


def _tag(number: int, wire_type: int) -> bytes:
    return encode_varint(number << 3 | wire_type)


def _bytes_of(t: SpanTree, n: Node) -> bytes:
    return t.buf[n.tag_start:n.stop]


def _edit_field(n: Node, start: int, end: int, new: bytes, **detail) -> Edit:
    """Replace ``buf[start:end]`` (inside field ``n``'s message) by ``new``."""
    p = n.parent
    return Edit(p, start, end, new, p.path(), n.index, detail)


def _insert_at(c: Node, i: int, new: bytes, **detail) -> Edit:
    """Insert ``new`` before child ``i`` of container ``c`` (after the last one if i == len)."""
    pos = c.children[i].tag_start if i < len(c.children) else c.tail
    return Edit(c, pos, pos, new, c.path(), i, detail)


def _boundary(c: Node, rng) -> int:
    return rng.randrange(len(c.children) + 1)


def _innermost_limit(n: Node) -> int:
    """End of the innermost length-delimited message (or buffer) holding field ``n``."""
    p = n.parent
    while p.parent is not None and p.wire_type == SGROUP:
        p = p.parent
    return p.end


# -- values for new fields -------------------------------------------------------------

def _varint_for(kind: int, rng) -> bytes:
    v = rng.choice(INTERESTING_VARINTS)
    if kind in (INT32, ENUM) and v > (1 << 31) - 1 and rng.random() < 0.5:
        v = (v - (1 << 32)) & _MASK64  # a negative int32, sign-extended to ten bytes
    if kind == BOOL:
        v = rng.choice((0, 1, 2))
    return encode_varint(v)


def _random_text(rng) -> bytes:
    return bytes(rng.choice(b"abcxyz_019") for _ in range(rng.randrange(0, 9)))


def _value_for(t: SpanTree, kind: int, type_name, rng) -> bytes:
    """A plausible value (no tag) of a field of ``kind``."""
    wt = WIRE_TYPE[kind]
    if wt == VARINT:
        return _varint_for(kind, rng)
    if wt == I32 or wt == I64:
        width = 4 if wt == I32 else 8
        return rng.getrandbits(8 * width).to_bytes(width, "little")
    if kind == MESSAGE:
        same = t.messages_by_type.get(type_name)
        payload = t.buf[(n := rng.choice(same)).start:n.end] if same else b""
        return encode_varint(len(payload)) + payload
    payload = _random_text(rng) if kind == STRING else rng.randbytes(rng.randrange(0, 17))
    return encode_varint(len(payload)) + payload


def _new_field(t: SpanTree, c: Node, rng) -> tuple[int, int, bytes]:
    """``(number, wire_type, bytes)`` of a new field for container ``c``."""
    spec = c.message_spec
    if spec is not None and spec.fields and rng.random() < 0.85:
        fs = rng.choice(spec.fields)
        if fs.kind == GROUP:
            return fs.number, SGROUP, _tag(fs.number, SGROUP) + _tag(fs.number, EGROUP)
        if fs.repeated and fs.kind in PACKABLE and (spec.is_packed(fs) or rng.random() < 0.3):
            body = b"".join(_value_for(t, fs.kind, None, rng) for _ in range(rng.randrange(0, 4)))
            return fs.number, LEN, _tag(fs.number, LEN) + encode_varint(len(body)) + body
        wt = WIRE_TYPE[fs.kind]
        return fs.number, wt, _tag(fs.number, wt) + _value_for(t, fs.kind, fs.type_name, rng)
    if c.children and rng.random() < 0.5:
        number = rng.choice(c.children).number
    else:
        number = rng.choice((1, 2, 3, 4, 5, 8, 15, 16, 2047, 2048, (1 << 29) - 1, rng.randrange(1, 1 << 29)))
    kind = rng.choice((INT64, FIXED32_KIND, FIXED64_KIND, BYTES))
    wt = WIRE_TYPE[kind]
    return number, wt, _tag(number, wt) + _value_for(t, kind, None, rng)


# -- structural kinds: the result is well-formed wire format ----------------------------

def delete_field(t: SpanTree, rng, m) -> Edit | None:
    if not t.fields:
        return None
    n = rng.choice(t.fields)
    return _edit_field(n, n.tag_start, n.stop, b"", number=n.number)


def duplicate_field(t, rng, m):
    if not t.fields:
        return None
    n = rng.choice(t.fields)
    e = _edit_field(n, n.stop, n.stop, _bytes_of(t, n), number=n.number)
    return e._replace(index=n.index + 1)


def insert_field(t, rng, m):
    c = rng.choice(t.containers)
    number, wt, data = _new_field(t, c, rng)
    return _insert_at(c, _boundary(c, rng), data, number=number, wire_type=wt)


def swap_fields(t, rng, m):
    multi = m._cached(t, "multi", lambda t: [c for c in t.containers if len(c.children) >= 2])
    if not multi:
        return None
    c = rng.choice(multi)
    i, j = sorted(rng.sample(range(len(c.children)), 2))
    a, b = c.children[i], c.children[j]
    buf = t.buf
    new = b"".join((buf[b.tag_start:b.stop], buf[a.stop:b.tag_start], buf[a.tag_start:a.stop]))
    return Edit(c, a.tag_start, b.stop, new, c.path(), i, {"other": j})


def change_wire_type(t, rng, m):
    if not t.fields:
        return None
    n = rng.choice(t.fields)
    wt = rng.choice([w for w in (VARINT, I64, LEN, SGROUP, I32) if w != n.wire_type])
    raw = t.buf[n.start:n.end]
    number = n.number
    as_int = n.value if n.wire_type != LEN and n.value is not None else len(raw)
    if wt == VARINT:
        value = encode_varint(as_int & _MASK64)
    elif wt == I32 or wt == I64:
        width = FIXED_WIDTH_OF_WIRE_TYPE[wt]
        value = (as_int & ((1 << 8 * width) - 1)).to_bytes(width, "little")
    elif wt == LEN:
        value = encode_varint(len(raw)) + raw
    else:  # a group: a message's fields become the group's body
        body = raw if n.children is not None and n.tail == n.end and n.depth + 1 < MAX_DEPTH else b""
        return _edit_field(n, n.tag_start, n.stop, _tag(number, SGROUP) + body + _tag(number, EGROUP),
                           number=number, wire_type=SGROUP)
    return _edit_field(n, n.tag_start, n.stop, _tag(number, wt) + value, number=number, wire_type=wt)


def _singular_fields(t: SpanTree) -> list:
    out = []
    for c in t.containers:
        counts: dict = {}
        for n in c.children:
            counts[n.number] = counts.get(n.number, 0) + 1
        for n in c.children:
            fs = n.field_spec
            if (fs is not None and not fs.repeated) or (fs is None and counts[n.number] == 1):
                out.append(n)
    return out


def duplicate_singular(t, rng, m):
    singular = m._cached(t, "singular", _singular_fields)
    if not singular:
        return None
    n = rng.choice(singular)
    wt = n.wire_type
    if wt == VARINT:
        other = [v for v in INTERESTING_VARINTS if v != n.value]
        value = encode_varint(rng.choice(other))
    elif wt == I32 or wt == I64:
        width = FIXED_WIDTH_OF_WIRE_TYPE[wt]
        value = ((n.value or 0) ^ (1 + rng.getrandbits(8 * width - 1))).to_bytes(width, "little")
    elif wt == LEN and n.children is None:
        payload = t.buf[n.start:n.end] + _random_text(rng) + b"2"
        value = encode_varint(len(payload)) + payload
    else:  # a message or group: a second occurrence, which parsers merge into the first
        value = t.buf[n.head_end:n.stop]
    c = n.parent
    i = rng.randrange(n.index + 1, len(c.children) + 1)
    return _insert_at(c, i, _tag(n.number, wt) + value, number=n.number, first=n.index)


def _split_packed(buf, n: Node) -> list | None:
    """The element bytes of packed field ``n``, or None when they do not split evenly."""
    kind = n.field_spec.kind
    start, end = n.start, n.end
    width = FIXED_WIDTH_OF_KIND.get(kind)
    if width is not None:
        if (end - start) % width:
            return None
        return [buf[p:p + width] for p in range(start, end, width)]
    out = []
    pos = start
    while pos < end:
        try:
            _, nxt = read_varint(buf, pos, end)
        except ValueError:
            return None
        out.append(buf[pos:nxt])
        pos = nxt
    return out


def packed_to_unpacked(t, rng, m):
    if not t.packed:
        return None
    n = rng.choice(t.packed)
    elements = _split_packed(t.buf, n)
    if elements is None:
        return None
    t_ = _tag(n.number, WIRE_TYPE[n.field_spec.kind])
    return _edit_field(n, n.tag_start, n.stop, b"".join(t_ + e for e in elements),
                       number=n.number, count=len(elements))


def _packable_unpacked(t: SpanTree) -> list:
    out = []
    for wt in (VARINT, I32, I64):
        for n in t.by_wire_type[wt]:
            fs = n.field_spec
            if fs is None or (fs.repeated and fs.kind in PACKABLE and WIRE_TYPE[fs.kind] == wt):
                out.append(n)
    return out


def unpacked_to_packed(t, rng, m):
    cands = m._cached(t, "unpacked", _packable_unpacked)
    if not cands:
        return None
    first = rng.choice(cands)
    siblings = first.parent.children
    last = first
    i = first.index + 1
    while i < len(siblings) and siblings[i].number == first.number and siblings[i].wire_type == first.wire_type:
        last = siblings[i]
        i += 1
    count = last.index - first.index + 1
    body = b"".join(t.buf[s.start:s.end] for s in siblings[first.index:last.index + 1])
    return _edit_field(first, first.tag_start, last.stop, _tag(first.number, LEN) + encode_varint(len(body)) + body,
                       number=first.number, count=count)


def _float_sites(t: SpanTree) -> list:
    """``(node, offset, width)`` of every float/double value (singular or packed)."""
    out = []
    for wt, width in ((I32, 4), (I64, 8)):
        for n in t.by_wire_type[wt]:
            fs = n.field_spec
            if fs is None or fs.kind in (FLOAT, DOUBLE):
                out.append((n, n.start, width))
    for n in t.packed:
        kind = n.field_spec.kind
        if kind in (FLOAT, DOUBLE):
            width = 4 if kind == FLOAT else 8
            for p in range(n.start, n.end - width + 1, width):
                out.append((n, p, width))
    return out


def nan_payload(t, rng, m):
    sites = m._cached(t, "floats", _float_sites)
    if not sites:
        return None
    n, pos, width = rng.choice(sites)
    mant_bits = 23 if width == 4 else 52
    mantissa = rng.choice((1, 1 << (mant_bits - 1), (1 << (mant_bits - 1)) + 1, (1 << mant_bits) - 1,
                           1 + rng.getrandbits(mant_bits - 1)))
    exponent = (0xFF << 23) if width == 4 else (0x7FF << 52)
    bits = rng.getrandbits(1) << (8 * width - 1) | exponent | mantissa
    new = bits.to_bytes(width, "little")
    host = n.parent if n.wire_type != LEN else n
    return Edit(host, pos, pos + width, new, n.parent.path(), n.index,
                 {"number": n.number, "bits": bits, "width": width, "packed": n.wire_type == LEN})


def interesting_varint(t, rng, m):
    cands = t.by_wire_type[VARINT]
    if not cands:
        return None
    n = rng.choice(cands)
    v = rng.choice(INTERESTING_VARINTS)
    return _edit_field(n, n.start, n.end, encode_varint(v), number=n.number, value=v)


# -- malformed kinds --------------------------------------------------------------------

def _overlong(t, rng, which: str):
    if which == "value":
        cands = t.by_wire_type[VARINT]
    elif which == "length":
        cands = t.by_wire_type[LEN]
    else:
        cands = t.fields
    if not cands:
        return None
    n = rng.choice(cands)
    if which == "value":
        a, b, v = n.start, n.end, n.value
    elif which == "length":
        a, b, v = n.head_end, n.start, n.end - n.start
    else:
        a, b, v = n.tag_start, n.head_end, n.number << 3 | n.wire_type
    canonical = len(encode_varint(v))
    if canonical >= 10:
        return None
    width = rng.randrange(canonical + 1, 11)
    return _edit_field(n, a, b, padded_varint(v, width), number=n.number, width=width, value=v)


def overlong_varint(t, rng, m):
    return _overlong(t, rng, "value")


def overlong_length(t, rng, m):
    return _overlong(t, rng, "length")


def overlong_tag(t, rng, m):
    return _overlong(t, rng, "tag")


def varint_over_10_bytes(t, rng, m):
    cands = t.by_wire_type[VARINT] or t.fields
    if not cands:
        return None
    n = rng.choice(cands)
    width = rng.randrange(11, 17)
    if n.wire_type == VARINT:
        return _edit_field(n, n.start, n.end, padded_varint(n.value, width), number=n.number, width=width)
    return _edit_field(n, n.tag_start, n.head_end, padded_varint(n.number << 3 | n.wire_type, width),
                       number=n.number, width=width, where="tag")


def _retag(t, rng, make: Callable) -> Edit | None:
    if not t.fields:
        return None
    n = rng.choice(t.fields)
    tag_value = make(n)
    return _edit_field(n, n.tag_start, n.head_end, encode_varint(tag_value), number=n.number,
                       tag=tag_value)


def tag_above_2_32(t, rng, m):
    # half of them in 5 bytes (refused for the value), half longer (refused for the length too)
    def make(n):
        high = rng.randrange(1, 8) if rng.getrandbits(1) else 1 + rng.getrandbits(31)
        return (n.number << 3 | n.wire_type) | high << 32
    return _retag(t, rng, make)


def field_number_0(t, rng, m):
    return _retag(t, rng, lambda n: n.wire_type)


def field_number_too_large(t, rng, m):
    def make(n):
        number = rng.choice((1 << 29, (1 << 29) + n.number, (1 << 32) - 1, rng.randrange(1 << 29, 1 << 61)))
        return number << 3 | n.wire_type
    return _retag(t, rng, make)


def wire_type_6_7(t, rng, m):
    return _retag(t, rng, lambda n: n.number << 3 | rng.choice((6, 7)))


def _whole_containers(t: SpanTree) -> list:
    """Containers that parsed to their end, so an insertion's effect is all that is wrong."""
    return [c for c in t.containers if c.tail == c.end and c.depth + 2 < MAX_DEPTH]


def _group_number(c: Node, rng) -> int:
    if c.children and rng.random() < 0.5:
        return rng.choice(c.children).number
    return rng.choice((1, 2, 3, 7, 15, 16, 1000, (1 << 29) - 1))


def unterminated_group(t, rng, m):
    cands = m._cached(t, "whole", _whole_containers)
    if not cands:
        return None
    c = rng.choice(cands)
    number = _group_number(c, rng)
    body = _bytes_of(t, rng.choice(c.children)) if c.children and rng.random() < 0.5 else b""
    return _insert_at(c, len(c.children), _tag(number, SGROUP) + body, number=number)


def mismatched_group(t, rng, m):
    cands = m._cached(t, "whole", _whole_containers)
    if not cands:
        return None
    c = rng.choice(cands)
    number = _group_number(c, rng)
    other = rng.choice([k for k in (number + 1, number - 1, 1, 2, 536870911) if k != number and k > 0])
    body = _bytes_of(t, rng.choice(c.children)) if c.children and rng.random() < 0.5 else b""
    return _insert_at(c, _boundary(c, rng), _tag(number, SGROUP) + body + _tag(other, EGROUP),
                      number=number, end_number=other)


def stray_end_group(t, rng, m):
    cands = m._cached(t, "whole", _whole_containers)
    if not cands:
        return None
    c = rng.choice(cands)
    number = _group_number(c, rng)
    return _insert_at(c, _boundary(c, rng), _tag(number, EGROUP), number=number)


def group_with_field_0(t, rng, m):
    cands = m._cached(t, "whole", _whole_containers)
    if not cands:
        return None
    c = rng.choice(cands)
    number = _group_number(c, rng)
    inner = rng.choice((b"\x00\x01", b"\x02\x00", b"\x03\x04", b"\x05\x00\x00\x00\x00"))
    return _insert_at(c, _boundary(c, rng), _tag(number, SGROUP) + inner + _tag(number, EGROUP),
                      number=number, inner=inner)


def length_past_end(t, rng, m):
    cands = t.by_wire_type[LEN]
    if not cands:
        return None
    n = rng.choice(cands)
    remaining = _innermost_limit(n) - n.start
    if rng.random() < 0.6:
        length = remaining + rng.choice((1, 1, 2, 3, 8, 1 + rng.randrange(1 << 16)))
    else:
        length = max(remaining + 1, rng.choice(((1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 63, _MASK64)))
    return _edit_field(n, n.head_end, n.start, encode_varint(length), number=n.number, length=length,
                       remaining=remaining)


def packed_wrong_length(t, rng, m):
    existing = m._cached(t, "packed_fixed", lambda t: [n for n in t.packed if n.field_spec.kind in FIXED_WIDTH_OF_KIND])
    if existing and rng.random() < 0.7:
        n = rng.choice(existing)
        width = FIXED_WIDTH_OF_KIND[n.field_spec.kind]
        payload = t.buf[n.start:n.end]
        r = rng.randrange(1, width)
        if len(payload) >= r and rng.random() < 0.5:
            payload = payload[:len(payload) - r]
        else:
            payload = payload + rng.randbytes(r)
        if len(payload) % width == 0:  # pragma: no cover - r < width rules this out
            return None
        return _edit_field(n, n.head_end, n.end, encode_varint(len(payload)) + payload,
                           number=n.number, width=width, length=len(payload))
    hosts = m._cached(t, "fixed_hosts", lambda t: [
        (c, fs) for c in t.containers if c.message_spec is not None for fs in c.message_spec.fields
        if fs.repeated and fs.kind in FIXED_WIDTH_OF_KIND and c.tail == c.end])
    if not hosts:
        return None
    c, fs = rng.choice(hosts)
    width = FIXED_WIDTH_OF_KIND[fs.kind]
    length = width * rng.randrange(0, 4) + rng.randrange(1, width)
    new = _tag(fs.number, LEN) + encode_varint(length) + rng.randbytes(length)
    return _insert_at(c, _boundary(c, rng), new, number=fs.number, width=width, length=length)


def invalid_utf8(t, rng, m):
    bad = rng.choice(INVALID_UTF8)
    if t.texts and rng.random() < 0.8:
        n = rng.choice(t.texts)
        payload = t.buf[n.start:n.end]
        at = rng.randrange(len(payload) + 1)
        payload = payload[:at] + bad + payload[at:]
        return _edit_field(n, n.head_end, n.end, encode_varint(len(payload)) + payload,
                           number=n.number, bad=bad)
    hosts = m._cached(t, "string_hosts", lambda t: [
        (c, fs) for c in t.containers if c.message_spec is not None
        for fs in c.message_spec.fields if fs.kind == STRING])
    if not hosts:
        return None
    c, fs = rng.choice(hosts)
    payload = _random_text(rng) + bad
    return _insert_at(c, _boundary(c, rng), _tag(fs.number, LEN) + encode_varint(len(payload)) + payload,
                      number=fs.number, bad=bad)


def deep_nesting(t, rng, m):
    """Wrap a message's payload in enough levels to nest past `MAX_DEPTH`.

    With a schema, along a cycle of message fields (GraphProto -> node -> attribute -> g),
    so a schema-aware parser really descends; without, as a field inside itself.
    """
    cycles = m._cycles
    msgs = m._cached(t, "cyclic", lambda t: [n for name, nodes in t.messages_by_type.items()
                                               if name in cycles for n in nodes])
    if msgs:
        n = rng.choice(msgs)
        cycle = cycles[n.field_spec.type_name]
    else:
        msgs = m._cached(t, "nested", lambda t: [n for n in t.by_wire_type[LEN] if n.children is not None])
        if not msgs:
            return None
        n = rng.choice(msgs)
        cycle = [(n.number, LEN)]
    cached = t.derived.get(("deep_nesting", n.tag_start))
    if cached is not None:  # the wrapping depends on the node only: build it once
        return cached
    # the payload's own fields sit at depth n.depth + 1; each cycle adds len(cycle) levels
    repeats = (MAX_DEPTH - n.depth - 1) // len(cycle) + 1
    # Inside out, lengths only; the bytes are joined once at the end.
    size = n.end - n.start
    heads, tails = [], []
    for _ in range(repeats):
        for number, wt in reversed(cycle):
            if wt == LEN:
                head = _tag(number, LEN) + encode_varint(size)
                tail = b""
            else:
                head, tail = _tag(number, SGROUP), _tag(number, EGROUP)
            heads.append(head)
            tails.append(tail)
            size += len(head) + len(tail)
    heads.reverse()
    new = b"".join((encode_varint(size), *heads, t.buf[n.start:n.end], *tails))
    levels = n.depth + 1 + repeats * len(cycle)
    e = t.derived[("deep_nesting", n.tag_start)] = _edit_field(n, n.head_end, n.end, new, number=n.number,
                                                              depth=levels)
    return e


def deep_group_nesting(t, rng, m):
    c = rng.choice(t.containers)
    number = _group_number(c, rng)
    levels = MAX_DEPTH + 1 - c.depth
    new = _tag(number, SGROUP) * levels + _tag(number, EGROUP) * levels
    return _insert_at(c, _boundary(c, rng), new, number=number, depth=c.depth + levels)


def trailing_bytes(t, rng, m):
    choice = rng.randrange(3)
    garbage = rng.randbytes(rng.randrange(1, 9))
    extra = b"\x00" if choice == 0 else b"\x00" + garbage if choice == 1 else garbage
    end = len(t.buf)
    return Edit(t.root, end, end, extra, (), len(t.root.children), {"extra": extra})


def truncate(t, rng, m):
    if not t.buf:
        return None
    cut = rng.randrange(len(t.buf))
    return Edit(t.root, cut, len(t.buf), b"", (), -1, {"length": cut})


FIXED32_KIND, FIXED64_KIND = FLOAT, DOUBLE  # fixed-width kinds to draw raw 4/8-byte values from
