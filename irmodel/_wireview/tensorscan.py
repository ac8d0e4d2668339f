"""A TensorProto's header (name, data type, dims) read straight from its bytes.

What ``irmodel inspect`` needs of an initializer is its name, its data type and its
dims (the byte size follows from them); making a TensorProto for that (a message, its
scan, its dims list) was most of the cost of the initializers in a summary.
`tensor_header` reads the tensor's wire form instead and answers only for a *simple*
tensor: one that is well formed at its top level, has no ``segment``, keeps its data in
the file (``data_location`` absent or DEFAULT), has a valid UTF-8 name, and whose fields
of interest carry the wire types the schema gives them.  For anything else it answers
None and the caller makes the TensorProto as before (`irmodel._report.summary`), which reads
what is unusual its own way and raises the error bad bytes deserve.

The same rules as the message path hold, so the two agree exactly: the top level is
read field by field with `irmodel._wireview.nodescan`'s reader (the checks the full scan makes:
tags, lengths, varints, groups, a field running past its message), the last
``name``/``data_type`` wins, ``dims`` gathers packed and unpacked occurrences in order
and decodes them with `wirefmt.reader.unpack_varints` (as the message path does) and
as int64; unknown fields are skipped.  Deeper levels (``raw_data``, packed data other
than ``dims``, external_data entries) are not read, by either path.
"""

from __future__ import annotations

from wirefmt.errors import DecodeError
from wirefmt.reader import unpack_varints
from wirefmt.schema import INT64, LEN, PACKABLE, WIRE_TYPE
from wirefmt.varint import to_int64

from ..messages import CLASSES
from .nodescan import _field

_FIELDS = CLASSES["TensorProto"]._fields
_DIMS, _DATA_TYPE, _SEGMENT, _NAME, _DATA_LOCATION = (
    _FIELDS[f].number for f in ("dims", "data_type", "segment", "name", "data_location"))
#: The wire types each known field may carry (a packable repeated field: its own or LEN).
#: A known field seen with another wire type sends the tensor to the message path.
_WIRE_TYPES = {f.number: frozenset((WIRE_TYPE[f.kind],) + ((LEN,) if f.repeated and f.kind in PACKABLE else ()))
               for f in _FIELDS.values()}
_INT32_MAX = (1 << 31) - 1


def tensor_header(src, start: int, end: int, depth: int) -> tuple | None:
    """``(name, data_type, dims)`` of the simple TensorProto in ``src[start:end]``, else None.

    ``depth`` is the tensor's nesting depth as the full path would see it (2 for a main
    graph's initializer); it bounds group skipping as there.  See the module docstring.
    """
    name = ""
    data_type = 0
    dims: list = []
    pos = start
    wire_types = _WIRE_TYPES
    try:
        while pos < end:
            number, wt, a, pos = _field(src, pos, end, depth)
            allowed = wire_types.get(number)
            if allowed is None:  # an unknown field: skipped, as the message path keeps it aside
                continue
            if wt not in allowed:
                return None
            if number == _DIMS:
                if wt == LEN:
                    dims.extend(unpack_varints(INT64, src, a, pos))
                else:
                    dims.append(to_int64(a))
            elif number == _DATA_TYPE:
                if a > _INT32_MAX:  # int32 truncation and negative codes: the message path's
                    return None
                data_type = a
            elif number == _NAME:
                name = src[a:pos].decode()
            elif number == _DATA_LOCATION:
                if a:  # EXTERNAL, or a value this reader does not know
                    return None
            elif number == _SEGMENT:
                return None
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    if pos != end:
        return None
    return name, data_type, dims
