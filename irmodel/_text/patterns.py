"""Every regular expression of the text syntax, built from named fragments.

The lexer scans with one compiled pattern (`TOKEN`): one ``match`` per token, the
kind read from ``lastgroup``.  Whitespace is onnx's (ASCII only, ``IsSpace``), and a
comment runs from ``#`` to the end of the line, as in onnx's ``SkipWhiteSpace``.
"""

from __future__ import annotations

import re

_SPACE = r"(?:[ \t\n\r\f\v]+|\#[^\n]*)+"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# onnx's numeric literal: digits with at most one '.', then an optional exponent whose
# digits may be missing (onnx scans "1e" and then fails to convert it; so do we).
_NUMBER = r"-?[0-9][0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?"
# '-' glued to a word: a negative special float (-inf, -nan) or a field cleared in an @{...} block.
_NEGWORD = r"-[A-Za-z_][A-Za-z0-9_]*"
_STRING = r'"(?:[^"\\]|\\.)*"'
_BYTES = r'b"(?:[^"\\]|\\.)*"'
_HEX = r"0x[0-9a-fA-F]*"
_ARROW = r"=>"
_PUNCT = r"[<>()\[\]{},:=.?@]"

#: One token at a position: the group that matched names its kind.
TOKEN = re.compile(
    rf"(?P<space>{_SPACE})|(?P<bytes>{_BYTES})|(?P<ident>{_IDENT})|(?P<hex>{_HEX})|(?P<num>{_NUMBER})"
    rf"|(?P<negword>{_NEGWORD})|(?P<str>{_STRING})|(?P<arrow>{_ARROW})|(?P<punct>{_PUNCT})",
    re.DOTALL)

#: A name printed without quotes (onnx's ``IsValidIdentifier``).
IDENTIFIER = re.compile(rf"{_IDENT}\Z")
#: A domain printed without quotes before an op type: identifiers joined by single dots.
DOTTED = re.compile(rf"{_IDENT}(?:\.{_IDENT})*\Z")
#: onnx's special float words (``NextIsValidFloatString``), any case.
FLOAT_WORD = re.compile(r"-?(?:inf|infinity|nan)\Z", re.IGNORECASE)
#: The escapes of a quoted string: a backslash keeps the character after it.
ESCAPE = re.compile(r"\\(.)", re.DOTALL)
#: The escapes of a byte string: ``\xHH`` or a backslash keeping the next character.
BYTES_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|(.))", re.DOTALL)
#: The rest of a ``{...}`` list of plain numbers (matched after its ``{``): read in one go.
_PLAIN = r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"
NUMBER_LIST = re.compile(rf"[ \t\n\r]*(?:{_PLAIN}[ \t\n\r]*,[ \t\n\r]*)*{_PLAIN}[ \t\n\r]*\}}")
INT_LIST = re.compile(r"[ \t\n\r]*(?:-?[0-9]+[ \t\n\r]*,[ \t\n\r]*)*-?[0-9]+[ \t\n\r]*\}")
