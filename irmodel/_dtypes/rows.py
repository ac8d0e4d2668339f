"""ONNX element types as data: the one table every user of element-type facts reads.

Each row says, for one TensorProto.DataType: its numpy dtype, the typed field that
stores it, its width in ``raw_data``, its family (float, integer, ...), signedness, the
`struct` format of a raw element and, for the small float formats, their bit layout.
Users derive what they need from the rows (the tensor encoder in `helper`, the decoder
in `tensors`, the previews of `dump`, the sizes of `summary`) instead of keeping tables
of their own; ``tests/core/test_dtypes.py`` checks the rows against the reference.

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

# The table's data and the names of its columns' values (`irmodel._dtypes.table`), re-exported.
from .table import (CODE, F32, C64, F64, C128, BITS16, BITS8, BITS6, NIB4, NIB2, I32, I64, U64, STR, FLOATING,
                    INTEGER, BOOLEAN, COMPLEX, TEXT, NAN_IEEE, NAN_FN, NAN_UZ, NAN_NONE, ROWS)

_FIELD_OF_KIND = {F32: "float_data", C64: "float_data", F64: "double_data", C128: "double_data",
                  BITS16: "int32_data", BITS8: "int32_data", BITS6: "int32_data",
                  NIB4: "int32_data", NIB2: "int32_data", I32: "int32_data",
                  I64: "int64_data", U64: "uint64_data", STR: "string_data"}


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


ELEM_TYPES: dict[int, ElemType] = {r[0]: ElemType(*r[:8], Minifloat(*r[8]) if r[8] is not None else None)
                                   for r in ROWS}
UNDEFINED = 0  # (no row: the code of no type)
STRING = CODE["STRING"]

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
        from ..errors import ValidationError  # noqa: PLC0415 (cold path)

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
