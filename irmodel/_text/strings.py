"""Quoted strings and names as onnx prints them, and the byte strings we add.

onnx quotes with a backslash before ``\\`` and ``"`` only, and reads a backslash as
"keep the next character".  Its parser takes a C string, so a NUL ends the text, and a
Python ``str`` cannot hold bytes that are not UTF-8: such strings are printed as byte
strings, ``b"..."`` with ``\\xHH`` escapes (our extension; onnx's parser rejects it).
"""

from __future__ import annotations

from .patterns import BYTES_ESCAPE, ESCAPE, IDENTIFIER

_is_identifier = IDENTIFIER.match


def quote(value) -> str:
    """A string or bytes value as a string literal: onnx's form when it can say it."""
    if isinstance(value, str):
        if "\x00" not in value:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: not text, say its bytes
                return byte_literal(value.encode("utf-8", "surrogatepass"))
            if "\\" in value or '"' in value:
                value = value.replace("\\", "\\\\").replace('"', '\\"')
            return f'"{value}"'
        return byte_literal(value.encode("utf-8"))
    data = bytes(value)
    if b"\x00" not in data:
        try:
            return quote(data.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    return byte_literal(data)


def byte_literal(data: bytes) -> str:
    """``b"..."``: printable UTF-8 as it is, every other byte as ``\\xHH``."""
    out = []
    i, n = 0, len(data)
    while i < n:
        # the longest run that is valid UTF-8 without anything unsafe
        j = i
        while j < n and data[j] >= 0x20 and data[j] not in (0x22, 0x5C, 0x7F):
            j += 1
        chunk = data[i:j]
        while chunk:
            try:
                out.append(chunk.decode("utf-8"))
                break
            except UnicodeDecodeError as exc:
                out.append(chunk[:exc.start].decode("utf-8"))
                out.append("".join(f"\\x{b:02x}" for b in chunk[exc.start:exc.end]))
                chunk = chunk[exc.end:]
        if j < n:
            out.append(f"\\x{data[j]:02x}")
        i = j + 1
    return 'b"' + "".join(out) + '"'


def name(value) -> str:
    """A name: bare when onnx's ``IsValidIdentifier`` accepts it, else quoted."""
    if isinstance(value, str) and _is_identifier(value):
        return value
    return quote(value)


def unquote(token: str) -> str:
    """The value of a ``"..."`` token (onnx's reading: a backslash keeps the next character)."""
    body = token[1:-1]
    if "\\" in body:
        body = ESCAPE.sub(r"\1", body)
    return body


def unquote_bytes(token: str) -> bytes:
    """The bytes of a ``b"..."`` token (UTF-8 of its text, ``\\xHH`` escapes)."""
    body = token[2:-1]
    out = bytearray()
    pos = 0
    for m in BYTES_ESCAPE.finditer(body):
        out += body[pos:m.start()].encode("utf-8")
        out += bytes((int(m.group(1), 16),)) if m.group(1) else m.group(2).encode("utf-8")
        pos = m.end()
    out += body[pos:].encode("utf-8")
    return bytes(out)


def is_text(value) -> bool:
    """Whether a string field's value is printable in onnx's quotes."""
    return isinstance(value, str) and "\x00" not in value
