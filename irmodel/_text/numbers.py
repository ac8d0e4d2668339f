"""Numbers as onnx spells them, and read back exactly.

onnx prints with C++ ``std::to_chars`` (shortest digits that read back, in fixed or
scientific notation, whichever is shorter, fixed on a tie) and ``nan``/``-nan`` for
every NaN; it reads floats with ``std::from_chars`` (correctly rounded straight to
float32 for a float).  `format_float32` and `format_double` reproduce the first
(Python's ``repr`` gives the shortest digits of a double; for a float32 we search the
digit count), `read_float32` the second (a double rounded to float32 is wrong only
when the double lands exactly on a float32 midpoint: then the decimal is compared
exactly).  A NaN whose bits are not the ones ``nan``/``-nan`` read back as is written
``nan(0x<bits>)``, our extension.
"""

from __future__ import annotations

import math
import struct

_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")
_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")

#: The bits that ``nan`` and ``-nan`` read back as (float32, double).
NAN32, NEG_NAN32 = 0x7FC00000, 0xFFC00000
NAN64, NEG_NAN64 = 0x7FF8000000000000, 0xFFF8000000000000
#: Longest numeric token read: the digits of any float that matters fit many times over,
#: and no conversion is ever made of an input-sized run of digits.
MAX_NUMBER_CHARS = 1000
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


def _layout(digits: str, exp: int, negative: bool, a: float) -> str:
    """``a``, whose shortest digits are ``int(digits) * 10**exp``, as to_chars writes it:
    the shorter of fixed and scientific notation, fixed on a tie.  A fixed integer is
    written exactly (to_chars gives every digit of the value, not the shortest ones
    padded with zeros; the lengths compared are the same)."""
    n = len(digits)
    if exp >= 0:
        fixed = str(int(a))
    elif -exp < n:
        fixed = digits[:n + exp] + "." + digits[n + exp:]
    else:
        fixed = "0." + "0" * (-exp - n) + digits
    e10 = n - 1 + exp
    sci = digits[0] + ("." + digits[1:] if n > 1 else "") + ("e-" if e10 < 0 else "e+") + f"{abs(e10):02d}"
    text = fixed if len(fixed) <= len(sci) else sci
    return "-" + text if negative else text


def _split(text: str) -> tuple:
    """Digits (no leading or trailing zeros) and exponent of a positive decimal text."""
    mant, _, e = text.partition("e")
    exp = int(e) if e else 0
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    exp -= len(fp)
    stripped = digits.rstrip("0")
    return stripped, exp + len(digits) - len(stripped)


def format_double(x: float) -> str:
    """A double as onnx prints it (finite, infinite or NaN)."""
    if x != x:
        bits = _U64.unpack(_F64.pack(x))[0]
        return _nan_text(bits, NAN64, NEG_NAN64, 16)
    if x == 0.0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    if x in (math.inf, -math.inf):
        return "inf" if x > 0 else "-inf"
    digits, exp = _split(repr(abs(x)))
    return _layout(digits, exp, x < 0, abs(x))


def _nan_text(bits: int, pos: int, neg: int, width: int) -> str:
    if bits == pos:
        return "nan"
    if bits == neg:
        return "-nan"
    return f"nan(0x{bits:0{width}x})"


def format_float32(x: float) -> str:
    """A float32 value (held in a Python float) as onnx prints it."""
    if x != x:
        bits = getattr(x, "bits", None)  # wirefmt's Float32NaN keeps a float32 NaN's bits
        if bits is None:
            bits = _U32.unpack(_F32.pack(x))[0]
        return _nan_text(bits, NAN32, NEG_NAN32, 8)
    if x == 0.0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    if x in (math.inf, -math.inf):
        return "inf" if x > 0 else "-inf"
    a = abs(x)
    # Fewest significant digits that read back as the same float32.  Reading back gets
    # closer as digits are added (if n digits do, n + 1 do), so the search starts from the
    # count that the width of what reads back guarantees (decimals of n digits are spaced
    # closer than that width: one falls inside), tries one and two fewer (most float data
    # needs the estimate or one digit less), and bisects below only when those read back
    # too (a value that happens to have a short decimal, as 0.5).
    bounds = _bounds(a)
    sure = min(9, max(1, math.floor(math.log10(a)) - math.floor(math.log10(bounds[1] - bounds[0])) + 1))
    best = _round_trip(a, sure, bounds)
    while best is None and sure < 9:  # not expected: the estimate is exact or one more
        sure += 1
        best = _round_trip(a, sure, bounds)
    if best is None:
        best = f"{a:.8e}"
    lo, hi = 1, sure - 1
    while lo <= hi:  # the fewest digits below ``sure``: one fewer, two fewer, then bisection
        mid = hi if hi >= sure - 2 else (lo + hi) // 2
        found = _round_trip(a, mid, bounds)
        if found is None:
            lo = mid + 1
        else:
            best, hi = found, mid - 1
    digits, exp = _split(best)
    return _layout(digits, exp, x < 0, a)


def float32_text(bits: int) -> str:
    """The text of the float32 with these bits."""
    return format_float32(_F32.unpack(_U32.pack(bits))[0])


def _round_trip(a: float, ndigits: int, bounds: tuple) -> str | None:
    """The closest ``ndigits``-digit decimal to ``a`` that reads back as ``a`` (or one
    next to it: below a power of two the interval that reads back is lopsided).
    ``bounds``: `_bounds` of ``a``."""
    text = f"{a:.{ndigits - 1}e}"
    if _reads_back(text, a, bounds):
        return text
    mant, _, e = text.partition("e")
    d = int(mant.replace(".", ""))
    for cand in (d + 1, d - 1):
        if cand <= 0:
            continue
        s = f"{cand}e{int(e) - (ndigits - 1)}"
        if len(str(cand)) == ndigits and _reads_back(s, a, bounds):
            return f"{s}"
    return None


def _bounds(a: float) -> tuple:
    """The midpoints between the positive float32 ``a`` and its two neighbours (for the
    largest, half an ulp past it, where reading overflows): what reads back as ``a`` lies
    between them.  Exact in a double: two neighbouring float32 values sum in 26 bits."""
    below = _next_f32(a, False)
    above = _next_f32(a, True)
    return (a + below) / 2, (a + above) / 2 if above != math.inf else a + (a - below) / 2


def _reads_back(text: str, a: float, bounds: tuple) -> bool:
    """Whether the decimal ``text`` reads back as the positive float32 ``a`` (as
    `read_float32` says), from one read as a double: rounding is monotonic, so a double
    strictly inside ``bounds`` comes from a decimal strictly inside them, and one strictly
    outside from one outside.  A double on a midpoint itself is left to `read_float32`
    (ties go to the even neighbour, decided by the decimal's exact value).  About a fifth of
    the cost of `read_float32` per try, which printing a model's float data makes up to six
    times per value."""
    d = float(text)
    below, above = bounds
    if below < d < above:
        return True
    if d < below or d > above:
        return False
    return _f32_or_none(text) == a


def _f32_or_none(text: str) -> float | None:
    try:
        return read_float32(text)
    except OverflowError:
        return None


def read_float32(text: str) -> float:
    """The float32 nearest a decimal text (round half to even), as ``from_chars``
    gives it; OverflowError when it is out of range (onnx refuses it too)."""
    d = float(text)
    try:
        f = _F32.unpack(_F32.pack(d))[0]
    except OverflowError:
        raise OverflowError(text) from None
    if f == d or d != d or f in (math.inf, -math.inf):
        return f
    if (_U64.unpack(_F64.pack(d))[0] & 0x1FFFFFFF) != 0x10000000 and abs(d) >= 1.1754943508222875e-38:
        return f  # not on a midpoint of two normal float32 values: rounding twice was exact
    other = _next_f32(f, d > f)
    mid = (f + other) / 2
    if d != mid:
        return f
    # The double sits on a midpoint of two float32 values: decide by the decimal itself.
    from fractions import Fraction  # noqa: PLC0415 - only for these rare ties

    exact = Fraction(text)
    fm = Fraction(mid)
    if exact == fm:
        return f  # a true tie: pack already rounded it half to even
    return other if (exact > fm) == (other > f) else f


def _next_f32(f: float, up: bool) -> float:
    bits = _U32.unpack(_F32.pack(f))[0]
    if f == 0.0:
        bits = 1 if up else 0x80000001
    elif (f > 0) == up:
        bits += 1
    else:
        bits -= 1
    return _F32.unpack(_U32.pack(bits & 0xFFFFFFFF))[0]


def float32_bits(x: float) -> int:
    return _U32.unpack(_F32.pack(x))[0]


def bits_float32(bits: int) -> float:
    return _F32.unpack(_U32.pack(bits))[0]


def double_bits(x: float) -> int:
    return _U64.unpack(_F64.pack(x))[0]


def bits_double(bits: int) -> float:
    return _F64.unpack(_U64.pack(bits))[0]
