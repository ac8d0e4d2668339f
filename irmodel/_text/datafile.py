"""Tensor bytes kept outside the text: ``@file{location, offset, length}``.

``irmodel print --external-data DIR`` writes the bytes of large raw tensors to one
file in DIR and the text names them; ``irmodel parse --data-dir DIR`` reads them
back into ``raw_data``.  A location is a bare file name (no directory part), so a
text can never make the parser read outside DIR.
"""

from __future__ import annotations

import os

#: The data file the printer writes in DIR.
DATA_NAME = "tensors.bin"
#: Offsets are aligned, as ExternalData.md recommends for mapping.
ALIGN = 4096


class DataFileWriter:
    """The printer's ``external`` callback: appends tensors of at least ``threshold``
    bytes to ``directory/tensors.bin`` and returns their ``@file{...}`` text."""

    def __init__(self, directory: str, threshold: int = 1024):
        os.makedirs(directory, exist_ok=True)
        self.f = open(os.path.join(directory, DATA_NAME), "wb")
        self.threshold = threshold

    def __call__(self, tensor, data) -> str | None:
        if len(data) < self.threshold:
            return None
        f = self.f
        offset = f.tell()
        pad = -offset % ALIGN
        if pad:
            f.write(b"\0" * pad)
            offset += pad
        f.write(data)
        return f'@file{{location: "{DATA_NAME}", offset: {offset}, length: {len(data)}}}'

    def close(self) -> None:
        self.f.close()


def file_loader(directory: str):
    """The parser's ``load_file``: ``(location, offset, length) -> bytes`` from ``directory``."""
    def load(location, offset: int, length: int) -> bytes:
        if not isinstance(location, str) or os.path.basename(location) != location or location in ("", ".", ".."):
            raise ValueError(f"location {location!r} is not a file name in the data directory")
        path = os.path.join(directory, location)
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if offset + length > size:
                raise ValueError(f"{location}: offset {offset} + length {length} is past its end ({size} bytes)")
            f.seek(offset)
            return f.read(length)
    return load
