"""The few names of wirefmt's internal modules that the fuzzing toolkit needs, in one place.

wirefmt's top level exports the reader and writer primitives; the field-kind and wire-type
constants live in ``wirefmt.schema``, which may move.  Everything in ``irmodel.fuzz``
imports them from here, so a move means editing this file only.
"""

from __future__ import annotations

from wirefmt.schema import (BOOL, BYTES, DOUBLE, EGROUP, ENUM, FIXED32, FIXED64, FIXED_WIDTH, FLOAT, GROUP,
                            I32, I64, INT32, INT64, LEN, MESSAGE, PACKABLE, SFIXED32, SFIXED64, SGROUP,
                            STRING, VARINT, WIRE_TYPE)

#: Wire types that carry a value of a fixed width, and that width.
FIXED_WIDTH_OF_WIRE_TYPE = {I32: 4, I64: 8}
#: Field kinds whose packed elements have a fixed width, and that width (wirefmt's table).
FIXED_WIDTH_OF_KIND = FIXED_WIDTH

__all__ = ["BOOL", "BYTES", "DOUBLE", "EGROUP", "ENUM", "FIXED32", "FIXED64", "FLOAT", "GROUP", "I32", "I64",
           "INT32", "INT64", "LEN", "MESSAGE", "PACKABLE", "SFIXED32", "SFIXED64", "SGROUP", "STRING",
           "VARINT", "WIRE_TYPE", "FIXED_WIDTH_OF_WIRE_TYPE", "FIXED_WIDTH_OF_KIND"]
