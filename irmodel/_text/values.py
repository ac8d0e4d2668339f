"""Reading literal values: numbers in onnx's rules, strings, and setting string fields.

onnx's parser converts with ``std::stoll``/``stoull`` (out of range: an error; a
negative number for an unsigned field wraps, as ``stoull`` does) and
``std::from_chars`` (a float out of range is an error, an underflow is not).
"""

from __future__ import annotations

import math

from wirefmt import encode_varint
from wirefmt.reader import Float32NaN

from .lexer import Lexer
from .numbers import (INT64_MAX, INT64_MIN, MAX_NUMBER_CHARS, NAN32, NAN64, NEG_NAN32, NEG_NAN64, UINT64_MAX,
                      bits_double, read_float32)
from .patterns import FLOAT_WORD
from .strings import unquote, unquote_bytes


def is_float_word(word: str) -> bool:
    return FLOAT_WORD.match(word) is not None


def read_int(lx: Lexer, lo: int = INT64_MIN, hi: int = INT64_MAX, what: str = "an integer") -> int:
    """An integer literal in ``[lo, hi]`` (onnx: ``Integer value expected``)."""
    if lx.kind != "num":
        raise lx.error(what)
    text = lx.value
    if len(text) > MAX_NUMBER_CHARS:
        raise lx.fail("number too long")
    if "." in text or "e" in text or "E" in text:
        raise lx.error(what + " (not a float)")
    v = int(text)
    if not lo <= v <= hi:
        raise lx.fail(f"{text} is out of range [{lo}, {hi}]")
    lx.advance()
    return v


def read_uint64(lx: Lexer) -> int:
    """An unsigned 64-bit value as ``stoull`` reads it: a negative literal wraps."""
    v = read_int(lx, -UINT64_MAX, UINT64_MAX)
    return v % (1 << 64)


def read_float_bits(lx: Lexer, double: bool) -> int | float:
    """A float literal: the value (a Python float, or a `Float32NaN`/bits-exact NaN).

    Accepts an integer or float literal, ``inf``/``infinity``/``nan`` in any case with
    an optional ``-``, and our ``nan(0x<bits>)``.
    """
    kind, text = lx.kind, lx.value
    if kind == "num":
        if len(text) > MAX_NUMBER_CHARS:
            raise lx.fail("number too long")
        try:
            v = float(text) if double else read_float32(text)
        except (OverflowError, ValueError):
            raise lx.fail(f"{text} is not a {'double' if double else 'float'} in range") from None
        if v in (math.inf, -math.inf):
            raise lx.fail(f"{text} is not a {'double' if double else 'float'} in range")
        lx.advance()
        return v
    if kind in ("ident", "negword") and is_float_word(text):
        lx.advance()
        word = text.lower()
        neg = word.startswith("-")
        if word.endswith("nan"):
            if word == "nan" and lx.kind == "(":
                return _nan_bits(lx, double)
            if double:
                return bits_double(NEG_NAN64 if neg else NAN64)
            return Float32NaN(NEG_NAN32 if neg else NAN32)
        return -math.inf if neg else math.inf
    raise lx.error("a number")


def _nan_bits(lx: Lexer, double: bool):
    lx.advance()  # (
    if lx.kind != "hex":
        raise lx.error("the bits of a NaN (0x...)")
    bits = int(lx.value[2:] or "x", 16) if len(lx.value) <= 18 else -1
    width = 64 if double else 32
    value = bits_double(bits) if double and 0 <= bits < (1 << 64) else None
    if not 0 <= bits < (1 << width):
        raise lx.fail(f"NaN bits out of range for a {width}-bit float")
    exp_mask = (0x7FF << 52) if double else (0xFF << 23)
    frac_mask = ((1 << 52) - 1) if double else ((1 << 23) - 1)
    if bits & exp_mask != exp_mask or not bits & frac_mask:
        raise lx.fail(f"0x{bits:x} is not the bits of a NaN")
    lx.advance()
    lx.expect(")")
    return value if double else Float32NaN(bits)


def read_string(lx: Lexer, what: str = "a string") -> str | bytes:
    """A ``"..."`` (str) or ``b"..."`` (bytes) literal."""
    kind = lx.kind
    v: str | bytes
    if kind == "str":
        v = unquote(lx.value)
    elif kind == "bytes":
        v = unquote_bytes(lx.value)
    else:
        raise lx.error(what)
    lx.advance()
    return v


def read_name(lx: Lexer, optional: bool = False, what: str = "a name") -> str | bytes:
    """An identifier or a quoted name (onnx's ``ParseQuotableIdentifier``)."""
    kind = lx.kind
    if kind == "ident":
        v = lx.value
        lx.advance()
        return v
    if kind == "str" or kind == "bytes":
        return read_string(lx)
    if optional:
        return ""
    raise lx.error(what)


def as_text(lx: Lexer, value, at: int) -> str | bytes:
    """A string value checked to be encodable; bytes that are UTF-8 become str."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise lx.fail("a string holds a lone surrogate (not UTF-8)", at) from None
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value


def string_field_bytes(number: int, value: bytes) -> bytes:
    """The wire bytes of a length-delimited field: how a string field gets bytes that
    are not UTF-8 (the message classes refuse them by assignment, as protobuf)."""
    return encode_varint(number << 3 | 2) + encode_varint(len(value)) + value


def read_bytes(lx: Lexer) -> bytes:
    """A string literal as bytes (a ``"..."`` literal's UTF-8)."""
    at = lx.start
    v = read_string(lx)
    if isinstance(v, str):
        try:
            return v.encode("utf-8")
        except UnicodeEncodeError:
            raise lx.fail("a string holds a lone surrogate (not UTF-8)", at) from None
    return v
