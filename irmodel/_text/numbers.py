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
_f32_pack, _f32_unpack, _u32_pack, _u32_unpack = _F32.pack, _F32.unpack, _U32.pack, _U32.unpack
_INF = math.inf

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


#: ``"%.{n-1}e"`` for n = 1..9: the closest decimal of n significant digits.
_DIGITS = [""] + ["%." + str(n - 1) + "e" for n in range(1, 10)]


def format_float32(x: float) -> str:
    """A float32 value (held in a Python float) as onnx prints it.

    Printing a model's float data calls this for every value, so it is tuned (module-level
    bindings, the common tries inline, the text laid out from ``%e``'s own digits):
    printing the 75,000-node residual MLP spent most of its time here before (RESULTS.md,
    "The text of the torch-shaped MLP")."""
    if x != x:
        bits = getattr(x, "bits", None)  # wirefmt's Float32NaN keeps a float32 NaN's bits
        if bits is None:
            bits = _u32_unpack(_f32_pack(x))[0]
        return _nan_text(bits, NAN32, NEG_NAN32, 8)
    if x == 0.0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    if x == _INF or x == -_INF:
        return "inf" if x > 0 else "-inf"
    a = -x if x < 0 else x
    # What reads back as ``a`` lies between the midpoints to its two float32 neighbours
    # (exact in a double: two neighbouring float32 values sum in 26 bits); past the largest,
    # half an ulp, where reading overflows.  Below a power of two the interval is lopsided.
    bits = _u32_unpack(_f32_pack(a))[0]
    below = _f32_unpack(_u32_pack(bits - 1))[0]
    above = _f32_unpack(_u32_pack(bits + 1))[0]
    lo = (a + below) / 2
    hi = (a + above) / 2 if above != _INF else a + (a - below) / 2
    lopsided = a - below != above - a
    # The fewest significant digits that read back.  Reading back gets closer as digits
    # are added (if n digits do, n + 1 do), 9 always do, and float data mostly needs 7 to
    # 9: try 8, then 9 or fewer (7, 6, then bisection for a short decimal such as 0.5).
    eight = _DIGITS[8] % a
    d = float(eight)
    text = eight if lo < d < hi else _reads_back(a, 8, lo, hi, lopsided)
    if text is None:
        n = 9
        text = _reads_back(a, 9, lo, hi, lopsided) or f"{a:.8e}"
    else:
        n, low, high = 8, 1, 7
        while low <= high:
            mid = high if high >= 6 else (low + high) // 2
            found = _reads_back(a, mid, lo, hi, lopsided)
            if found is None:
                low = mid + 1
            else:
                text, n, high = found, mid, mid - 1
    # ``text`` is in ``%e``'s form, d.ddde±XX: the shortest digits, no trailing zero (a
    # shorter decimal would have read back), and exactly to_chars' scientific form.
    e10 = int(text[-3:])
    # Fixed notation where it is no longer than scientific (to_chars' tie goes to fixed):
    # an integer has e10 + 1 digits, a fraction n + 1 characters (with its point), below
    # 1 another -e10 leading zeros.
    fixed_length = e10 + 1 if e10 >= n - 1 else n + 1 if e10 >= 0 else n + 1 - e10
    if fixed_length <= len(text):
        digits = text[0] + text[2:-4] if n > 1 else text[0]
        if e10 >= n - 1:
            text = str(int(a))  # every digit of an integer, as to_chars writes it
        elif e10 >= 0:
            text = digits[:e10 + 1] + "." + digits[e10 + 1:]
        else:
            text = "0." + "0" * (-e10 - 1) + digits
    return "-" + text if x < 0 else text


def float32_text(bits: int) -> str:
    """The text of the float32 with these bits."""
    return format_float32(bits_float32(bits))


def _reads_back(a: float, n: int, lo: float, hi: float, lopsided: bool) -> str | None:
    """The closest ``n``-digit decimal to ``a`` that reads back as ``a`` (or, where what
    reads back is lopsided, the next one on the wide side), in ``%e``'s form, or None.

    Decided from one read as a double: rounding is monotonic, so a double strictly inside
    ``(lo, hi)`` comes from a decimal strictly inside, and one strictly outside from one
    outside.  A double on a midpoint itself is left to `read_float32` (ties go to the even
    neighbour, decided by the decimal's exact value).  Where the interval is symmetric,
    the closest decimal failing means every other one of ``n`` digits fails too."""
    text = _DIGITS[n] % a
    d = float(text)
    if lo < d < hi or ((d == lo or d == hi) and _f32_or_none(text) == a):
        return text
    if not lopsided:
        return None
    mant, _, e = text.partition("e")
    closest = int(mant.replace(".", ""))
    other = str(closest + 1 if d < a else closest - 1)
    if other == "0" or len(other) != n:
        return None
    text = (other[0] + "." + other[1:] if n > 1 else other) + "e" + e
    d = float(text)
    if lo < d < hi or ((d == lo or d == hi) and _f32_or_none(text) == a):
        return text
    return None


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
