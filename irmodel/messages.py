"""The ONNX message classes, built once at import from the schema tables."""

from __future__ import annotations

from wirefmt import EnumType, build_classes

from .codecache import DEFAULT as _CODE_CACHE
from .proto import REGISTRY


CLASSES = build_classes(REGISTRY, module="irmodel", code_cache=_CODE_CACHE)
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
