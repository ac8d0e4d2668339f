"""The raw text form (what ``irmodel raw`` prints) turned back into bytes, and an exact form.

A fuzzing reproducer is easiest to understand, and to edit, as the wire structure
``irmodel raw`` shows (`wirefmt.raw`).  `encode` turns such text back into bytes, so a
reproducer can be edited as text: add a line, change a number, delete a block.

The printed form loses information in a few places; `render` writes the *exact form*,
which is the same text wherever ``irmodel raw`` is exact and adds what it leaves out:

=====================================  ==============================================
``irmodel raw`` prints                 the exact form writes
=====================================  ==============================================
``<N bytes: 00 01 ... 0f ...>``        every byte: ``<N bytes: 00 01 ... ff>``
``"text..."...  # N characters, cut``  the whole string
``{...}`` (below the depth limit)      the nested fields, at any depth
canonical varints only                 a width for a tag, length, value or end-group
                                       tag written with redundant bytes:
                                       ``7[tag:2,len:3] {``, ``1[val:10]: 5``,
                                       ``3[end:2] {  # group``
the valid prefix, then an error        the rest of the message as ``raw: HEX``, with
(on standard error)                    the reason as a comment
=====================================  ==============================================

`encode` accepts both forms.  It refuses (`RawTextError`, with the line number) the
lossy parts of the printed form: a cut string, a byte preview ending in ``...`` and an
elided ``{...}``.

Grammar of a line (indentation is free; everything after a ``#`` outside a string is a
comment, except that a ``{`` line whose comment starts with ``group`` opens a group)::

    NUMBER [WIDTHS] ": " VALUE      a field
    NUMBER [WIDTHS] " {"            a length-delimited field holding the lines up to "}"
    NUMBER [WIDTHS] " {  # group"   a group holding the lines up to "}"
    "}"
    "raw: " HEX                     bytes written as they are (anything malformed)
    WIDTHS  = "[" ("tag" | "len" | "val" | "end") ":" W ("," ...)* "]"
    VALUE   = DECIMAL               varint (a negative number: its 64-bit two's complement)
            | "0x" 8 HEX digits     fixed32
            | "0x" 16 HEX digits    fixed64
            | '"' TEXT '"'          length-delimited UTF-8; escapes \\\\ \\" \\n \\r \\t \\xHH
            | "<" N " bytes: " HEX ">"  length-delimited bytes

With ``--offsets`` each line starts with three columns of numbers after a header line
(``offset data length field``); `encode` skips them (they describe the old bytes).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

from .errors import DecodeError
from .raw import RawItem, format_item, offsets_header, offsets_width, parses_as_message
from .reader import Field, read_field, read_tag
from .schema import EGROUP, I32, I64, LEN, SGROUP, VARINT
from .varint import encode_varint

#: Payloads up to this size with no control byte at all are shown as strings even when
#: they parse as messages (as ``irmodel raw`` does; see `wirefmt.raw`).
_SHORT_TEXT_BYTES = 256
_MAX_TEXT_BYTES = 1 << 20
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_STRICT_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})
_WIDTH_KEYS = ("tag", "len", "val", "end")


class RawTextError(ValueError):
    """Text that is not in the raw form, or the lossy part of it; ``line`` is 1-based."""

    def __init__(self, reason: str, line: int | None = None):
        self.reason = reason
        self.line = line
        super().__init__(reason if line is None else f"line {line}: {reason}")


# -- varints of a given width ------------------------------------------------------------

def varint_of_width(n: int, width: int) -> bytes:
    """``n`` as a varint of ``width`` bytes (redundant continuation bytes, then 0x00)."""
    enc = encode_varint(n)
    if width < len(enc):
        raise ValueError(f"{n} needs {len(enc)} bytes, not {width}")
    if width == len(enc):
        return enc
    return enc[:-1] + bytes((enc[-1] | 0x80,)) + b"\x80" * (width - len(enc) - 1) + b"\x00"


def _width_note(buf, start: int, end: int, value: int) -> int | None:
    """0 if the varint in ``buf[start:end]`` is canonical, its width if a width says how it
    was written, None if not even that (bits above 64 set in a tenth byte)."""
    raw = bytes(buf[start:end])
    if raw == encode_varint(value):
        return 0
    if end - start <= 10 and raw == varint_of_width(value, end - start):
        return end - start
    return None


# -- bytes -> exact text -------------------------------------------------------------------

def _text(buf, start: int, end: int, strict: bool) -> str | None:
    if end - start > _MAX_TEXT_BYTES:
        return None
    if (_STRICT_CONTROL if strict else _CONTROL).search(buf, start, end) is not None:
        return None
    try:
        text = bytes(buf[start:end]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.isascii() and not text.translate({9: None, 10: None, 13: None}).isprintable():
        return None
    return text


def _quote(text: str) -> str:
    return '"' + text.translate(_ESCAPES) + '"'


def _parsed_prefix(buf, start: int, end: int, depth: int) -> int:
    """How far ``buf[start:end]`` parses as fields (one level deep)."""
    pos = start
    try:
        while pos < end:
            pos = read_field(buf, pos, end, depth)[1]
    except DecodeError:
        pass
    return pos


def render_lines(buf, start: int = 0, end: int | None = None, *, offsets: bool = False,
                 expand_partial: bool = False) -> Iterator[str]:
    """The exact text form of ``buf[start:end]``, one line at a time (see the module doc).

    ``expand_partial`` also shows a length-delimited payload whose fields parse up to a
    malformed one as a block (its fields, then ``raw:`` for the rest) instead of as
    bytes: a reducer's reproducer then shows the path to the malformed field as fields.
    Iterative, so nesting depth is not limited by Python's stack.
    """
    if end is None:
        end = len(buf)
    width = offsets_width(end) if offsets else 0
    if offsets:
        yield offsets_header(width)
    # frames: [position, end of the message, depth, owner field or None, closing line info]
    stack: list[list[Any]] = [[start, end, 0, None, None]]
    while stack:
        frame = stack[-1]
        pos, stop, depth, owner, close = frame
        if pos >= stop:
            stack.pop()
            if owner is not None:
                yield close
            continue
        try:
            f, after = read_field(buf, pos, stop, depth)
        except DecodeError as exc:
            frame[0] = stop
            yield _raw_line(buf, pos, stop, depth, width, exc.reason)
            continue
        frame[0] = after
        yield from _field_lines(buf, f, after, depth, width, expand_partial, stack)


def _raw_line(buf, pos: int, stop: int, depth: int, width: int, reason: str) -> str:
    pad = "  " * depth
    if width:
        pad = f"{pos:>{width}} {pos:>{width}} {stop - pos:>{width}}  " + pad
    return f"{pad}raw: {bytes(buf[pos:stop]).hex(' ')}  # {reason}"


def _widths(buf, f: Field, after: int) -> str | None:
    """The ``[...]`` annotation of a field ('' if canonical), None if it cannot be written."""
    notes = []
    tag_end = read_tag(buf, f.tag_start, after)[2]
    w = _width_note(buf, f.tag_start, tag_end, f.number << 3 | f.wire_type)
    if w is None:
        return None
    if w:
        notes.append(f"tag:{w}")
    if f.wire_type == VARINT:
        assert f.value is not None  # read_field gives a varint field its int value
        w = _width_note(buf, f.start, f.end, f.value)
        if w is None:
            return None
        if w:
            notes.append(f"val:{w}")
    elif f.wire_type == LEN:
        w = _width_note(buf, tag_end, f.start, f.end - f.start)
        if w:
            notes.append(f"len:{w}")
    elif f.wire_type == SGROUP:
        w = _width_note(buf, f.end, after, f.number << 3 | EGROUP)
        if w is None:
            return None
        if w:
            notes.append(f"end:{w}")
    return "[" + ",".join(notes) + "]" if notes else ""


def _field_lines(buf, f: Field, after: int, depth: int, width: int, expand_partial: bool,
                 stack: list) -> Iterator[str]:
    notes = _widths(buf, f, after)
    if notes is None:
        yield _raw_line(buf, f.tag_start, after, depth, width, "a varint with bits above 64")
        return
    pad = "  " * depth
    if width:
        pad = f"{f.tag_start:>{width}} {f.start:>{width}} {f.end - f.start:>{width}}  " + pad
    head = f"{pad}{f.number}{notes}"
    wt = f.wire_type
    if wt in (VARINT, I32, I64):  # the value and its note, as irmodel raw prints them
        kind = "varint" if wt == VARINT else "fixed32" if wt == I32 else "fixed64"
        yield head + ": " + format_item(RawItem(kind, 0, f), buf).split(": ", 1)[1]
        return
    close = (" " * (3 * width + 4) if width else "") + "  " * depth + "}"
    if wt == SGROUP:
        yield head + " {  # group"
        stack.append([f.start, f.end, depth + 1, f, close])
        return
    start, end = f.start, f.end
    text = _text(buf, start, end, strict=True) if end - start <= _SHORT_TEXT_BYTES else None
    if start == end or text is not None:
        yield f"{head}: {_quote(text or '')}"
    elif parses_as_message(buf, start, end, depth + 1) or (
            expand_partial and _parsed_prefix(buf, start, end, depth + 1) > start):
        yield head + " {"
        stack.append([start, end, depth + 1, f, close])
    else:
        text = _text(buf, start, end, strict=False)
        if text is not None:
            yield f"{head}: {_quote(text)}"
        else:
            yield f"{head}: <{end - start} bytes: {bytes(buf[start:end]).hex(' ')}>"


def render(buf, start: int = 0, end: int | None = None, *, offsets: bool = False,
           expand_partial: bool = False) -> str:
    """`render_lines` joined, with a final newline."""
    return "".join(line + "\n" for line in render_lines(buf, start, end, offsets=offsets,
                                                          expand_partial=expand_partial))


# -- text -> bytes -------------------------------------------------------------------------

_HEADER = ["offset", "data", "length", "field"]
_COLUMNS = re.compile(r"\s*\d+\s+\d+\s+\d+\s+")
_FIELD = re.compile(r"(\d+)(?:\[([^\]]*)\])?\s*(:|\{)\s*")
_HEX = re.compile(r"[0-9a-fA-F]{2}")
_PLAIN_STRING = re.compile(r'"([^"\\]*)"')
_BYTES_HEAD = re.compile(r"<(\d+) bytes:")


def _parse_widths(text: str | None, lineno: int) -> dict:
    out: dict[str, int] = {}
    if not text:
        return out
    for part in text.split(","):
        key, _, value = part.strip().partition(":")
        if key not in _WIDTH_KEYS or not value.strip().isdigit():
            raise RawTextError(f"bad width {part.strip()!r} (tag:N, len:N, val:N or end:N)", lineno)
        w = int(value)
        if not 1 <= w <= 10:
            raise RawTextError(f"width {w} out of range 1..10 (write longer varints as raw:)", lineno)
        out[key] = w
    return out


def _varint(n: int, width: int | None, what: str, lineno: int) -> bytes:
    if width is None:
        return encode_varint(n)
    try:
        return varint_of_width(n, width)
    except ValueError as exc:
        raise RawTextError(f"{what}: {exc}", lineno) from None


def _hex(text: str, lineno: int) -> bytes:
    try:
        return bytes.fromhex(text)  # whitespace between bytes is skipped
    except ValueError:
        raise RawTextError(f"not hex: {text.strip()!r}", lineno) from None


def _unquote(rest: str, lineno: int) -> tuple[bytes, str]:
    """Parse a quoted string at the start of ``rest``; returns (its bytes, what follows)."""
    plain = _PLAIN_STRING.match(rest)
    if plain is not None:  # no escapes: the common case, without a loop per character
        return plain.group(1).encode("utf-8"), rest[plain.end():]
    out = bytearray()
    i = 1
    n = len(rest)
    while i < n:
        c = rest[i]
        if c == '"':
            return bytes(out), rest[i + 1:]
        if c == "\\":
            if i + 1 >= n:
                break
            e = rest[i + 1]
            simple = {"\\": b"\\", '"': b'"', "n": b"\n", "r": b"\r", "t": b"\t"}.get(e)
            if simple is not None:
                out += simple
                i += 2
                continue
            if e == "x" and _HEX.fullmatch(rest[i + 2:i + 4] or ""):
                out.append(int(rest[i + 2:i + 4], 16))
                i += 4
                continue
            raise RawTextError(f"unknown escape \\{e}", lineno)
        out += c.encode("utf-8")
        i += 1
    raise RawTextError("unterminated string", lineno)


def _rest_is_comment(rest: str, lineno: int) -> str:
    """The comment after a value ('' if none); anything else is an error."""
    rest = rest.strip()
    if rest.startswith("..."):
        raise RawTextError("a cut string (printed text is cut at 200 characters): write it whole", lineno)
    if rest and not rest.startswith("#"):
        raise RawTextError(f"unexpected {rest!r} after the value", lineno)
    return rest[1:].strip()


def _scalar(number: int, widths: dict, rest: str, lineno: int) -> bytes:
    tag_w = widths.get("tag")
    if rest.startswith('"'):
        payload, tail = _unquote(rest, lineno)
        _rest_is_comment(tail, lineno)
        return (_varint(number << 3 | LEN, tag_w, "tag", lineno)
                + _varint(len(payload), widths.get("len"), "length", lineno) + payload)
    if rest.startswith("<"):
        m = _BYTES_HEAD.match(rest)
        close = rest.find(">")
        if m is None or close < 0:
            raise RawTextError(f"bad bytes value {rest[:40]!r} (<N bytes: HEX>)", lineno)
        hex_text = rest[m.end():close].rstrip()
        if hex_text.endswith("..."):
            raise RawTextError("a byte preview (irmodel raw shows the first 16 bytes): write every byte",
                               lineno)
        payload = _hex(hex_text, lineno)
        if len(payload) != int(m.group(1)):
            raise RawTextError(f"<{m.group(1)} bytes: ...> holds {len(payload)} bytes", lineno)
        _rest_is_comment(rest[close + 1:], lineno)
        return (_varint(number << 3 | LEN, tag_w, "tag", lineno)
                + _varint(len(payload), widths.get("len"), "length", lineno) + payload)
    if rest.startswith("{...}"):
        raise RawTextError("an elided message (below --max-depth): print it with a larger depth", lineno)
    value, _, tail = rest.partition(" ")
    _rest_is_comment(tail, lineno)
    if value.lower().startswith("0x"):
        digits = value[2:]
        if len(digits) not in (8, 16) or not re.fullmatch(r"[0-9a-fA-F]+", digits):
            raise RawTextError(f"bad fixed value {value!r} (0x and 8 or 16 hex digits)", lineno)
        wt = I32 if len(digits) == 8 else I64
        return _varint(number << 3 | wt, tag_w, "tag", lineno) + int(digits, 16).to_bytes(len(digits) // 2, "little")
    try:
        n = int(value)
    except ValueError:
        raise RawTextError(f"bad value {value!r}", lineno) from None
    if not -(1 << 63) <= n < 1 << 64:
        raise RawTextError(f"varint {n} out of range", lineno)
    return _varint(number << 3 | VARINT, tag_w, "tag", lineno) + _varint(n & ((1 << 64) - 1), widths.get("val"),
                                                                         "value", lineno)


def encode(text: str | Iterable[str]) -> bytes:
    """The bytes the raw text (printed or exact form) describes.  Raises `RawTextError`."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    offsets = False
    # one frame per open block: (number, is_group, widths, parts, line number)
    stack: list = [(None, False, {}, [], 0)]
    for lineno, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("offset") and stripped.split() == _HEADER:
            offsets = True
            continue
        if offsets:
            m = _COLUMNS.match(line)
            if m is not None:
                stripped = line[m.end():].strip()
        if stripped.startswith("#"):
            continue
        parts = stack[-1][3]
        if stripped.startswith("}"):
            _rest_is_comment(stripped[1:], lineno)
            if len(stack) == 1:
                raise RawTextError("} closes nothing", lineno)
            number, is_group, widths, body_parts, _ = stack.pop()
            body = b"".join(body_parts)
            outer = stack[-1][3]
            if is_group:
                outer.append(_varint(number << 3 | SGROUP, widths.get("tag"), "tag", lineno) + body
                             + _varint(number << 3 | EGROUP, widths.get("end"), "end tag", lineno))
            else:
                outer.append(_varint(number << 3 | LEN, widths.get("tag"), "tag", lineno)
                             + _varint(len(body), widths.get("len"), "length", lineno) + body)
            continue
        if stripped.startswith("raw:"):
            hex_part = stripped[4:].split("#", 1)[0]
            parts.append(_hex(hex_part, lineno))
            continue
        m = _FIELD.match(stripped)
        if m is None:
            raise RawTextError(f"not a field line: {stripped[:60]!r}", lineno)
        number = int(m.group(1))
        if number >= 1 << 61:
            raise RawTextError(f"field number {number} does not fit a tag", lineno)
        widths = _parse_widths(m.group(2), lineno)
        rest = stripped[m.end():]
        if m.group(3) == "{":
            if rest.startswith("...}"):
                raise RawTextError("an elided message (below --max-depth): print it with a larger depth",
                                   lineno)
            comment = _rest_is_comment(rest, lineno)
            stack.append((number, comment.startswith("group"), widths, [], lineno))
            continue
        parts.append(_scalar(number, widths, rest, lineno))
    if len(stack) > 1:
        raise RawTextError(f"the block opened on line {stack[-1][4]} is not closed", len(lines))
    return b"".join(stack[0][3])


__all__ = ["RawTextError", "encode", "render", "render_lines", "varint_of_width"]
