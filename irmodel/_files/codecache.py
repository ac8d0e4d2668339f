"""Where the scan code wirefmt generates for each message type is kept between processes.

Every process that reads a message type needs that type's scan function, generated
from the schema and compiled on first use (`wirefmt.scangen`): about a millisecond per
function, a dozen of them for an ``irmodel inspect``.  `FileCodeCache` keeps the
compiled code in the user's cache directory, one small file per function, so that only
the first process after an install (or a change) pays for it:

* ``$IRMODEL_CACHE_DIR`` if set (set it empty to switch the cache off); else
  ``$XDG_CACHE_HOME/irmodel``, ``~/.cache/irmodel`` (``~/Library/Caches/irmodel`` on
  macOS, ``%LOCALAPPDATA%\\irmodel\\Cache`` on Windows); then a directory per irmodel
  version and Python (``scan-0.1.0-cpython-311``).  Never inside the installed package:
  site-packages is often read-only, shared, or owned by somebody else.
* What a file holds is checked by wirefmt, not trusted: the code is used only if the
  stamp stored with it (the generator's files, the type's fields and scan hints:
  everything the source depends on) is exactly the stamp of now (`wirefmt.scangen._compile`), so a changed
  schema or generator can never run old code, and a valid entry costs no generation.
* Any failure is silent and costs only speed: a directory that cannot be created or
  written (the first failed write switches saving off for the process), a file that
  cannot be read, a directory owned by another user or writable by others (refused,
  as code from it would run in this process).
"""

from __future__ import annotations

import os
import sys
from _thread import get_ident  # built in: `threading` is not imported for it

#: Environment variable naming the cache directory; an empty value switches the cache off.
ENV = "IRMODEL_CACHE_DIR"


def default_directory() -> str | None:
    """The user cache directory for irmodel (not yet versioned), or None if there is none."""
    explicit = os.environ.get(ENV)
    if explicit is not None:
        return explicit or None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return os.path.join(base, "irmodel", "Cache") if base else None
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not os.path.isabs(base):  # unset, empty or relative: ignored, as the XDG spec says
            base = os.path.expanduser("~/.cache")
    if not os.path.isabs(base):  # no home directory: "~" was left as it was
        return None
    return os.path.join(base, "irmodel")


def _file_name(key: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in key) + ".bin"


class FileCodeCache:
    """A directory of compiled scan code, one file per key; see the module docstring.

    ``directory`` None: `default_directory`, resolved on first use (not at import, which
    must stay cheap), in a subdirectory for this irmodel version and Python.  ``hits``,
    ``misses`` and ``saved`` count what happened, for tests and curious users.
    """

    def __init__(self, directory: str | None = None):
        self._given = directory
        self._dir: str | None = None
        self._resolved = False
        self._trusted_dir: str | None = None  # the directory `load` last found trusted
        self.writable = True
        self.hits = self.misses = self.saved = 0

    @property
    def directory(self) -> str | None:
        if not self._resolved:
            self._resolved = True
            base = self._given if self._given is not None else default_directory()
            if base:
                from .._version import __version__  # noqa: PLC0415

                self._dir = os.path.join(base, f"scan-{__version__}-{sys.implementation.cache_tag}")
        return self._dir

    def _trusted(self, path: str) -> bool:
        """A directory we own and nobody else can write to (POSIX; anything goes elsewhere)."""
        if not hasattr(os, "getuid"):
            return True
        st = os.stat(path)
        return st.st_uid == os.getuid() and not st.st_mode & 0o022

    def load(self, key: str) -> bytes | None:
        # About a dozen loads open an `irmodel inspect`: read with `os` calls (no file
        # object), and the directory's owner and mode checked by its first load in the
        # process, not by every load (a stat less each).  A directory accepted stays
        # accepted for the process: only its owner or root can change its owner or mode.
        d = self.directory
        data = None
        if d is not None:
            try:
                fd = os.open(os.path.join(d, _file_name(key)), os.O_RDONLY | _O_BINARY)
            except OSError:
                fd = -1
            if fd >= 0:
                try:
                    if self._trusted_dir == d or self._trusted(d):
                        self._trusted_dir = d
                        data = _read_all(fd)
                except OSError:
                    pass
                finally:
                    os.close(fd)
        if data is None:
            self.misses += 1
        else:
            self.hits += 1
        return data

    def can_save(self) -> bool:
        """Whether `save` would keep an entry now: a directory (made if missing) that is
        ours, trusted and writable (for callers that compile only what can be kept)."""
        d = self.directory
        if d is None or not self.writable:
            return False
        try:
            os.makedirs(d, mode=0o700, exist_ok=True)
            return self._trusted(d) and os.access(d, os.W_OK)
        except OSError:
            return False

    def save(self, key: str, data: bytes) -> None:
        d = self.directory
        if d is None or not self.writable:
            return
        tmp = os.path.join(d, f".{_file_name(key)}.{os.getpid()}.{get_ident()}.tmp")  # per process and thread
        try:
            os.makedirs(d, mode=0o700, exist_ok=True)
            if not self._trusted(d):
                self.writable = False
                return
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o600)
            try:
                with open(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, os.path.join(d, _file_name(key)))  # readers see all of it or none
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            self.saved += 1
        except OSError:
            self.writable = False  # read-only home, full disk, ...: stop trying in this process


_O_BINARY = getattr(os, "O_BINARY", 0)
_READ = 1 << 16


def _read_all(fd: int) -> bytes:
    """The whole regular file open at ``fd``: an entry is a few KiB, one read (a read of
    a regular file returns less than it asked for only at the file's end)."""
    chunks = []
    while True:
        chunk = os.read(fd, _READ)
        chunks.append(chunk)
        if len(chunk) < _READ:
            return chunk if len(chunks) == 1 else b"".join(chunks)


#: The cache the ONNX message classes use (`irmodel.messages`).
DEFAULT = FileCodeCache()

#: ``re.DOTALL`` (``re`` itself is not imported for it: see `compiled_pattern`).
DOTALL = 16


def compiled_pattern(name: str, source: bytes, flags: int = 0, cache: FileCodeCache | None = None,
                     only_if_kept: bool = False):
    """``re.compile(source, flags)``, what the engine compiles it to kept in ``cache``
    (`DEFAULT`, the scan code's trusted directory) under ``name``.  ``only_if_kept``:
    None instead of compiling a pattern the cache does not hold and cannot keep (for a
    pattern worth its cost only when later processes load it).

    A long pattern (a field of each of 128 lengths, as `irmodel._wireview.nodescan` reads) takes
    milliseconds to compile, and importing `re` to compile it 5-10 ms more (enum,
    functools): with a valid entry neither happens, the stored code is handed to
    ``_sre.compile`` (built in), which validates it.  The entry holds the source and the
    flags and is used only for exactly these and this engine (``_sre.MAGIC``, its code
    size); anything unexpected (a damaged file, another engine) compiles afresh.
    """
    import _sre  # type: ignore[import-not-found]  # noqa: PLC0415 - built in, costs nothing
    import marshal  # noqa: PLC0415 - built in

    cache = DEFAULT if cache is None else cache
    flags = int(flags)  # a ``re.RegexFlag`` would not marshal
    key = f"re-{name}-{_sre.MAGIC}-{_sre.CODESIZE}-{len(source)}"
    data = cache.load(key)
    if data is not None:
        try:
            stored, args = marshal.loads(data)
            if stored == (source, flags):
                return _sre.compile(source, *args)
        except Exception:  # noqa: BLE001 - a damaged or foreign entry: compile afresh
            pass
    if only_if_kept and not cache.can_save():
        return None
    import re  # noqa: PLC0415 - only when there is no valid entry

    try:
        try:
            from re import _compiler, _parser  # type: ignore[attr-defined]  # noqa: PLC0415 - 3.11+
        except ImportError:  # 3.10
            import sre_compile as _compiler  # noqa: PLC0415
            import sre_parse as _parser  # noqa: PLC0415
        parsed = _parser.parse(source, flags)
        code = list(map(int, _compiler._code(parsed, flags)))
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list = [None] * parsed.state.groups
        for group_name, i in groupindex.items():
            indexgroup[i] = group_name
        args = (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup))
        pattern = _sre.compile(source, *args)
    except Exception:  # noqa: BLE001 - another engine's internals: the public way, not kept
        return re.compile(source, flags)
    cache.save(key, marshal.dumps(((source, flags), args)))
    return pattern
