"""The ONNX message classes, each built from the schema tables the first time it is asked for."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any

from wirefmt import EnumType, ScanHints, build_classes

from ._files.codecache import DEFAULT as _CODE_CACHE
from ._files.origin import copy_context as _copy_context
from .proto import REGISTRY

#: How ONNX files use their fields, for the scan code wirefmt generates per type
#: (`wirefmt.ScanHints`; speed and memory only, never what a read gives).  Tuned for the
#: full walk of a large graph (every node, its inputs, outputs and attributes, each
#: attribute's name, type and values); what each hint was measured to gain is in
#: benchmarks/RESULTS.md ("Measurements behind the design").
SCAN_HINTS = {
    # A graph's 75,000 ``node`` fields come as one run, each an item of 40 to 1,000 bytes:
    # one call of wirefmt's run loop per run, with the items' lengths of one and two bytes
    # inline, instead of a turn of the field loop per item and a call per item of 128 bytes
    # or more.
    "GraphProto": ScanHints(runs=("node", "initializer", "value_info")),
    "FunctionProto": ScanHints(runs=("node",)),
    # A node's attributes are read with the node: made by the node's scan into a list, whose
    # iteration is C code instead of a Python ``__iter__`` per node.  A node over 4 KB keeps
    # them lazy: made at once, 2 bytes of forged input (an empty attribute) would hold
    # hundreds of bytes of objects (tests/wirefmt/test_message_list.py bounds it).  A node
    # without attributes (two in three of a torch export's) gets an empty list the same way:
    # read through the class, it would be a Python call and a lazy sequence per node.
    # A Constant node (a quarter of a torch export's nodes) has no ``input``: read by a walk
    # all the same, so its empty list comes from the scan too (``eager_empty``).
    "NodeProto": ScanHints(eager_items=("attribute",), eager_span=4096, eager_empty=("input",)),
    # An attribute's ``type`` (field 20, a two-byte tag) is always present and its common
    # fields are not its lowest-numbered ones: they are tested first, and the two-byte chain
    # holds ``type`` only.  A walk reads ``ints``, ``floats`` and ``strings`` of every
    # attribute: an absent one read through its class costs a Python call from C, several
    # times the empty container the scan puts in place.  Attributes
    # repeat byte for byte across a graph (``axis: -1``): a short one's decoded values are
    # kept and copied.
    "AttributeProto": ScanHints(hot_order=("name", "type", "i", "ints", "f", "s", "floats", "strings", "t", "g"),
                                eager_empty=("floats", "ints", "strings"), memo=True),
}

ENUMS = {name: EnumType(spec) for name, spec in REGISTRY.enums.items()}

# Nested types and enum values where protobuf's generated code puts them, so that
# ``TensorProto.FLOAT`` and ``TypeProto.Tensor`` work as users of onnx expect: given to each
# outer class as it is built (`_dress`).
_NESTED: dict = {}  # outer type name -> [(attribute name, nested type name)]
for _name in REGISTRY.messages:
    if "." in _name:
        _outer, _inner = _name.rsplit(".", 1)
        _NESTED.setdefault(_outer, []).append((_inner, _name))
_NESTED_ENUMS: dict = {}  # outer type name -> [(attribute name, EnumType)]
for _name, _enum in ENUMS.items():
    if "." in _name:
        _outer, _inner = _name.rsplit(".", 1)
        _NESTED_ENUMS.setdefault(_outer, []).append((_inner, _enum))
#: onnx's short repr() of a model, a graph and a function (counts, not contents).
_REPRS = {"ModelProto": "model_repr", "GraphProto": "graph_repr", "FunctionProto": "function_repr"}


def _dress(name: str, cls: type) -> None:
    """What protobuf's generated class has beyond its fields: nested types, enums and their
    values as attributes, and for three types onnx's short repr (`irmodel._reprs`)."""
    for attr, nested in _NESTED.get(name, ()):
        setattr(cls, attr, CLASSES[nested])
    for attr, enum in _NESTED_ENUMS.get(name, ()):
        setattr(cls, attr, enum)
        for value_name, value in enum.items():
            setattr(cls, value_name, value)
    if name in _REPRS:
        setattr(cls, "__repr__", _short_repr(_REPRS[name]))  # noqa: B010 (a method of a built class)


def _short_repr(function_name: str):
    """A ``__repr__`` calling `irmodel._reprs`'s ``function_name``, imported by the first repr
    (not by the class: most processes never print a model)."""
    def __repr__(self) -> str:
        from . import _reprs  # noqa: PLC0415

        return getattr(_reprs, function_name)(self)

    return __repr__


#: Every message class by full name (``TensorProto.Segment``), each built the first time it
#: is asked for (`wirefmt.message.ClassTable`: a process that reads models builds a dozen).
CLASSES = build_classes(REGISTRY, module="irmodel", code_cache=_CODE_CACHE, copy_context=_copy_context,
                        scan_hints=SCAN_HINTS, on_build=_dress)
#: The names ``from irmodel.messages import *`` gives (every class without a dot, built then).
__all__ = ["CLASSES", "ENUMS", "SCAN_HINTS", "Version", "OperatorStatus", "EXPERIMENTAL", "STABLE",
           *(n for n in REGISTRY.messages if "." not in n)]


def __getattr__(name: str):
    """A message class as a module attribute (``messages.NodeProto``), built on first use."""
    if "." not in name and name in REGISTRY.messages:
        cls = globals()[name] = CLASSES[name]
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})


# For type checkers: the classes above are made at run time, with fields, nested types and
# enum values set as attributes, so each is declared as `Any` (a static type could not list
# its fields).  Never run: at run time the module's `__getattr__` gives them.
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

Version = ENUMS["Version"]
OperatorStatus = ENUMS["OperatorStatus"]
EXPERIMENTAL, STABLE = 0, 1
