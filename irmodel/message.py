"""Lazy, copy-on-write protobuf messages built from wirefmt schema tables.

How a message works:

* It is created over a span of a buffer and *scans that span once, at creation* (which
  is when its parent first hands it out).  The scan decodes scalars and strings straight
  into the instance ``__dict__``, so reading ``node.op_type`` afterwards is a plain
  attribute lookup.  Submessages and packed numeric arrays are not decoded: their spans
  wait in ``_lazy`` until first access, so opening a model touches only its top level.
* Absent singular scalars read as their default through class attributes.
* ``bytes`` fields are read-only ``memoryview`` slices of the buffer (zero-copy).
* ``_start``/``_end`` is the span whose bytes are still exactly this message.  Any
  modification walks up the parent chain setting ``_start = -1``; the encoder copies
  every message whose span is still valid and re-encodes only the rest.
* Items of repeated message fields are held weakly by their sequence until they (or
  anything below them) change, then strongly (`RepeatedMessages`): a walk keeps nothing
  alive, and an edited item can never be lost.
* The scan loop of each message type is generated from its schema on first use
  (`scangen`); the generic `_scan` below handles the fields it does not inline.

Private state lives in the instance ``__dict__`` next to the field values (names start
with ``_``) with class-level defaults, because that made creation ~25% cheaper than
slots behind an overridden ``__setattr__`` (measured while designing, see
benchmarks/RESULTS.md).
"""

from __future__ import annotations

import struct

from wirefmt.errors import DecodeError
from wirefmt.limits import MAX_DEPTH
from wirefmt.reader import (convert_varint, float32_nan, iter_fields, read_field, read_length, unpack_fixed,
                            unpack_varints)
from wirefmt.schema import (BOOL, BYTES, DOUBLE, ENUM, FIXED32, FIXED64, FLOAT, I32, I64, INT32,
                            INT64, LEN, MESSAGE, SFIXED32, SFIXED64, STRING, UINT64, VARINT, WIRE_TYPE,
                            FieldSpec, MessageSpec, Registry)
from wirefmt.varint import encode_varint, read_varint, to_int32

from .containers import RepeatedMessages, RepeatedScalars, new_repeated
from .scangen import build_scanner
from . import values as _values

# Scan actions, one per (field shape, wire type) pair, numbered so that the dispatch
# below splits by wire type first: length-delimited actions are < 7, varint actions
# 7..11, the rest after.  The common ONNX fields (strings, submessages, int64s) are
# then reached in at most four comparisons.  Measured: see benchmarks/RESULTS.md.
(A_STR, A_RSTR, A_MSG, A_BYTES, A_RBYTES, A_PACKED, _A_LEN_END,
 A_INT64, A_RVARINT, A_INT32, A_ENUM, A_VARINT,
 A_FIXED, A_RFIXED, A_RENUM) = range(15)
A_RMSG = A_MSG  # repeated submessages: the same action, told apart by `extra` (True)

_list_append = list.append
_new = object.__new__
_FIXED_STRUCT = {FLOAT: "<f", DOUBLE: "<d", FIXED32: "<I", FIXED64: "<Q", SFIXED32: "<i", SFIXED64: "<q"}


def _scan(msg, src, mv, pos: int, end: int) -> None:
    """Decode the top level of ``src[pos:end]`` into ``msg`` (one pass, no recursion).

    The table-driven reference loop: the scanners generated per type (`scangen`) hand it
    every field they do not inline, one field at a time (`_slow`), so each behaviour is
    written once, here.  Still tuned (locals only, one- and two-byte varints inline): a
    message type with many such fields runs mostly through it.  Reads past ``end`` are
    caught once, after the loop (or as IndexError at the end of the buffer), and
    explained precisely by `_explain_overrun`.
    """
    d = msg.__dict__
    tags = msg._tags
    lazy = d.get("_lazy")
    start = pos
    try:
        while pos < end:
            tag_start = pos
            tag = src[pos]
            pos += 1
            if tag > 127:
                b = src[pos]
                if b < 128:
                    tag = (tag & 127) | (b << 7)
                    pos += 1
                else:
                    tag, pos = read_varint(src, tag_start, end)
            ent = tags.get(tag)
            if ent is None:
                # Unknown field, or a known field with an unexpected wire type (protobuf
                # keeps both as unknown fields).  read_field validates and skips it.
                pos = read_field(src, tag_start, end, msg._depth)[1]
                unknown = d.get("_unknown")
                if unknown is None:
                    unknown = d["_unknown"] = []
                unknown.append(tag_start)
                unknown.append(pos)
                continue
            act, name, extra, sibs = ent
            if sibs:
                for s in sibs:
                    d.pop(s, None)
                    if lazy:
                        lazy.pop(s, None)
            if act < _A_LEN_END:
                n = src[pos]
                pos += 1
                if n > 127:
                    b = src[pos]
                    if b < 128:
                        n = (n & 127) | (b << 7)
                        pos += 1
                    else:
                        n, pos = read_varint(src, pos - 1, end)
                e = pos + n
                if e > end:
                    _explain_overrun(src, start, end, msg._depth)
                if act < A_MSG:  # A_STR, A_RSTR
                    s = src[pos:e]
                    try:
                        s = s.decode()
                    except UnicodeDecodeError:
                        # upb hands out invalid UTF-8 in proto2 strings as bytes (so do
                        # we) and refuses it in proto3, where strings must be UTF-8.
                        if msg._spec.syntax == "proto3":
                            raise DecodeError(f"invalid UTF-8 in string field {name!r}", pos) from None
                    if act == A_STR:
                        d[name] = s
                    else:
                        lst = d.get(name)
                        if lst is None:
                            lst = d[name] = new_repeated((), msg, extra)
                        _list_append(lst, s)
                elif act == A_MSG:
                    # Submessage: keep the span, scan on access.  Repeated: the spans go
                    # straight into the field's sequence.  A singular message seen twice
                    # merges its occurrences, as protobuf does.
                    if extra:
                        seq = d.get(name)
                        if seq is None:
                            d[name] = RepeatedMessages(msg, name, msg._classes[name], [pos, e])
                        else:
                            seq._spans.append(pos)
                            seq._spans.append(e)
                        pos = e
                        continue
                    if lazy is None:
                        lazy = d["_lazy"] = {}
                    spans = lazy.get(name)
                    if spans is None:
                        lazy[name] = [pos, e]
                    else:
                        spans.append(pos)
                        spans.append(e)
                elif act == A_BYTES:
                    d[name] = mv[pos:e]
                elif act == A_RBYTES:
                    lst = d.get(name)
                    if lst is None:
                        lst = d[name] = new_repeated((), msg, _values.check_bytes)
                    _list_append(lst, mv[pos:e])
                else:  # A_PACKED
                    lst = d.get(name)
                    if lst is not None:  # unpacked elements came first: keep the order exact
                        kind = extra[0]
                        chunk = (unpack_varints(kind, src, pos, e) if WIRE_TYPE[kind] == VARINT
                                 else unpack_fixed(kind, src, pos, e))
                        list.extend(lst, chunk)
                    else:
                        if lazy is None:
                            lazy = d["_lazy"] = {}
                        spans = lazy.get(name)
                        if spans is None:
                            lazy[name] = [pos, e]
                        else:
                            spans.append(pos)
                            spans.append(e)
                pos = e
            elif act < A_FIXED:  # varint wire type
                v = src[pos]
                pos += 1
                if v > 127:
                    v, pos = read_varint(src, pos - 1, end)
                    big = True
                else:
                    big = False
                if act == A_INT64:
                    if big and v >> 63:
                        v -= 1 << 64
                    d[name] = v
                elif act == A_RVARINT:  # one element of an unpacked repeated scalar
                    kind, check = extra
                    if big:
                        v = convert_varint(kind, v)
                    elif kind == BOOL:
                        v = v != 0
                    elif kind >= 17:  # SINT32/SINT64: zigzag even for one byte
                        v = convert_varint(kind, v)
                    lst = d.get(name)
                    if lst is None:
                        lst = d[name] = new_repeated((), msg, check)
                        if lazy and name in lazy:  # packed chunks came first
                            list.extend(lst, _decode_packed(kind, src, lazy.pop(name)))
                    _list_append(lst, v)
                elif act == A_INT32:
                    if v > 0x7FFFFFFF:
                        v = to_int32(v)
                    d[name] = v
                elif act == A_ENUM:
                    if v > 0x7FFFFFFF:
                        v = to_int32(v)
                    if v in extra:
                        d[name] = v
                    else:  # closed (proto2) enum: an unknown value is kept as an unknown field
                        unknown = d.get("_unknown")
                        if unknown is None:
                            unknown = d["_unknown"] = []
                        unknown.append(tag_start)
                        unknown.append(pos)
                else:  # A_VARINT: uint32/uint64/bool/sint32/sint64
                    d[name] = convert_varint(extra, v)
            elif act == A_FIXED:
                width, unpack = extra
                if end - pos < width:
                    raise DecodeError("truncated fixed-width value", pos)
                v = unpack(src, pos)[0]
                if v != v and width == 4:  # float32 NaN: keep its exact bits
                    v = float32_nan(src, pos)
                d[name] = v
                pos += width
            elif act == A_RFIXED:
                kind, check = extra
                width = 4 if WIRE_TYPE[kind] == I32 else 8
                if end - pos < width:
                    raise DecodeError("truncated fixed-width value", pos)
                v = struct.unpack_from(_FIXED_STRUCT[kind], src, pos)[0]
                if v != v and kind == FLOAT:
                    v = float32_nan(src, pos)
                pos += width
                lst = d.get(name)
                if lst is None:
                    lst = d[name] = new_repeated((), msg, check)
                    if lazy and name in lazy:
                        list.extend(lst, _decode_packed(kind, src, lazy.pop(name)))
                _list_append(lst, v)
            else:  # A_RENUM
                pos = _scan_closed_enum_list(msg, d, src, tag, tag_start, pos, end, name, extra)
        if pos != end:
            _explain_overrun(src, start, end, msg._depth)
    except IndexError:
        _explain_overrun(src, start, end, msg._depth)


def _explain_overrun(src, start: int, end: int, depth: int):
    """The inline fast paths read past the end: say exactly where and why.

    Cold path: re-reads the span with the validating generic reader, whose errors name
    the truncated varint, length or fixed-width value.
    """
    for _ in iter_fields(src, start, end, depth):
        pass
    raise DecodeError("the last field runs past the end of the message", end)


def _scan_closed_enum_list(msg, d, src, tag, tag_start, pos, end, name, extra) -> int:
    """A repeated closed enum (packed or not): unknown values become unknown fields.

    protobuf moves each unknown value of a closed enum to the unknown fields as a varint
    field of its own, even out of a packed run, so these are decoded eagerly (never lazily)
    to keep the unknown fields in input order.  No ONNX field takes this path.
    """
    values, check = extra
    number = tag >> 3
    if tag & 7 == LEN:
        n, pos = read_length(src, pos, end)
        e = pos + n
        raws = unpack_varints(UINT64, src, pos, e)  # raw: upb writes unknowns back unchanged
        pos = e
    else:
        raw, pos = read_varint(src, pos, end)
        raws = [raw]
    lst = d.get(name)
    for raw in raws:
        v = to_int32(raw)
        if v in values:
            if lst is None:
                lst = d[name] = new_repeated((), msg, check)
            _list_append(lst, v)
        else:
            unknown = d.get("_unknown")
            if unknown is None:
                unknown = d["_unknown"] = []
            if tag & 7 == LEN:  # synthetic field: bytes entry, paired with None
                unknown.append(encode_varint(number << 3) + encode_varint(raw))
                unknown.append(None)
            else:
                unknown.append(tag_start)
                unknown.append(pos)
    return pos


def _with_path(m, exc: DecodeError):
    if exc.path is None:
        exc.path = m._path()
    return exc


def _slow(m, src, mv, pos: int, end: int) -> int:
    """One field at ``pos`` through the generic loop: the cold path of generated scanners."""
    try:
        e = read_field(src, pos, end, m._depth)[1]
        _scan(m, src, mv, pos, e)
    except DecodeError as exc:
        raise _with_path(m, exc)
    return e


def _overrun(m, src, start: int, end: int):
    try:
        _explain_overrun(src, start, end, m._depth)
    except DecodeError as exc:
        raise _with_path(m, exc)


def _too_deep(m, start: int):
    raise _with_path(m, DecodeError(f"nesting deeper than {MAX_DEPTH}", start))


_SCANNER_HELPERS = {
    "new": _new, "MAX_DEPTH": MAX_DEPTH, "too_deep": _too_deep, "slow": _slow, "overrun": _overrun,
    "read_varint": read_varint, "to_int32": to_int32, "float32_nan": float32_nan,
    "unpack_float": struct.Struct("<f").unpack_from, "StructError": struct.error,
    "RS": RepeatedScalars, "RM": RepeatedMessages, "append": list.append, "DecodeError": DecodeError, "with_path": _with_path,
}


def _decode_packed(kind: int, src, spans) -> list:
    out: list = []
    varint = WIRE_TYPE[kind] == VARINT
    for i in range(0, len(spans), 2):
        a, b = spans[i], spans[i + 1]
        out.extend(unpack_varints(kind, src, a, b) if varint else unpack_fixed(kind, src, a, b))
    return out


class Message:
    """Base of every generated message class.  See the module docstring."""

    # Class-level defaults of the private state; instances override them in __dict__.
    _buf = None  # (src, memoryview) of the buffer this message was read from
    _start = -1  # span of this message's bytes while they are still exact; -1 otherwise
    _end = -1
    _parent = None
    _key = None  # field name in the parent
    _idx = -1  # >= 0: index of a clean item its repeated field holds weakly, to pin on
    # first modification; -1: held strongly (or singular); -2: a default not yet attached
    _depth = 0
    _lazy = None  # field name -> flat [start, end, ...] spans not decoded yet
    _unknown = None  # flat [start, end, ...] spans of unknown fields, in input order;
    # a synthetic field (bytes) stands where a start would, paired with None

    # Set per generated class.
    _spec: MessageSpec
    _registry: Registry
    _tags: dict
    _fields: dict  # name -> FieldSpec
    _checks: dict  # name -> value validator
    _implicit: frozenset  # proto3 fields without presence: written only when not default
    _classes: dict  # name -> message class, for message fields
    _type_name: str

    def __init__(self, **fields):
        for name, value in fields.items():
            if name not in self._fields:
                raise TypeError(f"{self._type_name} has no field {name!r}")
            setattr(self, name, value)

    # -- creation over a buffer ------------------------------------------------------
    @classmethod
    def _from_buffer(cls, src, mv, start: int, end: int):
        """The root message over ``src[start:end]``."""
        m = _new(cls)
        d = m.__dict__
        d["_buf"] = (src, mv)
        d["_start"] = start
        d["_end"] = end
        cls._scan_into(m, src, mv, start, end)
        return m

    @classmethod
    def _from_span(cls, parent, start: int, end: int, key: str, idx: int = -1):
        """A child of ``parent`` over one span; scanned now (first access)."""
        return cls._make_child(cls, parent, start, end, key)

    @classmethod
    def _from_spans(cls, parent, spans, key: str):
        """A singular child that occurred once or more; occurrences merge in order."""
        if len(spans) == 2:
            return cls._from_span(parent, spans[0], spans[1], key, -1)
        m = cls._from_span(parent, spans[0], spans[1], key, -1)
        src, mv = m._buf
        try:
            for i in range(2, len(spans), 2):
                cls._scan_into(m, src, mv, spans[i], spans[i + 1])
        except DecodeError as exc:
            if exc.path is None:
                exc.path = m._path()
            raise
        # Merged occurrences are not one span any more: re-encode if written.
        m.__dict__["_start"] = -1
        return m

    # -- lazy fields -------------------------------------------------------------------
    # No __getattr__: every field has a class attribute (a default value or a
    # `_LazyField`).  Defining one would route *every* attribute read through CPython's
    # slow getattr hook and disable its attribute-access specialisation: it cost 20% of a
    # full walk's instructions (benchmarks/RESULTS.md, decoder tuning).

    def _raw_chunks(self, name: str):
        """Packed chunks of a repeated numeric field not decoded yet, as memoryviews.

        Lets the tensor layer view ``float_data`` & co. straight from the buffer instead of
        building a Python list.  ``None`` when the field was decoded (or set) already.
        """
        lazy = self.__dict__.get("_lazy")
        spans = lazy.get(name) if lazy else None
        if spans is None or self._fields[name].kind == MESSAGE:
            return None
        mv = self._buf[1]
        return [mv[spans[i]:spans[i + 1]] for i in range(0, len(spans), 2)]

    def _root(self):
        m = self
        while m._parent is not None:
            m = m._parent
        return m

    # -- modification ------------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        f = self._fields.get(name)
        d = self.__dict__
        if f is None:
            if name[:1] == "_":
                d[name] = value
                return
            raise AttributeError(f"{self._type_name} has no field {name!r}")
        if f.repeated:
            if f.kind == MESSAGE:
                seq = RepeatedMessages(self, name, self._classes[name])
                seq.extend(value)
                value = seq
            else:
                check = self._checks[name]
                value = new_repeated([check(v) for v in value], self, check)
        elif f.kind == MESSAGE:
            if not isinstance(value, self._classes[name]):
                raise TypeError(f"{self._type_name}.{name} must be a {self._classes[name].__name__}, "
                                f"not {type(value).__name__}")
            value._adopt(self, name)
        else:
            value = self._checks[name](value)
        self._clear_oneof_siblings(f)
        lazy = d.get("_lazy")
        if lazy:
            lazy.pop(name, None)
        d[name] = value
        self._touch()

    def __delattr__(self, name: str) -> None:
        self.ClearField(name)

    def _clear_oneof_siblings(self, f: FieldSpec) -> None:
        if f.oneof:
            d = self.__dict__
            lazy = d.get("_lazy")
            for other in self._spec.oneofs[f.oneof]:
                if other != f.name:
                    d.pop(other, None)
                    if lazy:
                        lazy.pop(other, None)

    def _adopt(self, parent, key: str) -> None:
        """Attach this message below ``parent`` (assignment or append)."""
        d = self.__dict__
        d["_parent"] = parent
        d["_key"] = key
        d["_idx"] = -1
        self._set_depth(parent._depth + 1)

    def _set_depth(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ValueError(f"nesting deeper than {MAX_DEPTH}")
        self.__dict__["_depth"] = depth

    def _touch(self) -> None:
        """Mark this message and every ancestor as changed: their original bytes are stale.

        Walks all the way up (depth is small): a merged submessage starts with no valid
        span while its parent's bytes are still exact, so stopping early would be wrong.
        """
        m = self
        while m is not None:
            d = m.__dict__
            idx = d.get("_idx", -1)
            if idx != -1:
                d["_idx"] = -1
                parent = m._parent
                if idx == -2:  # a default submessage: becomes present in its parent
                    parent._clear_oneof_siblings(parent._fields[m._key])
                    parent.__dict__[m._key] = m
                else:  # a weakly held item of a repeated field: its parent keeps it now
                    seq = parent.__dict__.get(m._key)
                    if isinstance(seq, RepeatedMessages):
                        seq._pin(idx, m)
            d["_start"] = -1
            m = d.get("_parent")

    # -- protobuf-style API --------------------------------------------------------------
    def HasField(self, name: str) -> bool:
        f = self._fields.get(name)
        if f is None:
            oneof = self._spec.oneofs.get(name)
            if oneof is not None:
                return self.WhichOneof(name) is not None
            raise ValueError(f"{self._type_name} has no field {name!r}")
        if f.repeated:
            raise ValueError(f"HasField does not apply to repeated field {name!r}")
        if name in self._implicit:
            raise ValueError(f"field {name!r} of {self._type_name} has no presence (proto3)")
        return self._present(f)

    def _present(self, f: FieldSpec) -> bool:
        """Presence as serialization sees it: explicit presence, or a non-default value."""
        name = f.name
        d = self.__dict__
        lazy = d.get("_lazy")
        if lazy and name in lazy:
            return True
        v = d.get(name)
        if v is None:
            return False
        if f.kind == MESSAGE:
            return v._idx != -2
        if name in self._implicit:
            return not _is_default(v)
        return True

    def WhichOneof(self, group: str):
        members = self._spec.oneofs.get(group)
        if members is None:
            raise ValueError(f"{self._type_name} has no oneof {group!r}")
        for name in members:
            if self._present(self._fields[name]):
                return name
        return None

    def ClearField(self, name: str) -> None:
        if name not in self._fields:
            raise ValueError(f"{self._type_name} has no field {name!r}")
        d = self.__dict__
        lazy = d.get("_lazy")
        had = d.pop(name, None) is not None
        if lazy and lazy.pop(name, None) is not None:
            had = True
        if had:
            self._touch()

    def ListFields(self) -> list:
        """``(FieldSpec, value)`` for every present field, in field-number order."""
        out = []
        for f in self._spec.fields:
            if f.repeated:
                if self._has_any(f.name):
                    v = getattr(self, f.name)
                    if len(v):
                        out.append((f, v))
            elif self._present(f):
                out.append((f, getattr(self, f.name)))
        return out

    def _has_any(self, name: str) -> bool:
        d = self.__dict__
        if name in d:
            return True
        lazy = d.get("_lazy")
        return bool(lazy) and name in lazy

    def Clear(self) -> None:
        for f in self._spec.fields:
            self.__dict__.pop(f.name, None)
        self.__dict__.pop("_lazy", None)
        self.__dict__.pop("_unknown", None)
        self._touch()

    def CopyFrom(self, other) -> None:
        if type(other) is not type(self):
            raise TypeError(f"CopyFrom needs a {self._type_name}")
        if other is self:
            return
        from .codec import dumps_message  # noqa: PLC0415 (the encoder sits beside us)
        self.Clear()
        data = dumps_message(other)
        fresh = type(self)._from_buffer(data, memoryview(data), 0, len(data))
        for k, v in fresh.__dict__.items():
            if not k.startswith("_") or k in ("_lazy", "_unknown"):
                if isinstance(v, (RepeatedScalars,)):
                    v._owner = self
                elif isinstance(v, RepeatedMessages):
                    v._owner = self
                elif isinstance(v, Message):
                    v.__dict__["_parent"] = self
                self.__dict__[k] = v
        self.__dict__["_buf"] = fresh._buf
        self._touch()

    def MergeFrom(self, other) -> None:
        if type(other) is not type(self):
            raise TypeError(f"MergeFrom needs a {self._type_name}")
        from .codec import dumps_message  # noqa: PLC0415
        data = dumps_message(self) + dumps_message(other)
        self.Clear()
        self.CopyFrom(type(self)._from_buffer(data, memoryview(data), 0, len(data)))

    def SerializeToString(self) -> bytes:
        from .codec import dumps_message  # noqa: PLC0415
        return dumps_message(self)

    def ParseFromString(self, data) -> None:
        data = bytes(data)
        self.CopyFrom(type(self)._from_buffer(data, memoryview(data), 0, len(data)))

    @classmethod
    def FromString(cls, data):
        data = bytes(data)
        return cls._from_buffer(data, memoryview(data), 0, len(data))

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        from .codec import dumps_message  # noqa: PLC0415
        return dumps_message(self) == dumps_message(other)

    __hash__ = None  # mutable, like protobuf messages

    def _path(self) -> str:
        """``ModelProto.graph.node[3].attribute[0]``: for error messages (cold path)."""
        parts = []
        m = self
        while m._parent is not None:
            parts.append(f".{m._key}{m._index_text()}")
            m = m._parent
        parts.append(m._type_name)
        return "".join(reversed(parts))

    def _index_text(self) -> str:
        parent = self._parent
        f = parent._fields.get(self._key)
        if f is None or not f.repeated:
            return ""
        idx = self.__dict__.get("_idx", -1)
        if idx >= 0:
            return f"[{idx}]"
        seq = parent.__dict__.get(self._key)
        if isinstance(seq, RepeatedMessages):
            i = seq._index_of(self)
            if i >= 0:
                return f"[{i}]"
        return "[?]"

    def __repr__(self) -> str:
        """Short by design: a few scalar fields, counts of repeated ones, never data."""
        parts = []
        for f in self._spec.fields:
            if len(parts) >= 6:
                parts.append("...")
                break
            if f.repeated:
                if self._has_any(f.name):
                    parts.append(f"{f.name}=<{len(getattr(self, f.name))}>")
            elif self._present(f):
                if f.kind == MESSAGE:
                    parts.append(f"{f.name}=<{self._classes[f.name].__name__}>")
                elif f.kind == BYTES:
                    parts.append(f"{f.name}=<{len(getattr(self, f.name))} bytes>")
                else:
                    v = getattr(self, f.name)
                    if isinstance(v, str) and len(v) > 40:
                        v = v[:37] + "..."
                    parts.append(f"{f.name}={v!r}")
        return f"{self._type_name}({', '.join(parts)})"




class _LazyField:
    """Class attribute of a message field (singular or repeated): materialises it on first read.

    A non-data descriptor: once the value is stored in the instance dict, reads find it
    there and never come here again.  Measured against ``__getattr__``: the failed
    lookup that precedes ``__getattr__`` formats an AttributeError message each time,
    which cost more than the materialisation itself.
    """

    __slots__ = ("name", "field", "repeated", "check")

    def __init__(self, f: FieldSpec, check=None):
        self.name = f.name
        self.field = f
        self.repeated = f.repeated
        self.check = check

    def __get__(self, msg, owner=None):
        if msg is None:
            return self
        name = self.name
        d = msg.__dict__
        lazy = d.get("_lazy")
        spans = lazy.pop(name, None) if lazy else None
        cls = msg._classes[name]
        if self.repeated:  # absent: a scan puts a present one straight into the dict
            value = RepeatedMessages(msg, name, cls, spans)
        elif spans is not None:
            value = cls._from_spans(msg, spans, name)
        else:  # absent: a default that attaches itself when first modified
            value = cls()
            vd = value.__dict__
            vd["_parent"] = msg
            vd["_key"] = name
            vd["_idx"] = -2
            vd["_depth"] = msg._depth + 1
        d[name] = value
        return value


class _LazyScalars(_LazyField):
    """Class attribute of a repeated scalar field, with the absent case first and inline.

    A full walk reads three absent repeated fields per attribute (``ints``, ``floats``,
    ``strings``), so that path is kept to a handful of bytecodes.  Packed chunks that a
    scan left undecoded in ``_lazy`` are decoded here.
    """

    __slots__ = ()

    def __get__(self, msg, owner=None):
        if msg is None:
            return self
        d = msg.__dict__
        value = RepeatedScalars()
        value._owner = msg
        value._check = self.check
        lazy = d.get("_lazy")
        if lazy and self.name in lazy:
            try:
                list.extend(value, _decode_packed(self.field.kind, msg._buf[0], lazy.pop(self.name)))
            except DecodeError as exc:
                exc.path = f"{msg._path()}.{self.name}"
                raise
        d[self.name] = value
        return value


def _is_default(v) -> bool:
    """proto3 implicit presence: zero, empty, False; -0.0 counts as set (its bits are not 0)."""
    if isinstance(v, float):
        return v == 0.0 and str(v)[0] != "-"
    return not v


def _tag_table(spec: MessageSpec, registry: Registry, checks: dict) -> dict:
    """tag -> (action, name, extra, oneof siblings) for every tag the scan decodes inline."""
    table = {}
    for f in spec.fields:
        sibs = tuple(n for n in spec.oneofs[f.oneof] if n != f.name) if f.oneof else ()
        wt = WIRE_TYPE[f.kind]
        key = f.number << 3
        if f.kind == MESSAGE:
            table[key | LEN] = (A_RMSG if f.repeated else A_MSG, f.name, f.repeated, sibs)
        elif f.kind == STRING:
            table[key | LEN] = (A_RSTR if f.repeated else A_STR, f.name, checks[f.name], sibs)
        elif f.kind == BYTES:
            table[key | LEN] = (A_RBYTES if f.repeated else A_BYTES, f.name, None, sibs)
        elif f.repeated and f.kind == ENUM and registry.enum(f.type_name).closed:
            values = frozenset(registry.enum(f.type_name).values.values())
            table[key | VARINT] = (A_RENUM, f.name, (values, checks[f.name]), sibs)
            table[key | LEN] = (A_RENUM, f.name, (values, checks[f.name]), sibs)
        elif f.repeated:
            rep = A_RVARINT if wt == VARINT else A_RFIXED
            table[key | wt] = (rep, f.name, (f.kind, checks[f.name]), sibs)
            table[key | LEN] = (A_PACKED, f.name, (f.kind,), sibs)
        elif f.kind == ENUM and registry.enum(f.type_name).closed:
            values = frozenset(registry.enum(f.type_name).values.values())
            table[key | wt] = (A_ENUM, f.name, values, sibs)
        elif f.kind == ENUM:  # open (proto3) enum: any int32 value is kept as it is
            table[key | wt] = (A_INT32, f.name, None, sibs)
        elif f.kind == INT64:
            table[key | wt] = (A_INT64, f.name, None, sibs)
        elif f.kind == INT32:
            table[key | wt] = (A_INT32, f.name, None, sibs)
        elif wt == VARINT:
            table[key | wt] = (A_VARINT, f.name, f.kind, sibs)
        elif wt in (I32, I64):
            s = struct.Struct(_FIXED_STRUCT[f.kind])
            table[key | wt] = (A_FIXED, f.name, (s.size, s.unpack_from), sibs)
        # GROUP fields (none in ONNX) are kept as unknown fields.
    return table


def build_classes(registry: Registry) -> dict:
    """Create one Message subclass per message spec in ``registry``."""
    classes: dict = {}
    for name, spec in registry.messages.items():
        checks = {f.name: _values.checker(f, registry) for f in spec.fields if f.kind != MESSAGE}
        ns = {
            "_spec": spec,
            "_registry": registry,
            "_type_name": name,
            "_fields": dict(spec.by_name),
            "_checks": checks,
            "_tags": _tag_table(spec, registry, checks),
            "_classes": {},
            "_implicit": frozenset(f.name for f in spec.fields
                                   if not f.repeated and not spec.has_presence(f)),
            "__module__": "irmodel",
            "__qualname__": name,
            "__doc__": f"The ONNX message ``{name}`` (lazy, copy-on-write).",
        }
        for f in spec.fields:
            if not f.repeated and f.kind != MESSAGE:
                ns[f.name] = _values.default(f, registry)
            else:
                lazy_type = _LazyField if f.kind == MESSAGE else _LazyScalars
                ns[f.name] = lazy_type(f, checks.get(f.name))
        classes[name] = type(name.replace(".", "_"), (Message,), ns)
    for name, cls in classes.items():
        for f in cls._spec.fields:
            if f.kind == MESSAGE:
                cls._classes[f.name] = classes[f.type_name]
        # Scanners are generated on first use: compiling them all would cost every
        # `import irmodel` ~0.1 s for message types most programs never read.
        cls._make_child = staticmethod(_first_make_child)
        cls._scan_into = staticmethod(_first_scan_into)
    return classes


def _first_make_child(cls, parent, start: int, end: int, key: str, idx: int = -1):
    # A caller may hold this stub in a local across many calls: generate only once.
    if cls.__dict__["_make_child"].__func__ is _first_make_child:
        cls._make_child = staticmethod(build_scanner(cls, cls._registry, _SCANNER_HELPERS, "make_child"))
    return cls._make_child(cls, parent, start, end, key, idx)


def _first_scan_into(msg, src, mv, pos: int, end: int) -> None:
    cls = type(msg)
    if cls.__dict__["_scan_into"].__func__ is _first_scan_into:
        cls._scan_into = staticmethod(build_scanner(cls, cls._registry, _SCANNER_HELPERS, "scan"))
    cls._scan_into(msg, src, mv, pos, end)
