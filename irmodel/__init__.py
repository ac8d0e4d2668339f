"""irmodel: a pure-Python ONNX toolkit on a hand-written protobuf wire-format codec.

``import irmodel`` needs the standard library only; numpy is imported by the tensor
functions when first called.
"""

from __future__ import annotations

from .errors import DecodeError, EncodeError, ExternalDataError, ValidationError
from .io import dumps, load, loads, message_class
from .jsonform import ParseError
from .messages import *  # noqa: F401,F403  (ModelProto, GraphProto, ... and enum wrappers)
from .messages import CLASSES as _CLASSES
from .schema import IR_VERSION

__version__ = "0.1.0"


def save(model, f, save_as_external_data: bool = False, all_tensors_to_one_file: bool = True,
         location: str | None = None, size_threshold: int = 1024, convert_attribute: bool = False) -> None:
    """Write ``model`` to a path (atomically) or a binary file object.

    Untouched parts of a loaded model are copied from its original bytes.  With
    ``save_as_external_data`` the tensors go to data files as ExternalData.md describes.
    """
    if save_as_external_data:
        from .external_data import save_with_external_data  # noqa: PLC0415
        save_with_external_data(model, f, all_tensors_to_one_file=all_tensors_to_one_file,
                                location=location, size_threshold=size_threshold,
                                convert_attribute=convert_attribute)
        return
    from .io import save_message  # noqa: PLC0415
    save_message(model, f)


def to_dict(msg, preserving_proto_field_name: bool = True) -> dict:
    """What ``json_format.MessageToDict(msg, preserving_proto_field_name=True)`` gives."""
    from .jsonform import to_dict as _to_dict  # noqa: PLC0415
    return _to_dict(msg, preserving_proto_field_name)


def from_dict(data: dict, type_name: str = "ModelProto"):
    """The inverse of `to_dict`; accepts proto field names and lowerCamelCase JSON names."""
    from .jsonform import from_dict as _from_dict  # noqa: PLC0415
    return _from_dict(data, message_class(type_name))


__all__ = [
    "load", "loads", "save", "dumps", "to_dict", "from_dict", "message_class", "IR_VERSION",
    "DecodeError", "EncodeError", "ValidationError", "ExternalDataError", "ParseError",
    *[n for n in _CLASSES if "." not in n],
]
