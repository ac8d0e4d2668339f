"""Packing and unpacking of the 2-, 4- and 6-bit element types, with numpy.

The layout is onnx.proto's: elements are packed least significant bits first, so the
first element of a 4-bit pair is the low nibble, four 2-bit elements fill a byte from
its low bits up, and four 6-bit elements fill three bytes as one 24-bit little-endian
word.  A trailing partial group is padded with zero bits (6-bit data is then cut to
``ceil(6 n / 8)`` bytes).

One home for both directions: `helper.make_tensor` packs, `tensors.from_array` packs,
`tensors.to_array` unpacks.  numpy is imported at the top of this module, so it is only
imported by code that already needs numpy (``import irmodel`` does not import it).
"""

from __future__ import annotations


import numpy as np

from ..limits import element_count, is_too_large


def pack(arr: np.ndarray, bits: int) -> np.ndarray:
    """The packed bytes (uint8) of ``arr``'s elements, ``bits`` (2, 4 or 6) wide each.

    Works on the array's bytes, as the reference does: the low ``bits`` of every byte of
    the flattened array are one element.
    """
    codes = arr.ravel().view(np.uint8) & np.uint8((1 << bits) - 1)
    n = codes.size
    per_group = 4 if bits == 6 else 8 // bits
    if n % per_group:
        codes = np.append(codes, np.zeros(per_group - n % per_group, dtype=np.uint8))
    if bits == 4:
        return codes[0::2] | (codes[1::2] << 4)
    if bits == 2:
        return codes[0::4] | (codes[1::4] << 2) | (codes[2::4] << 4) | (codes[3::4] << 6)
    v = codes.reshape(-1, 4)
    out = np.empty((v.shape[0], 3), dtype=np.uint8)
    out[:, 0] = v[:, 0] | ((v[:, 1] & 0x03) << 6)
    out[:, 1] = (v[:, 1] >> 2) | ((v[:, 2] & 0x0F) << 4)
    out[:, 2] = (v[:, 2] >> 4) | (v[:, 3] << 2)
    return out.reshape(-1)[:packed_size(n, 6)]


def packed_size(count: int, bits: int) -> int:
    """Bytes that ``count`` elements ``bits`` wide occupy when packed."""
    return -(-count * bits // 8)


def unpack(data: np.ndarray, bits: int, dims: tuple, name: str) -> np.ndarray:
    """The elements (uint8 codes, shape ``dims``) packed ``bits`` wide in the bytes ``data``.

    ValueError naming tensor ``name`` when ``data`` is too small for ``dims``; bytes
    beyond what ``dims`` needs are ignored.
    """
    n = element_count(dims)  # bounded and linear
    if n is None or is_too_large(n):  # to_array refuses these first
        raise ValueError(f"tensor {name!r}: dims describe no possible number of elements")
    if bits == 6:
        return _unpack_6bit(data, n, dims, name)
    per_byte = 8 // bits
    if data.size * per_byte < n:
        raise ValueError(f"tensor {name!r}: packed {bits}-bit data ({data.size} bytes) is too small "
                         f"for {len(dims)} dims ({n} elements)")
    data = data[:(n + per_byte - 1) // per_byte]
    out = np.empty(data.size * per_byte, dtype=np.uint8)
    if bits == 4:
        out[0::2] = data & 0x0F
        out[1::2] = data >> 4
    else:
        for k in range(per_byte):
            out[k::per_byte] = (data >> (bits * k)) & ((1 << bits) - 1)
    return out[:n].reshape(dims)


def _unpack_6bit(data: np.ndarray, n: int, dims: tuple, name: str) -> np.ndarray:
    needed = packed_size(n, 6)
    if data.size < needed:
        raise ValueError(f"tensor {name!r}: packed 6-bit data ({data.size} bytes) is too small "
                         f"for {len(dims)} dims ({needed} bytes needed)")
    groups = -(-n // 4)
    padded = np.zeros(groups * 3, dtype=np.uint8)  # the last group may be cut short
    k = min(data.size, padded.size)
    padded[:k] = data[:k]
    b = padded.reshape(groups, 3)
    out = np.empty((groups, 4), dtype=np.uint8)
    out[:, 0] = b[:, 0] & 0x3F
    out[:, 1] = (b[:, 0] >> 6) | ((b[:, 1] & 0x0F) << 2)
    out[:, 2] = (b[:, 1] >> 4) | ((b[:, 2] & 0x03) << 4)
    out[:, 3] = b[:, 2] >> 2
    return out.reshape(-1)[:n].reshape(dims)
