"""Strings from a file made safe to print: the one place every text and JSON output uses.

A protobuf file is untrusted input, and its strings reach a terminal: ``irmodel dump``
prints ``op_type``, names, domains, ``doc_string``; ``irmodel raw`` prints any string it
finds; error messages quote names and locations.  A string holding ESC or BEL could set
the window title, clear the screen or rewrite earlier lines; a right-to-left override
(U+202E) makes ``exe.onnx`` read as ``xnno.exe``.  So no character read from a file
reaches an output unescaped unless it is printable.  (In wirefmt, not irmodel, because
``wirefmt.raw`` prints strings too and wirefmt never imports irmodel.)

Text (`safe_text`; `quote` for the quoted form, `name_text` for names):

* every character that Python does not call printable (``str.isprintable``: Unicode
  categories Cc, Cf, Cs, Co, Cn, Zl, Zp and every space but U+0020) is written as an
  escape: ``\\n``, ``\\t``, ``\\r``; ``\\xNN`` for the other C0 controls and DEL
  (U+0000-U+001F, U+007F); ``\\uNNNN`` (or ``\\UNNNNNNNN``) for every other one, the C1
  controls (U+0080-U+009F) and format characters such as U+202E included;
* a string field holding invalid UTF-8 (protobuf's upb backend accepts that in proto2
  fields, and wirefmt messages hand such a value out as ``bytes``) is shown as its
  valid UTF-8 text with each byte that is not part of a valid sequence written
  ``\\xNN``.  A code point from U+0080 up is never written ``\\xNN``, so an ``\\xNN``
  with NN of 80 or more always means a raw byte.  (Internally such a byte travels as
  the lone surrogate U+DC80-U+DCFF that ``surrogateescape`` makes of it; no real
  string holds one, since string fields refuse lone surrogates.)

Numbers (`int_text`): an integer computed from a file's numbers (a product of dims, a
JSON number) is written in full up to `MAX_INT_DIGITS` digits and past that as its length
("a 5,600-digit number"): Python refuses to write an int of more than 4,300 digits.

JSON (`json_ready`, applied to every document before `json.dump`): a bytes-valued
string, as a value or as a dict key, is written as protobuf's
``json_format.MessageToDict`` writes it: the Python bytes literal of its value, e.g.
``"b'a\\xffb'"``, ASCII only, every byte that is not printable ASCII as ``\\xNN``.
``irmodel dump --json`` (``to_dict``) is thus the reference's dict exactly, and
``irmodel inspect --json`` uses the same form.  (Only the schema tells it from a real
string that looks like a bytes literal; that is the reference's choice, kept so that we
agree with it.)  Every JSON document is written with ``ensure_ascii=True``, so control
and format characters in real strings become ``\\uNNNN`` escapes, never raw bytes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
#: ``decode("utf-8", "surrogateescape")`` turns each invalid byte NN into U+DCNN.
_BYTE_SURROGATES = range(0xDC80, 0xDD00)


def _escape_char(c: str) -> str:
    named = _NAMED.get(c)
    if named is not None:
        return named
    code = ord(c)
    if code < 0x80:
        return "\\x%02x" % code
    if code in _BYTE_SURROGATES:
        return "\\x%02x" % (code - 0xDC00)
    return "\\u%04x" % code if code <= 0xFFFF else "\\U%08x" % code


def _escaped(text: str, specials: str = "") -> str:
    """``text`` with every non-printable character escaped, and each of ``specials``
    preceded by a backslash."""
    out = []
    for c in text:
        if c in specials:
            out.append("\\" + c)
        elif c.isprintable():
            out.append(c)
        else:
            out.append(_escape_char(c))
    return "".join(out)


def as_text(value: object) -> str:
    """A string read from a file as ``str``: ``bytes`` (a string field holding invalid
    UTF-8) decoded with ``surrogateescape``, so that each invalid byte survives to be
    shown as ``\\xNN``.  Anything else goes through ``str``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "surrogateescape")
    return str(value)


def safe_text(value: object) -> str:
    """``value`` (``str``, or ``bytes`` for a string with invalid UTF-8) safe to print:
    non-printable characters and invalid bytes escaped (see the module docstring).

    Backslashes are left alone; use `quote` where every escape must be unambiguous.
    """
    text = as_text(value)
    if text.isprintable():  # the common case: one test at C speed
        return text
    return _escaped(text)


def quote(value: object, limit: int | None = None) -> str:
    """``"..."``: `safe_text` with backslashes and double quotes escaped too, so that
    every escape in the result is one.  With ``limit``, at most that many characters are
    shown, followed by ``... (N characters)`` (``N bytes`` for a bytes value)."""
    text = as_text(value)
    cut = limit is not None and len(text) > limit
    shown = text[:limit] if cut else text
    if shown.isprintable() and "\\" not in shown and '"' not in shown:
        body = shown
    else:
        body = _escaped(shown, '\\"')
    if not cut:
        return f'"{body}"'
    unit = "characters" if isinstance(value, str) else "bytes"
    size = len(value) if isinstance(value, (str, bytes, bytearray, memoryview)) else len(text)
    return f'"{body}"... ({size} {unit})'


#: A plain word is what ``re.fullmatch(r"[\w.:/\-]+", name)`` accepts: ``\w`` is exactly
#: ``str.isalnum()`` or ``_``, so mapping the allowed punctuation to a letter and asking
#: ``isalnum()`` decides the same without importing ``re`` (several ms of every `inspect`).
_PUNCTUATION_AS_LETTER = str.maketrans("_.:/-", "aaaaa")


def name_text(value: object, limit: int | None = None) -> str:
    """A name as it is when it is a plain word (letters, digits, ``_.:/-``), else `quote`d:
    ``conv1``, ``"my tensor"``, ``"a\\x1b[2J"``.  ``limit`` as for `quote`."""
    if (isinstance(value, str) and (limit is None or len(value) <= limit)
            and value.translate(_PUNCTUATION_AS_LETTER).isalnum() and value.isprintable()):
        return value
    return quote(value, limit)


def one_line(message: object) -> str:
    """A message (which may quote a file's strings) as one safe line: each run of
    whitespace becomes one space, anything else not printable is escaped."""
    return safe_text(" ".join(str(message).split()))


def json_bytes(value: bytes | bytearray | memoryview) -> str:
    """The JSON form of a bytes-valued string: its bytes literal, ``"b'a\\xffb'"``."""
    return repr(bytes(value))


def json_ready(obj: Any) -> Any:
    """``obj`` (dicts, lists, tuples, scalars) with every bytes value and bytes dict key
    in the JSON form of the module docstring; what `json.dump` may then write as is.

    Iterative, so a deep document costs no Python recursion.
    """
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return json_bytes(obj)
    if not isinstance(obj, (dict, list, tuple)):
        return obj
    top: Any = {} if isinstance(obj, dict) else []
    stack: list[tuple[Any, Any]] = [(obj, top)]
    while stack:
        src, dst = stack.pop()
        items = src.items() if isinstance(src, dict) else enumerate(src)
        for k, v in items:
            if isinstance(v, (dict, list, tuple)):
                new: Any = {} if isinstance(v, dict) else []
                stack.append((v, new))
                v = new
            elif isinstance(v, (bytes, bytearray, memoryview)):
                v = json_bytes(v)
            if isinstance(dst, dict):
                dst[json_bytes(k) if isinstance(k, (bytes, bytearray, memoryview)) else k] = v
            else:
                dst.append(v)
    return top


#: An integer longer than this many digits is not written in a message (`int_text`).
MAX_INT_DIGITS = 40


def int_text(n: int) -> str:
    """``n`` in decimal for a message, or, past `MAX_INT_DIGITS` digits, how long it is
    ("a 5,600-digit number"): Python refuses to write an int of more than 4,300 digits,
    and nobody reads one.  The length is exact up to a million bits, "about" beyond (the
    exact count takes a power of ten as large as the number).  Costs O(1) big-int work for
    the usual case (one comparison)."""
    if -_SMALL < n < _SMALL:
        return str(n)
    bits = abs(n).bit_length()
    digits = int((bits - 1) * _LOG10_2) + 1  # 10**(digits-1) <= 2**(bits-1) <= |n|
    sign = "a negative" if n < 0 else "a"
    if bits > 1 << 20:
        return f"{sign} number of about {digits:,} digits"
    if abs(n) >= 10 ** digits:
        digits += 1
    if digits <= MAX_INT_DIGITS:
        return str(n)
    return f"{sign} {digits:,}-digit number"


_SMALL = 10 ** MAX_INT_DIGITS
_LOG10_2 = 0.30102999566398120


__all__ = ["safe_text", "quote", "name_text", "one_line", "as_text", "json_bytes", "json_ready", "int_text",
           "MAX_INT_DIGITS"]
