"""Scalar field values: validation and defaults as protobuf's Python API applies them,
and the float32 facts (rounding, shortest text) that every layer shares.

protobuf raises TypeError for a value of the wrong type and ValueError for one out of
range; users of `onnx` rely on both, so the same rules apply here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable, cast
else:  # run time: cast is the identity (typing is not imported for it)
    from .records import cast

from .reader import Float32NaN, fixed_struct
from .schema import (BOOL, BYTES, DOUBLE, ENUM, FLOAT, INT32, INT_RANGE, INTEGER_KINDS, STRING,
                            FieldSpec, KIND_NAMES, Registry)

_FLOAT32_MAX = 3.4028234663852886e38


def to_float32(x: float) -> float:
    """Round a double to the nearest float32, overflowing to infinity as C does."""
    f32 = fixed_struct(FLOAT)
    try:
        return f32.unpack(f32.pack(x))[0]
    except OverflowError:
        # struct refuses values above FLT_MAX that C's conversion would round down
        # (those within half an ulp) or to infinity; decide as C does.
        import math  # noqa: PLC0415 (this rare path only: an extension module to load)

        if math.isfinite(x) and abs(x) < _FLOAT32_MAX * (1 + 2 ** -25):
            return math.copysign(_FLOAT32_MAX, x)
        return math.copysign(math.inf, x)


def shortest_float32(x: float) -> float:
    """The double with the fewest significant digits that rounds to the same float32."""
    for precision in range(6, 10):
        rounded = float("%.*g" % (precision, x))
        if to_float32(rounded) == x:
            return rounded
    return x


def is_default(v: Any) -> bool:
    """proto3 implicit presence: zero, empty, False; -0.0 counts as set (its bits are not 0)."""
    if isinstance(v, float):
        return v == 0.0 and str(v)[0] != "-"
    return not v


def check_string(v: Any) -> str:
    """str, or UTF-8 bytes (decoded).  A lone surrogate is refused now, as protobuf does,
    rather than when the message is written."""
    if isinstance(v, str):
        if not v.isascii():
            v.encode()  # raises UnicodeEncodeError for lone surrogates
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).decode()  # UnicodeDecodeError (a ValueError) for invalid UTF-8
    raise TypeError(f"expected str, got {type(v).__name__}")


def check_bytes(v: Any) -> bytes | memoryview:
    """bytes, or a bytes-like object: memoryviews are kept (zero-copy reuse of a loaded
    ``raw_data``), bytearrays copied.  ``str`` is refused, as protobuf refuses it.

    A memoryview of anything but single bytes (a view of a float32 array, say) is recast
    to one of bytes, because everything downstream (lengths, the encoder) counts its
    ``len()``: an element count there would write a corrupt message.  A non-contiguous
    view is copied.
    """
    if isinstance(v, bytes):
        return v
    if isinstance(v, memoryview):
        if v.ndim == 1 and v.format == "B":
            return v
        return v.cast("B") if v.c_contiguous else memoryview(v.tobytes())
    if isinstance(v, bytearray):
        return bytes(v)
    raise TypeError(f"expected bytes, got {type(v).__name__}")


def check_float(v: Any) -> float:
    if type(v) is Float32NaN:  # a decoded NaN keeps its payload when copied between messages
        return v
    if isinstance(v, (int, float)) and not isinstance(v, complex):
        return to_float32(float(v))
    if hasattr(v, "__float__") and not isinstance(v, (str, bytes)):
        return to_float32(float(v))
    raise TypeError(f"expected a float, got {type(v).__name__}")


def check_double(v: Any) -> float:
    if isinstance(v, (int, float)) or (hasattr(v, "__float__") and not isinstance(v, (str, bytes))):
        return float(v)
    raise TypeError(f"expected a float, got {type(v).__name__}")


def check_bool(v: Any) -> bool:
    if isinstance(v, (bool, int)) or hasattr(v, "__index__"):
        return bool(v)
    raise TypeError(f"expected bool, got {type(v).__name__}")


def _int_checker(kind: int):
    lo, hi = INT_RANGE[kind]
    name = KIND_NAMES[kind]

    def check(v):
        if isinstance(v, (float, bool)) or not hasattr(v, "__index__"):
            raise TypeError(f"expected an integer for {name}, got {type(v).__name__}")
        v = v.__index__()
        if not lo <= v <= hi:
            from .safetext import int_text  # noqa: PLC0415 - the error path only
            raise ValueError(f"{int_text(v)} is out of range for {name}")
        return v

    return check


def _enum_checker(values: frozenset, by_name: dict, enum_name: str):
    def check(v):
        if isinstance(v, str):
            try:
                return by_name[v]
            except KeyError:
                raise ValueError(f"{v!r} is not a value of {enum_name}") from None
        if isinstance(v, (float, bool)) or not hasattr(v, "__index__"):  # protobuf refuses bool
            raise TypeError(f"expected an int for enum {enum_name}, got {type(v).__name__}")
        v = v.__index__()
        if v not in values:
            from .safetext import int_text  # noqa: PLC0415 - the error path only
            raise ValueError(f"{int_text(v)} is not a value of {enum_name}")
        return v

    return check


def checker(f: FieldSpec, registry: Registry) -> Callable[[Any], Any]:
    """The validator for one value of field ``f`` (an element, for repeated fields)."""
    k = f.kind
    if k == STRING:
        return check_string
    if k == BYTES:
        return check_bytes
    if k == FLOAT:
        return check_float
    if k == DOUBLE:
        return check_double
    if k == BOOL:
        return check_bool
    if k == ENUM and not registry.enum(cast(str, f.type_name)).closed:
        return _int_checker(INT32)  # open enum: any int32
    if k == ENUM:
        e = registry.enum(cast(str, f.type_name))
        return _enum_checker(frozenset(e.values.values()), dict(e.values), e.name)
    if k in INTEGER_KINDS:
        return _int_checker(k)
    raise TypeError(f"no scalar checker for kind {k}")


def default(f: FieldSpec, registry: Registry) -> Any:
    """The value an absent singular scalar reads as (proto2: first enum value, zero, empty)."""
    if f.default is not None:
        return f.default
    k = f.kind
    if k == STRING:
        return ""
    if k == BYTES:
        return b""
    if k in (FLOAT, DOUBLE):
        return 0.0
    if k == BOOL:
        return False
    if k == ENUM:
        return next(iter(registry.enum(cast(str, f.type_name)).values.values()))
    return 0
