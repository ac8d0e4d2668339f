"""Schema-less view of any protobuf buffer, like ``protoc --decode_raw``, with offsets.

`walk` yields one `RawItem` per field (and one ``"end"`` item when a nested message or
group closes); `format_item` turns an item into one line of text; `dump_lines` does both.
Nothing here knows ONNX or opens files.

Length-delimited payloads are shown the way protoc guesses them: as a nested message if
the bytes parse completely as one, else as a string if they are printable UTF-8, else as
bytes (length and a hex preview).  Two differences from protoc: an empty payload is
``""`` (protoc agrees) and a short payload that is printable text without a single
control byte is a string even if it would parse (protoc shows the name ``"p1"`` as
``{ 14: 49 }``; see `_length_delimited`).

Cost: why trying every payload as a message stays linear
--------------------------------------------------------
The "does it parse?" test of a payload is *one level deep*: it reads the tags and
length prefixes of the payload's own fields and jumps over their payloads without
reading them.  A payload that passes is then printed, which reads those same tags a
second time, and each of its own length-delimited fields is tested in turn; one that
fails is not descended into.  So a byte is read as structure only by the innermost
tested payload that contains it: at most twice (test, then print), however deep the
nesting.  Groups have no length, so a group is validated by reading its whole body,
nested groups included; the extent of every group found that way is remembered for the
rest of the walk (`_GroupExtents`), so that descending into the group and into the
groups inside it reads no body a second time (without that, 99 nested groups cost 99
reads of the innermost body: minutes for 1 MB).  Hence there is no size threshold above
which payloads are not tried as messages: the test costs what the payload's field count
costs, not its size, and the big payloads that matter most (an ONNX ``graph``) are
messages.  The flip side,
shared with protoc: a blob that happens to be valid wire format (bytes ``08 08 08 08``)
is shown as a message.

Payload bytes themselves are read only to show them.  The text test searches for a
control byte and stops at the first one (binary data such as weights has one within a
few bytes), and payloads over `MAX_TEXT_BYTES` are never text; a bytes value shows its
first `PREVIEW_BYTES`.  A multi-gigabyte weight blob therefore costs a few bytes of
reading, not a scan.  (In contrived input made of nested, long, control-free payloads
the text test can re-read a byte once per nesting level, at most `MAX_DEPTH` times.)

Malformed input: `walk` yields every field it could read and then raises `DecodeError`
for the first top-level field it cannot.  Nested payloads never raise: one that does
not parse is simply shown as a string or bytes.
"""

from __future__ import annotations

import re
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Iterator, NamedTuple, cast

    from .buffer import Buffer
else:  # run time: cast is the identity (typing is not imported for it)
    from .records import cast

from .errors import DecodeError
from .limits import MAX_DEPTH
from .reader import Field, read_field, read_tag
from .safetext import quote as _safe_quote
from .schema import EGROUP, I32, I64, LEN, SGROUP, VARINT
from .records import named_tuple
from .values import to_float32

#: Bytes shown (in hex) of a payload that is neither a message nor text.
PREVIEW_BYTES = 16
#: Payloads up to this size that are printable text without any control byte are shown
#: as strings even when they would parse as a message (see `_length_delimited`).
SHORT_TEXT_BYTES = 256
#: Payloads longer than this are never shown as text, so deciding "is it text?" never
#: reads more than this many bytes of one payload.
MAX_TEXT_BYTES = 1 << 20
#: Characters of a string shown before it is cut (the rest is counted, not printed).
MAX_TEXT_CHARS = 200

KINDS = ("varint", "fixed32", "fixed64", "message", "group", "end", "string", "bytes", "elided")

_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # all but tab, LF, CR
_STRICT_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
_WHITESPACE = {9: None, 10: None, 13: None}
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


if TYPE_CHECKING:
    class _RawItemFields(NamedTuple):
        kind: str
        depth: int
        field: Field
        text: str | None
else:
    _RawItemFields = named_tuple("RawItem", ("kind", "depth", "field", "text"), __name__)


class RawItem(_RawItemFields):
    """One line of the raw view (a named tuple: `wirefmt.records`).

    ``kind`` is one of `KINDS`: a scalar (``varint``, ``fixed32``, ``fixed64``), the
    start of a nested ``message`` or ``group`` (closed later by an ``end`` item carrying
    the same field), a length-delimited ``string`` (``text`` holds it, cut to
    `MAX_TEXT_CHARS` only when printed), ``bytes``, or an ``elided`` message below the depth limit.
    ``depth`` is the nesting level of the field (top level: 0); ``text`` is None but for
    a string.
    """

    __slots__ = ()

    def __new__(cls, kind: str, depth: int, field: Field, text: str | None = None):
        return tuple.__new__(cls, (kind, depth, field, text))


class _GroupExtents(dict):
    """The groups a walk has validated: body start -> ``(body end, end of the end tag)``.

    `_fields` reads a group's body once, recording the extent of every group nested in
    it; a group met again (when the walk descends) is jumped over from the record.
    """

    def skip(self, buf: Buffer, pos: int, end: int, number: int, depth: int) -> tuple[int, int]:
        """`reader.skip_group` for the group whose body starts at ``pos`` (same checks,
        same errors), recording the extents of it and of every group inside it; a
        recorded group is not read again."""
        known = self.get(pos)
        if known is not None:
            return known
        stack = [(number, pos)]
        while True:
            if depth + len(stack) - 1 > MAX_DEPTH:  # as skip_group counts: ``depth`` is the group's level
                raise DecodeError(f"nesting deeper than {MAX_DEPTH}", pos)
            if pos >= end:
                raise DecodeError(f"group {stack[-1][0]} is not closed", pos)
            tag_start = pos
            num, wt, pos = read_tag(buf, pos, end)
            if wt == EGROUP:
                if num != stack[-1][0]:
                    raise DecodeError(f"end-group tag {num} does not match start-group "
                                      f"{stack[-1][0]}", tag_start)
                self[stack.pop()[1]] = (tag_start, pos)
                if not stack:
                    return tag_start, pos
            elif wt == SGROUP:
                known = self.get(pos)
                if known is not None:
                    pos = known[1]
                else:
                    stack.append((num, pos))
            else:
                pos = read_field(buf, tag_start, end)[1]  # a scalar or length-delimited field


def _fields(buf: Buffer, start: int, end: int, depth: int, groups: _GroupExtents) -> Iterator[Field]:
    """`reader.iter_fields`, with groups skipped through ``groups`` (each body read once)."""
    pos = start
    while pos < end:
        if buf[pos] & 7 != SGROUP:  # the wire type is in the low bits of the tag's first byte
            f, pos = read_field(buf, pos, end, depth)
            yield f
            continue
        tag_start = pos
        number, wt, after_tag = read_tag(buf, pos, end)
        body_end, pos = groups.skip(buf, after_tag, end, number, depth + 1)
        yield Field(number, wt, None, after_tag, body_end, tag_start)


def parses_as_message(buf: Buffer, start: int, end: int, depth: int = 0,
                      groups: _GroupExtents | None = None) -> bool:
    """True if ``buf[start:end]`` is a sequence of well-formed fields that ends exactly at ``end``.

    One level deep (see the module docstring): nested payloads are skipped, not checked.
    ``groups`` records the groups validated on the way, for a walk that descends later.
    """
    try:
        for _ in _fields(buf, start, end, depth, _GroupExtents() if groups is None else groups):
            pass
    except DecodeError:
        return False
    return True


def _as_text(buf, start: int, end: int, strict: bool = False) -> str | None:
    """The payload as a string if it is printable UTF-8 of at most `MAX_TEXT_BYTES`.

    ``strict`` also refuses tabs and line breaks.  The search for a control byte stops at
    the first one, so binary data costs a byte or two of reading, not a scan.
    """
    if end - start > MAX_TEXT_BYTES:
        return None
    if (_STRICT_CONTROL if strict else _CONTROL).search(buf, start, end) is not None:
        return None
    try:
        text = bytes(buf[start:end]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.isascii() and not text.translate(_WHITESPACE).isprintable():
        return None
    return text


def walk(buf: Buffer, start: int = 0, end: int | None = None, *, max_depth: int = MAX_DEPTH) -> Iterator[RawItem]:
    """Yield the raw view of the message in ``buf[start:end]``, depth first, in file order.

    Payloads of fields at depth ``max_depth`` or deeper are not expanded (``max_depth``
    0 shows only the top level).  Iterative: an explicit stack of field iterators, so
    nesting never touches Python's recursion limit.  Raises `DecodeError` (after
    yielding the valid prefix) when the top level itself is malformed.
    """
    if end is None:
        end = len(buf)
    if not 0 <= max_depth <= MAX_DEPTH:
        raise ValueError(f"max_depth must be between 0 and {MAX_DEPTH}, not {max_depth}")
    # Each frame: (iterator over a message's fields, depth of those fields, the field
    # whose payload this is, or None at the top).
    groups = _GroupExtents()
    stack: list = [(_fields(buf, start, end, 0, groups), 0, None)]
    while stack:
        fields, depth, owner = stack[-1]
        f = next(fields, None)
        if f is None:
            stack.pop()
            if owner is not None:
                yield RawItem("end", depth - 1, owner)
            continue
        wt = f.wire_type
        if wt == VARINT:
            yield RawItem("varint", depth, f)
        elif wt == I32:
            yield RawItem("fixed32", depth, f)
        elif wt == I64:
            yield RawItem("fixed64", depth, f)
        elif wt == SGROUP:  # the body was validated by read_field (skip_group)
            if depth < max_depth:
                yield RawItem("group", depth, f)
                stack.append((_fields(buf, f.start, f.end, depth + 1, groups), depth + 1, f))
            else:
                yield RawItem("elided", depth, f)
        elif wt == LEN:
            yield from _length_delimited(buf, f, depth, max_depth, stack, groups)
        else:  # pragma: no cover - read_field never yields EGROUP
            raise DecodeError(f"unexpected wire type {wt}", f.tag_start)


def _length_delimited(buf, f: Field, depth: int, max_depth: int, stack: list,
                      groups: _GroupExtents) -> Iterator[RawItem]:
    start, end = f.start, f.end
    if start == end:
        yield RawItem("string", depth, f, "")
        return
    # Short names such as "p1" or "x0" happen to parse as messages ({14: 49}); protoc
    # shows them so.  Real messages nearly always hold a control byte (tags and lengths
    # of fields 1-3 and lengths under 32 are control bytes), so a short payload without
    # any is shown as the string it almost certainly is.
    if end - start <= SHORT_TEXT_BYTES:
        text = _as_text(buf, start, end, strict=True)
        if text is not None:
            yield RawItem("string", depth, f, text)
            return
    if parses_as_message(buf, start, end, depth + 1, groups):
        if depth < max_depth:
            yield RawItem("message", depth, f)
            stack.append((_fields(buf, start, end, depth + 1, groups), depth + 1, f))
            return
        text = _as_text(buf, start, end)
        # Below the depth limit a payload that parses is still more likely a message
        # than binary data: say so rather than print its bytes.
        yield RawItem("elided", depth, f) if text is None else RawItem("string", depth, f, text)
        return
    text = _as_text(buf, start, end)
    yield RawItem("bytes", depth, f) if text is None else RawItem("string", depth, f, text)


# -- text form ----------------------------------------------------------------------

def _quote(text: str) -> str:
    # `_as_text` lets only printable text through; quoting it with wirefmt.safetext
    # anyway keeps one rule for every string any command prints.
    return _safe_quote(text)


def _short_float(x: float, digits: tuple) -> str:
    """The shortest of ``%.{d}g`` for ``d`` in ``digits`` that reads back as ``x``."""
    for d in digits:
        s = "%.*g" % (d, x)
        if float(s) == x or x != x:
            return s
    return repr(x)


def _float32_text(bits: int) -> str:
    x = _F32.unpack(bits.to_bytes(4, "little"))[0]
    for d in (6, 7, 8, 9):  # float32 needs at most 9 significant digits to round-trip
        s = "%.*g" % (d, x)
        if x != x or to_float32(float(s)) == x:
            return s
    return repr(x)


def _value_and_note(item: RawItem, buf) -> tuple[str, str]:
    """What follows ``N: `` on the line, and a comment that helps read it (maybe empty)."""
    f, kind = item.field, item.kind
    value, text = cast(int, f.value), cast(str, item.text)  # each set for the kinds that read it (RawItem)
    if kind == "varint":
        note = f"int64 {value - (1 << 64)}" if value >> 63 else ""
        return str(value), note
    if kind == "fixed32":
        return f"0x{value:08x}", f"float {_float32_text(value)}"
    if kind == "fixed64":
        x = _F64.unpack(value.to_bytes(8, "little"))[0]
        return f"0x{value:016x}", f"double {_short_float(x, (15, 16, 17))}"
    n = f.end - f.start
    if kind == "string":
        if len(text) > MAX_TEXT_CHARS:
            return _quote(text[:MAX_TEXT_CHARS]) + "...", f"{len(text)} characters, cut"
        return _quote(text), ""
    if kind == "bytes":
        head = bytes(buf[f.start:f.start + min(n, PREVIEW_BYTES)]).hex(" ")
        return f"<{n} bytes: {head}{' ...' if n > PREVIEW_BYTES else ''}>", ""
    # elided
    what = "group" if f.wire_type == SGROUP else "message"
    return "{...}", f"{what} of {n} bytes below the depth limit"


def offsets_header(width: int) -> str:
    """The column header printed above lines formatted with ``offsets_width=width``."""
    return f"{'offset':>{width}} {'data':>{width}} {'length':>{width}}  field"


def offsets_width(end: int) -> int:
    """Column width for offsets in a buffer of ``end`` bytes."""
    return max(6, len(str(end)))


def format_item(item: RawItem, buf: Buffer, offsets_width: int = 0, indent: str = "  ") -> str:
    """One line of text for ``item``.

    With ``offsets_width`` > 0 each line starts with three columns: the offset of the
    field's tag, the offset of its value (the payload, for length-delimited fields and
    groups) and the value's length in bytes.
    """
    f = item.field
    pad = indent * item.depth
    if offsets_width and item.kind != "end":
        w = offsets_width
        pad = f"{f.tag_start:>{w}} {f.start:>{w}} {f.end - f.start:>{w}}  " + pad
    elif offsets_width:
        pad = " " * (3 * offsets_width + 4) + pad
    if item.kind == "end":
        return pad + "}"
    if item.kind == "message":
        return f"{pad}{f.number} {{"
    if item.kind == "group":
        return f"{pad}{f.number} {{  # group"
    value, note = _value_and_note(item, buf)
    return f"{pad}{f.number}: {value}" + (f"  # {note}" if note else "")


def dump_lines(buf: Buffer, start: int = 0, end: int | None = None, *, offsets: bool = False,
               max_depth: int = MAX_DEPTH) -> Iterator[str]:
    """The text form of `walk`, one line at a time (a header line first with ``offsets``)."""
    if end is None:
        end = len(buf)
    width = offsets_width(end) if offsets else 0
    if offsets:
        yield offsets_header(width)
    for item in walk(buf, start, end, max_depth=max_depth):
        yield format_item(item, buf, width)


__all__ = ["RawItem", "walk", "parses_as_message", "format_item", "dump_lines", "offsets_header",
           "offsets_width", "KINDS", "PREVIEW_BYTES", "SHORT_TEXT_BYTES", "MAX_TEXT_BYTES",
           "MAX_TEXT_CHARS"]
