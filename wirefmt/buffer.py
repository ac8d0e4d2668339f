"""The buffer type the readers accept, for annotations only.

Imported under ``TYPE_CHECKING`` by the modules that take a buffer, so it costs nothing
at run time.  A structural type: anything with a length, indexable by position (an int)
sliceable to something bytes-like, with the buffer protocol: bytes, bytearray, memoryview, or a caller's
memory map (wirefmt itself maps no files).
"""

from __future__ import annotations

from typing import Any, Protocol


class Buffer(Protocol):
    """What a reader reads from: ``buf[i]`` is a byte value, ``buf[a:b]`` bytes-like."""

    def __len__(self) -> int: ...

    def __getitem__(self, key: Any, /) -> Any: ...

    def __buffer__(self, flags: int, /) -> memoryview: ...  # the buffer protocol (struct reads it)
