"""ONNX element types as data: numpy dtype, storage field and bit width for each.

The table is plain data (strings, ints) so that importing it costs nothing and pulls in
neither numpy nor ml_dtypes; `np_dtype` resolves an entry to a numpy dtype on first
use.  Facts (which numpy type stands for which ONNX type, which typed field stores it)
follow the reference's ``onnx._mapping.TENSOR_TYPE_MAP`` and ``helper.tensor_dtype_to_field``.
"""

from __future__ import annotations

from typing import NamedTuple

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


class ElemType(NamedTuple):
    """One ONNX element type.

    ``numpy`` is a numpy dtype name, or ``"ml_dtypes.<name>"`` for the types numpy lacks;
    ``bits`` is the width of one element in ``raw_data`` (0 for strings, which have no
    raw form).
    """

    code: int
    name: str
    numpy: str
    kind: str
    bits: int

    @property
    def field(self) -> str:
        """The typed field that stores this type when ``raw_data`` is not used."""
        return _FIELD_OF_KIND[self.kind]

    @property
    def needs_ml_dtypes(self) -> bool:
        return self.numpy.startswith("ml_dtypes.")


_ROWS = [
    (1, "FLOAT", "float32", F32, 32),
    (2, "UINT8", "uint8", I32, 8),
    (3, "INT8", "int8", I32, 8),
    (4, "UINT16", "uint16", BITS16, 16),
    (5, "INT16", "int16", BITS16, 16),
    (6, "INT32", "int32", I32, 32),
    (7, "INT64", "int64", I64, 64),
    (8, "STRING", "object", STR, 0),
    (9, "BOOL", "bool", BITS8, 8),
    (10, "FLOAT16", "float16", BITS16, 16),
    (11, "DOUBLE", "float64", F64, 64),
    (12, "UINT32", "uint32", U64, 32),
    (13, "UINT64", "uint64", U64, 64),
    (14, "COMPLEX64", "complex64", C64, 64),
    (15, "COMPLEX128", "complex128", C128, 128),
    (16, "BFLOAT16", "ml_dtypes.bfloat16", BITS16, 16),
    (17, "FLOAT8E4M3FN", "ml_dtypes.float8_e4m3fn", BITS8, 8),
    (18, "FLOAT8E4M3FNUZ", "ml_dtypes.float8_e4m3fnuz", BITS8, 8),
    (19, "FLOAT8E5M2", "ml_dtypes.float8_e5m2", BITS8, 8),
    (20, "FLOAT8E5M2FNUZ", "ml_dtypes.float8_e5m2fnuz", BITS8, 8),
    (21, "UINT4", "ml_dtypes.uint4", NIB4, 4),
    (22, "INT4", "ml_dtypes.int4", NIB4, 4),
    (23, "FLOAT4E2M1", "ml_dtypes.float4_e2m1fn", NIB4, 4),
    (24, "FLOAT8E8M0", "ml_dtypes.float8_e8m0fnu", BITS8, 8),
    (25, "UINT2", "ml_dtypes.uint2", NIB2, 2),
    (26, "INT2", "ml_dtypes.int2", NIB2, 2),
    (27, "FLOAT6E2M3", "ml_dtypes.float6_e2m3fn", BITS6, 6),
    (28, "FLOAT6E3M2", "ml_dtypes.float6_e3m2fn", BITS6, 6),
]

ELEM_TYPES: dict[int, ElemType] = {r[0]: ElemType(*r) for r in _ROWS}
UNDEFINED = 0
STRING = 8

_np_cache: dict = {}
_from_np_cache: dict = {}
_from_np_complete = False


def elem_type(code: int, tensor_name: str = "") -> ElemType:
    """The table entry for ``code``; TypeError (as the reference) for UNDEFINED/unknown."""
    et = ELEM_TYPES.get(code)
    if et is None:
        what = "UNDEFINED" if code == UNDEFINED else f"unknown ({code})"
        raise TypeError(f"tensor {tensor_name!r}: the element type is {what}")
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


def np_dtype(code: int, tensor_name: str = ""):
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


def onnx_type_of(dtype) -> int:
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
    code = _from_np_cache.get(dtype)
    if code is not None:
        return code
    if np.issubdtype(dtype, np.str_):
        return STRING
    raise ValueError(f"Unable to convert type {dtype!r} into TensorProto element type.")
