"""The TensorProto reader: a tensor's header, kind, or small values read from its bytes.

Each reader answers a record or None (declined: the caller makes the TensorProto, which
reads what is unusual its own way and raises the error bad bytes deserve); none raises.

* `tensor_header`: ``(name, data_type, dims)`` of a *simple* tensor (the summary);
* `initializer_header`: the same, and the ``external_data`` entries of a tensor whose
  data is external (the summary from the bytes alone);
* `tensor_kind`: the name and a key of everything the checker's tensor rules read;
* `initializer_heads`: initializers as exporters write them, one pattern match each
  (inference's seeding);
* `tensor_values`: dims, data type, int64 data and raw data's span (inference's
  constants);
* `unnamed_bytes`: a tensor's bytes without its name (a key of its value).

`tensor_header` in detail:

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
read field by field with `irmodel._wireview.wire.field` (the checks the full scan makes:
tags, lengths, varints, groups, a field running past its message), the last
``name``/``data_type`` wins, ``dims`` gathers packed and unpacked occurrences in order
and decodes them with `wirefmt.reader.unpack_varints` (as the message path does) and
as int64; unknown fields are skipped.  Deeper levels (``raw_data``, packed data other
than ``dims``) are not read, by either path; `initializer_header` reads the external_data
entries, as the message path reads them for a tensor whose data is external.
"""

from __future__ import annotations

from itertools import repeat

from wirefmt.errors import DecodeError
from wirefmt.reader import read_field, unpack_varints
from wirefmt.schema import INT64, LEN, PACKABLE, SGROUP, VARINT, WIRE_TYPE
from wirefmt.varint import read_short_varint, read_varint, to_int64

from .._dtypes.table import ELEM_BITS  # (not `rows`: its row classes cost inspect's start)
from ..proto import enum_spec, message_spec
from . import fields as F
from .fastpath import declined
from .patterns import compiled
from .wire import field as _field

_FIELDS = message_spec("TensorProto").by_name
_DIMS, _DATA_TYPE, _SEGMENT, _NAME, _DATA_LOCATION = (
    F.TENSOR_DIMS, F.TENSOR_DATA_TYPE, F.TENSOR_SEGMENT, F.TENSOR_NAME, F.TENSOR_DATA_LOCATION)
#: The wire types each known field may carry (a packable repeated field: its own or LEN).
#: A known field seen with another wire type sends the tensor to the message path.
_WIRE_TYPES = {f.number: frozenset((WIRE_TYPE[f.kind],) + ((LEN,) if f.repeated and f.kind in PACKABLE else ()))
               for f in _FIELDS.values()}
_INT32_MAX = (1 << 31) - 1
_EXTERNAL_DATA = F.number("TensorProto", "external_data")
_EXTERNAL = enum_spec("TensorProto.DataLocation").values["EXTERNAL"]
_ENTRY_KEY, _ENTRY_VALUE = (F.number("StringStringEntryProto", f) for f in ("key", "value"))


def tensor_header(src, start: int, end: int, depth: int) -> tuple | None:
    """``(name, data_type, dims)`` of the simple TensorProto in ``src[start:end]``, else None.

    ``depth`` is the tensor's nesting depth as the full path would see it (2 for a main
    graph's initializer); it bounds group skipping as there.  See the module docstring.
    """
    found = _header(src, start, end, depth, None)  # declines any data_location but DEFAULT
    return None if found is None else found[:3]


def initializer_header(src, start: int, end: int, depth: int) -> tuple | None:
    """``(name, data_type, dims, entries)`` of a simple TensorProto in ``src[start:end]``
    whose data is in the file (``entries`` None, as `tensor_header`) or external
    (``data_location`` EXTERNAL: ``entries`` its ``external_data`` entries as ``(key,
    value)`` pairs in order), else None.

    Each entry is read as the message path reads a StringStringEntryProto (the last key
    and value win, unknown fields skipped); one with another wire type or invalid UTF-8
    declines the tensor.  What the entries mean is the file layer's to say
    (`irmodel._files.external_data.ExternalDataInfo`).
    """
    entries: list = []
    found = _header(src, start, end, depth, entries)
    if found is None:
        return None
    name, data_type, dims, location = found
    return name, data_type, dims, (entries if location == _EXTERNAL else None)


def _header(src, start: int, end: int, depth: int, entries: list | None) -> tuple | None:
    """``(name, data_type, dims, data_location)`` of a TensorProto without segments, else
    None; with ``entries`` a list, its external_data entries are read into it and an
    EXTERNAL data_location is answered, else any data_location but DEFAULT declines."""
    name = ""
    data_type = 0
    dims: list = []
    location = 0
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
                if a and (entries is None or a != _EXTERNAL):  # a value this reader does not know
                    return None
                location = a
            elif number == _EXTERNAL_DATA and entries is not None:
                entry = _entry(src, a, pos, depth + 1)
                if entry is None:
                    return None
                entries.append(entry)
            elif number == _SEGMENT:
                return None
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    if pos != end:
        return None
    return name, data_type, dims, location


def _entry(src, start: int, end: int, depth: int) -> tuple | None:
    """``(key, value)`` of the StringStringEntryProto in ``src[start:end]``, else None;
    raises DecodeError, IndexError or UnicodeDecodeError for the caller to decline."""
    key = value = ""
    pos = start
    while pos < end:
        number, wt, a, pos = _field(src, pos, end, depth)
        if number == _ENTRY_KEY or number == _ENTRY_VALUE:
            if wt != LEN:
                return None
            if number == _ENTRY_KEY:
                key = src[a:pos].decode()
            else:
                value = src[a:pos].decode()
    return key, value


# -- the checker's key -----------------------------------------------------------------------

# TensorProto's fields an initializer of weights usually has (anything else: declined).
_DIMS_PACKED, _DIMS_ONE, _DATA_TYPE_TAG, _NAME_TAG, _RAW_DATA_TAG = (
    F.TENSOR_DIMS_PACKED_TAG, F.TENSOR_DIMS_ONE_TAG, F.TENSOR_DATA_TYPE_TAG, F.TENSOR_NAME_TAG, F.TENSOR_RAW_DATA_TAG)
#: The 6-bit types (FLOAT6E2M3, FLOAT6E3M2): the checker's tensor rules read the padding
#: bits in the last byte of their raw_data (`irmodel.checker.tensor`).
_FLOAT6 = frozenset(code for code, bits in ELEM_BITS.items() if bits == 6)


def tensor_kind(src, pos: int, end: int, named: bool = True) -> tuple | None:
    """``(name, kind key)`` of the TensorProto in ``src[pos:end]``, or None.

    Read only when it holds nothing but dims, data_type, one UTF-8 name (non-empty when
    ``named``: an initializer's; an attribute's tensor, ``named=False``, may have none,
    its name is then None) and raw_data.  The key is every field but the name, in wire
    order, with raw_data by its length: all that the tensor rules read (they never read
    the weights).  Packed dims are in the key as their bytes, not decoded here:
    `dims_well_formed` is asked once per key.  A FLOAT6 tensor is declined: its rules
    read the last byte of raw_data (the padding bits), which the key does not hold.
    """
    name = None
    key = []
    try:
        while pos < end:
            tag = src[pos]
            if tag == _DIMS_ONE or tag == _DATA_TYPE_TAG:
                value = src[pos + 1]
                if value < 128:
                    pos += 2
                else:
                    value, pos = read_varint(src, pos + 1, end)
                if value in _FLOAT6 and tag == _DATA_TYPE_TAG:
                    return None
                key.append((tag, value))
                continue
            if tag != _DIMS_PACKED and tag != _NAME_TAG and tag != _RAW_DATA_TAG:
                return None
            n = src[pos + 1]
            if n < 128:
                a = pos + 2
            else:
                n, a = read_short_varint(src, pos + 1, end)
            pos = a + n
            if pos > end:
                return None
            if tag == _RAW_DATA_TAG:
                key.append((tag, n))
            elif tag == _NAME_TAG:
                if name is not None:
                    return None
                name = src[a:pos].decode()
            else:
                key.append((tag, src[a:pos]))
    except (DecodeError, IndexError, UnicodeDecodeError):
        return None
    if pos != end or (named and not name):
        return None
    return name, tuple(key)


def dims_well_formed(key: tuple) -> bool:
    """The packed dims runs of a `tensor_kind` key decode (as protobuf decodes them).

    Asked before the full path checks the first tensor of a key, so that a malformed run
    sends the tensor to the full path, which reports it where the reference would.
    """
    try:
        for tag, value in key:
            if tag == _DIMS_PACKED:
                unpack_varints(INT64, value, 0, len(value))
    except DecodeError:
        return False
    return True


# -- inference's seeding ---------------------------------------------------------------------


class InitializerHead:
    """An initializer's name and the bytes of its dims and data_type fields (`initializer_head`)."""

    __slots__ = ("name", "dims_bytes", "type_bytes")

    def __init__(self, name: str, dims_bytes: bytes, type_bytes: bytes | None):
        self.name = name
        self.dims_bytes = dims_bytes
        self.type_bytes = type_bytes


def initializer_heads(src, spans: list):
    """Per item of ``spans`` (start, end, ... of TensorProtos in ``src``), in order: the
    `InitializerHead` of a tensor laid out as exporters write it,

        dims (each a varint of 1 to 10 bytes), data_type (one byte), name (a length of one
        byte, UTF-8), then raw_data to its end or nothing,

    read by one match of the ``initializer-head`` pattern (`patterns`), or None (another
    field, packed dims, a name not UTF-8, raw_data not ending the tensor).  The raw_data's
    tag and length are read, never its bytes: a weight's pages stay untouched.  Equal dims
    and data_type bytes decode alike.  (One loop, no call per item: a graph has thousands.)
    """
    raw_tag = _RAW_DATA_TAG
    ends = spans[1::2]
    matches = map(compiled("initializer-head").match, repeat(src), spans[0::2], ends)
    for i, m in enumerate(matches):
        if m is None:
            declined("initializer-head", i, "not dims, data_type and a short name, in that order")
            yield None
            continue
        end = ends[i]
        pos = m.end()
        if pos != end:  # then one raw_data field reaching exactly the end
            ok = False
            if src[pos] == raw_tag and pos + 1 < end:
                n = src[pos + 1]
                a = pos + 2
                if n > 127:
                    try:
                        n, a = read_varint(src, pos + 1, end)
                    except DecodeError:
                        n = -1
                ok = n >= 0 and a + n == end
            if not ok:
                declined("initializer-head", i, "a field after the name other than raw_data to the end")
                yield None
                continue
        dims_bytes, type_bytes, name_field = m.group(1, 2, 3)
        try:
            name = name_field[1:].decode()
        except UnicodeDecodeError:
            declined("initializer-head", i, "a name that is not UTF-8")
            yield None
            continue
        yield InitializerHead(name, dims_bytes, type_bytes)


# -- inference's constants -------------------------------------------------------------------


class TensorValues:
    """What a small constant's values are read from (`tensor_values`): its dims, data_type
    (None: absent), int64_data, and the span of its raw_data (None: absent)."""

    __slots__ = ("dims", "data_type", "int64_data", "raw")

    def __init__(self, dims: list, data_type: int | None, int64_data: list, raw: tuple | None):
        self.dims = dims
        self.data_type = data_type
        self.int64_data = int64_data
        self.raw = raw


_TO_SIGNED = 1 << 64
_INT64_DATA, _RAW_DATA, _DOC_STRING = F.TENSOR_INT64_DATA, F.TENSOR_RAW_DATA, F.TENSOR_DOC_STRING


def tensor_values(buf, pos: int, end: int, int64_data: bool) -> TensorValues | None:
    """The `TensorValues` of a well-formed TensorProto in ``buf[pos:end]`` that has no field
    but dims, data_type, raw_data, name, doc_string and (if ``int64_data``) int64_data; else
    None.  Values are as protobuf reads them (int64s signed)."""
    dims: list = []
    data_type = None
    typed: list = []
    raw = None
    try:
        while pos < end:
            key = buf[pos]  # one-byte varints (every tag and length here, most values) inline
            if key < 0x80:
                pos += 1
            else:
                key, pos = read_varint(buf, pos, end)
            number = key >> 3
            wire = key & 7
            if pos >= end:
                return None
            v = buf[pos]
            if v < 0x80:
                pos += 1
            else:
                v, pos = read_varint(buf, pos, end)
            if wire == VARINT:
                if number == _DIMS:
                    dims.append(v - _TO_SIGNED if v >> 63 else v)
                elif number == _DATA_TYPE:
                    data_type = v
                elif number == _INT64_DATA and int64_data:
                    typed.append(v - _TO_SIGNED if v >> 63 else v)
                else:
                    return None
            elif wire == LEN:
                stop = pos + v
                if stop > end:
                    return None
                if number == _RAW_DATA:
                    raw = (pos, stop)
                elif number == _DIMS or (number == _INT64_DATA and int64_data):
                    into = dims if number == _DIMS else typed
                    while pos < stop:
                        v = buf[pos]
                        if v < 0x80:
                            pos += 1
                        else:
                            v, pos = read_varint(buf, pos, stop)
                        into.append(v - _TO_SIGNED if v >> 63 else v)
                    if pos != stop:
                        return None
                elif number != _NAME and number != _DOC_STRING:
                    return None
                pos = stop
            else:
                return None
    except DecodeError:
        return None
    return TensorValues(dims, data_type, typed, raw)


def unnamed_bytes(data: bytes) -> bytes | None:
    """A TensorProto's bytes ``data`` without its ``name`` fields (its value does not depend
    on its name), or None (a group, or not well formed)."""
    end = len(data)
    parts = [b"wire"]
    pos = 0
    try:
        while pos < end:
            f, after = read_field(data, pos, end)
            if f.wire_type == SGROUP:
                return None
            if f.number != _NAME or f.wire_type != LEN:
                parts.append(data[pos:after])
            pos = after
    except DecodeError:
        return None
    return b"".join(parts)
