"""The ONNX message classes, built once at import from the schema tables."""

from __future__ import annotations

from .message import build_classes
from .schema import REGISTRY


class EnumType:
    """An enum's names and values, with the methods of protobuf's EnumTypeWrapper."""

    def __init__(self, name: str, values: dict):
        self.name = name
        self._values = dict(values)
        self._names = {}
        for n, v in values.items():
            self._names.setdefault(v, n)

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

    def keys(self):
        return list(self._values)

    def values(self):
        return list(self._values.values())

    def items(self):
        return list(self._values.items())

    def __getattr__(self, name: str) -> int:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return f"<enum {self.name}>"


CLASSES = build_classes(REGISTRY)
ENUMS = {name: EnumType(name, spec.values) for name, spec in REGISTRY.enums.items()}

# Nested types and enum values where protobuf's generated code puts them, so that
# ``TensorProto.FLOAT`` and ``TypeProto.Tensor`` work as users of onnx expect.
for _name, _cls in CLASSES.items():
    if "." in _name:
        _outer, _inner = _name.rsplit(".", 1)
        setattr(CLASSES[_outer], _inner, _cls)
for _name, _enum in ENUMS.items():
    if "." in _name:
        _outer, _inner = _name.rsplit(".", 1)
        setattr(CLASSES[_outer], _inner, _enum)
        for _vname, _value in _enum.items():
            setattr(CLASSES[_outer], _vname, _value)

globals().update({n: c for n, c in CLASSES.items() if "." not in n})
Version = ENUMS["Version"]
OperatorStatus = ENUMS["OperatorStatus"]
EXPERIMENTAL, STABLE = 0, 1
