"""TensorProto <-> numpy, with the reference's semantics and without its copies.

`to_array` and `from_array` give what ``onnx.numpy_helper.to_array``/``from_array`` give
(same dtype, shape and bits) for all 28 element types, from ``raw_data``, external data
and every typed field.  What differs is cost:

* ``raw_data`` (and external data, which is mapped, not read) becomes an array *over the
  buffer*: for a loaded file, over its ``mmap``.  Such arrays are **read-only** (the
  mapping is); call ``.copy()`` to get a writable one.  Only when the bytes are not
  aligned for the dtype (inline ``raw_data`` usually sits at an odd offset in the
  protobuf) is an aligned copy made, so that the result is always a well-behaved
  array; it is read-only too, so that writability never depends on an offset.
* ``float_data``/``double_data`` still packed in the buffer are viewed the same way, and
  the varint fields (``int32_data``, ``int64_data``, ``uint64_data``) are decoded with
  numpy, so no Python list of millions of ints is ever built.

numpy (and ml_dtypes, for the types numpy lacks) is imported here, and this module is
only imported when one of its functions is first called: ``import irmodel`` stays
numpy-free.  Errors name the tensor.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Sequence

from wirefmt.errors import DecodeError

if TYPE_CHECKING:
    import numpy as np

from ._dtypes import rows as _dt
from ._dtypes import packing
from .errors import ValidationError
from ._files.external_data import read_external_data, uses_external_data
from .limits import element_count, is_too_large

# The host's byte order, as a module constant so that the big-endian paths can be
# exercised by tests on little-endian machines (monkeypatch it to False).
_LITTLE = sys.byteorder == "little"

# Varints decoded per numpy pass: bounds the temporaries (about 40 bytes per varint byte)
# whatever the size of the field.
_VARINT_BLOCK = 1 << 20
_MAX_VARINT_BYTES = 10


def _np():
    import numpy  # noqa: PLC0415 (`import irmodel` must not import numpy)

    return numpy


# -- to_array ------------------------------------------------------------------------------

def to_array(tensor: Any, base_dir: str | None = None, *, verify_checksum: bool = False) -> np.ndarray:
    """The numpy array a TensorProto holds, as ``onnx.numpy_helper.to_array`` gives it.

    External data is read through a read-only mapping of its file, relative to
    ``base_dir`` or, when that is None, to the directory of the file the tensor's model
    was loaded from (``irmodel.load(path)``); see `irmodel._files.external_data`.  With
    ``verify_checksum`` the SHA1 ``checksum`` entry of an external tensor must be present
    and match.  Arrays over raw or external bytes are read-only (see the module doc).
    """
    np = _np()
    name = tensor.name
    if tensor.HasField("segment"):
        raise ValidationError(f"tensor {name!r}: Currently not supporting loading segments.")
    et = _dt.elem_type(tensor.data_type, name)
    dims = _dims(tensor)
    dt = _dt.np_dtype(et.code, name)

    if et.kind == _dt.STR:
        # Through a '<U' array, as the reference does (which also drops trailing NULs).
        ss = [bytes(s).decode("utf-8") for s in tensor.string_data]
        return _reshape(np.asarray(ss).astype(dt), dims, name)

    if uses_external_data(tensor):
        raw = read_external_data(tensor, base_dir, verify_checksum=verify_checksum)
    elif tensor.HasField("raw_data"):
        raw = tensor.raw_data
    else:
        return _typed_array(np, tensor, et, dt, dims)
    return _raw_array(np, raw, et, dt, dims, name)


def dims_text(dims: Sequence[int]) -> str:
    """``dims`` for an error message: the first 16, then how many there are."""
    if len(dims) <= 16:
        return str(list(dims))
    return f"[{', '.join(str(d) for d in dims[:16])}, ...] ({len(dims)} dims)"


def _dims(tensor) -> tuple:
    """The tensor's dims, refused when numpy cannot hold them: a negative dim (numpy
    would read -1 as "infer"), or more elements than `irmodel.limits` allows (found in
    time linear in the number of dims; numpy would multiply them out first)."""
    dims = tuple(tensor.dims)
    n = element_count(dims)
    if n is None:
        raise ValidationError(f"tensor {tensor.name!r}: negative dimension in dims {dims_text(dims)}")
    if is_too_large(n):
        raise ValidationError(f"tensor {tensor.name!r}: dims {dims_text(dims)} describe too many "
                              "elements (more than 2^63-1)")
    return dims


def _reshape(arr, dims: tuple, name: str):
    n = element_count(dims)
    if arr.size != n:
        raise ValidationError(f"tensor {name!r}: {arr.size} elements of data, but dims "
                              f"{dims_text(dims)} need {n}")
    return arr.reshape(dims)


def _readonly_aligned(arr):
    """``arr`` if aligned, else an aligned copy; read-only either way (see module doc)."""
    if not arr.flags.aligned:
        arr = arr.copy()
    arr.flags.writeable = False
    return arr


def _raw_array(np, raw, et, dt, dims: tuple, name: str):
    if et.sub_byte:
        return packing.unpack(np.frombuffer(raw, dtype=np.uint8), et.bits, dims, name).view(dt)
    nbytes = len(raw) if not isinstance(raw, memoryview) else raw.nbytes
    if nbytes % dt.itemsize:
        raise ValidationError(f"tensor {name!r}: {nbytes} bytes of raw data is not a whole number "
                         f"of {dt.itemsize}-byte {et.name} elements")
    arr = np.frombuffer(raw, dtype=dt)
    if not _LITTLE and dt.itemsize > 1:
        arr = arr.byteswap()  # raw data is little-endian on every platform
    return _reshape(_readonly_aligned(arr), dims, name)


# -- typed fields ----------------------------------------------------------------------------

def _typed_array(np, tensor, et, dt, dims: tuple):
    """Decode the typed field of ``et`` exactly as the reference's to_array does."""
    kind, name = et.kind, tensor.name
    if kind in (_dt.F32, _dt.C64, _dt.F64, _dt.C128):
        wide = kind in (_dt.F64, _dt.C128)
        vals = _fixed_field(np, tensor, "double_data" if wide else "float_data",
                            np.float64 if wide else np.float32)
        if kind in (_dt.C64, _dt.C128):
            if vals.size % 2:
                raise ValidationError(f"tensor {name!r}: {et.name} needs pairs of values, "
                                 f"got {vals.size}")
            vals = vals.view(dt)
        return _reshape(vals, dims, name)
    if kind == _dt.I64:
        return _reshape(_varint_field(np, tensor, "int64_data", np.int64), dims, name)
    if kind == _dt.U64:
        return _reshape(_varint_field(np, tensor, "uint64_data", np.uint64).astype(dt), dims, name)
    # int32_data: work on the 32-bit patterns, keeping the low bits as the reference does.
    bits = _varint_field(np, tensor, "int32_data", np.int32).view(np.uint32)
    if kind == _dt.I32:
        return _reshape(bits.view(np.int32).astype(dt), dims, name)
    if kind == _dt.BITS16:
        return _reshape(bits.astype(np.uint16).view(dt), dims, name)
    low = bits.astype(np.uint8)
    if kind == _dt.BITS8:
        return _reshape(low.view(dt), dims, name)
    if kind == _dt.BITS6:
        return _reshape((low & 0x3F).view(dt), dims, name)
    return packing.unpack(low, et.bits, dims, name).view(dt)  # NIB4, NIB2


def _fixed_field(np, tensor, field: str, native):
    """A float/double field: viewed in place while still packed, else from its list."""
    chunks = tensor._raw_chunks(field)
    if chunks is not None:
        le = np.dtype(native).newbyteorder("<")
        if all(c.nbytes % le.itemsize == 0 for c in chunks):
            parts = [np.frombuffer(c, dtype=le) for c in chunks]
            arr = parts[0] if len(parts) == 1 else np.concatenate(parts)
            if arr.dtype != np.dtype(native):
                arr = arr.astype(native)
            return _readonly_aligned(arr)
        # A chunk of the wrong length is malformed: let the codec raise its DecodeError.
    return np.asarray(getattr(tensor, field), dtype=native)


def _varint_field(np, tensor, field: str, out_dtype):
    """A varint field as ``out_dtype`` (int32: protobuf's truncation to 32 bits)."""
    chunks = tensor._raw_chunks(field)
    if chunks is not None:
        try:
            parts = [_decode_varints(np, c) for c in chunks]
        except DecodeError:
            parts = None  # malformed: the codec's list decoding raises with the field path
        if parts is not None:
            u = parts[0] if len(parts) == 1 else np.concatenate(parts)
            if out_dtype is np.int32:
                return u.astype(np.uint32).view(np.int32)
            return u.view(out_dtype)
    return np.array(getattr(tensor, field), dtype=out_dtype)


def _decode_varints(np, chunk):
    """Decode a packed run of varints into uint64 (bits above 64 dropped, as protobuf)."""
    b = np.frombuffer(chunk, dtype=np.uint8)
    if b.size == 0:
        return np.empty(0, dtype=np.uint64)
    ends = np.flatnonzero(b < 0x80)
    if ends.size == 0 or ends[-1] != b.size - 1:
        raise DecodeError("truncated varint in packed field", int(ends[-1] + 1 if ends.size else 0))
    if ends.size == b.size:  # every value below 128: one byte each
        return b.astype(np.uint64)
    out = np.empty(ends.size, dtype=np.uint64)
    for i in range(0, ends.size, _VARINT_BLOCK):
        e = ends[i:i + _VARINT_BLOCK]
        first = 0 if i == 0 else int(ends[i - 1]) + 1
        starts = np.empty_like(e)
        starts[0] = first
        starts[1:] = e[:-1] + 1
        lengths = e - starts + 1
        if int(lengths.max()) > _MAX_VARINT_BYTES:
            raise DecodeError("varint longer than 10 bytes in packed field", int(first))
        seg = b[first:int(e[-1]) + 1]
        shift = (np.arange(seg.size, dtype=np.int64) - np.repeat(starts - first, lengths)) * 7
        vals = (seg & 0x7F).astype(np.uint64) << shift.astype(np.uint64)
        out[i:i + e.size] = np.bitwise_or.reduceat(vals, starts - first)
    return out


# -- from_array ----------------------------------------------------------------------------

def from_array(array: np.ndarray, name: str | None = None) -> Any:
    """A TensorProto holding ``array``, as ``onnx.numpy_helper.from_array`` builds it.

    Serializes to the same bytes as the reference's tensor: ``raw_data`` little-endian
    (sub-byte types packed), strings in ``string_data``.  The data is copied, so later
    changes to ``array`` do not reach the tensor.
    """
    np = _np()
    from .messages import TensorProto  # noqa: PLC0415 (sibling layer, already imported)

    if isinstance(array, np.generic):
        array = np.asarray(array)
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_array needs a numpy array, got {type(array).__name__}")
    fields: dict = {"dims": list(array.shape)}
    if name:
        fields["name"] = name
    if array.dtype == object or np.issubdtype(array.dtype, np.str_):
        out = []
        for e in array.flatten():
            if isinstance(e, str):
                out.append(e.encode("utf-8"))
            elif isinstance(e, bytes):
                out.append(bytes(e))
            else:
                raise NotImplementedError(
                    "Unrecognized object in the object array, expect a string, or array of "
                    f"bytes: {type(e)}")
        fields["data_type"] = _dt.STRING
        fields["string_data"] = out
        return TensorProto(**fields)

    code = _dt.onnx_type_of(array.dtype)
    et = _dt.ELEM_TYPES[code]
    if et.sub_byte:
        array = packing.pack(array, et.bits)
    fields["data_type"] = code
    fields["raw_data"] = tobytes_little_endian(array)
    return TensorProto(**fields)


def tobytes_little_endian(array: np.ndarray) -> bytes:
    """``array``'s bytes in little-endian order, the order of ``raw_data`` on every host
    (``onnx.numpy_helper.tobytes_little_endian``)."""
    order = array.dtype.byteorder
    if order == ">" or (order == "=" and not _LITTLE):
        array = array.astype(array.dtype.newbyteorder("<"))
    return array.tobytes()
