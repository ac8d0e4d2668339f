"""The external data files of a summary: one entry per location, its status and totals.

Both ways of summarizing a model (`irmodel._report.summary` over its messages,
`irmodel._report.bytesummary` over its bytes) hand their external tensors here: anything
with the ``name`` and ``external_data`` (entries with ``key`` and ``value``) that
`irmodel._files.external_data.ExternalDataInfo` reads, a TensorProto or a record read
from the bytes.  The entries are parsed as every reader parses them, and the files are
measured as a read would reach them, never opened.  The file layer is imported only when
a model has external tensors.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable, Iterable

from ..limits import add_sizes


def external_files(tensors: Iterable[Any], base_dir: str | None, nbytes: Callable[[Any], int]) -> list:
    """The summary's ``external_data`` entries of ``tensors`` (in the order their locations
    first appear); ``nbytes(t)``: a tensor's size when its entries give no length."""
    files: dict = {}
    for t in tensors:
        info, problem = external_info(t)
        loc = info.location if info is not None else raw_location(t)
        entry = files.get(loc)
        if entry is None:
            entry = files[loc] = {"location": loc, "status": None, "file_size": None,
                                  "tensors": 0, "bytes": 0}
            if info is not None:
                entry["status"], entry["file_size"] = file_status(base_dir, loc)
        if problem is not None and "problem" not in entry:
            entry["status"], entry["problem"] = problem_status(loc), problem
        entry["tensors"] += 1
        length = info.length if info is not None else None
        entry["bytes"] = add_sizes((entry["bytes"], nbytes(t) if length is None else length))
    return list(files.values())


def external_info(t: Any) -> tuple:
    """``(ExternalDataInfo or None, problem or None)``: the tensor's entries as every
    reader parses them (`irmodel._files.external_data.ExternalDataInfo`), without raising."""
    from ..errors import ExternalDataError  # noqa: PLC0415 (only tensors with external data come here)
    from .._files.external_data import ExternalDataInfo  # noqa: PLC0415 (imports the file layer)

    try:
        return ExternalDataInfo(t), None
    except ExternalDataError as exc:
        return None, str(exc)


def raw_location(t):
    """The tensor's location entry as written (str, bytes, or None), for grouping."""
    for e in t.external_data:
        if e.key == "location":
            return e.value
    return None


def problem_status(location) -> str:
    """The status of a file whose tensors' entries do not parse: the location's fault, or
    the other entries'."""
    from .._files.external_data import location_problem  # noqa: PLC0415

    if not isinstance(location, str) or location_problem(location) is not None:
        return "unsafe location"
    return "invalid entries"


def file_status(base_dir: str | None, location: str) -> tuple[str, int | None]:
    """``(status, size)`` of a data file, measured as a read would reach it, never opened
    (`irmodel._files.external_data.probe_data_file`)."""
    if base_dir is None:
        return "missing", None
    from .._files.external_data import probe_data_file  # noqa: PLC0415

    return probe_data_file(base_dir, location)
