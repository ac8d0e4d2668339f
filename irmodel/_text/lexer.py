"""Tokens of the text syntax, read one at a time with one compiled pattern.

The parser looks at the current token (`Lexer.kind`, `Lexer.value`, `Lexer.start`)
and moves on with `Lexer.advance`.  Kinds: ``ident``, ``num``, ``negword`` (``-inf``),
``str`` and ``bytes`` (still quoted), ``hex`` (``0x...``), ``arrow`` (``=>``), a
punctuation character as its own kind, and ``end``.  Whitespace and ``#`` comments
are skipped as onnx skips them.
"""

from __future__ import annotations

from .errors import ParseError
from .patterns import INT_LIST, NUMBER_LIST, TOKEN

_match = TOKEN.match


class Lexer:
    """The token stream of one text; positions are indices into it."""

    __slots__ = ("text", "pos", "kind", "value", "start", "_n")

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise TypeError(f"the text to parse must be a str, not {type(text).__name__}")
        self.text = text
        self._n = len(text)
        self.pos = 0
        self.kind = "end"
        self.value = ""
        self.start = 0
        self.advance()

    def advance(self) -> None:
        """Move to the next token (skipping whitespace and comments)."""
        text, pos, n = self.text, self.pos, self._n
        while pos < n:
            m = _match(text, pos)
            if m is None:
                self.start = pos
                raise ParseError(f"unexpected character {text[pos]!r}", text, pos)
            kind = m.lastgroup or ""
            end = m.end()
            if kind == "space":
                pos = end
                continue
            self.start = pos
            self.pos = end
            if kind == "punct":
                kind = text[pos]
            self.kind = kind
            self.value = m.group()
            return
        self.start = self.pos = n
        self.kind = "end"
        self.value = ""

    def error(self, expected: str, at: int | None = None) -> ParseError:
        """A `ParseError` at the current token: what was expected, what is there."""
        found = "the end of the text" if self.kind == "end" else repr(self.value[:40])
        return ParseError(f"expected {expected}, found {found}", self.text, self.start if at is None else at)

    def fail(self, message: str, at: int | None = None) -> ParseError:
        return ParseError(message, self.text, self.start if at is None else at)

    def accept(self, kind: str) -> bool:
        """Consume the current token if it is of ``kind``."""
        if self.kind == kind:
            self.advance()
            return True
        return False

    def expect(self, kind: str, what: str | None = None) -> str:
        """Consume a token of ``kind`` and return its text, or raise a `ParseError`."""
        if self.kind != kind:
            raise self.error(what or repr(kind))
        value = self.value
        self.advance()
        return value

    def peek_after(self) -> tuple:
        """The kind and text of the token after the current one (the lexer does not move)."""
        saved = (self.pos, self.kind, self.value, self.start)
        self.advance()
        after = (self.kind, self.value)
        self.pos, self.kind, self.value, self.start = saved
        return after

    def plain_list(self, ints: bool) -> list | None:
        """At a ``{``: the texts of a list of plain numbers up to its ``}`` (consumed),
        or None (nothing consumed) when the list holds anything else (words, comments,
        our extensions): the parser then reads it token by token.  One regex match
        instead of a token per number: large value lists are most of a model's text."""
        if self.kind != "{":
            return None
        m = (INT_LIST if ints else NUMBER_LIST).match(self.text, self.pos)
        if m is None:
            return None
        body = self.text[self.pos:m.end() - 1]
        self.pos = m.end()
        self.advance()
        return body.split(",")
