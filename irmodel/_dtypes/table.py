"""The ONNX element-type table as plain data: tuples of strings and ints, no classes.

`irmodel._dtypes.rows` makes its `ElemType` rows from `ROWS` (and says what each column
means); this module exists so that a reader that needs one column only (the sizes
`irmodel._report.summary` reports: `ELEM_BITS`) pays for nothing else: importing `dtypes`
creates its row classes, which cost ``irmodel inspect`` more than the rest of its
summary of the initializers.  ``tests/core/test_dtypes.py`` checks the rows against the
reference through `dtypes`.
"""

from __future__ import annotations

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

# The layouts of the small float formats: (exponent bits, mantissa bits, bias, NaN rule),
# made `dtypes.Minifloat` by `dtypes`.
_E4M3FN = (4, 3, 7, NAN_FN)
_E4M3FNUZ = (4, 3, 8, NAN_UZ)
_E5M2 = (5, 2, 15, NAN_IEEE)
_E5M2FNUZ = (5, 2, 16, NAN_UZ)
_E2M1 = (2, 1, 1, NAN_NONE)
_E2M3 = (2, 3, 1, NAN_NONE)
_E3M2 = (3, 2, 3, NAN_NONE)

ROWS = [
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

#: Each type's code by its name (``CODE["INT64"]`` is 7): for code that names a type.
CODE: dict[str, int] = {r[1]: r[0] for r in ROWS}

#: The width in bits of one element of each type in ``raw_data`` (0: STRING).
ELEM_BITS: dict[int, int] = {r[0]: r[4] for r in ROWS}
