"""Declarative schema types: a proto2/proto3 schema written as Python data.

A `MessageSpec` lists `FieldSpec`s; a `Registry` resolves the type names that message
and enum fields refer to.  Nothing here reads bytes: the tables are consumed by the
readers and writers, which precompute their dispatch from them once per message type.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Iterable

# Field kinds.  Plain ints so that hot loops compare them cheaply.
DOUBLE, FLOAT, INT64, UINT64, INT32, FIXED64, FIXED32, BOOL, STRING, GROUP, MESSAGE, BYTES, \
    UINT32, ENUM, SFIXED32, SFIXED64, SINT32, SINT64 = range(1, 19)

KIND_NAMES = {
    DOUBLE: "double", FLOAT: "float", INT64: "int64", UINT64: "uint64", INT32: "int32",
    FIXED64: "fixed64", FIXED32: "fixed32", BOOL: "bool", STRING: "string", GROUP: "group",
    MESSAGE: "message", BYTES: "bytes", UINT32: "uint32", ENUM: "enum", SFIXED32: "sfixed32",
    SFIXED64: "sfixed64", SINT32: "sint32", SINT64: "sint64",
}
KIND_BY_NAME = {v: k for k, v in KIND_NAMES.items()}

# Wire types.
VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5

#: The wire type each kind is written with when not packed.
WIRE_TYPE = {
    DOUBLE: I64, FLOAT: I32, INT64: VARINT, UINT64: VARINT, INT32: VARINT, FIXED64: I64,
    FIXED32: I32, BOOL: VARINT, STRING: LEN, GROUP: SGROUP, MESSAGE: LEN, BYTES: LEN,
    UINT32: VARINT, ENUM: VARINT, SFIXED32: I32, SFIXED64: I64, SINT32: VARINT, SINT64: VARINT,
}
#: Kinds that may be packed (numeric scalars).
PACKABLE = frozenset(k for k, wt in WIRE_TYPE.items() if wt in (VARINT, I32, I64))
#: Kinds whose JSON form (protobuf's ProtoJSON) is a string because they are 64 bits wide.
INT64_KINDS = frozenset((INT64, UINT64, FIXED64, SFIXED64, SINT64))
INTEGER_KINDS = frozenset((INT32, INT64, UINT32, UINT64, SINT32, SINT64, FIXED32, FIXED64,
                           SFIXED32, SFIXED64))
#: The ``struct`` format (little-endian) of each fixed-width kind: the one table the reader,
#: the writer and the message scan share.
FIXED_FORMAT = {FLOAT: "<f", DOUBLE: "<d", FIXED32: "<I", FIXED64: "<Q", SFIXED32: "<i", SFIXED64: "<q"}
#: Bytes per value of each fixed-width kind.
FIXED_WIDTH = {kind: 4 if WIRE_TYPE[kind] == I32 else 8 for kind in FIXED_FORMAT}
#: Inclusive value range of each integer kind.
INT_RANGE = {
    INT32: (-(1 << 31), (1 << 31) - 1), SINT32: (-(1 << 31), (1 << 31) - 1),
    SFIXED32: (-(1 << 31), (1 << 31) - 1), UINT32: (0, (1 << 32) - 1), FIXED32: (0, (1 << 32) - 1),
    INT64: (-(1 << 63), (1 << 63) - 1), SINT64: (-(1 << 63), (1 << 63) - 1),
    SFIXED64: (-(1 << 63), (1 << 63) - 1), UINT64: (0, (1 << 64) - 1), FIXED64: (0, (1 << 64) - 1),
}


class _Frozen:
    """Immutable after construction, compared and hashed by its fields, as a frozen dataclass.

    Plain ``__slots__`` classes instead of ``dataclasses``: importing ``dataclasses``
    pulls in ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``), several ms of
    every ``import irmodel`` for three small classes.
    """

    __slots__ = ()
    _FIELDS: tuple = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n in self._FIELDS)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash(self._values())

    def __reduce__(self):  # pickle and copy: the constructor takes the fields in order
        return type(self), self._values()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self._FIELDS)})"


class FieldSpec(_Frozen):
    """One field of a message.

    ``type_name`` names the message or enum type for MESSAGE/GROUP/ENUM fields.
    ``packed`` defaults to the syntax's rule (proto2: unpacked, proto3: packed) when None.
    ``explicit_presence`` is proto3's ``optional``: explicit presence for a singular
    scalar (None: the syntax decides).
    """

    __slots__ = ("number", "name", "kind", "repeated", "type_name", "packed", "oneof", "default", "json_name",
                 "explicit_presence")
    _FIELDS = __slots__
    # For the type checker (the values live in the slots):
    number: int
    name: str
    kind: int
    repeated: bool
    type_name: str | None
    packed: bool | None
    oneof: str | None
    default: object
    json_name: str | None
    explicit_presence: bool | None

    def __init__(self, number: int, name: str, kind: int, repeated: bool = False, type_name: str | None = None,
                 packed: bool | None = None, oneof: str | None = None, default: object = None,
                 json_name: str | None = None, explicit_presence: bool | None = None):
        # Every process builds a few hundred of these at import (irmodel.proto): the fields
        # are stored while the instance wears `_FieldSpecUnfrozen` (same slots, plain
        # stores) rather than by ten ``object.__setattr__`` calls, about half the cost.
        put = object.__setattr__
        if type(self) is not FieldSpec:  # a subclass may have another layout: slot by slot
            for name_, value in zip(FieldSpec.__slots__, (number, name, kind, repeated, type_name, packed, oneof,
                                                     default, json_name, explicit_presence)):
                put(self, name_, value)
            return
        put(self, "__class__", _FieldSpecUnfrozen)
        self.number = number
        self.name = name
        self.kind = kind
        self.repeated = repeated
        self.type_name = type_name
        self.packed = packed
        self.oneof = oneof
        self.default = default
        self.json_name = json_name
        self.explicit_presence = explicit_presence
        put(self, "__class__", FieldSpec)

    @property
    def camel_name(self) -> str:
        """The JSON name protobuf derives from the field name (lowerCamelCase)."""
        if self.json_name:
            return self.json_name
        head, *rest = self.name.split("_")
        return head + "".join(p[:1].upper() + p[1:] for p in rest)


class _FieldSpecUnfrozen(FieldSpec):
    """A `FieldSpec` being built (`FieldSpec.__init__`): its layout, with plain attribute stores."""

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__  # both: the type's one setattr slot then stays C's own


class EnumSpec(_Frozen):
    """An enum type.  ``closed`` (proto2) enums keep unknown values as unknown fields.

    ``names`` maps each number to its canonical name (with aliases, the first one).
    """

    __slots__ = ("name", "values", "closed", "names")
    _FIELDS = ("name", "values", "closed")
    name: str
    values: dict
    closed: bool
    names: dict[int, str]

    def __init__(self, name: str, values: dict, closed: bool = True):
        put = object.__setattr__
        put(self, "name", name)
        put(self, "values", values)
        put(self, "closed", closed)
        names: dict = {}
        for n, v in values.items():
            names.setdefault(v, n)
        put(self, "names", names)


class MessageSpec:
    """A message type: its fields (sorted by number) and the lookups derived from them."""

    __slots__ = ("name", "fields", "syntax", "by_number", "by_name", "oneofs")

    def __init__(self, name: str, fields: tuple, syntax: str = "proto2"):
        self.name = name
        self.fields = tuple(sorted(fields, key=lambda f: f.number))
        self.syntax = syntax
        self.by_number = {f.number: f for f in self.fields}
        self.by_name = {f.name: f for f in self.fields}
        if len(self.by_number) != len(self.fields) or len(self.by_name) != len(self.fields):
            raise ValueError(f"{self.name}: duplicate field number or name")
        self.oneofs: dict = {}
        for f in self.fields:
            if f.oneof:
                self.oneofs.setdefault(f.oneof, []).append(f.name)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.name, self.fields, self.syntax) == (other.name, other.fields, other.syntax)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces

    def __repr__(self) -> str:
        return f"MessageSpec(name={self.name!r}, fields={self.fields!r}, syntax={self.syntax!r})"

    def has_presence(self, f: FieldSpec) -> bool:
        """Whether a singular field tracks presence (proto2 always; proto3 for messages,
        oneof members and ``optional`` scalars).  Without presence, a field holding its
        default value is neither written nor reported."""
        if f.repeated:
            return False
        if self.syntax != "proto3" or f.kind in (MESSAGE, GROUP) or f.oneof:
            return True
        return bool(f.explicit_presence)

    def is_packed(self, f: FieldSpec) -> bool:
        if not f.repeated or f.kind not in PACKABLE:
            return False
        if f.packed is None:
            return self.syntax == "proto3"
        return f.packed


class Registry:
    """Message and enum specs by full name."""

    def __init__(self, messages: Iterable[MessageSpec] = (), enums: Iterable[EnumSpec] = ()) -> None:
        self.messages: dict[str, MessageSpec] = {}
        self.enums: dict[str, EnumSpec] = {}
        for m in messages:
            self.add_message(m)
        for e in enums:
            self.add_enum(e)

    def add_message(self, spec: MessageSpec) -> None:
        self.messages[spec.name] = spec

    def add_enum(self, spec: EnumSpec) -> None:
        self.enums[spec.name] = spec

    def message(self, name: str) -> MessageSpec:
        try:
            return self.messages[name]
        except KeyError:
            raise KeyError(f"unknown message type {name!r}") from None

    def enum(self, name: str) -> EnumSpec:
        try:
            return self.enums[name]
        except KeyError:
            raise KeyError(f"unknown enum type {name!r}") from None

    def validate(self) -> None:
        """Check that every referenced type exists (run by tests, not at import)."""
        for m in self.messages.values():
            for f in m.fields:
                if f.kind in (MESSAGE, GROUP):
                    self.message(f.type_name)
                elif f.kind == ENUM:
                    self.enum(f.type_name)
