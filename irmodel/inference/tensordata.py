"""Values of small constant tensors (initializers, Constant nodes) that shapes depend on.

The reference's ``ParseData<T>``: the tensor must have exactly type T; values come from
the typed field (whose length must equal the element count) or from ``raw_data``
(little-endian, at least as many bytes as the elements need); external data is refused.

The bound: a tensor is offered to shape computations only when it has at most
`MAX_CONSTANT_ELEMENTS` elements (`is_small`), checked on ``dims`` before any byte is
read.  Shapes, axes, pads, repeats, scales and sizes have at most 2 x 1024 values
(rank is bounded by 1024), so every shape computation that is possible at all still
sees its constants; a larger tensor (a weight) is treated as a value whose contents
are unknown, and its bytes are never touched.  The reference has no bound (it copies
every initializer first).
"""

from __future__ import annotations

import struct

from wirefmt import exact_span

from .._dtypes.table import CODE
from .._wireview.tensorscan import tensor_values
from ..limits import element_count as _bounded_count
from ..limits import MAX_VALUE_ELEMENTS, is_too_large
from .dims import INT64_MAX
from .errors import fail_shape

MAX_CONSTANT_ELEMENTS = MAX_VALUE_ELEMENTS  # (`irmodel.limits`: the same bound as a propagated value's)

INT64, INT32, FLOAT, DOUBLE = (CODE[name] for name in ("INT64", "INT32", "FLOAT", "DOUBLE"))
_FORMATS = {INT64: ("q", 8, "int64_data"), INT32: ("i", 4, "int32_data"),
            FLOAT: ("f", 4, "float_data"), DOUBLE: ("d", 8, "double_data")}
_NAMES = {INT64: "int64", INT32: "int32", FLOAT: "float", DOUBLE: "double"}
EXTERNAL = 1


def element_count(tensor) -> int | None:
    """Product of ``dims``, or None when a dim is negative or the product passes int64
    (`irmodel.limits`, the one bounded count: linear in the number of dims)."""
    n = _bounded_count(tensor.dims)
    return None if n is None or is_too_large(n) else n


def is_small(tensor) -> bool:
    n = element_count(tensor)
    return n is None or n <= MAX_CONSTANT_ELEMENTS


class ConstTensor:
    """A constant input: its `TensorProto` (a view) plus parsed values, cached per type."""

    __slots__ = ("proto", "_cache")

    def __init__(self, proto):
        self.proto = proto
        self._cache = {}

    @property
    def data_type(self) -> int:
        return self.proto.data_type

    @property
    def dims(self) -> list:
        return list(self.proto.dims)

    def values(self, code: int) -> list:
        """``ParseData<T>`` for T given by its type code (INT64, INT32, FLOAT, DOUBLE)."""
        got = self._cache.get(code)
        if got is None:
            got = self._cache[code] = parse_data(self.proto, code)
        return got


def parse_data(tensor, code: int) -> list:
    """``ParseData<T>``: the wire fast path for the common case, else `parse_data_slow`."""
    got = read_small_fast(tensor, code)
    return got if got is not None else parse_data_slow(tensor, code)


def read_small_fast(tensor, code: int) -> list | None:
    """The values of a small, well-formed tensor of type ``code``, read from its wire bytes.

    The decoder holds tens of thousands of tiny shape constants; going through the message
    (three presence tests, a packed-field decoder, a list copy) cost ~20 us each.  This
    asks the tensor reader (`irmodel._wireview.tensorscan.tensor_values`: ``dims``,
    ``data_type``, ``int64_data`` and ``raw_data`` straight from the bytes the tensor was
    read from) and answers only when the result is certain: any other field (other typed
    data, external data, segments), any oddity (a negative dim, a type mismatch, too few
    values, a malformed varint, a tensor changed in memory) gives None, and
    `parse_data_slow` -- the one authority on errors -- decides.  Same values.
    """
    span = exact_span(tensor)
    if span is None:
        return None
    buf, pos, end = span
    read = tensor_values(buf, pos, end, code == INT64)
    if read is None or read.data_type != code:
        return None
    n = _bounded_count(read.dims)  # (linear in the dims, small integers: `irmodel.limits`)
    if n is None or n > MAX_CONSTANT_ELEMENTS:
        return None
    raw = read.raw
    if raw is None:
        typed = read.int64_data
        return typed if len(typed) == n else None
    fmt, size, _ = _FORMATS[code]
    start, stop = raw
    if (stop - start) // size < n:
        return None
    return list(struct.unpack_from(f"<{n}{fmt}", buf, start))


def parse_data_slow(tensor, code: int) -> list:
    """``ParseData<T>`` through the message: every case, and every error message."""
    name = tensor.name
    if not tensor.HasField("data_type") or tensor.data_type == 0:
        raise fail_shape("The type of tensor: ", name, " is undefined so it cannot be parsed.")
    if tensor.data_type != code:
        from .typestr import elem_name  # noqa: PLC0415
        raise fail_shape("ParseData type mismatch for tensor: ", name, ". Expected:", _NAMES[code],
                         " Actual:", elem_name(tensor.data_type))
    if tensor.HasField("data_location") and tensor.data_location == EXTERNAL:
        raise fail_shape("Cannot parse data from external tensors. Please load external data into raw data "
                         "for tensor: ", name)
    n = _count_or_fail(tensor)
    fmt, size, field = _FORMATS[code]
    if not tensor.HasField("raw_data"):
        data = getattr(tensor, field)
        if len(data) != n:
            raise fail_shape("Data size mismatch. Tensor: ", name, " expected num elements ", n,
                             " does not match the actual num elements ", len(data))
        return list(data)
    raw = tensor.raw_data
    if len(raw) // size < n:
        raise fail_shape("Data size mismatch. Tensor: ", name, " has ", len(raw), " bytes of raw_data for ", n,
                         " elements of size ", size)
    if n > MAX_CONSTANT_ELEMENTS:  # callers check is_small first; never unpack a weight
        raise fail_shape("tensor ", name, " is too large to be read for inference")
    return list(struct.unpack_from(f"<{n}{fmt}", raw, 0))


def _count_or_fail(tensor) -> int:
    n = 1
    for d in tensor.dims:
        if d < 0:
            raise fail_shape("Negative dimension value for tensor: ", tensor.name)
        n *= d
        if n > INT64_MAX:
            raise fail_shape("Tensor dimension product overflow for tensor: ", tensor.name)
    return n


def const_from_ints(values: list, scalar: bool, code: int = INT64):
    """A Constant node's ``value_int(s)``/``value_float(s)`` as the tensor the reference makes."""
    from .. import TensorProto  # noqa: PLC0415
    t = TensorProto()
    t.data_type = code
    if not scalar:
        t.dims = [len(values)]
    if code == FLOAT:
        t.float_data = values
    else:
        t.int64_data = values
    return ConstTensor(t)
