"""Where a loaded model came from: the one object that ties a root message to its files.

A model loaded from a file needs, besides its bytes, what only the file layer knows:
a descriptor of the mapped file (so a save can copy unchanged runs file-to-file), the
directory its external data is relative to, whether external data may be read, and the
data files mapped so far.  All of it lives here, on the root message as ``_origin``;
messages themselves (wirefmt) know nothing of files.
"""

from __future__ import annotations

import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any


class Origin:
    """The file context of one root message.  See the module docstring.

    ``source_view`` is the memoryview of the mapped model file that ``source_fd`` names:
    a run of a message's buffer may be copied from the file only when the buffer *is*
    that view (a root whose buffer was replaced by ``CopyFrom`` must not copy the new
    buffer's offsets out of the old file).
    """

    __slots__ = ("source_fd", "source_view", "base_dir", "load_external", "data_files", "__weakref__")

    def __init__(self, base_dir: str | None = None, load_external: bool = True) -> None:
        self.source_fd: int | None = None
        self.source_view: memoryview | None = None
        self.base_dir = base_dir
        self.load_external = load_external
        #: Mapped external-data files by normalised path and by (device, inode).
        self.data_files: dict = {}

    def keep_source(self, fd: int, view: memoryview) -> None:
        """Own ``fd`` (a duplicate the caller made), closed when this origin is collected."""
        self.source_fd = fd
        self.source_view = view

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


def origin_of(msg: Any) -> Origin | None:
    """The origin of ``msg``'s root message, or None for a model built in memory."""
    return msg._root().__dict__.get("_origin")


def set_origin(root: Any, origin: Origin) -> Origin:
    root.__dict__["_origin"] = origin
    return origin
