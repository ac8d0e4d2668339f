"""onnx.numpy_helper: numpy arrays and Python values to and from ONNX messages.

A thin layer: tensors are `irmodel.tensors.to_array`/`from_array` (zero-copy reads,
every element type), packing is `irmodel._dtypes.packing`, dtypes are `irmodel._dtypes.rows`.  What
lives here is onnx's surface over them: sequences, maps and optionals as Python lists,
dicts and ``None``; ``saturate_cast``, ``to_float8e8m0``, ``create_random_int``; and the
private packing helpers that onnx's own tests import (``_pack_4bitx2`` and friends).

numpy is imported at the top: this module is imported only when first used (``import
irmodel`` never imports it).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ._dtypes import rows as _dt
from ._dtypes import packing as _packing
from .messages import MapProto, OptionalProto, SequenceProto, TensorProto
from .tensors import from_array as _from_array, to_array as _to_array, tobytes_little_endian

__all__ = [
    "create_random_int", "from_array", "from_dict", "from_list", "from_optional", "saturate_cast",
    "to_array", "to_dict", "to_float8e8m0", "to_list", "to_optional", "tobytes_little_endian",
]


def to_array(tensor: TensorProto, base_dir: str = "", *, verify_checksum: bool = False) -> np.ndarray:
    """The numpy array a TensorProto holds; external data is read relative to ``base_dir``
    (``""``: the directory of the file the tensor was loaded from).  See `irmodel.tensors.to_array`
    (zero-copy, read-only where the bytes allow; ``verify_checksum`` is irmodel's)."""
    return _to_array(tensor, base_dir or None, verify_checksum=verify_checksum)


def from_array(array: np.ndarray, /, name: str | None = None) -> TensorProto:
    """A TensorProto holding a copy of ``array`` (raw_data, little-endian; strings in string_data)."""
    return _from_array(array, name)


# -- the private packing helpers onnx's tests call ----------------------------------------

def _pack_4bitx2(array: np.ndarray) -> np.ndarray:
    """The low nibbles of ``array``'s bytes, two to a byte (first element low)."""
    return _packing.pack(array, 4)


def _pack_2bitx4(array: np.ndarray) -> np.ndarray:
    """The low two bits of ``array``'s bytes, four to a byte (first element lowest)."""
    return _packing.pack(array, 2)


def _pack_6bit(values: np.ndarray) -> np.ndarray:
    """6-bit codes, four to three bytes (a 24-bit little-endian word)."""
    return _packing.pack(np.asarray(values).astype(np.uint8, copy=False), 6)


def _unpack(bits: int, data: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    return _packing.unpack(np.asarray(data).view(np.uint8).ravel(), bits, tuple(int(d) for d in dims), "")


def _unpack_4bit(data: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    return _unpack(4, data, dims)


def _unpack_2bit(data: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    return _unpack(2, data, dims)


def _unpack_6bit(data: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    return _unpack(6, data, dims)


# -- sequences, maps, optionals -----------------------------------------------------------

def _sparse_to_array(sparse: Any) -> np.ndarray:
    """A SparseTensorProto as the dense array it stands for (zeros where no value is given)."""
    values = to_array(sparse.values)
    indices = to_array(sparse.indices).astype(np.int64, copy=False)
    dense = np.zeros(tuple(sparse.dims), dtype=values.dtype)
    if indices.ndim == 2:  # one row of coordinates per value
        dense[tuple(indices.T)] = values
    else:  # flat positions
        dense.reshape(-1)[indices] = values
    return dense


def to_list(sequence: SequenceProto) -> list[Any]:
    """A SequenceProto's elements as a Python list (arrays, lists or dicts)."""
    read: dict[int, tuple[str, Callable[[Any], Any]]] = {
        SequenceProto.TENSOR: ("tensor_values", to_array),
        SequenceProto.SPARSE_TENSOR: ("sparse_tensor_values", _sparse_to_array),
        SequenceProto.SEQUENCE: ("sequence_values", to_list),
        SequenceProto.MAP: ("map_values", to_dict)}
    if sequence.elem_type not in read:
        raise TypeError("The element type in the input sequence is not supported.")
    field, convert = read[sequence.elem_type]
    return [convert(v) for v in getattr(sequence, field)]


def _sequence_kind(value: Any) -> int:
    if isinstance(value, dict):
        return SequenceProto.MAP
    if isinstance(value, list):
        return SequenceProto.SEQUENCE
    return SequenceProto.TENSOR


def from_list(lst: list[Any], name: str | None = None, dtype: int | None = None) -> SequenceProto:
    """A SequenceProto of ``lst``'s elements, all of one kind: arrays (or anything numpy
    makes one of), lists, or dicts; ``dtype`` (a SequenceProto.DataType) names the kind
    of an empty list, which is otherwise a sequence of tensors."""
    sequence = SequenceProto()
    if name:
        sequence.name = name
    kind = dtype if dtype is not None else (_sequence_kind(lst[0]) if lst else SequenceProto.TENSOR)
    sequence.elem_type = kind
    if lst and any(type(e) is not type(lst[0]) and not isinstance(e, type(lst[0])) for e in lst):
        raise TypeError("The element type in the input list is not the same for all elements "
                        "and therefore is not supported as a sequence.")
    if kind == SequenceProto.TENSOR:
        sequence.tensor_values.extend(from_array(np.asarray(e)) for e in lst)
    elif kind == SequenceProto.SEQUENCE:
        sequence.sequence_values.extend(from_list(e) for e in lst)
    elif kind == SequenceProto.MAP:
        sequence.map_values.extend(from_dict(e) for e in lst)
    else:
        raise TypeError("The element type in the input list is not a tensor, sequence, or map "
                        "and is not supported.")
    return sequence


def to_dict(map_proto: MapProto) -> dict[Any, Any]:
    """A MapProto as a Python dict (keys from ``keys`` or ``string_keys``, values by `to_list`)."""
    keys = list(map_proto.string_keys if map_proto.key_type == TensorProto.STRING else map_proto.keys)
    values = to_list(map_proto.values)
    if len(keys) != len(values):
        # IndexError as in onnx, whose callers catch that.
        raise IndexError(f"Length of keys and values for MapProto (map name: {map_proto.name}) "
                         "are not the same.")
    return dict(zip(keys, values))


_MAP_INT_KEYS = frozenset((TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
                           TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64))


def _one_type(values: list, what: str) -> np.dtype:
    first = np.result_type(values[0])
    if any(np.result_type(v) != first for v in values):
        raise TypeError(f"The {what} type in the input dictionary is not the same for all {what}s "
                        "and therefore is not valid as a map.")
    return first


def from_dict(dict_: dict[Any, Any], name: str | None = None) -> MapProto:
    """A MapProto of a non-empty dict whose keys are all of one integer or string type
    and whose values are all of one type."""
    if not dict_:
        raise ValueError("Cannot convert an empty dictionary to MapProto.")
    keys, values = list(dict_), list(dict_.values())
    key_type = _dt.onnx_type_of(_one_type(keys, "key"))
    _one_type(values, "value")
    map_proto = MapProto()
    if name:
        map_proto.name = name
    if key_type == TensorProto.STRING:
        map_proto.string_keys.extend(k.encode("utf-8") if isinstance(k, str) else k for k in keys)
    elif key_type in _MAP_INT_KEYS:
        map_proto.keys.extend(int(k) for k in keys)
    else:
        raise TypeError(f"Unsupported map key type: {key_type}")
    map_proto.key_type = key_type
    map_proto.values.CopyFrom(from_list(values))
    return map_proto


def to_optional(optional: OptionalProto) -> Any | None:
    """An OptionalProto's value: None when empty, else an array, list or dict."""
    read: dict[int, tuple[str, Callable[[Any], Any]]] = {
        OptionalProto.TENSOR: ("tensor_value", to_array),
        OptionalProto.SPARSE_TENSOR: ("sparse_tensor_value", _sparse_to_array),
        OptionalProto.SEQUENCE: ("sequence_value", to_list),
        OptionalProto.MAP: ("map_value", to_dict),
        OptionalProto.OPTIONAL: ("optional_value", to_optional)}
    if optional.elem_type == OptionalProto.UNDEFINED:
        return None
    if optional.elem_type not in read:
        raise TypeError("The element type in the input optional is not supported.")
    field, convert = read[optional.elem_type]
    return convert(getattr(optional, field))


def from_optional(opt: Any | None, name: str | None = None, dtype: int | None = None) -> OptionalProto:
    """An OptionalProto of ``opt``: empty for None, else a tensor, sequence (list) or map (dict);
    ``dtype`` (an OptionalProto.DataType) overrides the kind found from ``opt``."""
    optional = OptionalProto()
    if name:
        optional.name = name
    if dtype is not None:
        if dtype not in OptionalProto.DataType.values():
            raise TypeError(f"{dtype} must be a valid OptionalProto.DataType.")
        kind = dtype
    elif opt is None:
        kind = OptionalProto.UNDEFINED
    else:
        kind = (OptionalProto.MAP if isinstance(opt, dict) else
                OptionalProto.SEQUENCE if isinstance(opt, list) else OptionalProto.TENSOR)
    optional.elem_type = kind
    if opt is None:
        return optional
    if kind == OptionalProto.TENSOR:
        optional.tensor_value.CopyFrom(from_array(opt))
    elif kind == OptionalProto.SEQUENCE:
        optional.sequence_value.CopyFrom(from_list(opt))
    elif kind == OptionalProto.MAP:
        optional.map_value.CopyFrom(from_dict(opt))
    else:
        raise TypeError("The element type in the input is not a tensor, sequence, or map and is not supported.")
    return optional


# -- numeric helpers ----------------------------------------------------------------------

_INTEGER_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64,
                                              np.int8, np.int16, np.int32, np.int64))


def create_random_int(input_shape: tuple[int], dtype: np.dtype, seed: int = 1) -> np.ndarray:
    """Random integers of ``dtype`` (within int32's range) from numpy's global generator
    seeded with ``seed``, as onnx's node test cases make them."""
    if np.dtype(dtype) not in _INTEGER_DTYPES:
        raise TypeError(f"{dtype} is not supported by create_random_int.")
    info, int32 = np.iinfo(dtype), np.iinfo(np.int32)
    np.random.seed(seed)
    return np.random.randint(max(info.min, int32.min), min(info.max, int32.max), size=input_shape).astype(dtype)


def saturate_cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` cast to ``dtype`` with out-of-range values clamped to its extremes (integers
    are rounded first)."""
    ml_dtypes = _dt._ml_dtypes("saturate_cast")
    small_ints = tuple(getattr(ml_dtypes, n) for n in ("int4", "uint4", "int2", "uint2") if hasattr(ml_dtypes, n))
    if np.issubdtype(dtype, np.integer) or dtype in small_ints:
        info = ml_dtypes.iinfo(dtype)
        x = np.round(x)
    else:
        info = ml_dtypes.finfo(dtype)
    return np.clip(x, info.min, info.max).astype(dtype)


_F32_EXPONENT_MASK, _F32_FRACTION_MASK = 0xFF, 0x7FFFFF
_E8M0_SPECIAL, _E8M0_LARGEST = 0xFF, 0xFE


def to_float8e8m0(x: np.ndarray, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """float32 values as float8e8m0 (a power of two: float32's exponent byte alone).

    ``round_mode`` says what a fraction does to the exponent: ``"up"`` adds one,
    ``"down"`` drops it, ``"nearest"`` rounds half to even on the fraction's top bits.
    With ``saturate`` the largest finite exponent never rounds up into NaN.  NaN and
    the infinities become 0xFF (NaN).
    """
    if round_mode not in ("up", "down", "nearest"):
        raise ValueError(f"Unsupported rounding mode: {round_mode}")
    ml_dtypes = _dt._ml_dtypes("to_float8e8m0")
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    exponent = ((bits >> 23) & _F32_EXPONENT_MASK).astype(np.uint16)
    special = exponent == _E8M0_SPECIAL
    if round_mode == "up":
        bump = (bits & _F32_FRACTION_MASK) != 0
    elif round_mode == "nearest":
        half = (bits & 0x400000) != 0  # the fraction's top bit: at least half way
        rest = (bits & 0x3FFFFF) != 0
        bump = half & (rest | (exponent > 0))  # a tie goes up, except below the smallest normal
    else:
        bump = np.zeros(exponent.shape, dtype=bool)
    bump &= ~special
    if saturate:
        bump &= exponent != _E8M0_LARGEST
    out = np.where(special, np.uint16(_E8M0_SPECIAL), exponent + bump.astype(np.uint16)).astype(np.uint8)
    return out.view(ml_dtypes.float8_e8m0fnu)
