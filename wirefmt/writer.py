"""Canonical encoding of field values, and a writer that streams parts to a file.

Canonical means what protobuf's own serializer emits: negative int32/int64/enum values as
10-byte varints, floats little-endian, packed repeated scalars as one length-delimited
field, fields in field-number order (the caller's job: it walks the schema in order).
"""

from __future__ import annotations

import struct
from typing import Any, BinaryIO, Callable, Iterable

from .errors import EncodeError
from .reader import Float32NaN
from .schema import (BOOL, ENUM, FIXED_FORMAT, FLOAT, INT32, INT64, LEN, SINT32, SINT64, STRING, UINT32,
                     UINT64, VARINT, WIRE_TYPE)
from .varint import MASK64, encode_varint, zigzag_encode

_FIXED_STRUCTS = {k: struct.Struct(fmt) for k, fmt in FIXED_FORMAT.items()}
_U32 = struct.Struct("<I")

#: ``copier(mv, start, length) -> copied``: moves ``mv[start:start + length]`` into the
#: writer's file itself (after the writer has flushed everything before it) and says how
#: many bytes it managed from the front (0: "not here").  The writer writes the rest.
SpanCopier = Callable[[memoryview, int, int], int]


def tag(number: int, wire_type: int) -> bytes:
    return encode_varint(number << 3 | wire_type)


def _varint_of(kind: int, v) -> int:
    if kind == SINT32 or kind == SINT64:
        return zigzag_encode(v)
    if kind == BOOL:
        return 1 if v else 0
    if v < 0:
        if kind in (UINT32, UINT64):
            raise EncodeError(f"negative value {v} for an unsigned field")
        return v & MASK64  # int32/int64/enum: sign-extended to 64 bits, as protobuf writes
    return v


def encode_scalar(kind: int, v: Any) -> bytes:
    """The value part of one field (no tag)."""
    wt = WIRE_TYPE[kind]
    if wt == VARINT:
        return encode_varint(_varint_of(kind, v))
    if wt == LEN:
        if kind == STRING and isinstance(v, str):
            v = v.encode()
        return encode_varint(len(v)) + bytes(v)
    if kind == FLOAT and type(v) is Float32NaN:
        return _U32.pack(v.bits)
    try:
        return _FIXED_STRUCTS[kind].pack(v)
    except struct.error as exc:
        raise EncodeError(f"cannot encode {v!r} as {FIXED_FORMAT[kind][1]}: {exc}") from None


def encode_packed_body(kind: int, values: Iterable) -> bytes:
    """The concatenated values of a packed field, without tag or length."""
    wt = WIRE_TYPE[kind]
    if wt == VARINT:
        if kind in (INT64, INT32, ENUM, UINT64, UINT32):
            return b"".join([encode_varint(v if v >= 0 else v & MASK64) for v in values])
        return b"".join([encode_varint(_varint_of(kind, v)) for v in values])
    values = list(values)
    if kind == FLOAT and any(type(v) is Float32NaN for v in values):
        return b"".join([encode_scalar(FLOAT, v) for v in values])
    try:
        return struct.pack("<%d%s" % (len(values), FIXED_FORMAT[kind][1]), *values)
    except struct.error as exc:
        raise EncodeError(f"cannot encode packed {FIXED_FORMAT[kind][1]}: {exc}") from None


class StreamWriter:
    """Collects output parts and writes them to ``fileobj``, coalescing small ones.

    Large parts (memoryviews over an mmap, typically tensor data) go straight to the
    file so that an output larger than memory never exists as one object.  Opens no
    files: runs of a source buffer can be handed to a caller's copier (`copy_span`).
    """

    COALESCE = 1 << 20  # flush the small-part buffer once it holds 1 MiB
    #: Large parts are written in slices this long (of a memoryview: no copy), so that a
    #: progress callback moves during them and no single write() is gigabytes long.
    WRITE_STEP = 1 << 24
    #: With a progress callback, copies go in steps this long, for the same reason.
    PROGRESS_COPY_STEP = 1 << 28

    def __init__(self, fileobj: BinaryIO, *, progress: Callable[[int], None] | None = None) -> None:
        """``progress(n)`` is called with the bytes that have reached the file object so far."""
        self._f = fileobj
        self._progress = progress
        self._pending = bytearray()
        self.written = 0  # bytes accepted, including those still pending
        self._reported = 0

    def write(self, part: bytes | bytearray | memoryview) -> None:
        n = len(part)
        self.written += n
        if n >= 65536:
            if self._pending:
                self._put(self._pending)
                self._pending = bytearray()
            if n <= self.WRITE_STEP:
                self._put(part)
            else:
                mv = memoryview(part).cast("B")
                for a in range(0, n, self.WRITE_STEP):
                    self._put(mv[a:a + self.WRITE_STEP])
            return
        self._pending += part
        if len(self._pending) >= self.COALESCE:
            self._put(self._pending)
            self._pending = bytearray()

    def _put(self, part) -> None:
        self._f.write(part)
        if self._progress is not None:
            self._reported += len(part)
            self._progress(self._reported)

    def flush(self) -> None:
        if self._pending:
            self._put(self._pending)
            self._pending = bytearray()

    def copy_span(self, mv: memoryview, start: int, length: int, copier: SpanCopier | None = None) -> None:
        """Append ``mv[start:start + length]``, through ``copier`` where it can.

        Why a copier: an unchanged 1.5 GB initializer written from an mmap makes every
        page of it resident in this process; whoever owns the mapped file can move the
        bytes file-to-file in the kernel instead.  Before each call everything written so
        far is flushed to the file object and the file object itself flushed, so the
        copier may write at the file's descriptor position.  What it does not copy is
        written from ``mv``.
        """
        done = 0
        if copier is not None and length:
            self.flush()
            flush = getattr(self._f, "flush", None)
            if flush is not None:
                flush()
            step = length if self._progress is None else self.PROGRESS_COPY_STEP
            while done < length:
                n = min(step, length - done)
                got = copier(mv, start + done, n)
                done += got
                if self._progress is not None and got:
                    self._reported += got
                    self._progress(self._reported)
                if got < n:
                    break  # the copier cannot (any more): the rest is written from mv
        self.written += done
        if done < length:
            self.write(mv[start + done:start + length])
