"""ONNX element types as data: the one table every user of element-type facts reads.

Each row says, for one TensorProto.DataType: its numpy dtype, the typed field that
stores it, its width in ``raw_data``, its family (float, integer, ...), signedness, the
`struct` format of a raw element and, for the small float formats, their bit layout.
Users derive what they need from the rows (the tensor encoder in `helper`, the decoder
in `tensors`, the previews of `dump`, the sizes of `summary`) instead of keeping tables
of their own; ``tests/test_dtypes.py`` checks the rows against the reference.

The table is plain data (strings, ints) so that importing it costs nothing and pulls in
neither numpy nor ml_dtypes; `np_dtype` resolves an entry to a numpy dtype on first
use.  Facts (which numpy type stands for which ONNX type, which typed field stores it)
follow the reference's ``onnx._mapping.TENSOR_TYPE_MAP`` and ``helper.tensor_dtype_to_field``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import NamedTuple

    import numpy as np
    import numpy.typing as npt

from wirefmt.records import named_tuple

# Storage "kinds": how a type is kept in the typed (non-raw) fields.  Each kind is one
# decoding rule in `tensors.py`; several ONNX types share a rule.
F32 = "f32"        # float_data, one float per element
C64 = "c64"        # float_data, two floats (re, im) per element
F64 = "f64"        # double_data
C128 = "c128"      # double_data, two doubles per element
BITS16 = "bits16"  # int32_data, low 16 bits are the element's bit pattern
BITS8 = "bits8"    # int32_data, low 8 bits are the element's bit pattern
BITS6 = "bits6"    # int32_data, low 6 bits (the FLOAT6 code) of each entry
NIB4 = "nib4"      # int32_data, low 8 bits hold two packed 4-bit elements
NIB2 = "nib2"      # int32_data, low 8 bits hold four packed 2-bit elements
I32 = "i32"        # int32_data, value converted (C cast) to the element type
I64 = "i64"        # int64_data
U64 = "u64"        # uint64_data, value converted (C cast) to the element type
STR = "str"        # string_data

_FIELD_OF_KIND = {F32: "float_data", C64: "float_data", F64: "double_data", C128: "double_data",
                  BITS16: "int32_data", BITS8: "int32_data", BITS6: "int32_data",
                  NIB4: "int32_data", NIB2: "int32_data", I32: "int32_data",
                  I64: "int64_data", U64: "uint64_data", STR: "string_data"}


# Families: what an element's value is, whatever its storage.
FLOATING = "float"   # a real number (IEEE or a small float format)
INTEGER = "int"      # an integer; ``signed`` says whether two's complement
BOOLEAN = "bool"
COMPLEX = "complex"  # a (real, imaginary) pair of floats
TEXT = "string"      # a byte string of any length

# NaN rules of the small float formats (`Minifloat.nan_rule`).
NAN_IEEE = "ieee"    # exponent all ones: infinity (mantissa 0) or NaN, as IEEE 754
NAN_FN = "fn"        # exponent and mantissa all ones is NaN; no infinities
NAN_UZ = "uz"        # the negative-zero pattern is the only NaN; no infinities, no -0
NAN_NONE = None      # every pattern is a finite number


if TYPE_CHECKING:
    class _MinifloatFields(NamedTuple):
        exponent_bits: int
        mantissa_bits: int
        bias: int
        nan_rule: str | None

    class _ElemTypeFields(NamedTuple):
        code: int
        name: str
        numpy: str
        kind: str
        bits: int
        family: str
        signed: bool
        raw_format: str
        minifloat: Minifloat | None
else:
    _MinifloatFields = named_tuple("Minifloat", ("exponent_bits", "mantissa_bits", "bias", "nan_rule"), __name__)
    _ElemTypeFields = named_tuple("ElemType", ("code", "name", "numpy", "kind", "bits", "family", "signed",
                                               "raw_format", "minifloat"), __name__)


class Minifloat(_MinifloatFields):
    """The layout of a small float format: sign bit, exponent bits, mantissa bits."""

    __slots__ = ()


class ElemType(_ElemTypeFields):
    """One ONNX element type.

    ``numpy`` is a numpy dtype name, or ``"ml_dtypes.<name>"`` for the types numpy lacks;
    ``bits`` is the width of one element in ``raw_data`` (0 for strings, which have no
    raw form).  ``signed`` is true for the two's-complement INTEGER types only.
    ``raw_format`` is the `struct` format of one little-endian ``raw_data`` element for
    the types whose elements fill whole bytes ("" otherwise): the component of a complex
    pair, an unsigned int of the same width for float formats `struct` cannot read.
    ``minifloat`` describes the small float formats that share the IEEE layout (float8
    but E8M0, float6, float4); None for the others.
    """

    __slots__ = ()

    @property
    def field(self) -> str:
        """The typed field that stores this type when ``raw_data`` is not used."""
        return _FIELD_OF_KIND[self.kind]

    @property
    def needs_ml_dtypes(self) -> bool:
        return self.numpy.startswith("ml_dtypes.")

    @property
    def sub_byte(self) -> bool:
        """Several elements share a byte (or four share three bytes) when packed."""
        return 0 < self.bits < 8

    @property
    def int_range(self) -> tuple[int, int] | None:
        """The inclusive value range of an INTEGER type; None for the other families."""
        if self.family != INTEGER:
            return None
        if self.signed:
            return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        return 0, (1 << self.bits) - 1


_E4M3FN = Minifloat(4, 3, 7, NAN_FN)
_E4M3FNUZ = Minifloat(4, 3, 8, NAN_UZ)
_E5M2 = Minifloat(5, 2, 15, NAN_IEEE)
_E5M2FNUZ = Minifloat(5, 2, 16, NAN_UZ)
_E2M1 = Minifloat(2, 1, 1, NAN_NONE)
_E2M3 = Minifloat(2, 3, 1, NAN_NONE)
_E3M2 = Minifloat(3, 2, 3, NAN_NONE)

_ROWS = [
    # code, name, numpy dtype, storage kind, bits, family, signed, raw format, minifloat
    (1, "FLOAT", "float32", F32, 32, FLOATING, False, "f", None),
    (2, "UINT8", "uint8", I32, 8, INTEGER, False, "B", None),
    (3, "INT8", "int8", I32, 8, INTEGER, True, "b", None),
    (4, "UINT16", "uint16", BITS16, 16, INTEGER, False, "H", None),
    (5, "INT16", "int16", BITS16, 16, INTEGER, True, "h", None),
    (6, "INT32", "int32", I32, 32, INTEGER, True, "i", None),
    (7, "INT64", "int64", I64, 64, INTEGER, True, "q", None),
    (8, "STRING", "object", STR, 0, TEXT, False, "", None),
    (9, "BOOL", "bool", BITS8, 8, BOOLEAN, False, "B", None),
    (10, "FLOAT16", "float16", BITS16, 16, FLOATING, False, "e", None),
    (11, "DOUBLE", "float64", F64, 64, FLOATING, False, "d", None),
    (12, "UINT32", "uint32", U64, 32, INTEGER, False, "I", None),
    (13, "UINT64", "uint64", U64, 64, INTEGER, False, "Q", None),
    (14, "COMPLEX64", "complex64", C64, 64, COMPLEX, False, "f", None),
    (15, "COMPLEX128", "complex128", C128, 128, COMPLEX, False, "d", None),
    (16, "BFLOAT16", "ml_dtypes.bfloat16", BITS16, 16, FLOATING, False, "H", None),
    (17, "FLOAT8E4M3FN", "ml_dtypes.float8_e4m3fn", BITS8, 8, FLOATING, False, "B", _E4M3FN),
    (18, "FLOAT8E4M3FNUZ", "ml_dtypes.float8_e4m3fnuz", BITS8, 8, FLOATING, False, "B", _E4M3FNUZ),
    (19, "FLOAT8E5M2", "ml_dtypes.float8_e5m2", BITS8, 8, FLOATING, False, "B", _E5M2),
    (20, "FLOAT8E5M2FNUZ", "ml_dtypes.float8_e5m2fnuz", BITS8, 8, FLOATING, False, "B", _E5M2FNUZ),
    (21, "UINT4", "ml_dtypes.uint4", NIB4, 4, INTEGER, False, "", None),
    (22, "INT4", "ml_dtypes.int4", NIB4, 4, INTEGER, True, "", None),
    (23, "FLOAT4E2M1", "ml_dtypes.float4_e2m1fn", NIB4, 4, FLOATING, False, "", _E2M1),
    (24, "FLOAT8E8M0", "ml_dtypes.float8_e8m0fnu", BITS8, 8, FLOATING, False, "B", None),
    (25, "UINT2", "ml_dtypes.uint2", NIB2, 2, INTEGER, False, "", None),
    (26, "INT2", "ml_dtypes.int2", NIB2, 2, INTEGER, True, "", None),
    (27, "FLOAT6E2M3", "ml_dtypes.float6_e2m3fn", BITS6, 6, FLOATING, False, "", _E2M3),
    (28, "FLOAT6E3M2", "ml_dtypes.float6_e3m2fn", BITS6, 6, FLOATING, False, "", _E3M2),
]

ELEM_TYPES: dict[int, ElemType] = {r[0]: ElemType(*r) for r in _ROWS}
UNDEFINED = 0
STRING = 8

_np_cache: dict = {}
_from_np_cache: dict = {}
_from_np_complete = False


def elem_type(code: int, tensor_name: str = "") -> ElemType:
    """The table entry for ``code``.

    `irmodel.ValidationError` (a ValueError) for UNDEFINED or an unknown code.  The
    reference raises TypeError; but an unknown code comes from the file, and a file's
    fault is a ValueError everywhere in irmodel (a TypeError means a caller's mistake).
    """
    et = ELEM_TYPES.get(code)
    if et is None:
        from .errors import ValidationError  # noqa: PLC0415 (cold path)

        what = "UNDEFINED" if code == UNDEFINED else f"unknown ({code})"
        raise ValidationError(f"tensor {tensor_name!r}: the element type is {what}")
    return et


def _ml_dtypes(purpose: str):
    """The ml_dtypes module, or an error that names the package and what needed it."""
    try:
        import ml_dtypes  # noqa: PLC0415 (optional dependency, imported when needed)
    except ImportError:
        raise ModuleNotFoundError(
            f"{purpose} needs the 'ml_dtypes' package, which is not installed "
            "(pip install ml_dtypes, or pip install 'irmodel[arrays]')", name="ml_dtypes") from None
    return ml_dtypes


def np_dtype(code: int, tensor_name: str = "") -> np.dtype:
    """The numpy dtype of ONNX type ``code`` (ml_dtypes types need that package)."""
    dt = _np_cache.get(code)
    if dt is not None:
        return dt
    import numpy as np  # noqa: PLC0415 (`import irmodel` must stay numpy-free)

    et = elem_type(code, tensor_name)
    if et.needs_ml_dtypes:
        mod = _ml_dtypes(f"TensorProto.{et.name} (tensor {tensor_name!r})")
        dt = np.dtype(getattr(mod, et.numpy.split(".", 1)[1]))
    else:
        dt = np.dtype(et.numpy)
    _np_cache[code] = dt
    return dt


def onnx_type_of(dtype: npt.DTypeLike) -> int:
    """The ONNX type code for a numpy dtype, as ``helper.np_dtype_to_tensor_dtype`` maps it.

    Lookup is by dtype equality, so a non-native byte order (``>f4`` on a little-endian
    machine) is not recognised, exactly as in the reference.  ValueError otherwise.
    """
    import numpy as np  # noqa: PLC0415

    global _from_np_complete
    if not _from_np_complete:
        complete = True
        for code, et in ELEM_TYPES.items():
            if et.needs_ml_dtypes:
                try:
                    import ml_dtypes  # noqa: F401,PLC0415
                except ImportError:
                    # Without ml_dtypes no array can have these dtypes; try again next
                    # time in case the package appears (tests hide and restore it).
                    complete = False
                    continue
            _from_np_cache[np_dtype(code)] = code
        _from_np_complete = complete
    code = _from_np_cache.get(dtype)  # type: ignore[assignment]  # code is reused after the loop over int codes
    if code is not None:
        return code
    if np.issubdtype(dtype, np.str_):
        return STRING
    raise ValueError(f"Unable to convert type {dtype!r} into TensorProto element type.")
