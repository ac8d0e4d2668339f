"""Reading and writing files: mmap on load, atomic replace on save.

This is the only place (with external data) that opens files: the codec and the
messages work on buffers, in the sans-IO style of h11.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from typing import BinaryIO, Union

from wirefmt.errors import DecodeError

from .codec import dumps_message, write_message
from .messages import CLASSES

PathLike = Union[str, "os.PathLike[str]"]


def message_class(type_name: str):
    """The class for a type name such as ``"ModelProto"`` or ``"TensorProto.Segment"``."""
    name = type_name[5:] if type_name.startswith("onnx.") else type_name
    try:
        return CLASSES[name]
    except KeyError:
        raise ValueError(f"unknown ONNX message type {type_name!r}; expected one of "
                         f"{', '.join(sorted(CLASSES))}") from None


def _buffer_of(data):
    """``(src, memoryview)``: an indexable buffer whose slices have ``.decode`` (bytes, mmap)."""
    if isinstance(data, (bytes, mmap.mmap)):
        return data, memoryview(data)
    if isinstance(data, memoryview):
        mv = data.cast("B") if data.format != "B" or data.ndim != 1 else data
        obj = mv.obj
        if isinstance(obj, (bytes, mmap.mmap)) and mv.nbytes == len(obj) and mv.c_contiguous:
            return obj, mv
        data = mv.tobytes()  # a view into part of a buffer: copied (documented)
        return data, memoryview(data)
    if isinstance(data, bytearray):
        data = bytes(data)  # a bytearray may change under us: take a snapshot
        return data, memoryview(data)
    raise TypeError(f"expected bytes, bytearray, memoryview or mmap, got {type(data).__name__}")


def loads(data, type_name: str = "ModelProto"):
    """Open ``data`` as a message of ``type_name``; decodes only its top level now."""
    cls = message_class(type_name)
    src, mv = _buffer_of(data)
    try:
        return cls._from_buffer(src, mv, 0, len(mv))
    except DecodeError as exc:
        if exc.path is None:
            exc.path = cls._type_name
        raise


def _map_file(f: BinaryIO):
    size = os.fstat(f.fileno()).st_size
    if size == 0:
        return b""
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def load(f, load_external_data: bool = True, type_name: str = "ModelProto"):
    """Open a model from a path or binary file.  The file is mapped, not read.

    A file object with a working ``fileno()`` is mapped whole from its current position;
    one without is read.  External data is resolved lazily (when a tensor's data is read)
    relative to the model's directory; ``load_external_data=False`` leaves it alone.
    """
    base_dir = None
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fspath(f)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        with open(path, "rb") as fh:
            buf = _map_file(fh)
        start = 0
        base_dir = os.path.dirname(os.path.abspath(path))
    else:
        try:
            fd_ok = f.fileno() >= 0
        except (AttributeError, OSError, ValueError):
            fd_ok = False
        if fd_ok:
            start = f.tell() if hasattr(f, "tell") else 0
            buf = _map_file(f)
            name = getattr(f, "name", None)
            if isinstance(name, str) and os.path.exists(name):
                base_dir = os.path.dirname(os.path.abspath(name))
        else:
            buf, start = f.read(), 0
            if not isinstance(buf, (bytes, bytearray, memoryview)):
                raise TypeError("load() needs a binary file")
    src, mv = _buffer_of(buf)
    cls = message_class(type_name)
    try:
        msg = cls._from_buffer(src, mv, start, len(mv))
    except DecodeError as exc:
        if exc.path is None:
            exc.path = cls._type_name
        raise
    d = msg.__dict__
    d["_base_dir"] = base_dir
    d["_load_external"] = load_external_data
    return msg


def dumps(msg) -> bytes:
    """The serialized bytes, identical to protobuf's ``SerializeToString()``."""
    return dumps_message(msg)


def atomic_write(path: str, write) -> None:
    """Run ``write(fileobj)`` on a temporary file beside ``path``, then rename it over ``path``.

    Flushed and fsynced before the rename, so a crash or an exception never leaves a
    truncated file: either the old file or the complete new one is there.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".~" + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def save_message(msg, path) -> None:
    """Write ``msg`` to ``path`` atomically (no external data handling)."""
    if isinstance(path, (str, bytes, os.PathLike)):
        atomic_write(os.fsdecode(path), lambda fh: write_message(msg, fh))
    else:
        write_message(msg, path)
