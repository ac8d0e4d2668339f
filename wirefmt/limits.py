"""Limits applied to untrusted input, each with the reason for its number."""

from __future__ import annotations

#: Nesting depth of messages and groups.  protobuf (C++ and upb) refuses input nested
#: deeper than 100 levels by default; matching it means we accept and refuse the same files.
MAX_DEPTH = 100

#: A varint never needs more than 10 bytes: 64 bits / 7 bits per byte, rounded up.
MAX_VARINT_BYTES = 10

#: A tag or a length prefix is read as a 32-bit varint, in at most 5 bytes (32 bits / 7,
#: rounded up).  protobuf's C++ parser and upb refuse a longer one, padding bytes or not,
#: and protobuf's conformance tests expect that of tags; see docs/wire-format.md.
MAX_TAG_LENGTH_BYTES = 5

#: Largest legal field number (2**29 - 1): the tag is a uint32 holding number << 3 | wire type.
MAX_FIELD_NUMBER = (1 << 29) - 1
