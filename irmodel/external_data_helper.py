"""onnx.external_data_helper: tensors whose data lives in files beside the model.

A thin layer under onnx's names: reading and its checks are `irmodel._files.external_data`
(locations confined to the model's directory, offsets and lengths checked against the
file, data mapped rather than read), writing is `irmodel._files.external_write` (atomic,
aligned, streamed).  The one function without an irmodel counterpart is
`save_external_data`, onnx's per-tensor append, written here over the same checks.

Where irmodel is stricter than onnx (unknown or repeated ``external_data`` keys,
malformed numbers, a location that is absolute or climbs out of the model's directory)
it raises `irmodel.ExternalDataError`, a ValueError as onnx's errors here are;
docs/differences.md lists the cases.
"""

from __future__ import annotations

import os

from .errors import ExternalDataError
# The private names are those onnx's own code and tests reach for.
from ._files.external_data import (ALLOWED_KEYS as _ALLOWED_EXTERNAL_DATA_KEYS, ExternalDataInfo,  # noqa: F401
                            _get_all_tensors, _get_attribute_tensors, _get_initializer_tensors,
                            load_external_data_for_model, load_external_data_for_tensor, uses_external_data)
from ._files.external_write import (_checked_target, _is_valid_filename,  # noqa: F401
                             convert_model_from_external_data as _convert_from_external_data,
                             convert_model_to_external_data, remove_external_data_field, set_external_data,
                             write_external_data_tensors)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ExternalDataInfo", "convert_model_from_external_data", "convert_model_to_external_data",
    "load_external_data_for_model", "load_external_data_for_tensor", "remove_external_data_field",
    "save_external_data", "set_external_data", "uses_external_data", "write_external_data_tensors",
]

#: How far past a data file's end `save_external_data` may be asked to start a tensor
#: (zero-filled): the alignment gap between tensors sharing a file is below one boundary,
#: and a larger gap would be an allocation sized by an untrusted offset.
_MAX_EXTERNAL_DATA_PADDING = 64 * 1024


def convert_model_from_external_data(model: Any) -> None:
    """Make every external tensor inline again: its data in ``raw_data``, its
    ``external_data`` entries gone.

    onnx's loaded models already hold their external data in ``raw_data``; irmodel's keep
    it in the files until read, so the data of a model loaded from a file (with external
    data) is read in here first.  ValueError for a tensor with neither.
    """
    from ._files.origin import origin_of  # noqa: PLC0415

    origin = origin_of(model)
    if origin is not None and origin.load_external and origin.base_dir:
        from ._files.external_data import external_tensors  # noqa: PLC0415

        for tensor in [t for t in external_tensors(model) if not t.HasField("raw_data")]:
            load_external_data_for_tensor(tensor, origin.base_dir)
    _convert_from_external_data(model)


def save_external_data(tensor: Any, base_path: str) -> None:
    """Append ``tensor.raw_data`` to the data file its ``external_data`` names, in
    ``base_path``, and point the tensor at where it went (onnx's per-tensor write).

    The file is created if missing.  A given ``offset`` must lie between the file's
    current end and `_MAX_EXTERNAL_DATA_PADDING` past it (the gap is zero-filled):
    an offset before the end would overwrite data already there.  The location is
    checked as for reading, and the data file may not be a symlink or a special file.
    """
    info = ExternalDataInfo(tensor)
    if not tensor.HasField("raw_data"):
        from .errors import ValidationError  # noqa: PLC0415

        raise ValidationError("raw_data field doesn't exist.")
    path = _checked_target(os.fspath(base_path), info.location, tensor.name, None)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(path, flags, 0o666), "r+b") as data_file:
        end = data_file.seek(0, os.SEEK_END)
        if info.offset is not None:
            gap = info.offset - end
            if not 0 <= gap <= _MAX_EXTERNAL_DATA_PADDING:
                raise ExternalDataError(
                    f"External data offset ({info.offset}) for tensor {tensor.name!r} must be between "
                    f"the current file size ({end}) and {end + _MAX_EXTERNAL_DATA_PADDING}.")
            data_file.write(bytes(gap))
        start = data_file.tell()
        data_file.write(tensor.raw_data)
        set_external_data(tensor, info.location, start, data_file.tell() - start)
