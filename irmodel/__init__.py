"""irmodel: a pure-Python ONNX toolkit on a hand-written protobuf wire-format codec.

``import irmodel`` needs the standard library only; numpy is imported by the tensor
functions when first called.  ``import irmodel`` itself imports nothing: every public
name is imported from its module on first use, through the module ``__getattr__``
below (``irmodel.load`` imports `irmodel.io`, which builds the message classes;
``irmodel.helper`` imports the builders), so a program pays for what it uses, and a
command line pays for its command only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, BinaryIO

    import numpy as np

    from . import helper
    from .checker import (CheckerContext, LexicalScopeContext, Problem, check_attribute, check_function,
                          check_graph, check_model, check_node, check_sparse_tensor, check_tensor,
                          check_value_info)
    from ._files.external_data import (ExternalDataInfo, load_external_data_for_model,
                                       load_external_data_for_tensor, read_external_data,
                                       uses_external_data)
    from .external_data_helper import convert_model_from_external_data
    from ._files.external_write import (convert_model_to_external_data, save_with_external_data,
                                        set_external_data, write_external_data_tensors)
    from .inference import InferenceError, infer_node_outputs, infer_shapes, infer_shapes_path
    from ._files import codecache, origin
    from . import errors, io, messages, proto
    from .errors import DecodeError, EncodeError, ExternalDataError, SourceChangedError, ValidationError
    from .io import dumps, loads, message_class
    from .serialization import (load, load_from_string, load_model, load_model_from_string, load_tensor,
                                load_tensor_from_string, save, save_model, save_tensor)
    from wirefmt import ParseError
    from .messages import *  # noqa: F401,F403  (ModelProto, GraphProto, ... and enum wrappers)
    from .messages import CLASSES, ENUMS, EXPERIMENTAL, STABLE, OperatorStatus, Version
    from .proto import IR_VERSION, REGISTRY

from ._version import __version__  # noqa: E402 (the one home of the number)

#: onnx's flag for a build with the ai.onnx.ml operators: irmodel always has them.
ONNX_ML = True


def to_dict(msg: Any, preserving_proto_field_name: bool = True) -> dict:
    """What ``json_format.MessageToDict(msg, preserving_proto_field_name=True)`` gives."""
    from wirefmt import to_dict as _to_dict  # noqa: PLC0415
    return _to_dict(msg, preserving_proto_field_name)


def from_dict(data: dict, type_name: str = "ModelProto") -> Any:
    """The inverse of `to_dict`; accepts proto field names and lowerCamelCase JSON names."""
    from wirefmt import from_dict as _from_dict  # noqa: PLC0415

    from .io import message_class  # noqa: PLC0415
    return _from_dict(data, message_class(type_name))


def to_array(tensor: Any, base_dir: str | None = None, *, verify_checksum: bool = False) -> np.ndarray:
    """The numpy array a TensorProto holds (``onnx.numpy_helper.to_array``), zero-copy where it can.

    A wrapper, so that numpy is imported on the first call and not by ``import irmodel``;
    see `irmodel.tensors.to_array`.
    """
    from .tensors import to_array as _to_array  # noqa: PLC0415
    return _to_array(tensor, base_dir, verify_checksum=verify_checksum)


def from_array(array: np.ndarray, name: str | None = None) -> Any:
    """A TensorProto holding a numpy array (``onnx.numpy_helper.from_array``); see `irmodel.tensors`."""
    from .tensors import from_array as _from_array  # noqa: PLC0415
    return _from_array(array, name)


_EXTERNAL_DATA_NAMES = [
    "ExternalDataInfo", "convert_model_from_external_data", "convert_model_to_external_data",
    "load_external_data_for_model", "load_external_data_for_tensor", "read_external_data",
    "save_with_external_data", "set_external_data", "uses_external_data",
    "write_external_data_tensors",
]

# Names imported on first use, so that ``import irmodel`` imports only what opening a
# model needs: name -> submodule.  ``helper`` is the submodule itself (onnx.helper's
# builders).  The type checker sees them imported at the top (under TYPE_CHECKING).
_LAZY_NAMES = {
    **dict.fromkeys(("check_model", "check_graph", "check_node", "check_function", "check_tensor",
                     "check_sparse_tensor", "check_attribute", "check_value_info", "CheckerContext",
                     "LexicalScopeContext", "Problem"), "checker"),
    **dict.fromkeys(("infer_shapes", "infer_shapes_path", "infer_node_outputs", "InferenceError"),
                    "inference"),
    **dict.fromkeys(("ExternalDataInfo", "load_external_data_for_model", "load_external_data_for_tensor",
                     "read_external_data", "uses_external_data"), "_files.external_data"),
    **dict.fromkeys(("convert_model_to_external_data", "save_with_external_data", "set_external_data",
                     "write_external_data_tensors"), "_files.external_write"),
    "convert_model_from_external_data": "external_data_helper",
    "helper": "helper",
    **dict.fromkeys(("DecodeError", "EncodeError", "ValidationError", "ExternalDataError",
                     "SourceChangedError"), "errors"),
    **dict.fromkeys(("loads", "dumps", "message_class"), "io"),
    # onnx's loading and saving functions, with its format registry.
    **dict.fromkeys(("load", "save", "load_model", "save_model", "load_from_string", "load_model_from_string",
                     "load_tensor", "load_tensor_from_string", "save_tensor"), "serialization"),
    **dict.fromkeys(("IR_VERSION", "REGISTRY"), "proto"),
    **dict.fromkeys(("CLASSES", "ENUMS", "EnumType", "build_classes", "Version", "OperatorStatus",
                     "EXPERIMENTAL", "STABLE"), "messages"),
    # The message classes without a dot in their name (`irmodel.messages.CLASSES`; a test
    # checks that this list is exactly those).
    **dict.fromkeys((
        "AttributeProto", "ValueInfoProto", "NodeProto", "IntIntListEntryProto",
        "NodeDeviceConfigurationProto", "ShardingSpecProto", "ShardedDimProto", "SimpleShardedDimProto",
        "TrainingInfoProto", "ModelProto", "DeviceConfigurationProto", "StringStringEntryProto",
        "TensorAnnotation", "GraphProto", "TensorProto", "SparseTensorProto", "TensorShapeProto",
        "TypeProto", "OperatorSetIdProto", "FunctionProto", "SequenceProto", "MapProto",
        "OptionalProto", "OperatorProto", "OperatorSetProto"), "messages"),
    # Submodules that ``import irmodel`` imported before it became lazy: still attributes.
    **{m: m for m in ("errors", "io", "messages", "proto")},
    **{m: f"_files.{m}" for m in ("codecache", "origin")},
}
#: Names defined by another package, imported on first use as well.
_FOREIGN_NAMES = {"ParseError": "wirefmt"}
#: The message classes (for ``__all__``): those the lazy table finds in `irmodel.messages`.
_MESSAGE_NAMES = [n for n, m in _LAZY_NAMES.items() if m == "messages" and n.endswith(("Proto", "Annotation"))]


def _submodule(name: str) -> Any:
    """``irmodel.<name>`` for any submodule on disk, imported on first access as onnx's
    submodules are attributes of ``onnx``; None when there is no such module."""
    if not name.isidentifier() or name.startswith("_"):
        return None
    here = os.path.dirname(__file__)
    if not (os.path.exists(os.path.join(here, name + ".py")) or os.path.exists(os.path.join(here, name, "__init__.py"))):
        return None
    return __import__(f"{__name__}.{name}", fromlist=("_",))


def __getattr__(name: str) -> Any:
    module = _LAZY_NAMES.get(name)
    if module is None:
        foreign = _FOREIGN_NAMES.get(name)
        if foreign is None:
            if name.startswith("IR_VERSION_"):  # the dated IR versions: Version's values
                version = __getattr__("Version")
                if name in version.keys():
                    return version.Value(name)
            value = _submodule(name)
            if value is None:
                raise AttributeError(f"module 'irmodel' has no attribute {name!r}")
            globals()[name] = value
            return value
        value = getattr(__import__(foreign), name)
        globals()[name] = value
        return value
    mod = __import__(f"{__name__}.{module}", fromlist=("_",))
    value = mod if module.rpartition(".")[2] == name else getattr(mod, name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_NAMES) | set(_FOREIGN_NAMES))


__all__ = list(dict.fromkeys([
    "load", "loads", "save", "dumps", "ONNX_ML", "load_model", "load_model_from_string", "load_from_string",
    "load_tensor", "load_tensor_from_string", "save_model", "save_tensor", "to_dict", "from_dict", "message_class", "IR_VERSION",
    "DecodeError", "EncodeError", "ValidationError", "ExternalDataError", "ParseError",
    "SourceChangedError",
    "to_array", "from_array", *_EXTERNAL_DATA_NAMES,
    *[n for n, m in _LAZY_NAMES.items() if m in ("checker", "inference", "_files.external_data", "_files.external_write",
                                                     "helper")],
    *_MESSAGE_NAMES,
]))
