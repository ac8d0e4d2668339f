"""The element-type table (irmodel._dtypes.rows) against the reference, fact by fact.

Every column of every row is checked against what onnx, numpy or ml_dtypes say, so a
fact wrong in the one table fails here rather than in some user of it.
"""

from __future__ import annotations

import math
import os
import struct
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import irmodel
from irmodel._dtypes import rows as dtypes
from irmodel._report import dump

from repo_paths import REPO as ROOT  # noqa: E402
ALL_CODES = sorted(helper.get_all_tensor_dtypes())
NAMED = [pytest.param(code, id=TensorProto.DataType.Name(code)) for code in ALL_CODES]


def _ref_dtype(code: int) -> np.dtype:
    return np.dtype(helper.tensor_dtype_to_np_dtype(code))


def _ref_bits(code: int) -> int:
    """Bits per element as the reference's make_tensor counts raw_data: the byte count it
    accepts for 8 elements (it refuses raw STRING tensors: 0, no raw form)."""
    if code == TensorProto.STRING:
        with pytest.raises(TypeError):
            helper.make_tensor("t", code, [8], b"", raw=True)
        return 0
    accepted = []
    for nbytes in range(0, 8 * 16 + 1):  # 8 elements of at most 16 bytes
        try:
            helper.make_tensor("t", code, [8], b"\0" * nbytes, raw=True)
        except ValueError:
            continue
        accepted.append(nbytes)
    assert len(accepted) == 1, accepted
    return accepted[0]


def _ref_family(dt: np.dtype) -> str:
    if dt.kind == "O":
        return dtypes.TEXT
    if dt.kind == "b":
        return dtypes.BOOLEAN
    if dt.kind == "c":
        return dtypes.COMPLEX
    try:
        ml_dtypes.iinfo(dt)
        return dtypes.INTEGER
    except (ValueError, TypeError):
        ml_dtypes.finfo(dt)  # raises for anything else: the table would need a new family
        return dtypes.FLOATING


def test_the_table_has_one_row_per_data_type():
    assert sorted(dtypes.ELEM_TYPES) == ALL_CODES
    assert set(TensorProto.DataType.values()) == set(ALL_CODES) | {TensorProto.UNDEFINED}
    assert all(code == et.code for code, et in dtypes.ELEM_TYPES.items())


@pytest.mark.parametrize("code", NAMED)
def test_row_matches_reference(code):
    et = dtypes.ELEM_TYPES[code]
    ref = _ref_dtype(code)
    assert et.name == TensorProto.DataType.Name(code)
    assert dtypes.np_dtype(code) == ref
    assert et.needs_ml_dtypes == (ref.type.__module__ == "ml_dtypes")
    assert et.field == helper.tensor_dtype_to_field(code)
    assert et.bits == _ref_bits(code)
    assert et.sub_byte == (0 < et.bits < 8)
    assert et.family == _ref_family(ref)


@pytest.mark.parametrize("code", NAMED)
def test_integer_types_have_the_references_range_and_signedness(code):
    et = dtypes.ELEM_TYPES[code]
    if et.family != dtypes.INTEGER:
        assert et.int_range is None and not et.signed
        return
    info = ml_dtypes.iinfo(_ref_dtype(code))
    assert et.int_range == (int(info.min), int(info.max))
    assert et.signed == (info.min < 0)
    assert et.bits == info.bits


@pytest.mark.parametrize("code", NAMED)
def test_raw_format_reads_the_references_raw_data(code):
    """The struct format decodes the raw_data onnx writes: to the values for the types
    numpy knows, to the bit patterns for the ml_dtypes floats."""
    et = dtypes.ELEM_TYPES[code]
    ref = _ref_dtype(code)
    if et.bits % 8 or et.family == dtypes.TEXT:
        assert et.raw_format == ""
        return
    rng = np.random.default_rng(code)
    if et.family == dtypes.COMPLEX:
        arr = (rng.standard_normal(5) + 1j * rng.standard_normal(5)).astype(ref)
        expected = [v for z in arr.tolist() for v in (z.real, z.imag)]
    elif et.family == dtypes.BOOLEAN:
        arr = np.array([True, False, True])
        expected = [1, 0, 1]
    elif et.needs_ml_dtypes:
        arr = rng.standard_normal(5).astype(ref)
        expected = arr.view(np.dtype(f"u{ref.itemsize}")).tolist()
    elif et.family == dtypes.INTEGER:
        info = np.iinfo(ref)
        arr = np.array([info.min, info.max, 0, 1], dtype=ref)
        expected = arr.tolist()
    else:
        arr = rng.standard_normal(5).astype(ref)
        expected = arr.tolist()
    raw = numpy_helper.from_array(arr).raw_data
    assert struct.calcsize("<" + et.raw_format) * len(expected) == len(raw)
    assert list(struct.unpack("<%d%s" % (len(expected), et.raw_format), raw)) == expected


@pytest.mark.parametrize("code", NAMED)
def test_minifloat_layout_matches_ml_dtypes(code):
    """Rows with a small-float layout are exactly the signed float formats of one byte or
    less; exponent and mantissa widths and the bias are those ml_dtypes reports."""
    et = dtypes.ELEM_TYPES[code]
    ref = _ref_dtype(code)
    is_small_signed_float = (et.family == dtypes.FLOATING and ref.itemsize == 1
                             and float(ml_dtypes.finfo(ref).min) < 0)
    assert (et.minifloat is not None) == is_small_signed_float
    if et.minifloat is None:
        return
    info = ml_dtypes.finfo(ref)
    assert (et.minifloat.exponent_bits, et.minifloat.mantissa_bits) == (info.nexp, info.nmant)
    assert 1 + et.minifloat.exponent_bits + et.minifloat.mantissa_bits == et.bits
    assert float(info.smallest_normal) == 2.0 ** (1 - et.minifloat.bias)


def _same_float(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


BIT_PATTERN_FLOATS = [pytest.param(code, id=TensorProto.DataType.Name(code)) for code in ALL_CODES
                      if dtypes.ELEM_TYPES[code].family == dtypes.FLOATING
                      and dtypes.ELEM_TYPES[code].needs_ml_dtypes
                      or code == TensorProto.FLOAT16]


@pytest.mark.parametrize("code", BIT_PATTERN_FLOATS)
def test_every_bit_pattern_decodes_to_the_references_value(code):
    """The layouts (and NaN rules) of the table, as dump reads them, give ml_dtypes' value
    for every bit pattern of every float type numpy has no struct format for."""
    et = dtypes.ELEM_TYPES[code]
    ref = _ref_dtype(code)
    patterns = np.arange(1 << et.bits, dtype=np.dtype(f"u{ref.itemsize}"))
    with np.errstate(invalid="ignore"):  # NaN patterns convert to NaN, as they should
        values = patterns.view(ref).astype(np.float64).tolist()
    wrong = [(p, v, dump._from_bits(et, p)) for p, v in zip(patterns.tolist(), values)
             if not _same_float(v, dump._from_bits(et, p))]
    assert not wrong, wrong[:5]


def test_elem_type_refuses_undefined_and_unknown_codes_with_validation_error():
    # The code comes from the file: a ValueError (ValidationError), never a TypeError.
    for code in (TensorProto.UNDEFINED, max(ALL_CODES) + 1, -1):
        with pytest.raises(irmodel.ValidationError, match="element type") as info:
            dtypes.elem_type(code, "t")
        assert not isinstance(info.value, TypeError)


def test_importing_the_table_imports_neither_numpy_nor_ml_dtypes():
    code = ("import sys; import irmodel._dtypes.rows; "
            "print(sorted(m for m in ('numpy', 'ml_dtypes', 'onnx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.stdout.strip() == "[]"

