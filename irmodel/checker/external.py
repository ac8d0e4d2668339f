"""Where external data may live: the reference's location rules, checked with stat only.

A location is a relative path inside the model's directory, without ``..``, naming a
regular file that is neither a symbolic link nor hard-linked, and that does not resolve
outside the directory through a symlinked parent.  No file is opened or read.

A path that starts with ``#`` names no file: onnx's ``model_container`` keeps its large
arrays in memory under such locations, and the reference's checker, like ours, holds them
to the lexical rules and the symbolic-link rule only.  As there, what starts with ``#`` is
the path the location makes (the model's directory joined with the normalised location),
so this applies to a model checked in memory (whatever directory it was loaded from: onnx
resolves a message's locations against the current directory) or from a file in the
current directory, not to a file checked by its path in another directory.
"""

from __future__ import annotations

import os
import posixpath
import stat

from .problems import short


def location_problem(base_dir: str, location, reference_dir: str | None = None) -> tuple[str, str] | None:
    """``(code, explanation)`` for the first rule ``location`` breaks, or None.

    ``base_dir`` "" means the current directory (a model checked in memory, as the
    reference does).  ``reference_dir`` (None: ``base_dir``) is the directory the
    reference would resolve ``location`` against, which decides `in_memory`.
    """
    if not isinstance(location, str):  # a proto2 string that is not UTF-8
        location = bytes(location).decode("utf-8", "surrogateescape")
    if not location:
        return "X701", "the location is empty"
    if os.path.isabs(location):
        return "X702", "it is an absolute path"
    # The reference normalises the path lexically, then refuses any '..' in what is left
    # (even inside a name such as 'a..b').
    if ".." in posixpath.normpath(location):
        return "X703", "it contains '..'"
    path = os.path.join(base_dir, location) if base_dir else location
    try:
        st = os.lstat(path)
    except (OSError, ValueError):  # missing, a NUL in the name, a name too long ...
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        return "X704", f"{short(path)!r} is a symbolic link"
    if in_memory(base_dir if reference_dir is None else reference_dir, location):
        return None
    try:
        base_real = os.path.realpath(base_dir or os.curdir)
        real = os.path.realpath(path)
        inside = real == base_real or os.path.commonpath([base_real, real]) == base_real
    except (OSError, ValueError):
        inside = False
    if not inside:
        return "X705", f"{short(path)!r} resolves outside the model directory {short(base_real)!r}"
    if st is None or not stat.S_ISREG(st.st_mode):
        what = "does not exist" if st is None else "is not a regular file"
        return "X706", f"{short(path)!r} {what}"
    if st.st_nlink > 1:
        return "X707", f"{short(path)!r} has {st.st_nlink} hard links"
    return None


def in_memory(base_dir: str, location: str) -> bool:
    """Whether ``location`` under ``base_dir`` makes a path starting with ``#``: the name of
    an array kept in memory (onnx's ``model_container``), not of a file."""
    made = os.path.join(base_dir, posixpath.normpath(location)) if base_dir else posixpath.normpath(location)
    return made.startswith("#")


# The reference's wording for each location rule ({t}: tensor name, {loc}: location,
# {p}: the path it makes, {d}: the model directory).
ONNX_WORDING = {
    "X701": "Location of external TensorProto ( tensor name: {t}) should not be empty.",
    "X702": ("Location of external TensorProto ( tensor name: {t}) should be a relative path, "
             "but it is an absolute path: {loc}"),
    "X703": ("Data of TensorProto ( tensor name: {t}) should be file inside '{d}', but '{loc}' "
             "points outside the directory."),
    "X704": "Data of TensorProto ( tensor name: {t}) should be stored in {p}, but it is a symbolic link.",
    "X705": "Tensor {t} external data resolves outside model directory.",
    "X706": "Data of TensorProto ( tensor name: {t}) should be stored in {p}, but it is not regular file.",
    "X707": ("Data of TensorProto ( tensor name: {t}) should be stored in {p}, but it has multiple "
             "hard links, indicating a potential hardlink attack."),
}


def check_location(report, base_dir: str, location, tensor_name, path: str, node=None,
                   reference_dir: str | None = None) -> None:
    """Report the location rule ``location`` breaks, if any, at ``path``."""
    found = location_problem(base_dir, location, reference_dir)
    if found is None:
        return
    code, why = found
    loc = short(location)
    text = ONNX_WORDING[code].format(t=short(tensor_name), loc=loc, d=short(base_dir),
                                     p=short(os.path.join(base_dir, str(loc)) if base_dir else loc))
    report.add(code, path, f"{text} (location {loc!r}: {why})", node)
