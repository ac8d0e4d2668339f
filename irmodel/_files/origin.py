"""Where a loaded model came from: the one object that ties a root message to its files.

A model loaded from a file needs, besides its bytes, what only the file layer knows:
a descriptor of the mapped file (so a save can copy unchanged runs file-to-file), the
directory its external data is relative to, whether external data may be read, and the
data files mapped so far.  All of it lives here, on the root message as ``_origin``;
messages themselves (wirefmt) know nothing of files.

Files that change under a loaded model.  A mapped file is read when a field is first
touched, which may be long after `irmodel.load`; as with any memory-mapped reader
(numpy's ``memmap``, safetensors), the file must not change meanwhile.  Truncating it
kills the process with SIGBUS on the next read of a page past the new end, and a
rewrite in place is read at the old offsets.  (Replacing the file by a rename, as
`irmodel.save` and most tools do, is safe: the mapping keeps the old file.)  So the
origin records the `file_state` of the model file and of every data file it maps, and
`check_unchanged` (run by every save and by ``irmodel.dumps``) refuses with
`SourceChangedError` when one of them changed, before anything is written or read
from the mapping.  ``irmodel.load(path, mmap=False)`` reads the file into memory
instead (and external data when it is read), for a model independent of its files.
"""

from __future__ import annotations

import errno
import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any


class SourceChangedError(OSError):
    """A file a loaded model is mapped from changed since it was mapped (module docstring).

    An `OSError` (errno ``ESTALE``, ``filename`` the file): the file system changed under
    the model, nothing is wrong with the model or the call.
    """


def file_state(st: os.stat_result) -> tuple:
    """What identifies a file's contents cheaply: device, inode, size, mtime in ns."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _changed_text(before: tuple, now: tuple) -> str:
    if now[:2] != before[:2]:
        return "it is another file now"
    if now[2] != before[2]:
        return f"its size was {before[2]} bytes and is {now[2]}"
    return "it was modified (its mtime changed)"


class Origin:
    """The file context of one root message.  See the module docstring.

    ``source_view`` is the memoryview of the mapped model file that ``source_fd`` names:
    a run of a message's buffer may be copied from the file only when the buffer *is*
    that view (a root whose buffer was replaced by ``CopyFrom`` must not copy the new
    buffer's offsets out of the old file).  ``source_state`` is the mapped file's
    `file_state` at load, ``source_name`` its name for messages.  ``use_mmap`` is False
    for a model loaded with ``mmap=False``: its external data is read, not mapped.
    """

    __slots__ = ("source_fd", "source_view", "source_state", "source_name", "base_dir",
                 "load_external", "use_mmap", "data_files", "__weakref__")

    def __init__(self, base_dir: str | None = None, load_external: bool = True,
                 use_mmap: bool = True) -> None:
        self.source_fd: int | None = None
        self.source_view: memoryview | None = None
        self.source_state: tuple | None = None
        self.source_name: str | None = None
        self.base_dir = base_dir
        self.load_external = load_external
        self.use_mmap = use_mmap
        #: Mapped external-data files by normalised path and by (device, inode).
        self.data_files: dict = {}

    def keep_source(self, fd: int, view: memoryview, name: str | None = None) -> None:
        """Own ``fd`` (a duplicate the caller made), closed when this origin is collected."""
        self.source_fd = fd
        self.source_view = view
        self.source_name = name
        try:
            self.source_state = file_state(os.fstat(fd))
        except OSError:
            self.source_state = None

    def __del__(self, _close: Any = os.close) -> None:
        # A finaliser method rather than weakref.finalize: the `weakref` module is not
        # otherwise needed to open a model, and importing it costs every process.
        # ``os.close`` is bound at definition: at interpreter exit module globals may be gone.
        fd = self.source_fd
        if fd is not None:
            self.source_fd = None
            try:
                _close(fd)
            except OSError:
                pass

    def check_unchanged(self) -> None:
        """Raise `SourceChangedError` if the mapped model file or a mapped data file
        changed since it was mapped.

        The model file is checked on the descriptor we hold (the very file mapped); a
        data file by its path: when the path now names another file (replaced by a
        rename) the mapped one is unchanged and passes.
        """
        if self.source_fd is not None and self.source_state is not None:
            try:
                now = file_state(os.fstat(self.source_fd))
            except OSError:
                now = None
            if now != self.source_state:
                name = self.source_name or "the model file"
                why = "it cannot be checked" if now is None else _changed_text(self.source_state, now)
                raise SourceChangedError(
                    errno.ESTALE, f"the model file changed since it was loaded ({why}); its "
                    "mapped contents can no longer be trusted: load it again (or load with "
                    "mmap=False to be independent of the file)", name)
        seen = set()
        for key, mapped in self.data_files.items():
            if not isinstance(key, str) or id(mapped) in seen:
                continue
            seen.add(id(mapped))
            try:
                now = file_state(os.stat(key))
            except OSError:
                continue  # gone or renamed away: the mapping still holds the old file
            if now[:2] == mapped.state[:2] and now != mapped.state:
                raise SourceChangedError(
                    errno.ESTALE, f"an external data file changed since it was mapped "
                    f"({_changed_text(mapped.state, now)}): load the model again", key)


def origin_of(msg: Any) -> Origin | None:
    """The origin of ``msg``'s root message, or None for a model built in memory."""
    return msg._root().__dict__.get("_origin")


def copy_context(original: Any, copy: Any) -> None:
    """Give a copy of a message (`copy.deepcopy`, ``copy.copy``) the external-data directory,
    policy and reading mode of the original's model, so that its external tensors read as the
    original's do.  The copy's bytes are its own (in memory): no model file is kept for it."""
    origin = origin_of(original)
    if origin is not None:
        set_origin(copy, Origin(base_dir=origin.base_dir, load_external=origin.load_external,
                                use_mmap=origin.use_mmap))


def set_origin(root: Any, origin: Origin) -> Origin:
    root.__dict__["_origin"] = origin
    return origin


def check_unchanged(msg: Any) -> None:
    """`Origin.check_unchanged` for ``msg``'s model, if it was loaded from a file."""
    origin = origin_of(msg)
    if origin is not None:
        origin.check_unchanged()
