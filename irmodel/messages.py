"""The ONNX message classes, built once at import from the schema tables."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

from wirefmt import EnumType, build_classes

from .codecache import DEFAULT as _CODE_CACHE
from .origin import copy_context as _copy_context
from .proto import REGISTRY


CLASSES = build_classes(REGISTRY, module="irmodel", code_cache=_CODE_CACHE, copy_context=_copy_context)
ENUMS = {name: EnumType(spec) for name, spec in REGISTRY.enums.items()}

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

# onnx's short repr() of a model, a graph and a function (counts, not contents).
from ._reprs import function_repr as _function_repr, graph_repr as _graph_repr, model_repr as _model_repr  # noqa: E402

CLASSES["ModelProto"].__repr__ = _model_repr
CLASSES["GraphProto"].__repr__ = _graph_repr
CLASSES["FunctionProto"].__repr__ = _function_repr

# For type checkers: the classes above are made at run time, with fields, nested types and
# enum values set as attributes, so each is declared as `Any` (a static type could not list
# its fields).  Never run: at run time the globals().update() below defines them.
if TYPE_CHECKING:
    AttributeProto: Any
    DeviceConfigurationProto: Any
    FunctionProto: Any
    GraphProto: Any
    IntIntListEntryProto: Any
    MapProto: Any
    ModelProto: Any
    NodeDeviceConfigurationProto: Any
    NodeProto: Any
    OperatorProto: Any
    OperatorSetIdProto: Any
    OperatorSetProto: Any
    OptionalProto: Any
    SequenceProto: Any
    ShardedDimProto: Any
    ShardingSpecProto: Any
    SimpleShardedDimProto: Any
    SparseTensorProto: Any
    StringStringEntryProto: Any
    TensorAnnotation: Any
    TensorProto: Any
    TensorShapeProto: Any
    TrainingInfoProto: Any
    TypeProto: Any
    ValueInfoProto: Any

globals().update({n: c for n, c in CLASSES.items() if "." not in n})
Version = ENUMS["Version"]
OperatorStatus = ENUMS["OperatorStatus"]
EXPERIMENTAL, STABLE = 0, 1
