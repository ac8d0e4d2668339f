"""protobuf's text format (``text_format.MessageToString`` / ``Merge``), for any schema.

Printing follows protobuf's Python printer: present fields in field-number order, one
``name: value`` line each (a repeated field one line per element), a message as
``name {`` ... ``}`` indented by two spaces, enums by name (an unknown value as its
number), strings and bytes C-escaped (bytes outside printable ASCII as three-digit octal),
float fields with the fewest digits that round-trip through float32.

Parsing accepts what protobuf's parser accepts for these schemas: ``:`` optional before
a message, ``{}`` or ``<>`` around one, ``[a, b]`` lists for repeated fields, ``,`` or
``;`` after a field, ``#`` comments, single- or double-quoted strings with C escapes
(adjacent strings concatenate), integers in decimal, hex or octal, ``inf``/``nan``,
enum names or numbers.  Errors raise `wirefmt.ParseError` (a ValueError) with the line
and column; nesting deeper than `MAX_DEPTH` is refused, never a RecursionError.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .errors import ParseError
from .limits import MAX_DEPTH
from .schema import BOOL, BYTES, DOUBLE, ENUM, FLOAT, INTEGER_KINDS, MESSAGE, STRING
from .values import shortest_float32

__all__ = ["to_text", "merge_text"]

_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', ord("'"): "\\'",
            ord("\\"): "\\\\"}


def _escape(data: bytes) -> str:
    """Bytes as protobuf escapes a ``bytes`` field: every byte outside printable ASCII in octal."""
    return "".join(_ESCAPES.get(b) or (chr(b) if 32 <= b < 127 else f"\\{b:03o}") for b in data)


def _escape_text(text: str) -> str:
    """A string field as protobuf's printer writes it (``as_utf8``, its default): ASCII
    control characters escaped, every other character as it is."""
    return "".join(_ESCAPES.get(ord(c)) or (f"\\{ord(c):03o}" if ord(c) < 32 or ord(c) == 127 else c)
                   for c in text)


def _escape_invalid_utf8(data: bytes) -> str:
    """A string field holding invalid UTF-8: its valid runs as text, each bad byte in octal."""
    out = []
    while data:
        try:
            out.append(_escape_text(data.decode("utf-8")))
            break
        except UnicodeDecodeError as exc:
            out.append(_escape_text(data[:exc.start].decode("utf-8")))
            out.append(f"\\{data[exc.start]:03o}")
            data = data[exc.start + 1:]
    return "".join(out)


def _float_text(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def _value_text(f: Any, value: Any, enum_names: dict | None) -> str:
    kind = f.kind
    if kind == STRING:
        return f'"{_escape_text(value)}"' if isinstance(value, str) else f'"{_escape_invalid_utf8(bytes(value))}"'
    if kind == BYTES:
        return f'"{_escape(bytes(value))}"'
    if kind == BOOL:
        return "true" if value else "false"
    if kind == ENUM:
        return str(enum_names.get(value, value)) if enum_names is not None else str(value)
    if kind == FLOAT:
        return _float_text(shortest_float32(value) if math.isfinite(value) else value)
    if kind == DOUBLE:
        return _float_text(value)
    return str(value)


def to_text(msg: Any) -> str:
    """The text format of ``msg`` (``text_format.MessageToString(msg)``)."""
    out: list[str] = []
    # Iterative, so that printing depth never meets Python's recursion limit.
    work: list = [("msg", msg, 0)]
    while work:
        item = work.pop()
        if item[0] == "line":
            out.append(item[1])
            continue
        _, m, indent = item
        if indent // 2 > MAX_DEPTH:
            raise ParseError(f"message nesting deeper than {MAX_DEPTH}")
        pad = " " * indent
        registry = m._registry
        steps: list = []
        for f, value in m.ListFields():
            enum_names = registry.enum(f.type_name).names if f.kind == ENUM else None
            values = list(value) if f.repeated else [value]
            for v in values:
                if f.kind == MESSAGE:
                    steps.append(("line", f"{pad}{f.name} {{\n"))
                    steps.append(("msg", v, indent + 2))
                    steps.append(("line", f"{pad}}}\n"))
                else:
                    steps.append(("line", f"{pad}{f.name}: {_value_text(f, v, enum_names)}\n"))
        work.extend(reversed(steps))
    return "".join(out)


# -- parsing ------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n\f\v]+|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>[-+]?(?:0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?[fF]?))
  | (?P<ident>-?[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>[{}<>:\[\],;])
""", re.VERBOSE)
_SIMPLE_ESCAPES = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}


class _Tokens:
    def __init__(self, text: str) -> None:
        self.items: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise self._error(text, pos, f"unexpected character {text[pos]!r}")
            kind = m.lastgroup or ""
            if kind != "space":
                self.items.append((kind, m.group(), pos))
            pos = m.end()
        self.text = text
        self.i = 0

    @staticmethod
    def _error(text: str, pos: int, what: str) -> ParseError:
        line = text.count("\n", 0, pos) + 1
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return ParseError(f"{line}:{column} : {what}")

    def error(self, what: str) -> ParseError:
        pos = self.items[self.i][2] if self.i < len(self.items) else len(self.text)
        return self._error(self.text, pos, what)

    def peek(self) -> str | None:
        return self.items[self.i][1] if self.i < len(self.items) else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.items):
            raise self.error("unexpected end of input")
        kind, value, _ = self.items[self.i]
        self.i += 1
        return kind, value

    def accept(self, value: str) -> bool:
        if self.peek() == value:
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            raise self.error(f"expected {value!r}, found {self.peek()!r}")


def _unescape(token: str) -> bytes:
    body, out, i = token[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1:]).group()  # type: ignore[union-attr]
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
        elif nxt == "x":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
            if digits is None:
                raise ParseError(f"invalid escape in {token[:40]!r}")
            out.append(int(digits.group(), 16))
            i += 2 + len(digits.group())
        else:
            raise ParseError(f"invalid escape \\{nxt} in {token[:40]!r}")
    return bytes(out)


def _scalar(tokens: _Tokens, f: Any, registry: Any) -> Any:
    kind, text = tokens.take()
    if f.kind in (STRING, BYTES):
        if kind != "string":
            raise tokens.error(f"expected a string for {f.name}")
        data = _unescape(text)
        while tokens.peek() is not None and tokens.items[tokens.i][0] == "string":
            data += _unescape(tokens.take()[1])
        if f.kind == BYTES:
            return data
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise tokens.error(f"{f.name}: not valid UTF-8") from None
    if f.kind == BOOL:
        if text in ("true", "True", "t", "1"):
            return True
        if text in ("false", "False", "f", "0"):
            return False
        raise tokens.error(f"expected a bool for {f.name}, found {text!r}")
    if f.kind == ENUM:
        values = registry.enum(f.type_name).values
        if kind == "ident":
            if text not in values:
                raise tokens.error(f"{text!r} is not a value of {f.type_name}")
            return values[text]
        return _integer(tokens, text)
    if f.kind in (FLOAT, DOUBLE):
        word = text.lower().lstrip("-+")
        if word in ("inf", "infinity", "nan"):
            return float(text.lower().rstrip("inity") if word != "nan" else "nan")
        try:
            return float(text.rstrip("fF")) if kind == "number" else _bad(tokens, f, text)
        except ValueError:
            raise tokens.error(f"expected a number for {f.name}, found {text!r}") from None
    if f.kind in INTEGER_KINDS:
        return _integer(tokens, text)
    raise tokens.error(f"field {f.name} has an unsupported kind")


def _bad(tokens: _Tokens, f: Any, text: str):
    raise tokens.error(f"expected a number for {f.name}, found {text!r}")


def _integer(tokens: _Tokens, text: str) -> int:
    try:
        sign = -1 if text.startswith("-") else 1
        digits = text.lstrip("-+")
        if digits[:2].lower() == "0x":
            return sign * int(digits, 16)
        if len(digits) > 1 and digits.startswith("0"):
            return sign * int(digits, 8)
        return sign * int(digits, 10)
    except ValueError:
        raise tokens.error(f"expected an integer, found {text!r}") from None


def merge_text(text: str, msg: Any) -> Any:
    """Merge the text format ``text`` into ``msg`` (``text_format.Merge``) and return it."""
    tokens = _Tokens(text)
    # Each frame: (message, closing token or None for the top level).
    frames: list[tuple[Any, str | None]] = [(msg, None)]
    while True:
        current, closing = frames[-1]
        peek = tokens.peek()
        if peek is None:
            if closing is not None:
                raise tokens.error(f"expected {closing!r}")
            return msg
        if closing is not None and peek == closing:
            tokens.take()
            frames.pop()
            tokens.accept(",") or tokens.accept(";")
            continue
        kind, name = tokens.take()
        if kind != "ident":
            raise tokens.error(f"expected a field name, found {name!r}")
        f = current._fields.get(name)
        if f is None:
            raise tokens.error(f'Message type "{current._type_name}" has no field named "{name}".')
        if f.kind == MESSAGE:
            tokens.accept(":")
            opening = [tokens.peek()]
            listed = f.repeated and opening[0] == "["
            if listed:
                tokens.take()
                if tokens.accept("]"):
                    tokens.accept(",") or tokens.accept(";")
                    continue
                raise tokens.error("a list of messages is not supported; repeat the field instead")
            opener = tokens.peek()
            if opener not in ("{", "<"):
                raise tokens.error(f"expected '{{' or '<' after {name}")
            tokens.take()
            if len(frames) > MAX_DEPTH:
                raise tokens.error(f"messages nested more than {MAX_DEPTH} deep")
            if f.repeated:
                child = getattr(current, name).add()
            else:
                child = getattr(current, name)
                child.SetInParent()
            frames.append((child, "}" if opener == "{" else ">"))
            continue
        tokens.expect(":")
        registry = current._registry
        if f.repeated and tokens.accept("["):
            target = getattr(current, name)
            if not tokens.accept("]"):
                while True:
                    target.append(_scalar(tokens, f, registry))
                    if tokens.accept("]"):
                        break
                    tokens.expect(",")
        elif f.repeated:
            getattr(current, name).append(_scalar(tokens, f, registry))
        else:
            setattr(current, name, _scalar(tokens, f, registry))
        tokens.accept(",") or tokens.accept(";")
