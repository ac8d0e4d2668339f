"""The ways a protobuf operation can fail.

`DecodeError` is about *the input*: bytes that are not a valid protobuf encoding.
`ParseError` is about *the input* too, in the dict (JSON) form: data that does not fit
the schema.  `EncodeError` is about *the caller*: a value that the schema cannot represent.
Keeping them apart (as h11 keeps local and remote errors apart) tells a user
whether to blame the file or their own code.
"""

from __future__ import annotations


class DecodeError(ValueError):
    """Malformed protobuf input.

    ``offset`` is the byte offset in the buffer where the problem was found and
    ``path`` the field path of the message being decoded: the root's type, then field
    names and indexes (``Outer.items[12].inner``).  Both may be ``None`` when unknown.
    """

    def __init__(self, reason: str, offset: int | None = None, path: str | None = None) -> None:
        self.reason = reason
        self.offset = offset
        self.path = path
        super().__init__(reason)

    def __str__(self) -> str:
        text = self.reason
        if self.offset is not None:
            text += f" at offset {self.offset}"
        if self.path:
            text += f" in {self.path}"
        return text

    def __reduce__(self):  # keep the extra fields across pickling (multiprocessing fuzzers)
        return (type(self), (self.reason, self.offset, self.path))


class EncodeError(ValueError):
    """A value that cannot be written under its field's schema (wrong range, wrong type)."""


class ParseError(ValueError):
    """A dict that does not fit the message schema (what json_format.ParseError reports)."""
