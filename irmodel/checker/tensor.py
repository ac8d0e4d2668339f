"""Rules for TensorProto and SparseTensorProto values (initializers, attribute values).

Weights are never read: ``raw_data`` is measured by its length, typed fields by the byte
length of their packed form (`access.stored_count`), external data by its location
(`external`).  Sparse tensors are the exception: their indices are read, because the
rules are about their values (sorted, in range).
"""

from __future__ import annotations

from .._dtypes.rows import ELEM_TYPES

import struct

from wirefmt import DecodeError

from .access import TENSOR_VALUE_FIELDS, decode_rest, present_data_fields, stored_count
from .external import check_location
from .problems import short
from ..limits import MAX_SIZE, size_text

# The one bound on sizes computed from a file's numbers (irmodel.limits).  The checker
# multiplies dims in order, as the reference does, so that it reports the first of a
# negative dim and an overflow exactly where the reference does.
INT64_MAX = MAX_SIZE
_UNDEFINED, _INT64, _STRING = 0, 7, 8
_FLOAT6 = frozenset({27, 28})  # FLOAT6E2M3, FLOAT6E3M2: 6-bit elements
_EXTERNAL = 1  # TensorProto.EXTERNAL

# Typed storage per data type: (field, values per element, elements per value).  A data
# type not listed is "unrecognized" when it is not stored in raw_data.
_TYPED = {
    1: ("float_data", 1, 1), 14: ("float_data", 2, 1),
    11: ("double_data", 1, 1), 15: ("double_data", 2, 1),
    **{dt: ("int32_data", 1, 1) for dt in (6, 2, 3, 4, 5, 9, 10, 16, 17, 18, 19, 20, 24, 27, 28)},
    21: ("int32_data", 1, 8), 22: ("int32_data", 1, 8), 23: ("int32_data", 1, 8),
    25: ("int32_data", 1, 16), 26: ("int32_data", 1, 16),
    7: ("int64_data", 1, 1),
    12: ("uint64_data", 1, 1), 13: ("uint64_data", 1, 1),
    8: ("string_data", 1, 1),
}
_VALUE_WORD = {"float_data": "float", "double_data": "double", "int32_data": "int32",
               "int64_data": "int64", "uint64_data": "uint64", "string_data": "string"}


def element_count(dims) -> tuple[int | None, str]:
    """``(product, "")``, or ``(None, why)`` for a negative dim or an int64 overflow."""
    n = 1
    for d in dims:
        if d < 0:
            return None, "Negative dimension value"
        n *= d
        if n > INT64_MAX:
            return None, "Tensor dimension product overflow"
    return n, ""


_TENSOR_READ = frozenset(TENSOR_VALUE_FIELDS)
_SPARSE_READ = frozenset({"values", "indices"})


def check_tensor(report, tensor, ctx, path: str, node=None) -> None:
    """Every rule of one TensorProto; problems go to ``report``."""
    try:
        _check_tensor(report, tensor, ctx, path, node)
        # The value fields are validated by counting them (never decoded: weights); the
        # rest (dims, external_data, segment, metadata) is decoded.
        for field in present_data_fields(tensor):
            if field not in ("raw_data", "string_data"):
                stored_count(tensor, field)
    except DecodeError as exc:
        report.add("B001", path, f"the tensor cannot be decoded: {exc}", node)
        return
    decode_rest(report, tensor, _TENSOR_READ, path, node)


def _check_tensor(report, t, ctx, path: str, node) -> None:
    name = short(t.name)
    dtype = t.data_type
    if not t.HasField("data_type"):
        report.add("T601", path, "Field 'data_type' of 'tensor' is required but missing.", node)
    elif dtype == _UNDEFINED:
        report.add("T602", path, f"setting data_type field (tensor name: {name}) to UNDEFINED is "
                                 "not allowed", node)
    present = present_data_fields(t)
    last = present[-1] if present else ""
    if t.HasField("data_location") and t.data_location == _EXTERNAL:
        _check_external(report, t, ctx, path, node, name, present)
        return
    nelem, why = element_count(t.dims)
    if nelem is None:
        report.add("T604", f"{path}.dims", f"{why} (tensor name: {name}): dims are {_dims_text(t.dims)}",
                   node)
        return
    if nelem == 0 and present:
        report.add("T605", path, f"TensorProto (tensor name: {name}) is 0-element but contains data! "
                                 f"(dims {_dims_text(t.dims)}, data in {', '.join(present)})", node)
    if nelem != 0 and len(present) != 1:
        found = ", ".join(present) if present else "none"
        report.add("T606", path, f"TensorProto (tensor name: {name}) should contain one and only one "
                                 f"value field. (found: {found})", node)
        if not present:
            return
    if dtype == _UNDEFINED:
        return  # reported above; the type-specific rules have nothing to go by
    if "raw_data" in present:
        _check_raw(report, t, path, node, name, dtype, nelem)
        return
    typed = _TYPED.get(dtype)
    if typed is None:
        report.add("T603", f"{path}.data_type", f"Unrecognized data_type (tensor name: {name}): {dtype}",
                   node)
        return
    if nelem == 0:
        return
    field, per_elem, elems_per_value = typed
    if field not in present:
        report.add("T608", path, f"values of data_type '{dtype}' should be stored in field '{field}' "
                                 f"instead of '{last}'", node)
        return
    needed = nelem * per_elem if elems_per_value == 1 else -(-nelem // elems_per_value)
    if needed > INT64_MAX:
        report.add("T604", f"{path}.dims", f"TensorProto (tensor name: {name}) has a shape too large "
                                           "to validate against its data type.", node)
        return
    have = stored_count(t, field)
    if have < needed:
        word = _VALUE_WORD[field]
        packed = " and packed type" if elems_per_value > 1 else ""
        report.add("T609", f"{path}.{field}",
                   f"TensorProto (tensor name: {name}) {field} size ({have}) is too small for the "
                   f"declared shape{packed} ({needed} {word} values required).", node)
    elif dtype in _FLOAT6:
        # The one rule that reads typed values: a FLOAT6 element is 6 bits of an int32 entry.
        if any(v < 0 or v > 0x3F for v in t.int32_data):
            report.add("T613", f"{path}.int32_data",
                       f"TensorProto (tensor name: {name}) FLOAT6 int32_data values must use only bits 0-5.",
                       node)


def _check_raw(report, t, path, node, name, dtype, nelem) -> None:
    if dtype == _STRING:
        report.add("T607", f"{path}.raw_data",
                   f"STRING data (tensor name: {name}) should not be stored in raw_data field", node)
        return
    et = ELEM_TYPES.get(dtype)
    if et is None or not et.bits:
        return  # an unknown type code: the reference has no size rule for it
    # ceil(elements * bits / 8): whole-byte types, and the 2-, 4- and 6-bit packed ones.
    needed = -(-nelem * et.bits // 8)
    if needed > INT64_MAX:
        report.add("T604", f"{path}.dims", f"TensorProto (tensor name: {name}) has a shape too "
                                           "large to validate against its data type.", node)
        return
    size = len(t.raw_data)  # a view's length: no page of the weights is touched
    if size < needed:
        report.add("T609", f"{path}.raw_data",
                   f"TensorProto (tensor name: {name}) raw_data size ({size} bytes) is too small for "
                   f"the declared shape and type ({needed} bytes required).", node)
    elif dtype in _FLOAT6 and needed and (nelem * 6) % 8:
        # The bits of the last byte past the last element are zero (one byte read).
        if t.raw_data[needed - 1] & (0xFF << (nelem * 6) % 8) & 0xFF:
            report.add("T612", f"{path}.raw_data", f"TensorProto (tensor name: {name}) has non-zero "
                                                   "padding bits in its packed FLOAT6 raw_data.", node)


def _check_external(report, t, ctx, path, node, name, present) -> None:
    if present:
        report.add("T610", path, f"Data of TensorProto ( tensor name: {name}) is stored externally and "
                                 f"should not have data field.{present[-1]}", node)
    has_location = False
    for i, entry in enumerate(t.external_data):
        if entry.HasField("key") and entry.HasField("value") and entry.key == "location":
            has_location = True
            check_location(report, ctx.model_dir, entry.value, t.name,
                           f"{path}.external_data[{i}]", node, ctx.reference_dir)
    if not has_location:
        report.add("T611", path, f"TensorProto ( tensor name: {name}) is stored externally but doesn't "
                                 "have a location.", node)


def _dims_text(dims) -> str:
    text = "[" + ", ".join(str(d) for d in list(dims)[:16]) + (", ...]" if len(dims) > 16 else "]")
    return text


# -- sparse tensors ----------------------------------------------------------------------------

def check_sparse_tensor(report, sparse, ctx, path: str, node=None) -> None:
    """Every rule of one SparseTensorProto (its values and indices checked as tensors too)."""
    try:
        _check_sparse(report, sparse, ctx, path, node)
    except DecodeError as exc:
        report.add("B001", path, f"the sparse tensor cannot be decoded: {exc}", node)
        return
    decode_rest(report, sparse, _SPARSE_READ, path, node)


def _check_sparse(report, sp, ctx, path: str, node) -> None:
    if not sp.HasField("values"):
        report.add("S801", path, "Field 'values' of 'sparse_tensor_proto' is required but missing.", node)
        return
    values = sp.values
    vname = short(values.name)
    check_tensor(report, values, ctx, f"{path}.values", node)
    vdims = values.dims
    dims = list(sp.dims)
    ok = True
    if len(vdims) != 1:
        report.add("S802", f"{path}.values", f"Sparse tensor values ({vname}) must have rank 1. "
                                             f"(its dims are {_dims_text(vdims)})", node)
        ok = False
    if not dims:
        report.add("S803", f"{path}.dims", f"Sparse tensor ({vname}) must have a dense-rank > 0", node)
        ok = False
    elif any(d <= 0 for d in dims):
        report.add("S804", f"{path}.dims", f"Sparse tensor ({vname}) dimensions are not positive. "
                                           f"(dims {_dims_text(dims)})", node)
        ok = False
    nnz = vdims[0] if len(vdims) == 1 else None
    if not sp.HasField("indices"):
        if nnz is not None and nnz != 0:
            report.add("S810", path, f"Sparse tensor ({vname}) has no index values.", node)
        return
    indices = sp.indices
    ipath = f"{path}.indices"
    iname = short(indices.name)
    before = report.found
    check_tensor(report, indices, ctx, ipath, node)
    if indices.data_type != _INT64:
        report.add("S805", ipath, f"Sparse tensor indices ({iname}) must have INT64 type. "
                                  f"(data_type {indices.data_type})", node)
        ok = False
    idims = list(indices.dims)
    if len(idims) not in (1, 2):
        report.add("S806", ipath, f"Sparse tensor indices ({iname}) must have rank 1 or 2. "
                                  f"(its dims are {_dims_text(idims)})", node)
        return
    if nnz is None:
        return
    if idims[0] != nnz:
        text = (f"Sparse tensor indices ({iname}) has {idims[0]} values, but NNZ is {nnz}"
                if len(idims) == 1 else
                f"Sparse tensor indices ({iname}) first dimension size does not equal NNZ. "
                f"({idims[0]} != {nnz})")
        report.add("S807", ipath, text, node)
        return
    if len(idims) == 2 and idims[1] != len(dims):
        report.add("S807", ipath, f"Sparse tensor indices ({iname}) second dimension size does not "
                                  f"match rank of tensor. ({idims[1]} != {len(dims)})", node)
        return
    if not ok or report.found != before:
        return  # the index values cannot be read meaningfully
    data = _index_values(report, indices, ipath, node, iname, nnz * (idims[1] if len(idims) == 2 else 1))
    if data is None:
        return
    if len(idims) == 1:
        _check_linear_indices(report, data, dims, nnz, ipath, node, iname)
    else:
        _check_coordinate_indices(report, data, dims, nnz, ipath, node, iname)


# The reference reads sparse indices through its inference helpers, whose errors carry
# this prefix; ours do too, so that a search for its message finds ours.
_PARSE = "[ShapeInferenceError] "


def _index_values(report, indices, path, node, name, count: int):
    """The first ``count`` int64 index values, or None (reported) when they cannot be read."""
    if indices.HasField("data_location") and indices.data_location == _EXTERNAL:
        report.add("S811", path, f"{_PARSE}Cannot parse data from external tensors. Please load external "
                                 f"data into raw data for tensor: {name}", node)
        return None
    if not indices.HasField("raw_data"):
        have = stored_count(indices, "int64_data")
        if have != count:
            report.add("S811", path, f"{_PARSE}Data size mismatch. Tensor: {name} expected num elements "
                                     f"{count} does not match the actual num elements {have}", node)
            return None
        return list(indices.int64_data)
    raw = indices.raw_data
    if len(raw) < 8 * count:
        report.add("S811", path, f"{_PARSE}Data size mismatch. Tensor: {name} has {len(raw)} bytes of "
                                 f"raw_data for {count} elements of size 8", node)
        return None
    return list(struct.unpack_from(f"<{count}q", raw, 0))


def _check_linear_indices(report, data, dims, nnz, path, node, name) -> None:
    # Bounded (`element_count`): a rank-100,000 shape of 2**62 dims is no 1.9-million-digit
    # product; an int64 index is inside any size past MAX_SIZE.
    size = element_count(dims)[0]
    if size is None:
        size = MAX_SIZE + 1
    prev = -1
    for i in range(nnz):
        v = data[i]
        if v < 0 or v >= size:
            report.add("S808", path, f"Sparse tensor ({name}) index value at position [{i}] out of range "
                                     f"[0, {size_text(size - 1)}] (found {v})", node)
            return
        if v <= prev:
            report.add("S809", path, f"Sparse tensor ({name}) index value at position [{i}] not in sorted "
                                     f"order. ({v} after {prev})", node)
            return
        prev = v


def _check_coordinate_indices(report, data, dims, nnz, path, node, name) -> None:
    # Order compared as tuples of coordinates (lexicographic, as the linear index): no
    # product of the dims, which for a large rank is a huge integer built quadratically.
    rank = len(dims)
    prev: list | None = None
    for i in range(nnz):
        row = data[i * rank:(i + 1) * rank]
        for j in range(rank):
            v = row[j]
            if v < 0 or v >= dims[j]:
                report.add("S808", path, f"Sparse tensor ({name}) index value at position [{i},{j}] out "
                                         f"of range. ({v} not in [0, {dims[j] - 1}])", node)
                return
        if prev is not None and row <= prev:
            report.add("S809", path, f"Sparse tensor ({name}) index value at position [{i}] not in "
                                     "lexicographic sorted order.", node)
            return
        prev = row
