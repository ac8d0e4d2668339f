"""Atomic replacement of files: a save leaves the old file or the complete new one.

Saving replaces a file, it never rewrites it in place.  The new contents go to a file
in the target's directory which gets the target's name only once it is complete and on
disk (written, flushed, ``fsync``ed; then renamed; then the directory ``fsync``ed).  What
is left when something goes wrong:

* an exception (disk full, an encoding error, KeyboardInterrupt) at any point before
  the rename: the previous file, untouched, and nothing else;
* the process killed (SIGKILL, OOM) or the machine crashing mid-write: on Linux the
  new contents are written to an anonymous ``O_TMPFILE`` inode, which has no name to
  leave behind, so again the previous file and nothing else; only a kill in the few
  microseconds between naming that inode and the rename over an *existing* target
  leaves the complete new file under a temporary name.  Where ``O_TMPFILE`` is not
  available (another OS, a filesystem without it, no ``/proc``) the temporary file has a
  name from the start, and a kill leaves it behind: ``.~<target name>.<random hex>.tmp``
  in the target's directory (`TEMP_PREFIX`, `TEMP_SUFFIX`), never a truncated target;
* a power loss: the old file or the complete new one.

Because the target is replaced, a model that is mapped from the file being overwritten
keeps reading its old contents while the new file is written: saving a loaded model
over its own file is safe.

What the new file looks like, compared with ``open(path, "wb")``:

* a new file gets the mode ``open()`` would give it (0o666 less the umask, and the
  directory's default ACL where there is one);
* an existing file keeps its permission bits (``0o777``; set-user/group-ID and sticky
  bits are dropped, as the kernel drops them when anyone but root writes to a file) and,
  where we are allowed to set them, its owner and group; extended attributes and ACL
  entries are not copied, and a hard link to the old file keeps the old contents;
* an existing file we may not write to is refused (`PermissionError`), as ``open()``
  would refuse it, even though the directory would allow replacing it;
* a symlink is followed: the file it points to is replaced, the link stays;
* a target that exists but is not a regular file (``/dev/null``, a FIFO) is opened and
  written as ``open()`` would; replacing a device node by a file would be wrong.

Errors are the `OSError` subclasses ``open()`` raises, checked before anything is
written: `FileNotFoundError` (the directory does not exist), `NotADirectoryError` (a
parent is a file), `IsADirectoryError` (the target is a directory), `PermissionError`
(directory or existing file not writable; also a read-only filesystem gives `OSError`
with ``EROFS``).
"""

from __future__ import annotations

import errno
import os
import stat
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Any, Callable, cast
else:  # run time: cast is the identity (typing is not imported for it)
    from wirefmt.records import cast

# The name a temporary file has when it needs one: hidden, recognisably ours, unique.
TEMP_PREFIX = ".~"
TEMP_SUFFIX = ".tmp"
# Long target names are cut in the temporary name, which must stay under NAME_MAX (255).
_TEMP_NAME_KEEP = 200
_O_TMPFILE = getattr(os, "O_TMPFILE", None)  # Linux 3.11+; None elsewhere
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# open(dir, O_TMPFILE) failing with one of these means "not here", not "cannot write":
# the filesystem lacks O_TMPFILE (EOPNOTSUPP), the kernel predates it and saw O_DIRECTORY
# with O_WRONLY (EISDIR), or rejects the flag combination (EINVAL).
_NO_TMPFILE = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL})
# fsync of a directory is refused by some filesystems and platforms; that is no error of
# ours.  Anything else (EIO, ENOSPC) is reported.
_DIR_FSYNC_UNSUPPORTED = frozenset({errno.EINVAL, errno.EBADF, errno.EACCES, errno.EPERM,
                                    errno.EOPNOTSUPP, errno.ENOSYS, errno.EISDIR})
# Files written but not yet renamed hold a descriptor each when anonymous.  A model saved
# with one data file per tensor may have thousands; past this many, finished ones get
# their temporary name and close their descriptor (a kill then leaves them behind).
_MAX_ANONYMOUS = 32


def _umask() -> int | None:
    """The process umask, read without changing it (Linux 4.7+), or None."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _temp_name(directory: str, target: str) -> str:
    base = os.path.basename(target)[:_TEMP_NAME_KEEP]
    return os.path.join(directory, f"{TEMP_PREFIX}{base}.{os.urandom(8).hex()}{TEMP_SUFFIX}")


def _link_anonymous(fd: int, path: str) -> None:
    """Give the anonymous (``O_TMPFILE``) file ``fd`` the new name ``path``.

    ``linkat(AT_SYMLINK_FOLLOW)`` on its ``/proc/self/fd`` entry, the unprivileged way to
    name such a file.  os.link calls plain link(), which does not follow that symlink
    (EXDEV), unless given a directory descriptor: hence ``dst_dir_fd``.
    """
    dfd = os.open(os.path.dirname(path), os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        os.link(f"/proc/self/fd/{fd}", os.path.basename(path), dst_dir_fd=dfd,
                follow_symlinks=True)
    finally:
        os.close(dfd)


def _link_temp(fd: int, directory: str, target: str) -> str:
    """Give the anonymous file ``fd`` a fresh temporary name in ``directory``."""
    while True:
        tmp = _temp_name(directory, target)
        try:
            _link_anonymous(fd, tmp)
            return tmp
        except FileExistsError:  # 64 random bits taken: try another
            continue


def _fsync_directory(directory: str) -> None:
    """Make the renames in ``directory`` durable."""
    try:
        dfd = os.open(directory, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except OSError:  # a platform where directories cannot be opened (Windows)
        return
    try:
        os.fsync(dfd)
    except OSError as exc:
        if exc.errno not in _DIR_FSYNC_UNSUPPORTED:
            raise
    finally:
        os.close(dfd)


def _check_target(path: str) -> tuple:
    """``(real path, directory, stat of the existing target or None)``; refuses early.

    The errors are the ones ``open(path, "wb")`` would give, raised before a byte is
    written rather than after the whole output has been.
    """
    if not path:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    if path.endswith(tuple(s for s in (os.sep, os.altsep) if s)):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    real = os.path.realpath(path)  # follow symlinks, as open() does
    directory = os.path.dirname(real)
    st_dir = os.stat(directory)  # FileNotFoundError / NotADirectoryError name the directory
    if not stat.S_ISDIR(st_dir.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), directory)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real, directory, None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if stat.S_ISREG(st.st_mode) and not os.access(real, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    return real, directory, st


class _Pending:
    """One file written in full and fsynced, waiting for its name.

    Once written, exactly one of ``fh`` (an open anonymous ``O_TMPFILE`` file) and
    ``tmp`` (the temporary name of a closed file) is set, or neither for a target written
    in place (not a regular file).  While a named file is written, both are.
    """

    __slots__ = ("path", "directory", "fh", "tmp", "existed")
    fh: Any  # a BufferedWriter over the open file, or None
    tmp: Any  # str or None

    def __init__(self, path: str, directory: str | None, existed: bool):
        self.path = path
        self.directory = directory
        self.existed = existed
        self.fh = None
        self.tmp = None

    def name_temporarily(self) -> None:
        """Trade the descriptor of an anonymous file for a temporary name."""
        if self.fh is not None:
            self.tmp = _link_temp(self.fh.fileno(), cast(str, self.directory), self.path)  # set with fh
            self._close()

    def commit(self) -> None:
        """Give the file its name (replacing any file of that name)."""
        if self.fh is not None:
            if not self.existed:
                try:  # a new name: one link, atomic, and nothing to clean up ever
                    _link_anonymous(self.fh.fileno(), self.path)
                    self._close()
                    return
                except FileExistsError:  # someone created it meanwhile: replace it
                    pass
            self.name_temporarily()
        if self.tmp is not None:
            os.replace(self.tmp, self.path)
            self.tmp = None

    def discard(self) -> None:
        """Forget the file: an anonymous one vanishes, a named one is unlinked."""
        self._close()
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except FileNotFoundError:
                pass
            self.tmp = None

    def _close(self) -> None:
        fh, self.fh = self.fh, None
        if fh is not None:
            # Close the descriptor before the buffer object: its close() then does not
            # flush, so a half-written buffer after an error is dropped, not written.
            fh.raw.close()
            fh.close()


def _open_anonymous(directory: str):
    """An ``O_TMPFILE`` descriptor in ``directory``, or None where that cannot work."""
    if _O_TMPFILE is None:
        return None
    try:
        fd = os.open(directory, _O_TMPFILE | os.O_WRONLY | _O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno in _NO_TMPFILE:
            return None
        raise  # EACCES, EROFS, ...: the named fallback would fail the same way
    if not os.path.exists(f"/proc/self/fd/{fd}"):  # no /proc: it could never get a name
        os.close(fd)
        return None
    umask = _umask()
    if umask is not None:
        # Before Linux 6.0 an O_TMPFILE file skipped the umask on filesystems without
        # POSIX ACLs ("fs: Add missing umask strip in vfs_tmpfile").  Only ever remove
        # bits here, so that a default ACL that asked for fewer still wins.
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & umask:
            os.fchmod(fd, mode & ~umask)
    return fd


def _open_named(directory: str, target: str) -> tuple:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_NOFOLLOW | _O_BINARY
    while True:
        tmp = _temp_name(directory, target)
        try:
            return os.open(tmp, flags, 0o666), tmp  # 0o666 less the umask, as open() gives
        except FileExistsError:
            continue


def _keep_owner_and_mode(fd: int, tmp: str | None, st: os.stat_result) -> None:
    """Make the new file look like the one it replaces: permission bits, owner, group."""
    mine = os.fstat(fd)
    if hasattr(os, "fchown") and (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            try:  # an ordinary user may still set a group they belong to
                os.fchown(fd, -1, st.st_gid)
            except PermissionError:
                pass
    mode = stat.S_IMODE(st.st_mode) & 0o777
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:
        os.chmod(cast(str, tmp), mode)  # no fchmod: the file was opened by name


def _write_pending(path, write: Callable) -> _Pending:
    """Write ``write(fileobj)``'s output for ``path`` to disk without naming it ``path`` yet."""
    path = os.fsdecode(os.fspath(path))
    real, directory, st = _check_target(path)
    pending = _Pending(real, directory, st is not None)
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(real, "wb") as fh:  # /dev/null, a FIFO: written in place, as open() would
            write(fh)
        pending.directory = None  # nothing to rename, no directory entry to make durable
        return pending
    fd = _open_anonymous(directory)
    if fd is None:
        fd, pending.tmp = _open_named(directory, real)
    try:
        pending.fh = open(fd, "wb", closefd=True)  # noqa: SIM115 (closed by the _Pending)
    except BaseException:
        os.close(fd)
        pending.discard()
        raise
    try:
        if st is not None:
            _keep_owner_and_mode(fd, pending.tmp, st)
        write(pending.fh)
        pending.fh.flush()
        os.fsync(fd)
        if pending.tmp is not None:  # a named file needs no descriptor to be renamed
            pending._close()
    except BaseException:
        pending.discard()
        raise
    return pending


class AtomicFiles:
    """Files written now and put in place later, together: `commit` or `discard`.

    ``write(path, fn)`` writes a complete file (see the module docstring) but leaves
    ``path`` alone; `commit` renames every written file over its target, in the order
    written, then fsyncs their directories; `discard` (or an exception inside a ``with``
    block) drops them all, leaving every target as it was.  Several files cannot be
    replaced at one instant: a crash during `commit` can leave some replaced and others
    not, but that window is a few renames long, not the length of the writes.
    """

    def __init__(self) -> None:
        self._pending: list = []

    def write(self, path: str | bytes | os.PathLike, write: Callable) -> None:
        pending = _write_pending(path, write)
        self._pending.append(pending)
        anonymous = [p for p in self._pending if p.fh is not None]
        if len(anonymous) > _MAX_ANONYMOUS:
            try:
                anonymous[0].name_temporarily()
            except BaseException:
                self.discard()
                raise

    def commit(self) -> None:
        pending, self._pending = self._pending, []
        directories: list = []
        try:
            while pending:
                pending[0].commit()
                done = pending.pop(0)
                if done.directory is not None and done.directory not in directories:
                    directories.append(done.directory)
        except BaseException:
            for p in pending:
                p.discard()
            raise
        for directory in directories:
            _fsync_directory(directory)

    def discard(self) -> None:
        pending, self._pending = self._pending, []
        for p in pending:
            p.discard()

    def __enter__(self) -> "AtomicFiles":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.discard()  # after a commit there is nothing left to discard


def atomic_write(path: str | bytes | os.PathLike, write: Callable) -> None:
    """Run ``write(fileobj)`` into a new file and put it in place of ``path`` atomically.

    See the module docstring for what is guaranteed (the previous file or the complete
    new one; no partial file, and on Linux no leftover even after SIGKILL), the mode the
    new file gets, and the errors.  ``fileobj`` is a buffered binary file.
    """
    with AtomicFiles() as files:
        files.write(path, write)
        files.commit()
