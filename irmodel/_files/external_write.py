"""External data, the writing side: moving tensors into data files beside the model.

This module marks tensors as external (`set_external_data`,
`convert_model_to_external_data`), writes their data files and the model
(`save_with_external_data`, `write_external_data_tensors`) and copies a model's data
files unchanged to another directory (`copy_external_data`), reporting progress as the
bytes go out.  Parsing entries, the location rules and reading are
`irmodel._files.external_data`, which this module imports and which never imports it back:
every location we write is vetted by the same rules as one we read.

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

A target is refused, before anything is written, for the reasons a read refuses a
location (see `irmodel._files.external_data`), and also when it would replace the model file
itself or a file the caller still reads (``protect``).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, BinaryIO, Callable, Iterable, cast
else:  # run time: cast is the identity (typing is not imported for it)
    from wirefmt.records import cast

from .origin import Origin, check_unchanged, origin_of, set_origin
from .external_data import (_CHUNK, _DEFAULT, _EXTERNAL, ExternalDataInfo, _check_bounds, _contained,
                            _error, _get_all_tensors, _get_initializer_tensors, _open_data_file,
                            check_location, external_tensors, location_problem,
                            load_external_data_for_model, uses_external_data)

# Where we start each tensor in a data file: the page size, so every tensor can be
# mapped (and viewed by numpy) in place, as ExternalData.md recommends.
ALIGNMENT = 4096
# The reference picks tensors with sys.getsizeof(raw_data) >= size_threshold, i.e. the
# byte count plus the bytes object's header: the same threshold selects the same tensors.
_BYTES_OVERHEAD = sys.getsizeof(b"")


# -- converting ----------------------------------------------------------------------------

def set_external_data(tensor: Any, location: str, offset: int | None = None, length: int | None = None,
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


#: The longest file name (in bytes of UTF-8) common file systems take (NAME_MAX on Linux).
_NAME_MAX = 255


def _is_valid_filename(name) -> bool:
    """The reference's test for a tensor name usable as a file name, plus ours: text
    (a bytes name is invalid UTF-8), printable, at most `_NAME_MAX` bytes, and a safe
    location.  Any other name gets a random file name."""
    if not isinstance(name, str) or not re.match(r'^[^<>:;,?"*|/]+$', name):
        return False
    if name in (".", "..") or "\\" in name or not name.isprintable():
        return False
    return len(name.encode()) <= _NAME_MAX and location_problem(name) is None


def convert_model_to_external_data(model: Any, all_tensors_to_one_file: bool = True,
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


def convert_model_from_external_data(model: Any) -> None:
    """Undo `convert_model_to_external_data` for tensors that still have ``raw_data``."""
    for tensor in _get_all_tensors(model):
        if uses_external_data(tensor):
            if not tensor.HasField("raw_data"):
                raise ValueError("raw_data field doesn't exist.")
            tensor.ClearField("external_data")
            tensor.data_location = _DEFAULT


def remove_external_data_field(tensor: Any, field_key: str) -> None:
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

    def advance(self, n: int) -> None:
        """Count ``n`` bytes copied without passing through `update` (or a hole kept a hole)."""
        if n and self.progress is not None:
            self.done += n
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


def write_external_data_tensors(model: Any, filepath: str, *, checksum: bool = False,
                                model_path: str | None = None, protect: Iterable[str] = (),
                                progress: Callable[[int, int], None] | None = None) -> int:
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
    from .atomic import AtomicFiles  # noqa: PLC0415

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


def save_with_external_data(model: Any, f: str | os.PathLike[str] | BinaryIO, all_tensors_to_one_file: bool = True,
                            location: str | None = None, size_threshold: int = 1024,
                            convert_attribute: bool = False, *, checksum: bool = False,
                            protect: Iterable[str] = (), progress: Callable[[int, int], None] | None = None) -> None:
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
    from .atomic import AtomicFiles  # noqa: PLC0415
    from ..io import write_model  # noqa: PLC0415

    path = _model_path(f)
    base = os.path.dirname(path)
    check_unchanged(model)  # before any data file is written from the mapped ones
    if location is None and all_tensors_to_one_file:
        location = os.path.basename(path) + ".data"
    origin = origin_of(model)
    if origin is not None and origin.load_external and origin.base_dir is not None:
        load_external_data_for_model(model, origin.base_dir)
    convert_model_to_external_data(model, all_tensors_to_one_file, location, size_threshold,
                                   convert_attribute)
    to_path = isinstance(f, (str, bytes, os.PathLike))
    with AtomicFiles() as data_files, AtomicFiles() as model_file:
        written = _write_data_files(data_files, model, base, checksum, path, protect, progress)
        undo = _point_at_data_files(written)
        try:
            if to_path:
                model_file.write(path, lambda fh: write_model(model, fh, durable=True))
            data_files.commit()
            model_file.commit()  # last: the new model never names data not yet in place
        except BaseException:
            undo()
            raise
    if not to_path:
        write_model(model, cast("BinaryIO", f))
    # The model's tensors now point at the files just written beside ``path``.
    origin = origin_of(model) or set_origin(model, Origin())
    origin.base_dir = base
    origin.data_files = {}


# -- copying -------------------------------------------------------------------------------

def copy_external_data(model: Any, base_dir: str, target_dir: str, *, model_path: str | None = None,
                       protect: Iterable[str] = (), progress: Callable[[int, int], None] | None = None,
                       tensors: Iterable[Any] | None = None) -> int:
    """Copy the data files of ``model``'s external tensors from ``base_dir`` to ``target_dir``.

    For saving a model unchanged in another directory: each file is copied whole and
    byte for byte, so every location, offset and checksum in the model stays true and
    the model's own bytes need no edit; its holes stay holes (only the runs that hold
    data are written: `_copy_keeping_holes`), so the copy costs what the file holds on
    the disk, not its apparent size.  ``tensors``: the external tensors, when the caller
    has found them already (`external_tensors`, perhaps with a ``pick``).  Every tensor is validated as a read validates
    it (`read_external_data`: location, links, bounds) before anything is written; each
    target is checked as `write_external_data_tensors` checks it (``model_path`` and
    ``protect`` included), and directories a location names are created inside
    ``target_dir``.  A target that *is* its source (the same directory) is left alone.
    All copies are written before any is renamed into place: an error leaves every
    target as it was.  ``progress(done, total)`` as for writing.  Returns the number of
    bytes copied.
    """
    from .atomic import AtomicFiles  # noqa: PLC0415

    sources = data_file_sources(external_tensors(model) if tensors is None else tensors, base_dir)
    copies = []
    for source in sources:
        _make_parent(target_dir, source.location, source.tensor_name)
        target = _checked_target(target_dir, source.location, source.tensor_name, model_path, protect)
        if not _is_file(target, source.ident):
            copies.append((target, source))
    counter = _Counter(progress, sum(source.size for _t, source in copies))
    with AtomicFiles() as pending:
        for target, source in copies:
            pending.write(target, lambda fh, src=source: _copy_keeping_holes(fh, base_dir, src, counter))
        pending.commit()
    return counter.total


class DataFileSource:
    """A data file a copy takes along: the location and the tensor that named it first,
    its identity (device, inode) and size when it was checked."""

    __slots__ = ("location", "tensor_name", "info", "ident", "size")

    def __init__(self, info: ExternalDataInfo, st: os.stat_result) -> None:
        self.location = info.location
        self.tensor_name = info.tensor_name
        self.info = info
        self.ident = (st.st_dev, st.st_ino)
        self.size = st.st_size


def data_file_sources(tensors: Iterable[Any], base_dir: str) -> list:
    """The data files of ``tensors`` (external ones), each once, checked as a read checks
    them (`read_external_data`: location, links, a regular file, every tensor's bounds)
    but not mapped: a copy needs no address space for a file of 6 GiB.  Raises
    `ExternalDataError` as a read would."""
    sources: dict = {}  # normalized source path -> DataFileSource
    for tensor in tensors:
        info = ExternalDataInfo(tensor)
        key = os.path.normpath(os.path.join(os.path.abspath(base_dir), info.location))
        source = sources.get(key)
        if source is None:
            fd, st = _open_data_file(base_dir, info)
            os.close(fd)
            source = sources[key] = DataFileSource(info, st)
        _check_bounds(info, source.size)
    return list(sources.values())


def _copy_keeping_holes(fh, base_dir: str, source: DataFileSource, counter: _Counter) -> None:
    """Copy the data file ``source`` into ``fh`` byte for byte, its holes kept holes: only
    the runs `filecopy.data_ranges` finds are copied (in the kernel where it can,
    `filecopy.kernel_copy`), and the output is given the file's size.  The file is opened
    again as a read opens it, and must still be the file that was checked."""
    from .filecopy import data_ranges, kernel_copy  # noqa: PLC0415

    fd, st = _open_data_file(base_dir, source.info)
    try:
        if (st.st_dev, st.st_ino) != source.ident or st.st_size != source.size:
            raise _error(source.tensor_name, source.location,
                         "the file was replaced or changed size while the model was saved")
        fh.flush()
        out = fh.fileno()
        done = 0
        for start, end in data_ranges(fd, source.size):
            counter.advance(start - done)  # a hole: nothing written
            os.lseek(out, start, os.SEEK_SET)
            n = kernel_copy(fd, out, start, end - start)
            _copy_by_reads(fd, out, start + n, end)
            counter.advance(end - start)
            done = end
        counter.advance(source.size - done)
        os.ftruncate(out, source.size)
        os.lseek(out, source.size, os.SEEK_SET)
    finally:
        os.close(fd)


def _copy_by_reads(src: int, out: int, start: int, end: int) -> None:
    """Write ``src``'s bytes ``start:end`` at ``out``'s position (what the kernel copy left)."""
    pos = start
    while pos < end:
        chunk = os.pread(src, min(_CHUNK, end - pos), pos)
        if not chunk:
            raise OSError(errno.EIO, "the data file got shorter while it was copied")
        view = memoryview(chunk)
        while view:
            view = view[os.write(out, view):]
        pos += len(chunk)


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

__all__ = [
    "ALIGNMENT", "set_external_data", "convert_model_to_external_data",
    "convert_model_from_external_data", "remove_external_data_field",
    "write_external_data_tensors", "save_with_external_data", "copy_external_data", "data_file_sources",
]
