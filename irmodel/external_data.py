"""External data (ExternalData.md): tensors whose bytes live in files beside the model.

Reading is lazy.  `irmodel.load` only records the model's directory; a data file is
validated, opened and mapped (``mmap``, read-only) the first time one of its tensors is
read (`read_external_data`, which `to_array` uses), and the mapping is cached on the
model, one per file.  Opening a 7 GB model therefore costs nothing, and reading one
tensor touches only that tensor's pages.

Writing streams each data file in slices, tensors at offsets aligned to `ALIGNMENT`, to
a new file beside its target (`irmodel.io.AtomicFiles`: written, fsynced, renamed over
the target).  A data file is written whole, replacing any file of that name, where the
reference appends to it.  Saving a model with its data files is two-phase: every data
file and then the model are written in full first, and only then renamed into place,
the data files before the model.  So:

* an exception while any of them is written (disk full, a bad tensor, Ctrl-C) leaves
  every previous file as it was and no new one; the in-memory model's tensors keep
  their data (``raw_data``) and the ``external_data`` entries they had before the write;
* the process killed while writing: the same on Linux (the new files are anonymous
  ``O_TMPFILE`` inodes until renamed); elsewhere the files being written are left under
  temporary names (``.~<name>.<hex>.tmp``), never under a target's name;
* a crash *during the renames* (microseconds: one rename per file) can leave some data
  files replaced and the model file not yet; the old model then names a data file whose
  contents changed (its tensors are refused if out of bounds, otherwise wrong).  No set
  of renames is atomic as a whole; the model is renamed last so that the new model never
  names data that is not there;
* saving to a file object rather than a path: the data files are renamed into place,
  then the model is streamed to the file object, which is not atomic.

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
import sys
from itertools import chain
from typing import Iterable, Iterator

from .errors import ExternalDataError

ALLOWED_KEYS = frozenset({"location", "offset", "length", "checksum", "basepath"})
# Where we start each tensor in a data file: the page size, so every tensor can be
# mapped (and viewed by numpy) in place, as ExternalData.md recommends.
ALIGNMENT = 4096
# Slice size for streaming copies and hashing: bounded memory, few system calls.
_CHUNK = 1 << 24
# 20 digits hold any 64-bit offset; longer strings are refused before int() sees them.
_MAX_DIGITS = 20
_DIGITS = re.compile(r"[0-9]{1,%d}\Z" % _MAX_DIGITS)
_SHA1_HEX = re.compile(r"[0-9a-fA-F]{40}\Z")
# PATH_MAX on Linux: no longer path could be opened, and refusing it up front keeps
# os.path.realpath from spending seconds on a hostile 400 KB location.
MAX_LOCATION = 4096
# The reference picks tensors with sys.getsizeof(raw_data) >= size_threshold, i.e. the
# byte count plus the bytes object's header: the same threshold selects the same tensors.
_BYTES_OVERHEAD = sys.getsizeof(b"")
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

def location_problem(location) -> str | None:
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

    def __init__(self, tensor) -> None:
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


def uses_external_data(tensor) -> bool:
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
    d = tensor._root().__dict__
    found = d.get("_base_dir")
    if found is None or not d.get("_load_external", False):
        why = ("its model was loaded with load_external_data=False" if found is not None
               else "its model was not loaded from a file")
        raise _error(tensor.name, location, f"the data is external but {why}; pass base_dir= "
                                            "(or call load_external_data_for_model)")
    return found


def read_external_data(tensor, base_dir: str | None = None, *, verify_checksum: bool = False) -> memoryview:
    """The bytes of an external tensor: a read-only view into its file's mapping.

    ``base_dir`` defaults to the directory the tensor's model was loaded from (when it
    was loaded with external data enabled).  Mappings are cached on the model root, one
    per file; the tensor itself is not modified.
    """
    info = ExternalDataInfo(tensor)
    base = _base_dir_of(tensor, base_dir, info.location)
    root = tensor._root()
    cache = root.__dict__.get("_ext_maps")
    if cache is None:
        cache = {}
        root.__dict__["_ext_maps"] = cache
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


def load_external_data_for_tensor(tensor, base_dir: str | None, *, verify_checksum: bool = False) -> None:
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


def load_external_data_for_model(model, base_dir: str | None, *, verify_checksum: bool = False) -> None:
    """Make every external tensor of ``model`` inline (see `load_external_data_for_tensor`).

    All tensors are validated and mapped first, so a refused one leaves the model as it
    was.  Tensors are those the reference visits: initializers and tensor attributes,
    in subgraphs and functions too.
    """
    views = [(t, read_external_data(t, base_dir, verify_checksum=verify_checksum))
             for t in _get_all_tensors(model) if uses_external_data(t)]
    for t, view in views:
        _make_inline(t, view)


# -- converting ----------------------------------------------------------------------------

def set_external_data(tensor, location: str, offset: int | None = None, length: int | None = None,
                      checksum: str | None = None, basepath: str | None = None) -> None:
    """Mark a tensor that has ``raw_data`` as external, with these entries (in this order)."""
    if not tensor.HasField("raw_data"):
        raise ValueError(f"Tensor {tensor.name} does not have raw_data field. Cannot set external "
                         "data for this tensor.")
    tensor.ClearField("external_data")
    tensor.data_location = _EXTERNAL
    for key, value in (("location", location),
                       ("offset", int(offset) if offset is not None else None),
                       ("length", int(length) if length is not None else None),
                       ("checksum", checksum), ("basepath", basepath)):
        if value is not None:
            tensor.external_data.add(key=key, value=str(value))


def _raw_size(tensor) -> int:
    raw = tensor.raw_data
    return raw.nbytes if isinstance(raw, memoryview) else len(raw)


def _random_name(suffix: str = "") -> str:
    import uuid  # noqa: PLC0415 (rarely needed)

    # uuid4, not the reference's uuid1: a file name should not carry the host's MAC address.
    return f"{uuid.uuid4()}{suffix}"


def _is_valid_filename(name: str) -> bool:
    """The reference's test for a tensor name usable as a file name, plus our location rules."""
    if not re.match(r'^[^<>:;,?"*|/]+$', name) or name in (".", "..") or "\\" in name or "\0" in name:
        return False
    return True


def convert_model_to_external_data(model, all_tensors_to_one_file: bool = True,
                                   location: str | None = None, size_threshold: int = 1024,
                                   convert_attribute: bool = False) -> None:
    """Mark tensors with ``raw_data`` of at least ``size_threshold`` as external.

    As the reference: only initializers unless ``convert_attribute``; one file named
    ``location`` (a random ``<uuid>.data`` if None) or one file per tensor named after the
    tensor (a random name when the tensor's name is not a safe file name).  The size is
    measured as the reference measures it (``sys.getsizeof`` of the bytes).  The data is
    written by the save that must follow.  Unlike the reference, an existing file at
    ``location`` is not an error: saving replaces it atomically.
    """
    tensors = list(_get_all_tensors(model) if convert_attribute else _get_initializer_tensors(model))
    if all_tensors_to_one_file:
        file_name = _random_name(".data")
        if location:
            check_location(location)
            file_name = location
    for tensor in tensors:
        if tensor.HasField("raw_data") and _raw_size(tensor) + _BYTES_OVERHEAD >= size_threshold:
            if all_tensors_to_one_file:
                set_external_data(tensor, file_name)
            else:
                name = tensor.name
                set_external_data(tensor, name if _is_valid_filename(name) else _random_name())


def convert_model_from_external_data(model) -> None:
    """Undo `convert_model_to_external_data` for tensors that still have ``raw_data``."""
    for tensor in _get_all_tensors(model):
        if uses_external_data(tensor):
            if not tensor.HasField("raw_data"):
                raise ValueError("raw_data field doesn't exist.")
            tensor.ClearField("external_data")
            tensor.data_location = _DEFAULT


def remove_external_data_field(tensor, field_key: str) -> None:
    """Remove every ``external_data`` entry with key ``field_key``."""
    kept = [e for e in tensor.external_data if e.key != field_key]
    if len(kept) != len(tensor.external_data):
        tensor.external_data = kept


# -- writing -------------------------------------------------------------------------------

def _checked_target(base_dir: str, location: str, tensor_name: str, model_path: str | None,
                    protect: Iterable[str] = ()) -> str:
    """The absolute path a data file may be written to; refused like a hostile read.

    Never the model file itself, nor one of the files in ``protect``: a data file with
    such a name would destroy a file the caller still needs (the model being converted).
    """
    check_location(location, tensor_name)
    path = os.path.join(base_dir, location)
    base_real = os.path.realpath(base_dir)
    real = os.path.realpath(path)
    if not _contained(base_real, real) or real == base_real:
        raise _error(tensor_name, location, f"the location resolves (through a symlink) outside "
                                            f"the model directory {base_real!r}")
    parent = os.path.dirname(real)
    if not os.path.isdir(parent):
        raise _error(tensor_name, location, f"the directory {parent!r} does not exist")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _error(tensor_name, location, f"cannot stat the file: {exc.strerror}") from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise _error(tensor_name, location, "the file is a symlink; refusing to replace it")
        if not stat.S_ISREG(st.st_mode):
            raise _error(tensor_name, location, "not a regular file; refusing to replace it")
        if st.st_nlink > 1:
            raise _error(tensor_name, location, f"the file has {st.st_nlink} hard links; "
                                                "refusing to replace it")
    if model_path is not None and real == os.path.realpath(model_path):
        raise _error(tensor_name, location, "the data file would overwrite the model file")
    for kept in protect:
        if real == os.path.realpath(kept):
            raise _error(tensor_name, location, f"the data file would overwrite {kept!r}, "
                                                "which must be kept (it is being read)")
    return real


def _as_bytes_view(raw) -> memoryview:
    mv = raw if isinstance(raw, memoryview) else memoryview(raw)
    return mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv


def _stream(fh, view: memoryview, hasher) -> None:
    for a in range(0, view.nbytes, _CHUNK):
        part = view[a:a + _CHUNK]
        fh.write(part)
        if hasher is not None:
            hasher.update(part)


class _Counter:
    """Counts the bytes written and reports ``(done, total)`` to a progress callback.

    It is handed to `_stream` in the place of a hasher (and feeds the real one, if
    any), so that progress comes in `_CHUNK` steps without another streaming loop.
    """

    __slots__ = ("progress", "total", "done", "hasher")

    def __init__(self, progress, total: int) -> None:
        self.progress = progress
        self.total = total
        self.done = 0
        self.hasher = None
        if progress is not None:
            progress(0, total)

    def tap(self, hasher):
        """What to pass to `_stream` as its hasher: ``hasher`` itself when nobody listens."""
        if self.progress is None:
            return hasher
        self.hasher = hasher
        return self

    def update(self, part) -> None:
        if self.hasher is not None:
            self.hasher.update(part)
        self.done += len(part)
        self.progress(self.done, self.total)


def _write_data_file(files, path: str, items: list, checksum: bool,
                     counter: _Counter | None = None) -> list:
    """Write ``[(tensor, offset, view)]`` for ``path`` into ``files`` (an `AtomicFiles`).

    Nothing is renamed into place yet.  Returns the SHA1s (or Nones).
    """
    digests: list = []
    counter = counter or _Counter(None, 0)

    def write(fh) -> None:
        import hashlib  # noqa: PLC0415

        digests.clear()
        pos = 0
        for _tensor, offset, view in items:
            if offset > pos:
                fh.write(bytes(offset - pos))  # alignment padding, under ALIGNMENT bytes
            hasher = hashlib.sha1() if checksum else None
            _stream(fh, view, counter.tap(hasher))
            digests.append(hasher.hexdigest() if hasher is not None else None)
            pos = offset + view.nbytes

    files.write(path, write)
    return digests


def write_external_data_tensors(model, filepath: str, *, checksum: bool = False,
                                model_path: str | None = None, protect: Iterable[str] = (),
                                progress=None):
    """Write the data of every tensor marked external that still has ``raw_data``.

    ``filepath`` is the directory the locations are relative to (the model's).  Tensors
    sharing a location share a file, in model order, each at an offset aligned to
    `ALIGNMENT`; each file is written atomically and streamed.  Afterwards each tensor
    has ``location``, ``offset``, ``length`` (and ``checksum`` if asked) entries and no
    ``raw_data``.  Returns the model, as the reference does.

    Every target is checked before any file is written: a location naming ``model_path``
    or a path in ``protect`` is refused.  ``progress(done, total)``, if given, is called
    with the tensor bytes written so far (in slices of at most 16 MiB) and their total.

    All files are written before any is renamed into place, and the tensors change only
    after that: an exception leaves the files and the model as they were.
    """
    from .io import AtomicFiles  # noqa: PLC0415 (io imports the codec; keep this module light)

    with AtomicFiles() as pending:
        written = _write_data_files(pending, model, os.fspath(filepath), checksum, model_path,
                                    protect, progress)
        pending.commit()
    _point_at_data_files(written)
    return model


def _write_data_files(pending, model, base: str, checksum: bool, model_path: str | None,
                      protect: Iterable[str], progress) -> list:
    """Plan the data files and write them into ``pending``; ``[(location, items, digests)]``."""
    files: dict = {}  # real path -> [location, [(tensor, offset, view)], end]
    for tensor in _get_all_tensors(model):
        if not (uses_external_data(tensor) and tensor.HasField("raw_data")):
            continue
        info = ExternalDataInfo(tensor)
        target = _checked_target(base, info.location, tensor.name, model_path, protect)
        entry = files.setdefault(target, [info.location, [], 0])
        view = _as_bytes_view(tensor.raw_data)
        offset = -(-entry[2] // ALIGNMENT) * ALIGNMENT
        entry[1].append((tensor, offset, view))
        entry[2] = offset + view.nbytes
    _refuse_clobbering(model, base, files)
    counter = _Counter(progress, sum(v.nbytes for e in files.values() for _t, _o, v in e[1]))
    written = []
    for target, (location, items, _end) in files.items():
        digests = _write_data_file(pending, target, items, checksum, counter)
        written.append((location, items, digests))
    return written


def _point_at_data_files(written: list):
    """Make the written tensors external (entries set, ``raw_data`` dropped); returns an undo.

    The undo gives each tensor back its ``raw_data`` and its previous entries, for a save
    that fails after this point (the model file could not be written or renamed).
    """
    before = []
    for location, items, digests in written:
        for (tensor, offset, view), digest in zip(items, digests):
            before.append((tensor, view, [(e.key, e.value) for e in tensor.external_data]))
            set_external_data(tensor, location, offset, view.nbytes, digest)
            tensor.ClearField("raw_data")

    def undo() -> None:
        for tensor, view, entries in before:
            tensor.raw_data = view
            tensor.ClearField("external_data")
            for key, value in entries:
                tensor.external_data.add(key=key, value=value)
    return undo


def _refuse_clobbering(model, base: str, files: dict) -> None:
    """A tensor left external (no raw_data) must not point into a file we are replacing."""
    if not files:
        return
    for tensor in _get_all_tensors(model):
        if uses_external_data(tensor) and not tensor.HasField("raw_data"):
            info = ExternalDataInfo(tensor)
            if os.path.realpath(os.path.join(base, info.location)) in files:
                raise _error(tensor.name, info.location,
                             "this tensor's data was not loaded, and saving would replace the "
                             "file it lives in; load it first (load_external_data=True)")


def _model_path(f) -> str:
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.path.abspath(os.fsdecode(f))
    name = getattr(f, "name", None)  # an int for files opened from a descriptor
    if isinstance(name, (str, bytes, os.PathLike)):
        return os.path.abspath(os.fsdecode(name))
    raise ValueError("saving with external data needs a path, or a file object whose name is "
                     "the model's path: the data files are written beside the model")


def save_with_external_data(model, f, all_tensors_to_one_file: bool = True,
                            location: str | None = None, size_threshold: int = 1024,
                            convert_attribute: bool = False, *, checksum: bool = False,
                            protect: Iterable[str] = (), progress=None) -> None:
    """Save ``model`` to ``f`` with its large tensors in data files beside it.

    What ``onnx.save_model(..., save_as_external_data=True)`` does, given that our model
    may still have its external data unread: tensors whose data can be resolved (the
    model was loaded from a file with external data enabled) are first made inline as
    zero-copy views, exactly as the reference's load would have done; then tensors are
    converted (`convert_model_to_external_data`), the data files and the model written,
    and then all renamed into place, the model last (see the module docstring for what a
    failure at each point leaves).  ``location`` defaults to ``<model file name>.data``.
    The model is modified as the reference's is and afterwards reads its data from the
    new files; if the save fails, its tensors are left converted but still holding their
    data, as they were before the files were written.  ``checksum=True`` adds the SHA1
    of each tensor's bytes (a ``checksum`` entry; the reference writes none).
    ``protect`` and ``progress`` are as for `write_external_data_tensors` (files no data
    file may replace; a ``(done, total)`` callback for the data bytes).
    """
    from .codec import write_message  # noqa: PLC0415
    from .io import AtomicFiles  # noqa: PLC0415

    path = _model_path(f)
    base = os.path.dirname(path)
    if location is None and all_tensors_to_one_file:
        location = os.path.basename(path) + ".data"
    d = model.__dict__
    if d.get("_load_external", False) and d.get("_base_dir") is not None:
        load_external_data_for_model(model, d["_base_dir"])
    convert_model_to_external_data(model, all_tensors_to_one_file, location, size_threshold,
                                   convert_attribute)
    to_path = isinstance(f, (str, bytes, os.PathLike))
    with AtomicFiles() as data_files, AtomicFiles() as model_file:
        written = _write_data_files(data_files, model, base, checksum, path, protect, progress)
        undo = _point_at_data_files(written)
        try:
            if to_path:
                model_file.write(path, lambda fh: write_message(model, fh))
            data_files.commit()
            model_file.commit()  # last: the new model never names data not yet in place
        except BaseException:
            undo()
            raise
    if not to_path:
        write_message(model, f)
    d["_base_dir"] = base
    d["_load_external"] = d.get("_load_external", True)
    d.pop("_ext_maps", None)


# -- copying -------------------------------------------------------------------------------

def copy_external_data(model, base_dir: str, target_dir: str, *, model_path: str | None = None,
                       protect: Iterable[str] = (), progress=None) -> int:
    """Copy the data files of ``model``'s external tensors from ``base_dir`` to ``target_dir``.

    For saving a model unchanged in another directory: each file is copied whole and
    byte for byte, so every location, offset and checksum in the model stays true and
    the model's own bytes need no edit.  Every tensor is validated as a read validates
    it (`read_external_data`: location, links, bounds) before anything is written; each
    target is checked as `write_external_data_tensors` checks it (``model_path`` and
    ``protect`` included), and directories a location names are created inside
    ``target_dir``.  A target that *is* its source (the same directory) is left alone.
    All copies are written before any is renamed into place: an error leaves every
    target as it was.  ``progress(done, total)`` as for writing.  Returns the number of
    bytes copied.
    """
    from .io import AtomicFiles  # noqa: PLC0415

    sources: dict = {}  # normalized source path -> (location, tensor name, _Mapped)
    for tensor in external_tensors(model):
        info = ExternalDataInfo(tensor)
        key = os.path.normpath(os.path.join(os.path.abspath(base_dir), info.location))
        if key not in sources:
            sources[key] = (info.location, info.tensor_name, _map_file(base_dir, info))
        _check_bounds(info, sources[key][2].size)
    copies = []
    for location, name, mapped in sources.values():
        _make_parent(target_dir, location, name)
        target = _checked_target(target_dir, location, name, model_path, protect)
        if not _is_file(target, mapped.ident):
            copies.append((target, mapped))
    counter = _Counter(progress, sum(mapped.size for _t, mapped in copies))
    with AtomicFiles() as pending:
        for target, mapped in copies:
            pending.write(target, lambda fh, view=mapped.view: _stream(fh, view, counter.tap(None)))
        pending.commit()
    return counter.total


def _make_parent(target_dir: str, location: str, tensor_name: str) -> None:
    """Create the directories of ``location`` below ``target_dir``, never outside it."""
    check_location(location, tensor_name)
    parent = os.path.dirname(os.path.join(target_dir, location))
    if not os.path.isdir(parent) and _contained(os.path.realpath(target_dir), os.path.realpath(parent)):
        os.makedirs(parent, exist_ok=True)


def _is_file(path: str, ident: tuple) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    return (st.st_dev, st.st_ino) == ident


# -- traversal (the tensors the reference visits, in its order) ------------------------------

def _subgraphs(attribute) -> Iterator:
    if attribute.type == _GRAPH:
        yield attribute.g
    if attribute.type == _GRAPHS:
        yield from attribute.graphs


def _initializers_of_graph(graph) -> Iterator:
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            for sub in _subgraphs(attribute):
                yield from _initializers_of_graph(sub)


def _get_initializer_tensors(model) -> Iterator:
    """Initializers of the main graph and of every subgraph below it."""
    yield from _initializers_of_graph(model.graph)


def _attribute_tensors_of(graph_or_function) -> Iterator:
    for node in graph_or_function.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            for sub in _subgraphs(attribute):
                yield from _attribute_tensors_of(sub)


def _get_attribute_tensors(model) -> Iterator:
    """Tensor attributes (``t``, ``tensors``) in the graph, its subgraphs and functions."""
    yield from _attribute_tensors_of(model.graph)
    for function in model.functions:
        yield from _attribute_tensors_of(function)


def _get_all_tensors(model) -> Iterable:
    return chain(_get_initializer_tensors(model), _get_attribute_tensors(model))


def external_tensors(model) -> Iterator:
    """Every tensor of ``model`` marked external, in the order the reference visits them.

    Initializers and tensor attributes, in subgraphs and functions too: the tensors
    whose files a copy of the model must take along.
    """
    return (t for t in _get_all_tensors(model) if uses_external_data(t))


__all__ = [
    "ALIGNMENT", "ALLOWED_KEYS", "ExternalDataInfo", "check_location", "uses_external_data",
    "read_external_data", "load_external_data_for_tensor", "load_external_data_for_model",
    "set_external_data", "convert_model_to_external_data", "convert_model_from_external_data",
    "remove_external_data_field", "write_external_data_tensors", "save_with_external_data",
    "location_problem", "copy_external_data", "external_tensors",
]
