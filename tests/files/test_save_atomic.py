"""Saving replaces files atomically: errors and kills leave the previous file and no debris.

Both ways of writing are tested: the anonymous ``O_TMPFILE`` file (Linux), and the named
temporary file used where that is unavailable (forced here by clearing
``irmodel._files.atomic._O_TMPFILE``).  The contract is in the docstring of `irmodel._files.atomic`.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import irmodel
import irmodel._files.atomic
import irmodel.io
import wirefmt.writer
from irmodel._files import external_write as ew

from repo_paths import REPO as ROOT  # noqa: E402
TEMP_NAME = re.compile(r"\.~(?P<target>.+)\.[0-9a-f]{16}\.tmp\Z")


# -- models and helpers ----------------------------------------------------------------------

def _reference_model(seed: int, tensors: int = 3, floats_each: int = 50_000) -> onnx.ModelProto:
    """A model whose initializers (``w0``, ``w1``, ...) hold ``floats_each`` random floats."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.standard_normal(floats_each).astype(np.float32), f"w{i}")
             for i in range(tensors)]
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w0"], ["y"])], f"g{seed}", [],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [floats_each])],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name=f"seed-{seed}")


def _snapshot(directory) -> dict:
    """``{name: (mode, bytes)}`` of every entry of ``directory``."""
    out = {}
    for name in sorted(os.listdir(directory)):
        p = os.path.join(directory, name)
        st = os.lstat(p)
        out[name] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode),
                     open(p, "rb").read() if stat.S_ISREG(st.st_mode) else None)
    return out


def _o_tmpfile_problem(directory) -> str | None:
    """Why ``O_TMPFILE`` cannot be used in ``directory``, or None if it can."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return "os.O_TMPFILE does not exist on this platform"
    try:
        fd = os.open(directory, flag | os.O_WRONLY, 0o600)
    except OSError as exc:
        return f"open(dir, O_TMPFILE) fails here: {exc}"
    try:
        if not os.path.exists(f"/proc/self/fd/{fd}"):
            return "no /proc/self/fd to give an O_TMPFILE file a name"
    finally:
        os.close(fd)
    return None


@pytest.fixture(params=["anonymous", "named"])
def way(request, tmp_path, monkeypatch):
    """How the new file is written: ``anonymous`` (O_TMPFILE) or ``named`` (the fallback)."""
    if request.param == "anonymous":
        problem = _o_tmpfile_problem(tmp_path)
        if problem:
            pytest.skip(f"the O_TMPFILE path cannot be tested: {problem}")
    else:
        monkeypatch.setattr(irmodel._files.atomic, "_O_TMPFILE", None)
    return request.param


class Injected(Exception):
    """The failure a test injects into a write."""


def _fail_stream_writer_after(monkeypatch, limit: int, exc: BaseException, seen: dict):
    """Make the encoder's StreamWriter raise ``exc`` once ``limit`` bytes reached the file.

    Before raising it records, in ``seen``, the size of the file being written (proof
    that the failure is a real half-written file) and the directory listing then.
    """
    real = wirefmt.writer.StreamWriter._put  # where bytes reach the file object
    reached = [0]

    def put(self, part):
        real(self, part)
        reached[0] += len(part)
        if reached[0] >= limit:
            self._f.flush()
            seen["size"] = os.fstat(self._f.fileno()).st_size
            seen["listing"] = sorted(os.listdir(seen["dir"]))
            raise exc

    monkeypatch.setattr(wirefmt.writer.StreamWriter, "_put", put)
    # Large parts reach the file in 64 KiB slices, so the failure comes part-way through one.
    monkeypatch.setattr(wirefmt.writer.StreamWriter, "WRITE_STEP", 1 << 16)


# -- (a) an exception half-way ----------------------------------------------------------------

@pytest.mark.parametrize("exc", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()],
                         ids=["ENOSPC", "KeyboardInterrupt"])
def test_an_exception_half_way_leaves_the_previous_file_and_nothing_else(tmp_path, way, monkeypatch, exc):
    path = tmp_path / "model.onnx"
    onnx.save_model(_reference_model(1), str(path))
    before = _snapshot(tmp_path)
    new = irmodel.loads(_reference_model(2).SerializeToString())
    seen = {"dir": tmp_path}
    _fail_stream_writer_after(monkeypatch, 300_000, exc, seen)
    with pytest.raises(type(exc)):
        irmodel.save(new, str(path))
    assert _snapshot(tmp_path) == before
    assert 300_000 <= seen["size"] < len(irmodel.dumps(new))  # a real, half-written file
    if way == "anonymous":
        assert seen["listing"] == ["model.onnx"]  # which never had a name
    else:
        [tmp] = [n for n in seen["listing"] if n != "model.onnx"]
        assert TEMP_NAME.match(tmp).group("target") == "model.onnx"


def test_an_exception_writing_a_new_file_leaves_nothing(tmp_path, way, monkeypatch):
    new = irmodel.loads(_reference_model(2).SerializeToString())
    _fail_stream_writer_after(monkeypatch, 1, Injected("boom"), {"dir": tmp_path})
    with pytest.raises(Injected):
        irmodel.save(new, str(tmp_path / "new.onnx"))
    assert os.listdir(tmp_path) == []


def _external_reference(tmp_path) -> tuple:
    """model.onnx with one data file per tensor (w0, w1, w2), saved by the reference."""
    ref = _reference_model(1)
    path = str(tmp_path / "model.onnx")
    onnx.save_model(_reference_model(1), path, save_as_external_data=True, all_tensors_to_one_file=False,
                    size_threshold=0)
    return ref, path


def _arrays(model) -> list:
    return [(t.name, irmodel.to_array(t).tobytes()) for t in model.graph.initializer]


def _ref_arrays(ref) -> list:
    return [(t.name, numpy_helper.to_array(t).tobytes()) for t in ref.graph.initializer]


@pytest.mark.parametrize("where", ["second data file", "model file"])
def test_an_exception_saving_with_external_data_leaves_every_file_and_the_model_as_they_were(
        tmp_path, way, monkeypatch, where):
    ref, path = _external_reference(tmp_path)
    before = _snapshot(tmp_path)
    assert sorted(before) == ["model.onnx", "w0", "w1", "w2"]
    m = irmodel.load(path)
    m.producer_name = "edited"
    if where == "second data file":
        real_stream, calls = ew._stream, []

        def stream(fh, view, hasher):
            calls.append(view.nbytes)
            if len(calls) == 2:
                fh.write(view[:1000])
                raise Injected("disk full in w1")
            real_stream(fh, view, hasher)

        monkeypatch.setattr(ew, "_stream", stream)
    else:
        _fail_stream_writer_after(monkeypatch, 1, Injected("disk full in the model"), {"dir": tmp_path})
    with pytest.raises(Injected):
        irmodel.save(m, path, save_as_external_data=True, all_tensors_to_one_file=False,
                     size_threshold=0, checksum=True)
    # nothing replaced, nothing left: w0 was written in full but never put in place
    assert _snapshot(tmp_path) == before
    # the model in memory still holds every tensor's data, and saves once the disk is fine
    assert _arrays(m) == _ref_arrays(ref)
    assert all(e.key == "location" for t in m.graph.initializer for e in t.external_data)
    monkeypatch.undo()
    irmodel.save(m, path, save_as_external_data=True, all_tensors_to_one_file=False, size_threshold=0)
    assert _ref_arrays(onnx.load(path)) == _ref_arrays(ref)
    assert onnx.load(path, load_external_data=False).producer_name == "edited"
    assert sorted(os.listdir(tmp_path)) == ["model.onnx", "w0", "w1", "w2"]


def test_many_data_files_beyond_the_open_descriptor_budget(tmp_path, way, monkeypatch):
    """Past _MAX_ANONYMOUS pending files, finished ones get temporary names; all still vanish on error."""
    monkeypatch.setattr(irmodel._files.atomic, "_MAX_ANONYMOUS", 2)
    ref = _reference_model(3, tensors=7, floats_each=2000)
    path = str(tmp_path / "model.onnx")
    real_stream, calls = ew._stream, []

    def stream(fh, view, hasher):
        calls.append(1)
        if len(calls) == 6:
            raise Injected("late failure")
        real_stream(fh, view, hasher)

    monkeypatch.setattr(ew, "_stream", stream)
    with pytest.raises(Injected):
        irmodel.save(irmodel.loads(ref.SerializeToString()), path, save_as_external_data=True,
                     all_tensors_to_one_file=False, size_threshold=0)
    assert os.listdir(tmp_path) == []
    monkeypatch.setattr(ew, "_stream", real_stream)
    irmodel.save(irmodel.loads(ref.SerializeToString()), path, save_as_external_data=True,
                 all_tensors_to_one_file=False, size_threshold=0)
    assert sorted(os.listdir(tmp_path)) == ["model.onnx"] + [f"w{i}" for i in range(7)]
    assert _ref_arrays(onnx.load(path)) == _ref_arrays(ref)


# -- (b) SIGKILL mid-write --------------------------------------------------------------------

CHILD = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import irmodel, irmodel._files.atomic, wirefmt.writer
from irmodel._files import external_write as ew

way, source, target, external, block_after = sys.argv[2:7]
block_after = int(block_after)
if way == "named":
    irmodel._files.atomic._O_TMPFILE = None
model = irmodel.loads(open(source, "rb").read())
state = {"n": 0}


def block(fh):
    # everything written so far is in the file, not in a buffer; then wait to be killed
    fh.flush()
    print("writing", fh.fileno(), flush=True)
    sys.stdin.read()
    print("not killed", flush=True)
    sys.exit(3)


if external == "yes":
    real_stream = ew._stream

    def stream(fh, view, hasher):
        real_stream(fh, view, hasher)
        state["n"] += view.nbytes
        if state["n"] >= block_after:
            block(fh)

    ew._stream = stream
else:
    real_put = wirefmt.writer.StreamWriter._put  # where bytes reach the file object

    def put(self, part):
        real_put(self, part)
        state["n"] += len(part)
        if state["n"] >= block_after:
            block(self._f)

    wirefmt.writer.StreamWriter._put = put
irmodel.save(model, target, save_as_external_data=external == "yes")
print("finished", flush=True)
"""

TENSOR_FLOATS = 1_250_000  # 5 MB each, 6 of them: a 30 MB model
BLOCK_AFTER = 11_000_000  # two tensors and a bit: a third of the file


@pytest.mark.parametrize("external", [False, True], ids=["model file", "data file"])
def test_sigkill_mid_write_leaves_the_previous_files(tmp_path, way, external):
    d = tmp_path / "out"
    d.mkdir()
    target = str(d / "model.onnx")
    old = _reference_model(1, tensors=2, floats_each=1000)
    if external:
        onnx.save_model(old, target, save_as_external_data=True, location="model.onnx.data",
                        size_threshold=0)
    else:
        onnx.save_model(old, target)
    before = _snapshot(d)
    source = str(tmp_path / "new.onnx")
    onnx.save_model(_reference_model(2, tensors=6, floats_each=TENSOR_FLOATS), source)

    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, ROOT, way, source, target, "yes" if external else "no",
         str(BLOCK_AFTER)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = child.stdout.readline().decode()
        assert line.startswith("writing"), (line, child.stderr.read().decode()[-3000:])
        fd = int(line.split()[1])
        if os.path.isdir(f"/proc/{child.pid}/fd"):
            # mid-write: the new file holds a third of its bytes, where nobody can see it
            in_progress = os.stat(f"/proc/{child.pid}/fd/{fd}")
            assert BLOCK_AFTER <= in_progress.st_size < 6 * 4 * TENSOR_FLOATS
        during = sorted(os.listdir(d))
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdin.close()
        child.stdout.close()
        child.stderr.close()

    after = _snapshot(d)
    if way == "anonymous":
        assert during == sorted(before)
        assert after == before  # byte for byte, and not one extra file
        return
    # the named fallback: the previous files are intact, and the one thing left is the
    # partial temporary file, hidden and named after its target
    extra = sorted(set(after) - set(before))
    assert {k: after[k] for k in before} == before
    assert len(extra) == 1 and extra == sorted(set(during) - set(before))
    leftover = TEMP_NAME.match(extra[0])
    assert leftover and leftover.group("target") == ("model.onnx.data" if external else "model.onnx")
    assert BLOCK_AFTER <= len(after[extra[0]][2]) < 6 * 4 * TENSOR_FLOATS


# -- (c) file modes ---------------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002, 0o027])
def test_a_new_file_gets_the_mode_open_would_give(tmp_path, way, umask):
    m = irmodel.loads(_reference_model(1, tensors=1, floats_each=10).SerializeToString())
    old = os.umask(umask)
    try:
        irmodel.save(m, str(tmp_path / "model.onnx"))
        irmodel.save(m, str(tmp_path / "ext.onnx"), save_as_external_data=True, size_threshold=0)
        with open(tmp_path / "by_open", "wb"):
            pass
    finally:
        os.umask(old)
    expected = 0o666 & ~umask
    assert stat.S_IMODE(os.stat(tmp_path / "by_open").st_mode) == expected
    for name in ("model.onnx", "ext.onnx", "ext.onnx.data"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == expected, name


@pytest.mark.parametrize("mode", [0o640, 0o600, 0o604, 0o755, 0o4755, 0o2770])
def test_saving_over_a_file_keeps_its_permission_bits(tmp_path, way, mode):
    m = irmodel.loads(_reference_model(1, tensors=1, floats_each=3000).SerializeToString())
    path = tmp_path / "model.onnx"
    irmodel.save(m, str(path), save_as_external_data=True, size_threshold=0)
    os.chmod(path, mode)
    os.chmod(tmp_path / "model.onnx.data", mode)
    irmodel.save(m, str(path), save_as_external_data=True, size_threshold=0)
    # permission bits kept; set-user/group-ID dropped, as a write by open() drops them
    for name in ("model.onnx", "model.onnx.data"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == mode & 0o777, name
    assert sorted(os.listdir(tmp_path)) == ["model.onnx", "model.onnx.data"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only root can give a file to another owner")
def test_saving_over_a_file_keeps_its_owner_and_group(tmp_path, way):
    path = tmp_path / "model.onnx"
    onnx.save_model(_reference_model(1), str(path))
    os.chown(path, 12345, 23456)
    irmodel.save(irmodel.loads(_reference_model(2).SerializeToString()), str(path))
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (12345, 23456)


def test_a_symlinked_target_is_followed_and_the_link_kept(tmp_path, way):
    real_dir = tmp_path / "store"
    real_dir.mkdir()
    onnx.save_model(_reference_model(1), str(real_dir / "model.onnx"))
    os.symlink(real_dir / "model.onnx", tmp_path / "link.onnx")
    new = _reference_model(2)
    irmodel.save(irmodel.loads(new.SerializeToString()), str(tmp_path / "link.onnx"))
    assert os.path.islink(tmp_path / "link.onnx")
    assert (real_dir / "model.onnx").read_bytes() == new.SerializeToString()
    assert sorted(os.listdir(real_dir)) == ["model.onnx"]


def test_a_target_that_is_not_a_regular_file_is_written_in_place(tmp_path, way):
    """A FIFO (like /dev/null) is written into, as open() would; never replaced by a file."""
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    data = _reference_model(2).SerializeToString()
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    irmodel.save(irmodel.loads(data), fifo)
    reader.join(timeout=30)
    assert got == [data]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["fifo"]
    irmodel.save(irmodel.loads(data), os.devnull)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


# -- (d) errors -------------------------------------------------------------------------------

def test_errors_missing_directory_target_directory_parent_file(tmp_path, way):
    m = irmodel.loads(_reference_model(1, tensors=1, floats_each=10).SerializeToString())
    (tmp_path / "adir").mkdir()
    (tmp_path / "adir" / "inside").write_bytes(b"keep")
    (tmp_path / "afile").write_bytes(b"keep")
    before = _snapshot(tmp_path)
    with pytest.raises(FileNotFoundError) as err:
        irmodel.save(m, str(tmp_path / "missing" / "model.onnx"))
    assert err.value.filename == str(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        irmodel.save(m, str(tmp_path / "adir"))
    with pytest.raises(IsADirectoryError):
        irmodel.save(m, str(tmp_path / "new") + os.sep)
    with pytest.raises(NotADirectoryError):
        irmodel.save(m, str(tmp_path / "afile" / "model.onnx"))
    with pytest.raises(IsADirectoryError):
        irmodel.save(m, str(tmp_path / "adir"), save_as_external_data=True, size_threshold=0)
    assert _snapshot(tmp_path) == before
    assert os.listdir(tmp_path / "adir") == ["inside"]
    assert (tmp_path / "adir" / "inside").read_bytes() == b"keep"


UNPRIVILEGED = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import hashlib, uuid  # noqa: F401  (imported lazily by the save; nobody cannot read them)
import irmodel, irmodel._files.atomic
# irmodel imports these on first use; nobody may not be able to read the checkout (a
# fresh clone in a private temporary directory), so they are imported while still root.
import irmodel._files.external_write, irmodel._files.external_data, irmodel.io, irmodel._files.filecopy  # noqa: E401,F401
import irmodel.serialization  # noqa: F401  (irmodel.save is its save_model)
import wirefmt.encoder, wirefmt.writer  # noqa: E401,F401
import wirefmt.scansource  # noqa: F401  (the scan source writer, imported on a code-cache miss:
# nobody cannot read root's cache either, so every type it meets is a miss)

way, source, directory = sys.argv[2:5]
if way == "named":
    irmodel._files.atomic._O_TMPFILE = None
model = irmodel.loads(open(source, "rb").read())
irmodel.dumps(model)
# Every save path below once as root, into a directory of root's: whatever a save imports
# on first use (the list above is not kept by hand in step with the save) is imported now.
import tempfile
with tempfile.TemporaryDirectory() as warm:
    for kw in ({}, {"save_as_external_data": True, "size_threshold": 0}):  # a save to external data marks
        irmodel.save(irmodel.loads(irmodel.dumps(model)), os.path.join(warm, "warm.onnx"), **kw)  # its model
if os.geteuid() == 0:  # root ignores permissions: become nobody (imports are done)
    os.setgid(65534)
    os.setuid(65534)
results = {}
for name, target, kw in [("read-only directory", "ro/new.onnx", {}),
                         ("read-only directory, existing file", "ro/model.onnx", {}),
                         ("read-only directory, external data", "ro/model.onnx",
                          {"save_as_external_data": True, "size_threshold": 0}),
                         ("read-only file", "rw/readonly.onnx", {})]:
    try:
        irmodel.save(model, os.path.join(directory, target), **kw)
        results[name] = "saved"
    except OSError as exc:
        results[name] = [type(exc).__name__, exc.errno]
print(json.dumps(results))
"""


@pytest.fixture
def shared_dir():
    """A directory that an unprivileged user can reach (tmp_path is private to root)."""
    d = tempfile.mkdtemp(prefix="irmodel-atomic-")
    os.chmod(d, 0o755)
    yield d
    for sub in ("ro", "rw"):
        p = os.path.join(d, sub)
        if os.path.isdir(p):
            os.chmod(p, 0o755)
    shutil.rmtree(d)


def test_errors_read_only_directory_and_file(shared_dir, way):
    """As root the save runs as ``nobody``, since root may write anywhere."""
    source = os.path.join(shared_dir, "source.onnx")
    onnx.save_model(_reference_model(2, tensors=2, floats_each=1000), source)
    os.chmod(source, 0o644)
    ro, rw = os.path.join(shared_dir, "ro"), os.path.join(shared_dir, "rw")
    os.mkdir(ro)
    os.mkdir(rw)
    onnx.save_model(_reference_model(1), os.path.join(ro, "model.onnx"))
    onnx.save_model(_reference_model(1), os.path.join(rw, "readonly.onnx"))
    os.chmod(os.path.join(rw, "readonly.onnx"), 0o444)
    os.chmod(ro, 0o555)
    if os.geteuid() == 0:
        os.chown(rw, 65534, 65534)  # writable by nobody: only the file is read-only
    else:
        os.chmod(rw, 0o755)
    before = _snapshot(ro), _snapshot(rw)
    proc = subprocess.run([sys.executable, "-c", UNPRIVILEGED, ROOT, way, source, shared_dir],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    results = json.loads(proc.stdout)
    assert results == {name: ["PermissionError", errno.EACCES] for name in results}, results
    assert (_snapshot(ro), _snapshot(rw)) == before


# -- (e) over the file a model is mapped from ---------------------------------------------------

def test_saving_over_the_mapped_file_a_model_was_loaded_from(tmp_path, way):
    ref = _reference_model(1, tensors=4, floats_each=100_000)
    original = ref.SerializeToString()
    path = str(tmp_path / "model.onnx")
    with open(path, "wb") as f:
        f.write(original)
    inode = os.stat(path).st_ino
    m = irmodel.load(path)
    assert isinstance(m._buf[0], irmodel.io.mmap.mmap)  # mapped, not read
    w1_before = m.graph.initializer[1].raw_data  # a view into the mapping
    assert isinstance(w1_before, memoryview)
    # untouched: the same bytes come back
    irmodel.save(m, path)
    assert open(path, "rb").read() == original
    # edited: what the reference gives for the same edits
    m.producer_name = "edited"
    m.graph.initializer[2].name = "renamed"
    del m.graph.initializer[0]
    m.graph.initializer.append(irmodel.from_array(np.arange(7, dtype=np.int64), "extra"))
    irmodel.save(m, path)
    expected = onnx.ModelProto()
    expected.ParseFromString(original)
    expected.producer_name = "edited"
    expected.graph.initializer[2].name = "renamed"
    del expected.graph.initializer[0]
    expected.graph.initializer.append(numpy_helper.from_array(np.arange(7, dtype=np.int64), "extra"))
    assert onnx.load(path) == expected
    assert open(path, "rb").read() == expected.SerializeToString()
    # the old inode was replaced, not truncated: the old mapping still reads the old data
    assert os.stat(path).st_ino != inode
    assert bytes(w1_before) == ref.graph.initializer[1].raw_data
    assert irmodel.to_dict(m) == irmodel.to_dict(irmodel.loads(expected.SerializeToString()))
    assert os.listdir(tmp_path) == ["model.onnx"]

