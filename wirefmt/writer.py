"""Canonical encoding of field values, and a writer that streams parts to a file.

Canonical means what protobuf's own serializer emits: negative int32/int64/enum values as
10-byte varints, floats little-endian, packed repeated scalars as one length-delimited
field, fields in field-number order (the caller's job: it walks the schema in order).
"""

from __future__ import annotations

import errno
import os
import struct
from typing import BinaryIO, Iterable

from .errors import EncodeError
from .reader import Float32NaN
from .schema import (BOOL, BYTES, DOUBLE, ENUM, FIXED32, FIXED64, FLOAT, I32, I64, INT32, INT64, LEN,
                     SFIXED32, SFIXED64, SINT32, SINT64, STRING, UINT32, UINT64, VARINT, WIRE_TYPE)
from .varint import MASK64, encode_varint, zigzag_encode

_FIXED_FORMATS = {FLOAT: "f", DOUBLE: "d", FIXED32: "I", FIXED64: "Q", SFIXED32: "i", SFIXED64: "q"}
_FIXED_STRUCTS = {k: struct.Struct("<" + c) for k, c in _FIXED_FORMATS.items()}
_U32 = struct.Struct("<I")


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


def encode_scalar(kind: int, v) -> bytes:
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
        raise EncodeError(f"cannot encode {v!r} as {_FIXED_FORMATS[kind]}: {exc}") from None


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
        return struct.pack("<%d%s" % (len(values), _FIXED_FORMATS[kind]), *values)
    except struct.error as exc:
        raise EncodeError(f"cannot encode packed {_FIXED_FORMATS[kind]}: {exc}") from None


class StreamWriter:
    """Collects output parts and writes them to ``fileobj``, coalescing small ones.

    Large parts (memoryviews over an mmap, typically tensor data) go straight to the
    file so that an output larger than memory never exists as one object.
    """

    COALESCE = 1 << 20  # flush the small-part buffer once it holds 1 MiB

    def __init__(self, fileobj: BinaryIO):
        self._f = fileobj
        self._pending = bytearray()
        self.written = 0

    def write(self, part) -> None:
        n = len(part)
        self.written += n
        if n >= 65536:
            if self._pending:
                self._f.write(self._pending)
                self._pending = bytearray()
            self._f.write(part)
            return
        self._pending += part
        if len(self._pending) >= self.COALESCE:
            self._f.write(self._pending)
            self._pending = bytearray()

    def flush(self) -> None:
        if self._pending:
            self._f.write(self._pending)
            self._pending = bytearray()

    def copy_range(self, src_fd: int, offset: int, length: int, fallback) -> None:
        """Append ``length`` bytes of file ``src_fd`` from ``offset``, copied by the kernel.

        Why: an unchanged 1.5 GB initializer copied through an mmap makes every page of
        it resident in this process (and costs a page fault per page or so);
        ``copy_file_range``/``sendfile`` move the bytes inside the kernel, at the speed of
        a plain file copy, with no pages of ours.  ``fallback()`` gives the bytes as a
        buffer when the output is not a file with a descriptor or the kernel refuses.
        """
        self.flush()
        try:
            dst_fd = self._f.fileno()
            self._f.flush()
        except (AttributeError, OSError, ValueError):
            dst_fd = None
        done = 0
        if dst_fd is not None:
            done = _kernel_copy(src_fd, dst_fd, offset, length)
        if done < length:
            rest = fallback(offset + done, offset + length)
            step = 1 << 24
            for a in range(0, len(rest), step):
                self._f.write(rest[a:a + step])
        self.written += length


def _kernel_copy(src_fd: int, dst_fd: int, offset: int, length: int) -> int:
    """Bytes copied from ``src_fd`` to the current position of ``dst_fd`` (0 if unsupported)."""
    done = 0
    for copy in (_copy_file_range, _sendfile):
        if copy is None:
            continue
        try:
            while done < length:
                if copy is _copy_file_range and done and length - done >= _PARALLEL_MIN:
                    # The first chunk went through: the kernel can copy between these
                    # files, so copy the rest on two threads (see `_parallel_copy`).
                    done += _parallel_copy(src_fd, dst_fd, offset + done, length - done)
                    continue
                n = copy(src_fd, dst_fd, offset + done, min(length - done, _CHUNK))
                if n <= 0:
                    return done  # the source ended early: the fallback reports it
                done += n
            return done
        except OSError as exc:
            if done or exc.errno not in _UNSUPPORTED:
                raise
    return done


#: Bytes per kernel copy call; copies of at least _PARALLEL_MIN go on two threads.
_CHUNK = 1 << 26
_PARALLEL_MIN = 1 << 28


def _parallel_copy(src_fd: int, dst_fd: int, offset: int, length: int) -> int:
    """Copy ``length`` bytes to the current position of ``dst_fd`` on two threads.

    Why: when an edit changes the length of what precedes the data, source and
    destination offsets differ by a few bytes and the kernel copies page by page with a
    shift, which costs CPU: two threads (``copy_file_range`` releases the GIL) on the two
    halves, each starting the writeback of what it copied (``sync_file_range``) so that
    the final fsync has less left to wait for.  Measured on the 1.5 GiB benchmark model
    (benchmarks/RESULTS.md, case d).
    """
    import threading  # noqa: PLC0415 (only for copies of hundreds of MB)

    writeback = _writeback_starter()
    pos = os.lseek(dst_fd, 0, os.SEEK_CUR)
    half = (length // 2) & ~(_CHUNK - 1)
    errors: list = []

    def work(src_off: int, dst_off: int, count: int) -> None:
        try:
            done = 0
            while done < count:
                n = os.copy_file_range(src_fd, dst_fd, min(count - done, _CHUNK), src_off + done, dst_off + done)
                if n <= 0:
                    raise OSError(errno.EIO, "the source file is shorter than when it was loaded")
                writeback(dst_fd, dst_off + done, n)
                done += n
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the calling thread
            errors.append(exc)

    helper = threading.Thread(target=work, args=(offset + half, pos + half, length - half), daemon=True)
    helper.start()
    work(offset, pos, half)
    helper.join()
    if errors:
        raise errors[0]
    os.lseek(dst_fd, pos + length, os.SEEK_SET)
    return length


def _writeback_starter():
    """``sync_file_range(fd, off, n, SYNC_FILE_RANGE_WRITE)`` where libc has it, else a no-op."""
    try:
        import ctypes  # noqa: PLC0415

        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (ImportError, OSError, AttributeError):
        return lambda fd, off, n: None
    call.argtypes = (ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_uint)

    def start(fd: int, off: int, n: int) -> None:
        call(fd, off, n, 2)  # SYNC_FILE_RANGE_WRITE: start writing back, do not wait

    return start


def _copy_file_range(src_fd: int, dst_fd: int, offset: int, count: int) -> int:
    return os.copy_file_range(src_fd, dst_fd, count, offset)


def _sendfile(src_fd: int, dst_fd: int, offset: int, count: int) -> int:
    return os.sendfile(dst_fd, src_fd, offset, count)


#: errno values meaning "this kernel or filesystem cannot do that copy": try the next way.
_UNSUPPORTED = frozenset(getattr(errno, n) for n in ("EXDEV", "ENOSYS", "EINVAL", "EOPNOTSUPP", "ENOTSUP",
                                                      "EBADF", "ESPIPE") if hasattr(errno, n))
if not hasattr(os, "copy_file_range"):  # not Linux
    _copy_file_range = None  # type: ignore[assignment]  # noqa: F811
if not hasattr(os, "sendfile"):
    _sendfile = None  # type: ignore[assignment]  # noqa: F811
