"""How the checker reads a model without reading its weights.

The one module of the checker that uses private parts of the message layer (say so in
any change): ``Message._raw_chunks`` (the undecoded packed chunks of a repeated numeric
field, so that ``float_data`` & co. are counted from their byte length instead of being
decoded into Python lists) and the ``_base_dir`` that ``irmodel.load`` records (the
directory external data is relative to).
"""

from __future__ import annotations

from wirefmt import DecodeError

# Fixed-width packed fields: bytes per value.
_FIXED_WIDTH = {"float_data": 4, "double_data": 8}
# Up to this many bytes a varint field is decoded the ordinary way (which validates every
# varint); above it, its values are counted by their terminating bytes (one per varint).
_DECODE_LIMIT = 1 << 20
_COUNT_SLICE = 1 << 22
_HIGH_BYTES = bytes(range(128, 256))


def stored_count(tensor, field: str) -> int:
    """How many values the repeated numeric ``field`` of ``tensor`` holds.

    Counted from the packed bytes when still undecoded: float/double by length, varints
    by their last bytes (bytes below 0x80).  Raises DecodeError for bytes that cannot be
    such a field, as decoding it would.
    """
    chunks = tensor._raw_chunks(field)
    if chunks is None:
        return len(getattr(tensor, field))
    width = _FIXED_WIDTH.get(field)
    if width is not None:
        total = 0
        for c in chunks:
            if len(c) % width:
                raise DecodeError(f"packed {field} of {len(c)} bytes is not a whole number of "
                                  f"{width}-byte values")
            total += len(c) // width
        return total
    if sum(len(c) for c in chunks) <= _DECODE_LIMIT:
        return len(getattr(tensor, field))  # decodes and validates
    total = 0
    for c in chunks:
        if len(c) and c[-1] >= 0x80:
            raise DecodeError(f"truncated varint at the end of packed {field}")
        for i in range(0, len(c), _COUNT_SLICE):
            part = c[i:i + _COUNT_SLICE].tobytes()
            total += len(part.translate(None, _HIGH_BYTES))
    return total


def has_values(tensor, field: str) -> bool:
    """Whether a repeated field holds at least one value, without decoding it."""
    if field in ("string_data", "external_data"):
        return len(getattr(tensor, field)) > 0
    chunks = tensor._raw_chunks(field)
    if chunks is None:
        return len(getattr(tensor, field)) > 0
    return any(len(c) for c in chunks)


def loaded_from_dir(model) -> str | None:
    """The directory ``irmodel.load`` read ``model`` from, or None (built or loaded from bytes)."""
    return model.__dict__.get("_base_dir")
