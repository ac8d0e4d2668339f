"""onnx.utils' names: `extract_model` and `Extractor` (the work is in `irmodel._surgery.extract`),
and the tar helpers onnx's model hub uses (`_extract_model_safe`, `_tar_members_filter`).

``extract_model(input_path, output_path, input_names, output_names, check_model=True,
infer_shapes=True)`` reads only the part it extracts (nodes, initializers, external data)
from a mapped model; `irmodel._surgery.extract` says what else differs from onnx.
"""

from __future__ import annotations

import os

from ._surgery.errors import SurgeryError
from ._surgery.extract import Extractor, extract_model

TYPE_CHECKING = False
if TYPE_CHECKING:
    import tarfile


def _tar_members_filter(tar: tarfile.TarFile, base: str | os.PathLike) -> list:
    """The members of ``tar``, refused (RuntimeError, as onnx) when one would land outside
    ``base`` or is a link: a downloaded archive must not write anywhere else."""
    base_abs = os.path.abspath(base)
    members = []
    for member in tar:
        path = os.path.join(base, member.name)
        try:
            inside = os.path.commonpath([base_abs, os.path.abspath(path)]) == base_abs
        except ValueError:  # another drive
            inside = False
        if not inside:
            raise RuntimeError(f"The tarball member {path} in downloading model contains directory "
                               "traversal sequence which may contain harmful payload.")
        if member.issym() or member.islnk():
            raise RuntimeError(f"The tarball member {path} in downloading model contains symbolic "
                               "links which may contain harmful payload.")
        members.append(member)
    return members


def _extract_model_safe(model_tar_path: str | os.PathLike, local_model_with_data_dir_path: str | os.PathLike) -> None:
    """Unpack a model archive into a directory, refusing members that escape it or are links."""
    import tarfile  # noqa: PLC0415

    with tarfile.open(model_tar_path) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(path=local_model_with_data_dir_path, filter="data")
        else:  # Python without extraction filters
            tar.extractall(path=local_model_with_data_dir_path,  # noqa: S202 - members vetted
                           members=_tar_members_filter(tar, local_model_with_data_dir_path))


__all__ = ["Extractor", "extract_model", "SurgeryError"]
