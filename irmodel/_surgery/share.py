"""Copies of messages that share their source's bytes, and the file context that goes with them.

Surgery builds new models out of pieces of loaded ones.  Protobuf's way (``CopyFrom``,
``extend``) copies every piece, weights included: extracting one block of a 3 GB model
then costs the block's weights in memory, and onnx's way (load everything, copy the part)
costs the whole model.  Here a piece that is still exactly its bytes is re-opened over the
same buffer (`wirefmt.shared_copy`): a new message, independent of the original, whose unchanged
spans the encoder writes from the source mapping, file to file (`irmodel._files.filecopy`), once
the new model carries a file context (`Origin`) of its own that names the same mapped file
(`adopt_origin`).  A piece built in memory is copied as protobuf copies it.

This module gives such a copy its file context; nothing in the surgery package uses the
message layer's private state.
"""

from __future__ import annotations

import os

from .._files.origin import Origin, origin_of, set_origin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def adopt_origin(model: Any, source: Any) -> None:
    """Give ``model`` (built from pieces of ``source``) a file context like ``source``'s.

    Its external tensors then resolve against the source's directory, and a save copies the
    unchanged spans of the source's mapped file in the kernel.  The context is a new one
    (with a duplicate descriptor of the mapped file): saving ``model`` with external data
    re-points its own context at the new files and leaves the source's alone.
    """
    origin = origin_of(source)
    if origin is None:
        return
    mine = Origin(base_dir=origin.base_dir, load_external=origin.load_external, use_mmap=origin.use_mmap)
    if origin.source_fd is not None and origin.source_view is not None:
        try:
            fd = os.dup(origin.source_fd)
        except OSError:
            fd = None
        if fd is not None:
            mine.keep_source(fd, origin.source_view, origin.source_name)
            mine.source_state = origin.source_state
    set_origin(model, mine)
