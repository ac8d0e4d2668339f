"""External data, the reading side (ExternalData.md): tensors whose bytes live in files
beside the model.

This module parses a tensor's ``external_data`` entries, decides whether a location is
safe, finds, checks and maps the data files, and verifies checksums.  Writing data files
(converting a model, saving it, copying its files) is `irmodel.external_write`, which
builds on this module and is never imported by it: the rules a read enforces live here
once, and every location the writer uses is vetted by them.

Reading is lazy.  `irmodel.load` only records the model's directory; a data file is
validated, opened and mapped (``mmap``, read-only) the first time one of its tensors is
read (`read_external_data`, which `to_array` uses), and the mapping is cached on the
model, one per file.  Opening a 7 GB model therefore costs nothing, and reading one
tensor touches only that tensor's pages.

Safety follows the onnx project's threat model (docs/ExternalDataSecurity.md), and is
stricter where it only warns.  Before any byte of a data file is read (or written), we
refuse with `ExternalDataError`, naming the tensor and the location:

* a key other than location/offset/length/checksum/basepath, or a key given twice;
* an empty, absolute (POSIX or Windows style) or ``..``-containing location;
* a location that resolves, through a symlink in any component, outside the model
  directory; a final component that is a symlink; anything but a regular file;
* a file with more than one hard link (``st_nlink > 1``), which could be a link to a
  file elsewhere that only looks local;
* an offset or length that is not a plain decimal number (no sign, spaces, ``_`` or
  non-ASCII digits), or that reaches past the end of the file.

The path checks run on ``realpath``/``lstat`` results; the file is then opened with
``O_NOFOLLOW`` and its ``fstat`` compared with what was checked, so a final component
swapped between check and open is caught.  Known limit (shared with the reference's
POSIX fallback): someone who can write to the model directory *while* we open it could
swap a parent directory for a symlink between the checks and the open; closing that
needs ``openat2(RESOLVE_BENEATH)``, which Python does not expose.  ``basepath`` is
accepted (the spec lets loaders add it) but never used to locate a file.

Checksums: ``checksum`` holds the SHA1 hex digest of *the tensor's bytes* (the
``offset``/``length`` range).  ExternalData.md says "of the file"; the two agree when a
tensor has its file to itself, and a per-range digest is the only one that can be
checked without reading every other tensor in a shared file.  They are written with
``checksum=True`` on the save path and verified with ``verify_checksum=True`` on the
read path; verification of a tensor without a checksum fails (a stripped checksum must
not pass as a verified one).
"""

from __future__ import annotations

import mmap
import ntpath
import os
import re
import stat
from itertools import chain
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Iterable, Iterator

from .errors import ExternalDataError
from .origin import Origin, origin_of, set_origin
from .walk import TENSOR, top_field, walk

ALLOWED_KEYS = frozenset({"location", "offset", "length", "checksum", "basepath"})
# Slice size for streaming copies and hashing: bounded memory, few system calls.
_CHUNK = 1 << 24
# 20 digits hold any 64-bit offset; longer strings are refused before int() sees them.
_MAX_DIGITS = 20
_DIGITS = re.compile(r"[0-9]{1,%d}\Z" % _MAX_DIGITS)
_SHA1_HEX = re.compile(r"[0-9a-fA-F]{40}\Z")
# PATH_MAX on Linux: no longer path could be opened, and refusing it up front keeps
# os.path.realpath from spending seconds on a hostile 400 KB location.
MAX_LOCATION = 4096
_EXTERNAL = 1  # TensorProto.EXTERNAL
_DEFAULT = 0  # TensorProto.DEFAULT
_GRAPH, _GRAPHS = 5, 10  # AttributeProto.GRAPH, AttributeProto.GRAPHS
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the checks cannot hang us
_O_BINARY = getattr(os, "O_BINARY", 0)


def _short(text, limit: int = 200):
    """A name or location as shown in a message: an attacker's 1 MB string is cut."""
    return text if not isinstance(text, str) or len(text) <= limit else text[:limit] + "..."


def _error(tensor_name: str, location, problem: str) -> ExternalDataError:
    return ExternalDataError(f"tensor {_short(tensor_name)!r}, external data location "
                             f"{_short(location)!r}: {problem}")


# -- parsing -------------------------------------------------------------------------------

def location_problem(location: str) -> str | None:
    """What makes ``location`` unsafe as an external-data location, or None if it is safe.

    Path rules only (empty, NUL, too long, absolute, a directory, ``..``); no file is
    touched.  A separate function so that a caller validating a user's choice (the
    command line's ``--location``) can word the refusal for its own user.
    """
    if not isinstance(location, str) or not location:
        return "the location is empty"
    if "\0" in location:
        return "the location contains a NUL character"
    if len(location) > MAX_LOCATION:
        return f"the location is {len(location)} characters long, more than {MAX_LOCATION}"
    if (os.path.isabs(location) or ntpath.isabs(location) or ntpath.splitdrive(location)[0]
            or location.startswith(("/", "\\"))):
        return "the location must be a path relative to the model directory, not an absolute path"
    if location.endswith(("/", "\\")):
        return "the location names a directory, not a file"
    if ".." in re.split(r"[\\/]", location):
        return "the location must not contain '..' components"
    return None


def check_location(location: str, tensor_name: str = "") -> None:
    """Refuse a location that is empty, absolute or climbs with ``..`` (no file access)."""
    problem = location_problem(location)
    if problem is not None:
        raise _error(tensor_name, location, problem)


class ExternalDataInfo:
    """The validated ``external_data`` entries of one tensor (no file is touched).

    Same attributes as the reference's class (``location``, ``offset``, ``length``,
    ``checksum``, ``basepath``), but unknown or repeated keys and malformed numbers are
    refused rather than warned about or guessed at.
    """

    __slots__ = ("location", "offset", "length", "checksum", "basepath", "tensor_name")

    def __init__(self, tensor: Any) -> None:
        name = tensor.name
        self.tensor_name = name
        entries: dict = {}
        for entry in tensor.external_data:
            key, value = entry.key, entry.value
            if not isinstance(value, str):  # invalid UTF-8 in a string field reads as bytes
                value = os.fsdecode(bytes(value))
            if key not in ALLOWED_KEYS:
                shown = key if isinstance(key, str) and len(key) <= 100 else f"{str(key)[:100]}..."
                raise _error(name, entries.get("location", _first_location(tensor)),
                             f"unknown key {shown!r} (allowed: {', '.join(sorted(ALLOWED_KEYS))})")
            if key in entries:
                # Two parsers taking the first or the last one would read different data.
                raise _error(name, entries.get("location", value),
                             f"key {key!r} is given twice ({entries[key][:100]!r}, then "
                             f"{value[:100]!r})")
            entries[key] = value
        location = entries.get("location", "")
        check_location(location, name)
        self.location = location
        self.offset = self._number(entries, "offset", name, location)
        self.length = self._number(entries, "length", name, location)
        self.checksum = entries.get("checksum")
        if self.checksum is not None and not _SHA1_HEX.match(self.checksum):
            raise _error(name, location, f"checksum {self.checksum[:60]!r} is not a SHA1 hex digest")
        self.basepath = entries.get("basepath", "")

    @staticmethod
    def _number(entries: dict, key: str, name: str, location: str):
        text = entries.get(key)
        if text is None:
            return None
        if not _DIGITS.match(text):
            raise _error(name, location, f"{key} {text[:40]!r} is not a non-negative decimal integer")
        return int(text)


def _first_location(tensor):
    for entry in tensor.external_data:
        if entry.key == "location":
            return entry.value
    return None


def uses_external_data(tensor: Any) -> bool:
    """True when the tensor says its data is in an external file (``data_location``)."""
    return tensor.HasField("data_location") and tensor.data_location == _EXTERNAL


# -- reading -------------------------------------------------------------------------------

class _Mapped:
    """One read-only mapping of a validated data file."""

    __slots__ = ("view", "size", "ident")

    def __init__(self, view: memoryview, size: int, ident: tuple):
        self.view = view
        self.size = size
        self.ident = ident


def _contained(base_real: str, real: str) -> bool:
    try:
        return os.path.commonpath([base_real, real]) == base_real
    except ValueError:  # different drives (Windows)
        return False


def _check_bounds(info: ExternalDataInfo, size: int) -> None:
    offset = info.offset or 0
    if offset > size:
        raise _error(info.tensor_name, info.location,
                     f"offset {offset} is past the end of the file ({size} bytes)")
    if info.length is not None and info.length > size - offset:
        raise _error(info.tensor_name, info.location,
                     f"length {info.length} from offset {offset} runs past the end of the file "
                     f"({size} bytes)")


def _checked_stat(base_dir: str, info: ExternalDataInfo) -> tuple[str, os.stat_result]:
    """Resolve and vet the data file of ``info`` with path operations only (no open)."""
    name, loc = info.tensor_name, info.location
    path = os.path.join(base_dir, loc)
    base_real = os.path.realpath(base_dir)
    if not _contained(base_real, os.path.realpath(path)):
        raise _error(name, loc, f"the location resolves (through a symlink) outside the model "
                                f"directory {base_real!r}")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise _error(name, loc, f"no such file in {base_real!r}") from None
    except OSError as exc:
        raise _error(name, loc, f"cannot stat the file: {exc.strerror}") from None
    _vet_stat(st, info)
    return path, st


def _vet_stat(st: os.stat_result, info: ExternalDataInfo) -> None:
    name, loc = info.tensor_name, info.location
    if stat.S_ISLNK(st.st_mode):
        raise _error(name, loc, "the file is a symlink; external data must be a regular file")
    if not stat.S_ISREG(st.st_mode):
        raise _error(name, loc, "not a regular file")
    if st.st_nlink > 1:
        raise _error(name, loc, f"the file has {st.st_nlink} hard links; a hard-linked data "
                                "file may be a file from elsewhere and is refused")


def _map_file(base_dir: str, info: ExternalDataInfo) -> _Mapped:
    path, st = _checked_stat(base_dir, info)
    _check_bounds(info, st.st_size)
    name, loc = info.tensor_name, info.location
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY)
    except OSError as exc:
        raise _error(name, loc, f"cannot open the file: {exc.strerror}") from None
    try:
        fst = os.fstat(fd)
        if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            raise _error(name, loc, "the file changed between its checks and its opening")
        _vet_stat(fst, info)
        _check_bounds(info, fst.st_size)
        if fst.st_size == 0:
            view = memoryview(b"")
        else:
            view = memoryview(mmap.mmap(fd, 0, access=mmap.ACCESS_READ))
    finally:
        os.close(fd)
    return _Mapped(view, fst.st_size, (fst.st_dev, fst.st_ino))


def _base_dir_of(tensor, base_dir, location: str) -> str:
    if base_dir is not None:
        return os.fspath(base_dir)
    origin = origin_of(tensor)
    found = origin.base_dir if origin is not None else None
    if found is None or not origin.load_external:  # type: ignore[union-attr]  # found is not None only when origin is not None
        why = ("its model was loaded with load_external_data=False" if found is not None
               else "its model was not loaded from a file")
        raise _error(tensor.name, location, f"the data is external but {why}; pass base_dir= "
                                            "(or call load_external_data_for_model)")
    return found


def read_external_data(tensor: Any, base_dir: str | None = None, *, verify_checksum: bool = False) -> memoryview:
    """The bytes of an external tensor: a read-only view into its file's mapping.

    ``base_dir`` defaults to the directory the tensor's model was loaded from (when it
    was loaded with external data enabled).  Mappings are cached on the model root, one
    per file; the tensor itself is not modified.
    """
    info = ExternalDataInfo(tensor)
    base = _base_dir_of(tensor, base_dir, info.location)
    origin = origin_of(tensor)
    if origin is None:  # a model built in memory, read with an explicit base_dir
        origin = set_origin(tensor._root(), Origin(base_dir=None, load_external=False))
    cache = origin.data_files
    key = os.path.normpath(os.path.join(os.path.abspath(base), info.location))
    mapped = cache.get(key)
    if mapped is None:
        mapped = _map_file(base, info)
        mapped = cache.setdefault(mapped.ident, mapped)  # the same file by another name
        cache[key] = mapped
    _check_bounds(info, mapped.size)
    offset = info.offset or 0
    end = mapped.size if info.length is None else offset + info.length
    view = mapped.view[offset:end]
    if verify_checksum:
        _verify(view, info)
    return view


def _sha1_hex(view) -> str:
    import hashlib  # noqa: PLC0415 (only needed with checksums; keeps import irmodel light)

    h = hashlib.sha1()
    mv = memoryview(view).cast("B")
    for a in range(0, mv.nbytes, _CHUNK):
        h.update(mv[a:a + _CHUNK])
    return h.hexdigest()


def _verify(view, info: ExternalDataInfo) -> None:
    if info.checksum is None:
        raise _error(info.tensor_name, info.location, "verify_checksum=True but the tensor has no "
                                                      "checksum entry")
    actual = _sha1_hex(view)
    if actual != info.checksum.lower():
        raise _error(info.tensor_name, info.location,
                     f"SHA1 checksum mismatch: the entry says {info.checksum.lower()}, "
                     f"the data has {actual}")


def load_external_data_for_tensor(tensor: Any, base_dir: str | None, *, verify_checksum: bool = False) -> None:
    """Make the tensor's data inline: ``raw_data`` set, ``external_data`` cleared.

    As the reference does, ``data_location`` becomes DEFAULT.  ``raw_data`` is a view of
    the data file's mapping, not a copy; saving over that file later is safe, since
    saving replaces files by renaming (the mapping keeps the old contents).
    """
    view = read_external_data(tensor, base_dir, verify_checksum=verify_checksum)
    _make_inline(tensor, view)


def _make_inline(tensor, view) -> None:
    tensor.raw_data = view
    tensor.data_location = _DEFAULT
    tensor.ClearField("external_data")


def load_external_data_for_model(model: Any, base_dir: str | None, *, verify_checksum: bool = False) -> None:
    """Make every external tensor of ``model`` inline (see `load_external_data_for_tensor`).

    All tensors are validated and mapped first, so a refused one leaves the model as it
    was.  Tensors are those the reference visits: initializers and tensor attributes,
    in subgraphs and functions too.
    """
    views = [(t, read_external_data(t, base_dir, verify_checksum=verify_checksum))
             for t in _get_all_tensors(model) if uses_external_data(t)]
    for t, view in views:
        _make_inline(t, view)


# -- traversal (the tensors the reference visits, in its order) ------------------------------

def _get_initializer_tensors(model) -> Iterator:
    """Initializers of the main graph and of every subgraph below it, as the reference
    (``onnx.external_data_helper``) visits them: not training_info's, not functions'."""
    return (t for kind, t, where in walk(model)
            if kind == TENSOR and where[1] == "initializer" and top_field(where) == "graph")


def _get_attribute_tensors(model) -> Iterator:
    """Tensor attributes (``t``, ``tensors``) in the graph, its subgraphs and functions."""
    return (t for kind, t, where in walk(model)
            if kind == TENSOR and where[1] != "initializer" and top_field(where) != "training_info")


def _get_all_tensors(model) -> Iterable:
    return chain(_get_initializer_tensors(model), _get_attribute_tensors(model))


def external_tensors(model: Any) -> Iterator[Any]:
    """Every tensor of ``model`` marked external, in the order the reference visits them.

    Initializers and tensor attributes, in subgraphs and functions too: the tensors
    whose files a copy of the model must take along.
    """
    return (t for t in _get_all_tensors(model) if uses_external_data(t))

__all__ = [
    "ALLOWED_KEYS", "ExternalDataInfo", "check_location", "location_problem",
    "uses_external_data", "read_external_data", "load_external_data_for_tensor",
    "load_external_data_for_model", "external_tensors",
]
