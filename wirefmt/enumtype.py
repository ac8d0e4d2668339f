"""Enum types as protobuf's generated code exposes them (``EnumTypeWrapper``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .schema import EnumSpec


class EnumType:
    """An enum's names and values, with the methods of protobuf's EnumTypeWrapper.

    Built from the schema's `EnumSpec`, which owns the canonical name of each number.
    """

    def __init__(self, spec: EnumSpec) -> None:
        self.name = spec.name
        self._values = dict(spec.values)
        self._names: dict[int, str] = spec.names

    def Name(self, number: int) -> str:
        try:
            return self._names[number]
        except KeyError:
            raise ValueError(f"enum {self.name} has no value {number}") from None

    def Value(self, name: str) -> int:
        try:
            return self._values[name]
        except KeyError:
            raise ValueError(f"enum {self.name} has no name {name!r}") from None

    def keys(self) -> list[str]:
        return list(self._values)

    def values(self) -> list[int]:
        return list(self._values.values())

    def items(self) -> list[tuple[str, int]]:
        return list(self._values.items())

    def __getattr__(self, name: str) -> int:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return f"<enum {self.name}>"
