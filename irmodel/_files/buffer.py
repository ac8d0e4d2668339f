"""A model file's bytes as a buffer: mapped where that can work, read where it cannot.

`irmodel.io.load` and the summary that reads a model's bytes alone
(`irmodel._report.bytesummary`) open files this one way; this module imports no message
class, so the second does not pay for the first's imports.
"""

from __future__ import annotations

import mmap
import os
import stat


def read_rest(f):
    """Everything ``f`` has from its current position: a stream, or a file we cannot map."""
    data = f.read()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("load() needs a binary file")
    return data


def contents(f) -> tuple:
    """``(buffer, start)`` for a file object with a descriptor: mapped when that can work.

    Only a regular file of non-zero size is mapped (from offset 0; ``start`` is its
    current position).  A pipe, FIFO, terminal or socket has no size and cannot be
    mapped, and an empty file cannot be mapped either; ``/proc`` files say size 0 but
    have contents: all of these are read from the current position, as
    ``onnx.load(f)`` reads them.  A filesystem that refuses ``mmap`` is read too.
    """
    fd = f.fileno()
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode) and st.st_size > 0:
        start = f.tell() if hasattr(f, "tell") else 0
        if start < st.st_size:
            try:
                return mmap.mmap(fd, 0, access=mmap.ACCESS_READ), start
            except (OSError, ValueError):
                pass  # e.g. ENODEV: a FUSE or network filesystem without mmap
    return read_rest(f), 0


def read_buffer(path: str | bytes | os.PathLike) -> "bytes | mmap.mmap":
    """A file's bytes as a buffer, opened as `load` opens it: a read-only mmap for a
    non-empty regular file, the bytes read for anything else (a pipe, an empty file)."""
    with open(os.fsdecode(os.fspath(path)), "rb") as fh:
        return contents(fh)[0]


def regular_file_buffer(path: str | bytes | os.PathLike) -> "bytes | mmap.mmap | None":
    """`read_buffer` of a non-empty regular file, else None without opening anything: a
    FIFO can be read once, and opening one waits for a writer (which a reader that gives
    up would then leave writing into a closed pipe), so a reader that may hand a file on
    to another (the byte summary, to the message path) must not even open it."""
    name = os.fsdecode(os.fspath(path))
    if not _non_empty_regular(os.stat(name)):
        return None
    with open(name, "rb") as fh:
        if not _non_empty_regular(os.fstat(fh.fileno())):  # replaced since the stat
            return None
        return contents(fh)[0]


def _non_empty_regular(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode) and st.st_size > 0
