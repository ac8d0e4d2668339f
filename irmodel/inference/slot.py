"""A value's slot: where inference keeps the current type of one value name.

Its own module because the engine (which makes slots) and the node pass (which makes
them without the engine's help, for speed) both need it, and neither may import the other.
"""

from __future__ import annotations


class Slot:
    """The current type of one value (the reference's ``TypeProto*`` in its name map).

    ``merged``: for a declared type, the inferred types merged into it, in order (the
    write-back replays them to keep denotations as the reference does; `denotation`).
    """

    __slots__ = ("type", "merged")

    def __init__(self, t, merged=None):
        self.type = t
        self.merged = merged
