"""Limits applied to untrusted input, each with the reason for its number."""

from __future__ import annotations

#: Nesting depth of messages and groups.  protobuf (C++ and upb) refuses input nested
#: deeper than 100 levels by default; matching it means we accept and refuse the same files.
MAX_DEPTH = 100

#: A varint never needs more than 10 bytes: 64 bits / 7 bits per byte, rounded up.
MAX_VARINT_BYTES = 10

#: Largest legal field number (2**29 - 1): the tag is a uint32 holding number << 3 | wire type.
MAX_FIELD_NUMBER = (1 << 29) - 1
