"""Opening and writing models: mmap on load, atomic replace on save.

With `irmodel._files.buffer` (which maps or reads a file), `irmodel._files.external_data` (which
reads data files) and `irmodel._files.external_write`
(which writes them through `irmodel._files.atomic`), this is the only place that opens files:
wirefmt's messages and encoder work on buffers, in the sans-IO style of h11.  What a
loaded model needs from its file later (the mapped file's descriptor, its directory,
its data files) is kept in one `Origin` on the root message.
"""

from __future__ import annotations

import mmap
import os

from wirefmt import DecodeError

from .messages import CLASSES
from ._files.buffer import contents as _contents, read_buffer, read_rest as _read_rest
from ._files.origin import Origin, check_unchanged, origin_of, set_origin

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, BinaryIO, Callable, Union

    PathLike = Union[str, "os.PathLike[str]"]


def message_class(type_name: str) -> Any:
    """The class for a type name such as ``"ModelProto"`` or ``"TensorProto.Segment"``."""
    name = type_name[5:] if type_name.startswith("onnx.") else type_name
    try:
        return CLASSES[name]
    except KeyError:
        raise ValueError(f"unknown ONNX message type {type_name!r}; expected one of "
                         f"{', '.join(sorted(CLASSES))}") from None


def as_message(obj: Any, type_name: str) -> Any:
    """``obj`` as our message of ``type_name``: ours as it is; serialized bytes or the
    reference's protobuf message (same type name) read back; TypeError otherwise, as onnx.

    What every public function taking onnx's messages accepts (the checker, inference).
    """
    cls = message_class(type_name)
    if isinstance(obj, cls):
        return obj
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return loads(obj, type_name)
    serialize = getattr(obj, "SerializeToString", None)
    descriptor = getattr(obj, "DESCRIPTOR", None)
    if serialize is not None and getattr(descriptor, "name", None) == type_name:
        return loads(serialize(), type_name)  # the reference's message
    raise TypeError(f"The proto message needs to be of type '{type_name}'")


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


def _decode_root(data, type_name: str, start: int = 0):
    """The root message over ``data[start:]``; a DecodeError names the type as its path."""
    cls = message_class(type_name)
    src, mv = _buffer_of(data)
    try:
        return cls._from_buffer(src, mv, start, len(mv))
    except DecodeError as exc:
        if exc.path is None:
            exc.path = cls._type_name
        raise


def loads(data: bytes | bytearray | memoryview | mmap.mmap, type_name: str = "ModelProto") -> Any:
    """Open ``data`` as a message of ``type_name``; decodes only its top level now."""
    return _decode_root(data, type_name)


# -- loading -------------------------------------------------------------------------------

def _keep_source_fd(origin: Origin, msg, f, name: str | None) -> None:
    """Keep a descriptor of the mapped file, so a save can copy unchanged runs of it
    file-to-file in the kernel (`irmodel._files.filecopy.source_copier`).  It names the same
    open file as the mapping (a later rename or rewrite of the path cannot change what
    it reads) and is closed when the origin is collected with its message."""
    try:
        fd = os.dup(f.fileno())
    except (AttributeError, OSError, ValueError):
        return
    origin.keep_source(fd, msg._buf[1], name)


def _open_file(f, type_name: str, origin: Origin, name: str | None = None) -> tuple:
    """``(message, has_descriptor)``: mapped when ``f`` names a non-empty regular file
    (unless the origin says not to map), else read from its current position."""
    try:
        fd_ok = f.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        fd_ok = False
    if not fd_ok or not origin.use_mmap:
        return _decode_root(_read_rest(f), type_name), fd_ok
    buf, start = _contents(f)
    msg = _decode_root(buf, type_name, start)
    if isinstance(buf, mmap.mmap):
        _keep_source_fd(origin, msg, f, name)
    return msg, True


def load(f: str | bytes | os.PathLike | BinaryIO, load_external_data: bool = True,
         type_name: str = "ModelProto", *, mmap: bool = True) -> Any:
    """Open a model from a path or binary file.  A regular file is mapped, not read.

    A path or a file object with a working ``fileno()`` naming a regular file is mapped
    whole, and decoded from the file object's current position; anything else (a pipe,
    a FIFO, ``/dev/stdin``, an empty file, a file object without a descriptor such as
    ``io.BytesIO``) is read from its current position to its end.  External data is
    resolved lazily (when a tensor's data is read) relative to the model's directory;
    ``load_external_data=False`` leaves it alone.

    A mapped file must not change while the model is in use (`irmodel._files.origin`: a save
    refuses if it did).  ``mmap=False`` (the name ``torch.load`` uses for the same
    choice) reads the file into memory instead, and reads external data (a copy per
    read) instead of mapping it: the model no longer depends on the file's contents.
    """
    origin = Origin(load_external=load_external_data, use_mmap=mmap)
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(os.fspath(f))
        with open(path, "rb") as fh:
            msg = _open_file(fh, type_name, origin, path)[0]
        origin.base_dir = os.path.dirname(os.path.abspath(path))
    else:
        name = getattr(f, "name", None)
        msg, has_fd = _open_file(f, type_name, origin, name if isinstance(name, str) else None)
        if has_fd and isinstance(name, str) and os.path.exists(name):
            origin.base_dir = os.path.dirname(os.path.abspath(name))
    set_origin(msg, origin)
    return msg


def source_length(msg: Any) -> int:
    """How many bytes the buffer under ``msg``'s root holds (a loaded file's size)."""
    buf = msg._root()._buf
    return len(buf[1]) if buf is not None else 0


def dumps(msg: Any) -> bytes:
    """The serialized bytes, identical to protobuf's ``SerializeToString()``.

    Refuses (`irmodel._files.origin.SourceChangedError`) when a file the model is mapped from
    changed since it was loaded."""
    from wirefmt.encoder import dumps_message  # noqa: PLC0415 (reading never needs the encoder)

    check_unchanged(msg)
    return dumps_message(msg)


# -- saving --------------------------------------------------------------------------------

def write_model(msg: Any, fh: BinaryIO, *, durable: bool = False, progress: Callable[[int], None] | None = None) -> int:
    """Stream ``msg`` to ``fh``, copying unchanged runs of its mapped file in the kernel.

    ``durable=True`` says the caller fsyncs ``fh`` afterwards (an atomic save), which lets
    large copies bypass the page cache (`irmodel._files.filecopy.direct_copy`).  Refuses
    (`irmodel._files.origin.SourceChangedError`) before writing anything when a file the model
    is mapped from changed since it was loaded.
    """
    from wirefmt.encoder import write_message  # noqa: PLC0415 (imported by the first save)

    from ._files.filecopy import source_copier  # noqa: PLC0415

    check_unchanged(msg)
    copier = source_copier(origin_of(msg), fh, durable=durable)
    return write_message(msg, fh, copier=copier, progress=progress)


def save_message(msg: Any, path: str | bytes | os.PathLike | BinaryIO) -> None:
    """Write ``msg`` to ``path`` atomically (no external data handling)."""
    if isinstance(path, (str, bytes, os.PathLike)):
        from ._files.atomic import atomic_write  # noqa: PLC0415

        atomic_write(path, lambda fh: write_model(msg, fh, durable=True))
    else:
        write_model(msg, path)
