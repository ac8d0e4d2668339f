"""External data, the reading side (ExternalData.md): tensors whose bytes live in files
beside the model.

This module parses a tensor's ``external_data`` entries, decides whether a location is
safe, finds, checks and maps the data files, and verifies checksums.  Writing data files
(converting a model, saving it, copying its files) is `irmodel._files.external_write`, which
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

* a key other than location/offset/length/checksum/basepath, a key given twice, a key
  or value with a NUL character, a location that is not valid UTF-8;
* an empty, absolute (POSIX or Windows style) or ``..``-containing location;
* a location with a symlink in any component, or a directory component that is not a
  directory; anything but a regular file at the end;
* a file with more than one hard link (``st_nlink > 1``), which could be a link to a
  file elsewhere that only looks local;
* an offset or length that is not a plain decimal number of ASCII digits (no sign,
  spaces, ``_``, or digits such as "²" or "٣" that ``str.isdigit`` accepts), or that
  reaches past the end of the file.

Every path that reads a tensor's entries (reading, copying, writing, ``inspect``) parses
them with `ExternalDataInfo`, so they all accept and refuse the same entries.

How a data file is opened, and why: the model directory is opened, then each component
of the location below it with ``openat`` (``os.open(..., dir_fd=...)``) and
``O_NOFOLLOW`` (plus ``O_DIRECTORY`` for the directories), each relative to the
descriptor of the one before.  A symlink anywhere makes the open fail (``ELOOP``), and
since no path is resolved twice, a directory swapped for a symlink between two steps
cannot redirect the read (the check-then-open race of path-based checks, which
``openat2(RESOLVE_BENEATH)`` would also close but Python does not expose).  The file is
then vetted on its descriptor (``fstat``: regular, one link, long enough).  Every
``OSError`` becomes an `ExternalDataError`.  Where ``dir_fd`` is not supported
(Windows), the path is checked with ``realpath``/``lstat`` and opened with
``O_NOFOLLOW``, and the race remains.  ``basepath`` is accepted (the spec lets loaders
add it) but never used to locate a file.

Checksums: ``checksum`` holds the SHA1 hex digest of *the tensor's bytes* (the
``offset``/``length`` range).  ExternalData.md says "of the file"; the two agree when a
tensor has its file to itself, and a per-range digest is the only one that can be
checked without reading every other tensor in a shared file.  They are written with
``checksum=True`` on the save path and verified with ``verify_checksum=True`` on the
read path; verification of a tensor without a checksum fails (a stripped checksum must
not pass as a verified one).
"""

from __future__ import annotations

import errno
import mmap
import ntpath
import os
import stat
from itertools import chain
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Iterable, Iterator

from ..errors import ExternalDataError
from .origin import Origin, file_state, origin_of, set_origin
from .._walk import TENSOR, top_field, walk

ALLOWED_KEYS = frozenset({"location", "offset", "length", "checksum", "basepath"})
# Slice size for streaming copies and hashing: bounded memory, few system calls.
_CHUNK = 1 << 24
# 20 digits hold any 64-bit offset; longer strings are refused before int() sees them.
_MAX_DIGITS = 20
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
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
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)


def _short(text, limit: int = 200):
    """A name or location as shown in a message: an attacker's 1 MB string is cut."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text)
        return text if len(text) <= limit else text[:limit] + b"..."
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
    if ".." in location.replace("\\", "/").split("/"):
        return "the location must not contain '..' components"
    return None


# The entries' syntax is checked with str methods, not regular expressions: importing
# `re` (with enum, functools and collections) would cost every command that meets external
# data more than the rest of an `inspect` of it (benchmarks/RESULTS.md, session 21).

def _is_decimal(text: str) -> bool:
    """1 to `_MAX_DIGITS` ASCII digits: ``[0-9]{1,20}`` and nothing else (``isdigit``
    alone would take other scripts' digits and superscripts)."""
    return 0 < len(text) <= _MAX_DIGITS and text.isascii() and text.isdigit()


def _is_sha1_hex(text: str) -> bool:
    """40 hexadecimal digits and nothing else."""
    return len(text) == 40 and _HEX_DIGITS.issuperset(text)


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
            where = entries.get("location", _first_location(tensor))
            if key not in ALLOWED_KEYS:  # a bytes key (invalid UTF-8) is never allowed
                raise _error(name, where, f"unknown key {_short(key, 100)!r} (allowed: "
                                          f"{', '.join(sorted(ALLOWED_KEYS))})")
            if not isinstance(value, str):  # invalid UTF-8 in a string field reads as bytes
                raise _error(name, where, f"the value of {key!r} is not valid UTF-8: "
                                          f"{_short(bytes(value), 100)!r}")
            if "\0" in value:
                raise _error(name, where, f"the value of {key!r} contains a NUL character")
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
        if self.checksum is not None and not _is_sha1_hex(self.checksum):
            raise _error(name, location, f"checksum {self.checksum[:60]!r} is not a SHA1 hex digest")
        self.basepath = entries.get("basepath", "")

    @staticmethod
    def _number(entries: dict, key: str, name: str, location: str):
        text = entries.get(key)
        if text is None:
            return None
        if not _is_decimal(text):
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
    """One validated data file: a read-only view of all of it, and its `file_state` when
    it was mapped (which a save compares with the file's state then: `irmodel._files.origin`)."""

    __slots__ = ("view", "size", "ident", "state")

    def __init__(self, view: memoryview, size: int, st: os.stat_result):
        self.view = view
        self.size = size
        self.ident = (st.st_dev, st.st_ino)
        self.state = file_state(st)


def _contained(base_real: str, real: str) -> bool:
    try:
        return os.path.commonpath([base_real, real]) == base_real
    except ValueError:  # different drives (Windows)
        return False


def _check_bounds(info: ExternalDataInfo, size: int) -> None:
    offset = info.offset or 0
    if offset > size:
        # The words of onnx's message first (callers match them), then ours.
        raise _error(info.tensor_name, info.location,
                     f"offset {offset} exceeds file size ({size} bytes): past the end of the file")
    if info.length is not None and info.length > size - offset:
        raise _error(info.tensor_name, info.location,
                     f"length {info.length} exceeds available data ({size - offset} bytes from offset "
                     f"{offset}): it runs past the end of the file ({size} bytes)")


def _vet_stat(st: os.stat_result, info: ExternalDataInfo) -> None:
    name, loc = info.tensor_name, info.location
    if stat.S_ISLNK(st.st_mode):
        raise _error(name, loc, "the file is a symlink; external data must be a regular file")
    if not stat.S_ISREG(st.st_mode):
        raise _error(name, loc, "not a regular file")
    if st.st_nlink > 1:
        raise _error(name, loc, f"the file has {st.st_nlink} hard links; a hard-linked data "
                                "file may be a file from elsewhere and is refused")


#: Whether files can be opened component by component (``openat`` with ``O_NOFOLLOW``).
_BENEATH = (os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd
            and _O_NOFOLLOW != 0 and _O_DIRECTORY != 0)


def _components(location: str) -> list:
    """The path components of a vetted location (`location_problem` refused ``..``)."""
    if os.altsep:
        location = location.replace(os.altsep, os.sep)
    return [p for p in location.split(os.sep) if p not in ("", ".")]


def _open_parent(base_dir: str, parts: list) -> int:
    """A descriptor of the directory that holds ``parts[-1]``: the model directory opened,
    then each directory component below it, never following a symlink.  OSError as is."""
    dfd = os.open(base_dir, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        for part in parts[:-1]:
            nfd = os.open(part, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=dfd)
            os.close(dfd)
            dfd = nfd
    except BaseException:
        os.close(dfd)
        raise
    return dfd


def _os_problem(exc: OSError, base_dir: str) -> str:
    """What an OSError met while opening a data file means, for `ExternalDataError`."""
    code = exc.errno
    if code == errno.ELOOP:
        return "a component of the location is a symlink (external data is never read through one)"
    if code == errno.ENOTDIR:
        return "a directory component of the location is a symlink or not a directory"
    if code == errno.ENOENT:
        return f"no such file in {_short(base_dir)!r}"
    return f"cannot open the file: {exc.strerror or exc}"


def _open_data_file(base_dir: str, info: ExternalDataInfo) -> tuple[int, os.stat_result]:
    """``(descriptor, fstat)`` of the vetted data file of ``info`` (module docstring:
    below the model directory, no symlink in any component, a regular file with one
    link, long enough).  Every OSError becomes an `ExternalDataError`."""
    name, loc = info.tensor_name, info.location
    parts = _components(loc)
    if not parts:
        raise _error(name, loc, "the location names the model directory, not a file")
    try:
        if _BENEATH:
            dfd = _open_parent(base_dir, parts)
            try:
                # Refuse a device, a FIFO or a short file before opening it (nothing is
                # opened that would be refused); the fstat below checks the opened file.
                st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
                _vet_stat(st, info)
                _check_bounds(info, st.st_size)
                fd = os.open(parts[-1], os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK
                             | _O_NOCTTY, dir_fd=dfd)
            finally:
                os.close(dfd)
        else:
            fd = _open_by_path(base_dir, info)
    except OSError as exc:
        raise _error(name, loc, _os_problem(exc, base_dir)) from None
    try:
        fst = os.fstat(fd)
        _vet_stat(fst, info)
        _check_bounds(info, fst.st_size)
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, OSError):
            raise _error(name, loc, _os_problem(exc, base_dir)) from None
        raise
    return fd, fst


def _open_by_path(base_dir: str, info: ExternalDataInfo) -> int:
    """The fallback where ``dir_fd`` is missing: path checks, then ``O_NOFOLLOW`` (racy)."""
    name, loc = info.tensor_name, info.location
    path = os.path.join(base_dir, loc)
    base_real = os.path.realpath(base_dir)
    if not _contained(base_real, os.path.realpath(path)):
        raise _error(name, loc, f"the location resolves (through a symlink) outside the model "
                                f"directory {_short(base_real)!r}")
    st = os.lstat(path)
    _vet_stat(st, info)
    _check_bounds(info, st.st_size)
    fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY)
    fst = os.fstat(fd)
    if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise _error(name, loc, "the file changed between its checks and its opening")
    return fd


def _map_file(base_dir: str, info: ExternalDataInfo) -> _Mapped:
    fd, fst = _open_data_file(base_dir, info)
    try:
        view = memoryview(b"") if fst.st_size == 0 else \
            memoryview(mmap.mmap(fd, 0, access=mmap.ACCESS_READ))
    except (OSError, ValueError) as exc:
        raise _error(info.tensor_name, info.location, f"cannot map the file: {exc}") from None
    finally:
        os.close(fd)
    return _Mapped(view, fst.st_size, fst)


def _read_range(base_dir: str, info: ExternalDataInfo) -> memoryview:
    """The tensor's bytes, read into memory (for a model loaded with ``mmap=False``)."""
    fd, fst = _open_data_file(base_dir, info)
    offset = info.offset or 0
    n = (fst.st_size - offset) if info.length is None else info.length  # bounds checked
    data = bytearray(n)
    view = memoryview(data)
    done = 0
    try:
        while done < n:
            chunk = os.pread(fd, min(n - done, _CHUNK), offset + done)
            if not chunk:
                raise _error(info.tensor_name, info.location,
                             f"the file got shorter while it was read ({offset + done} bytes)")
            view[done:done + len(chunk)] = chunk
            done += len(chunk)
    except OSError as exc:
        raise _error(info.tensor_name, info.location, _os_problem(exc, base_dir)) from None
    finally:
        os.close(fd)
    return view.toreadonly()


def probe_data_file(base_dir: str, location: object) -> tuple[str, int | None]:
    """``(status, size)`` of a data file for ``inspect``, which never opens data files:
    ``"ok"`` and its size, ``"missing"``, ``"not a regular file"``, or ``"unsafe
    location"`` (a location that `location_problem` refuses, or with a symlink or a
    non-directory in a component).  Directories are walked as a read walks them."""
    if not isinstance(location, str) or location_problem(location) is not None:
        return "unsafe location", None
    parts = _components(location)
    if not parts:
        return "unsafe location", None
    try:
        if _BENEATH:
            dfd = _open_parent(base_dir, parts)
            try:
                st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
            finally:
                os.close(dfd)
        else:
            path = os.path.join(base_dir, location)
            if not _contained(os.path.realpath(base_dir), os.path.realpath(path)):
                return "unsafe location", None
            st = os.lstat(path)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return "unsafe location", None
        return "missing", None
    if stat.S_ISLNK(st.st_mode):
        return "unsafe location", None
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file", None
    return "ok", st.st_size


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
    per file; the tensor itself is not modified.  For a model loaded with
    ``mmap=False`` the tensor's bytes are read (a copy, made at each call) instead.
    """
    info = ExternalDataInfo(tensor)
    base = _base_dir_of(tensor, base_dir, info.location)
    origin = origin_of(tensor)
    if origin is None:  # a model built in memory, read with an explicit base_dir
        origin = set_origin(tensor._root(), Origin(base_dir=None, load_external=False))
    if not origin.use_mmap:
        view = _read_range(base, info)
        if verify_checksum:
            _verify(view, info)
        return view
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


def load_external_data_for_model(model: Any, base_dir: str | None, *, verify_checksum: bool = False,
                                 pick: Any = None) -> None:
    """Make every external tensor of ``model`` inline (see `load_external_data_for_tensor`).

    All tensors are validated and mapped first, so a refused one leaves the model as it
    was.  Tensors are those the reference visits: initializers and tensor attributes,
    in subgraphs and functions too.  ``pick``: as for `external_tensors`.
    """
    views = [(t, read_external_data(t, base_dir, verify_checksum=verify_checksum))
             for t in external_tensors(model, pick)]
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


def external_tensors(model: Any, pick: Any = None) -> Iterator[Any]:
    """Every tensor of ``model`` marked external, in the order the reference visits them.

    Initializers and tensor attributes, in subgraphs and functions too: the tensors
    whose files a copy of the model must take along.  ``pick`` (`irmodel._walk`'s; the
    callers above the byte readers give `irmodel._wireview.holders.tensor_holders`)
    skips the nodes that cannot hold one, read from their bytes: the model is then
    walked once, not twice, and the tensors are listed before the first is yielded.
    """
    if pick is None:
        return (t for t in _get_all_tensors(model) if uses_external_data(t))
    initializers, attributes = [], []
    for kind, t, where in walk(model, pick):
        if kind != TENSOR or not uses_external_data(t):
            continue
        top = top_field(where)
        if where[1] == "initializer":
            if top == "graph":
                initializers.append(t)
        elif top != "training_info":
            attributes.append(t)
    return iter(initializers + attributes)

__all__ = [
    "ALLOWED_KEYS", "ExternalDataInfo", "check_location", "location_problem",
    "uses_external_data", "read_external_data", "load_external_data_for_tensor",
    "load_external_data_for_model", "external_tensors",
]
