"""Copying a byte range of one file into another without passing it through Python.

The writer's job when a model loaded from a file is saved with small edits: almost all of
the output is unchanged runs of the input.  Two ways, tried in this order:

* `direct_copy`, for outputs that will be fsynced anyway (an atomic save): the aligned
  middle of the range is read into a few small buffers and written with ``O_DIRECT``,
  straight to the disk, by several threads at once.  Why: the fsync that an atomic save
  must do otherwise waits for the kernel to write back 1.5 GB of dirty page cache, which
  on the benchmark machine ran at 0.3-1.8 GB/s (``dd conv=fsync``), against 1.6-2.4 GB/s
  for direct writes (``oflag=direct``) (benchmarks/RESULTS.md, case d).
* `kernel_copy`: ``copy_file_range`` (then ``sendfile``) moves the bytes inside the kernel
  into the page cache, at the speed of a plain file copy, mapping nothing into this
  process.

Both return how much they copied; 0 means "cannot here" (another filesystem, an old
kernel, a file object that is not a file), and the caller copies the rest some other way.
Real I/O errors are raised.  Every thread started here is joined before the function
returns or raises, and works on duplicated descriptors, so that no write can land in a
file after the caller has closed its descriptor.
"""

from __future__ import annotations

import errno
import mmap
import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

if TYPE_CHECKING:
    from wirefmt import SpanCopier

    from .origin import Origin

try:
    import fcntl
except ImportError:  # Windows: no direct copies
    fcntl = None  # type: ignore[assignment]

#: Bytes per kernel copy call; copies of at least PARALLEL_MIN go on two threads.
CHUNK = 1 << 26
PARALLEL_MIN = 1 << 28
#: Direct copies: ranges shorter than DIRECT_MIN are not worth the set-up; DIRECT_THREADS
#: threads, each with one DIRECT_BUFFER-byte buffer (their RSS: 32 MiB in all).  Measured
#: on the benchmark machine: 4 threads x 8 MiB 0.86-1.16 s, 8 x 4 MiB 0.83-1.31 s,
#: 12 x 4 MiB 0.66-1.29 s, 16 x 2 MiB 0.71-0.99 s for the 1.5 GiB model (fsync included);
#: the disk, shared with other machines, is the noise.
DIRECT_MIN = 1 << 26
DIRECT_THREADS = 8
DIRECT_BUFFER = 1 << 22
#: O_DIRECT wants offsets, lengths and buffer addresses aligned to the device's logical
#: block size; 4096 covers 512- and 4096-byte devices.  A device that wants more makes
#: the first write fail with EINVAL, and the copy falls back to `kernel_copy`.
ALIGN = 4096

#: errno values meaning "this kernel or filesystem cannot do that copy": try the next way.
_UNSUPPORTED = frozenset(getattr(errno, n) for n in ("EXDEV", "ENOSYS", "EINVAL", "EOPNOTSUPP", "ENOTSUP",
                                                      "EBADF", "ESPIPE") if hasattr(errno, n))
_O_DIRECT = getattr(os, "O_DIRECT", 0) if fcntl is not None else 0  # 0: no direct copies here


def source_copier(origin: Origin | None, fileobj: Any, *, durable: bool = False) -> SpanCopier | None:
    """The copier (`wirefmt.SpanCopier`) that moves runs of ``origin``'s mapped model file
    into ``fileobj`` without passing them through Python, or None where it cannot apply.

    It copies only runs of the mapped file's own view (``mv is origin.source_view``) and
    only into a file object with a descriptor; ``durable`` (the caller fsyncs the output)
    lets large runs go through `direct_copy` first.  It returns 0 when the kernel refuses,
    and the writer then writes the bytes from the mapping.
    """
    if origin is None or origin.source_fd is None:
        return None
    try:
        dst_fd = fileobj.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    src_fd, source_view = origin.source_fd, origin.source_view

    def copy(mv, offset: int, length: int) -> int:
        if mv is not source_view:
            return 0
        got = direct_copy(src_fd, dst_fd, offset, length) if durable else 0
        return got + kernel_copy(src_fd, dst_fd, offset + got, length - got)

    return copy


def kernel_copy(src_fd: int, dst_fd: int, offset: int, length: int) -> int:
    """Bytes copied from ``src_fd`` to the current position of ``dst_fd`` (0 if unsupported)."""
    done = 0
    for copy in (_copy_file_range, _sendfile):
        if copy is None:
            continue
        try:
            while done < length:
                if copy is _copy_file_range and done and length - done >= PARALLEL_MIN:
                    # The first chunk went through: the kernel can copy between these
                    # files, so copy the rest on two threads (see `_parallel_copy`).
                    done += _parallel_copy(src_fd, dst_fd, offset + done, length - done)
                    continue
                n = copy(src_fd, dst_fd, offset + done, min(length - done, CHUNK))
                if n <= 0:
                    return done  # the source ended early: the fallback reports it
                done += n
            return done
        except OSError as exc:
            if done or exc.errno not in _UNSUPPORTED:
                raise
    return done


def _parallel_copy(src_fd: int, dst_fd: int, offset: int, length: int) -> int:
    """Copy ``length`` bytes to the current position of ``dst_fd`` on two threads.

    Why: when an edit changes the length of what precedes the data, source and
    destination offsets differ by a few bytes and the kernel copies page by page with a
    shift, which costs CPU: two threads (``copy_file_range`` releases the GIL) on the two
    halves, each starting the writeback of what it copied (``sync_file_range``) so that a
    later fsync has less left to wait for.
    """
    writeback = _writeback_starter()
    pos = os.lseek(dst_fd, 0, os.SEEK_CUR)
    half = (length // 2) & ~(CHUNK - 1)

    def work(src: int, dst: int, piece: tuple, stop) -> None:
        src_off, dst_off, count = piece
        done = 0
        while done < count and not stop():
            n = os.copy_file_range(src, dst, min(count - done, CHUNK), src_off + done, dst_off + done)
            if n <= 0:
                raise OSError(errno.EIO, "the source file is shorter than when it was loaded")
            writeback(dst, dst_off + done, n)
            done += n

    _on_threads(src_fd, dst_fd, [(offset, pos, half), (offset + half, pos + half, length - half)], work)
    os.lseek(dst_fd, pos + length, os.SEEK_SET)
    return length


def direct_copy(src_fd: int, dst_fd: int, offset: int, length: int) -> int:
    """Copy a prefix of the range to the current position of ``dst_fd``, bypassing the cache.

    Returns the bytes copied (``dst_fd`` is left after them): the unaligned head by
    `kernel_copy`, then every whole ``ALIGN`` block with ``O_DIRECT``; the unaligned tail
    is left to the caller.  When direct writes are refused (no ``O_DIRECT`` on this
    platform or filesystem, the range too short, the alignment refused by the first write)
    it returns only what it copied before finding out: 0, or the head.  Only worth it when the output is fsynced afterwards: data written this way
    is on the disk, not in the page cache (see the module docstring).
    """
    if not _O_DIRECT or length < DIRECT_MIN:
        return 0
    pos = os.lseek(dst_fd, 0, os.SEEK_CUR)
    head = -pos % ALIGN
    end = pos + head + (length - head) // ALIGN * ALIGN  # output offset where the blocks end
    start = pos + head
    if end <= start:
        return 0
    if head and kernel_copy(src_fd, dst_fd, offset, head) != head:
        return 0  # cannot copy even that in the kernel: let the caller's fallback work
    shift = offset - pos  # source offset = output offset + shift
    flags = fcntl.fcntl(dst_fd, fcntl.F_GETFL)
    try:
        fcntl.fcntl(dst_fd, fcntl.F_SETFL, flags | _O_DIRECT)
    except OSError:
        return head  # this filesystem has no direct I/O (tmpfs before Linux 6.6, ...)
    try:
        _reserve(dst_fd, start, end - start)
        first = min(DIRECT_BUFFER, end - start)
        try:
            _direct_chunks(src_fd, dst_fd, shift, [(start, first)], mmap.mmap(-1, first), lambda: False)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            return head  # alignment refused: nothing of this chunk was written
        chunks = [(a, min(DIRECT_BUFFER, end - a)) for a in range(start + first, end, DIRECT_BUFFER)]
        if chunks:
            per_thread = [chunks[i::DIRECT_THREADS] for i in range(min(DIRECT_THREADS, len(chunks)))]

            def work(src: int, dst: int, mine: list, stop) -> None:
                _direct_chunks(src, dst, shift, mine, mmap.mmap(-1, DIRECT_BUFFER), stop)

            _on_threads(src_fd, dst_fd, per_thread, work)
    finally:
        fcntl.fcntl(dst_fd, fcntl.F_SETFL, flags)
    os.lseek(dst_fd, end, os.SEEK_SET)
    return end - pos


def _direct_chunks(src_fd: int, dst_fd: int, shift: int, chunks: list, buf: mmap.mmap, stop) -> None:
    """Read each ``(output offset, length)`` chunk from the source into ``buf`` and write it.

    ``buf`` comes from an anonymous mapping, so it is page-aligned as ``O_DIRECT`` needs.
    """
    with buf, memoryview(buf) as view:
        for at, n in chunks:
            if stop():
                return
            with view[:n] as part:
                if os.preadv(src_fd, [part], at + shift) != n:
                    raise OSError(errno.EIO, "the source file is shorter than when it was loaded")
                done = 0
                while done < n:
                    with part[done:] as rest:
                        done += os.pwrite(dst_fd, rest, at + done)


def _on_threads(src_fd: int, dst_fd: int, pieces: list, work) -> None:
    """Run ``work(src, dst, piece, stop)`` for each piece, one thread each (the first here).

    The threads get their own duplicates of both descriptors, closed only after every
    thread has ended: an interrupted copy cannot write into whatever file later reuses the
    caller's descriptor number.  The first error (or an interrupt here) stops the others
    at their next chunk and is raised once all have ended.
    """
    import threading  # noqa: PLC0415 (only for copies of many MB)

    errors: list = []
    dups: list = []

    def stop() -> bool:  # has any thread failed?
        return bool(errors)

    def run(piece) -> None:
        try:
            work(dups[0], dups[1], piece, stop)
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the calling thread
            errors.append(exc)

    try:
        dups.append(os.dup(src_fd))
        dups.append(os.dup(dst_fd))
    except OSError:
        for fd in dups:
            os.close(fd)
        raise
    threads = [threading.Thread(target=run, args=(p,), daemon=True) for p in pieces[1:]]
    try:
        for t in threads:
            t.start()
        run(pieces[0])
    except BaseException as exc:  # an interrupt between starts: stop the started ones
        errors.append(exc)
    finally:
        for t in threads:
            if t.ident is not None:
                t.join()
    for fd in dups:
        os.close(fd)
    if errors:
        raise errors[0]


def _reserve(fd: int, offset: int, length: int) -> None:
    """Allocate the blocks the direct writes will fill (``fallocate``), where libc can.

    Why: ext4 serialises direct writes that extend a file or fill holes; into allocated
    blocks they go in parallel (measured, 4 threads: 0.86-1.16 s with, 1.12-1.64 s
    without).  Not ``os.posix_fallocate``: where the filesystem cannot allocate, glibc emulates it by
    writing every block, which would double the I/O.  A failure only costs speed.
    """
    call = _libc_function("fallocate", "int", "int", "longlong", "longlong")
    if call is not None:
        call(fd, 0, offset, length)


def _writeback_starter():
    """``sync_file_range(fd, off, n, SYNC_FILE_RANGE_WRITE)`` where libc has it, else a no-op."""
    call = _libc_function("sync_file_range", "int", "longlong", "longlong", "uint")
    if call is None:
        return lambda fd, off, n: None

    def start(fd: int, off: int, n: int) -> None:
        call(fd, off, n, 2)  # SYNC_FILE_RANGE_WRITE: start writing back, do not wait

    return start


def _libc_function(name: str, *argtypes: str):
    """The C library's ``name`` with the given ``ctypes.c_<type>`` arguments, or None where
    there is no such function (another libc, another OS) or no ctypes.

    Why ctypes: ``fallocate`` and ``sync_file_range`` have no ``os`` wrapper.  Looked up
    once per copy of tens of MB, so not cached.
    """
    try:
        import ctypes  # noqa: PLC0415

        call = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (ImportError, OSError, AttributeError):
        return None
    call.argtypes = tuple(getattr(ctypes, "c_" + t) for t in argtypes)
    return call


def data_ranges(fd: int, size: int):
    """Yield ``(start, end)`` of each run of ``fd``'s first ``size`` bytes that holds data,
    skipping holes (``SEEK_DATA`` / ``SEEK_HOLE``), in order; ``(0, size)`` at once where
    the platform or the file system cannot say (a hole then reads as the zeros it is).

    Why: a data file of 6 GiB that is all hole takes 4 KiB on the disk, and a copy that
    reads it whole writes 6 GiB.  The work of a copy that skips holes follows the bytes
    the file really holds.  Lazy: a file of many small extents is never listed at once.
    The descriptor's position is left where the last seek put it.
    """
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None or size <= 0:
        if size > 0:
            yield 0, size
        return
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, seek_data)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # no data after pos: the rest is a hole
                return
            if pos == 0 and exc.errno in _UNSUPPORTED:
                yield 0, size
                return
            raise
        if start >= size:
            return
        end = min(os.lseek(fd, start, seek_hole), size)
        if end <= start:  # (a file system that answers oddly: copy the rest whole)
            end = size
        yield start, end
        pos = end


def _copy_file_range(src_fd: int, dst_fd: int, offset: int, count: int) -> int:
    return os.copy_file_range(src_fd, dst_fd, count, offset)


def _sendfile(src_fd: int, dst_fd: int, offset: int, count: int) -> int:
    return os.sendfile(dst_fd, src_fd, offset, count)


if not hasattr(os, "copy_file_range"):  # not Linux
    _copy_file_range = None  # type: ignore[assignment]  # noqa: F811
if not hasattr(os, "sendfile"):
    _sendfile = None  # type: ignore[assignment]  # noqa: F811
