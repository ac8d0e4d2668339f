"""irmodel._files.filecopy: the direct (O_DIRECT) copy used by atomic saves, and its fallbacks.

The sizes that make a save take the direct path (64 MiB and up) are shrunk here so that
files of a few hundred KB exercise every branch: the unaligned head, the aligned blocks on
several threads, the tail left to the kernel copy, and each way of refusing.
"""

from __future__ import annotations

import errno
import fcntl
import os

import pytest
from hypothesis import given, settings, strategies as st

import irmodel
from reference_helpers import gemm_model_file, reference_edit
import irmodel._files.filecopy as filecopy


@pytest.fixture
def small_direct(monkeypatch):
    monkeypatch.setattr(filecopy, "DIRECT_MIN", 1 << 14)
    monkeypatch.setattr(filecopy, "DIRECT_BUFFER", 1 << 14)
    monkeypatch.setattr(filecopy, "DIRECT_THREADS", 3)


def _direct_io_works(directory) -> bool:
    """Does this filesystem take O_DIRECT writes of 4096 aligned bytes?"""
    import mmap

    path = os.path.join(directory, "probe")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
    except OSError:
        return False
    buf = mmap.mmap(-1, 4096)
    try:
        os.pwrite(fd, buf, 0)
        return True
    except OSError:
        return False
    finally:
        buf.close()
        os.close(fd)
        os.unlink(path)


def _record_pwrites(monkeypatch) -> list:
    calls: list = []
    real = os.pwrite

    def recorded(fd, data, offset):
        calls.append((offset, len(data), bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)))
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", recorded)
    return calls


@pytest.mark.parametrize("name", ["", "e", "edited", "x" * 5000], ids=["shorter", "same", "longer", "5002-longer"])  # shifts of -1, 0, +5, +5002 bytes
def test_save_writes_the_aligned_blocks_directly(tmp_path, monkeypatch, small_direct, name):
    path = gemm_model_file(tmp_path, 400)
    calls = _record_pwrites(monkeypatch)
    m = irmodel.load(path)
    m.producer_name = name
    out = str(tmp_path / "out.onnx")
    irmodel.save(m, out)
    assert open(out, "rb").read() == reference_edit(path, name)
    if _direct_io_works(str(tmp_path)):
        assert len(calls) > 10 and all(direct for _, _, direct in calls)
        assert all(offset % 4096 == 0 and n % 4096 == 0 for offset, n, _ in calls)
    else:  # no direct I/O on this filesystem: the kernel copy did it all
        assert calls == []


def test_an_unchanged_model_is_identical_through_the_direct_path(tmp_path, small_direct):
    path = gemm_model_file(tmp_path, 400)
    out = str(tmp_path / "same.onnx")
    irmodel.save(irmodel.load(path), out)
    assert open(out, "rb").read() == open(path, "rb").read()


def test_writes_to_a_file_object_stay_buffered(tmp_path, monkeypatch, small_direct):
    # Only an atomic save fsyncs; a caller's own file keeps its data in the page cache.
    path = gemm_model_file(tmp_path, 400)
    calls = _record_pwrites(monkeypatch)
    m = irmodel.load(path)
    m.producer_name = "edited"
    with open(tmp_path / "out.onnx", "wb") as fh:
        irmodel.save(m, fh)
    assert calls == []
    assert (tmp_path / "out.onnx").read_bytes() == reference_edit(path, "edited")


def test_a_refused_alignment_falls_back_to_the_kernel_copy(tmp_path, monkeypatch, small_direct):
    path = gemm_model_file(tmp_path, 400)
    refused: list = []
    flags_seen: list = []

    def refuse(fd, data, offset):
        flags_seen.append(fcntl.fcntl(fd, fcntl.F_GETFL))
        refused.append(offset)
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "pwrite", refuse)
    m = irmodel.load(path)
    m.producer_name = "edited"
    out = str(tmp_path / "out.onnx")
    irmodel.save(m, out)
    assert open(out, "rb").read() == reference_edit(path, "edited")
    if _direct_io_works(str(tmp_path)):
        assert len(refused) == 1 and flags_seen[0] & os.O_DIRECT  # tried once, then gave up


def test_a_filesystem_without_direct_io_falls_back(tmp_path, monkeypatch, small_direct):
    path = gemm_model_file(tmp_path, 400)
    real = fcntl.fcntl

    def no_direct(fd, cmd, arg=0):
        if cmd == fcntl.F_SETFL and arg & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real(fd, cmd, arg)

    monkeypatch.setattr(fcntl, "fcntl", no_direct)
    calls = _record_pwrites(monkeypatch)
    m = irmodel.load(path)
    m.producer_name = "edited"
    out = str(tmp_path / "out.onnx")
    irmodel.save(m, out)
    assert open(out, "rb").read() == reference_edit(path, "edited")
    assert calls == []


def test_an_error_on_a_copying_thread_is_raised_and_nothing_is_left(tmp_path, monkeypatch, small_direct):
    path = gemm_model_file(tmp_path, 400)
    real = os.pwrite

    def failing_late(fd, data, offset):
        if offset > 300_000:
            raise OSError(errno.EIO, "I/O error late in the file")
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", failing_late)
    m = irmodel.load(path)
    m.producer_name = "edited"
    out = tmp_path / "out.onnx"
    before = set(os.listdir("/proc/self/fd"))
    if _direct_io_works(str(tmp_path)):
        with pytest.raises(OSError, match="late in the file"):
            irmodel.save(m, str(out))
        assert not out.exists() and os.listdir(tmp_path) == ["m.onnx"]
    else:  # no direct writes here, so nothing fails: the kernel copy did it
        irmodel.save(m, str(out))
        assert out.read_bytes() == reference_edit(path, "edited")
    assert set(os.listdir("/proc/self/fd")) <= before  # every duplicated descriptor closed
    # (<=: the collector may close earlier tests' model descriptors meanwhile)


def test_threads_stop_at_the_first_error_and_close_their_descriptors(tmp_path):
    done: list = []
    duplicates: set[int] = set()

    def work(src, dst, piece, stop):
        duplicates.update((src, dst))
        for step in range(50):
            if stop():
                return
            if piece == 0 and step == 3:
                raise OSError(errno.EIO, "piece 0 failed")
            os.fstat(src), os.fstat(dst)  # the duplicates are open while the threads run
            done.append(piece)
            import time

            time.sleep(0.001)

    with open(tmp_path / "a", "wb") as a, open(tmp_path / "b", "wb") as b:
        before = set(os.listdir("/proc/self/fd"))
        with pytest.raises(OSError, match="piece 0 failed"):
            filecopy._on_threads(a.fileno(), b.fileno(), [0, 1, 2], work)
        after = {int(fd) for fd in os.listdir("/proc/self/fd")}
        assert {a.fileno(), b.fileno()} <= after  # the caller's own descriptors stay open
        assert after <= {int(fd) for fd in before}  # nothing new left open (<=: the collector
        # may close earlier tests' model descriptors meanwhile)
        assert len(duplicates) == 2 and not duplicates & {a.fileno(), b.fileno()}
        for fd in duplicates:  # each duplicate closed (listdir's own descriptor may reuse one)
            with pytest.raises(OSError) as closed:
                os.fstat(fd)
            assert closed.value.errno == errno.EBADF
    assert done.count(0) == 3 and done.count(1) < 50 and done.count(2) < 50  # the others stopped early


def test_a_source_shorter_than_expected_is_an_error(tmp_path):
    (tmp_path / "src").write_bytes(bytes(range(256)) * 256)  # 64 KiB
    import mmap

    with open(tmp_path / "src", "rb") as s, open(tmp_path / "dst", "wb") as d:
        with pytest.raises(OSError, match="shorter"):  # the last chunk would need 4 KiB past the end
            filecopy._direct_chunks(s.fileno(), d.fileno(), 4096, [(0, 8192), (57344, 8192)],
                                    mmap.mmap(-1, 8192), lambda: False)


@settings(max_examples=60, deadline=None)
@given(pos=st.integers(0, 9000), offset=st.integers(0, 9000), length=st.integers(0, 120_000),
       threads=st.integers(1, 4))
def test_direct_copy_copies_exactly_the_range(tmp_path_factory, pos, offset, length, threads):
    """Any destination position, source offset and length: the bytes land where they belong,
    the descriptor ends after them, and the rest is left to the kernel copy as documented."""
    d = tmp_path_factory.mktemp("dc")
    data = os.urandom(offset + length + 100)
    (d / "src").write_bytes(data)
    old = (filecopy.DIRECT_MIN, filecopy.DIRECT_BUFFER, filecopy.DIRECT_THREADS)
    filecopy.DIRECT_MIN, filecopy.DIRECT_BUFFER, filecopy.DIRECT_THREADS = 1 << 13, 1 << 13, threads
    try:
        with open(d / "src", "rb") as s, open(d / "dst", "wb") as out:
            out.write(b"h" * pos)
            out.flush()
            fd = out.fileno()
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            done = filecopy.direct_copy(s.fileno(), fd, offset, length)
            assert fcntl.fcntl(fd, fcntl.F_GETFL) == flags
            assert os.lseek(fd, 0, os.SEEK_CUR) == pos + done
            assert 0 <= done <= length
            if length >= filecopy.DIRECT_MIN and _direct_io_works(str(d)):
                assert (pos + done) % 4096 == 0 and length - done < 4096
            done += filecopy.kernel_copy(s.fileno(), fd, offset + done, length - done)
            assert done == length
        assert (d / "dst").read_bytes() == b"h" * pos + data[offset:offset + length]
    finally:
        filecopy.DIRECT_MIN, filecopy.DIRECT_BUFFER, filecopy.DIRECT_THREADS = old


def test_saving_over_the_loaded_file_through_the_direct_path(tmp_path, small_direct):
    path = gemm_model_file(tmp_path, 400)
    expected = reference_edit(path, "edited")
    m = irmodel.load(path)
    m.producer_name = "edited"
    irmodel.save(m, path)  # reads the old inode while the new one is written
    assert open(path, "rb").read() == expected
    assert irmodel.load(path).graph.initializer[0].name == "w"


@pytest.mark.parametrize("durable", [False, True], ids=["kernel copy", "direct copy"])
def test_progress_is_reported_during_long_copies_and_writes(tmp_path, monkeypatch, small_direct, durable):
    from irmodel._files.filecopy import source_copier
    from irmodel._files.origin import Origin
    from wirefmt.writer import StreamWriter

    monkeypatch.setattr(StreamWriter, "PROGRESS_COPY_STEP", 1 << 16)
    monkeypatch.setattr(StreamWriter, "WRITE_STEP", 1 << 16)
    data = os.urandom(300_000)
    (tmp_path / "src").write_bytes(data)
    seen: list = []
    with open(tmp_path / "src", "rb") as src, open(tmp_path / "dst", "wb") as out:
        view = memoryview(data)
        origin = Origin()
        origin.keep_source(os.dup(src.fileno()), view)
        w = StreamWriter(out, progress=seen.append)
        w.write(b"head")
        w.copy_span(view, 1000, 250_000, source_copier(origin, out, durable=durable))
        w.write(memoryview(data)[:200_000])  # one large part
        w.flush()
        assert w.written == 4 + 250_000 + 200_000
    assert (tmp_path / "dst").read_bytes() == b"head" + data[1000:251_000] + data[:200_000]
    assert seen == sorted(seen) and seen[-1] == 4 + 250_000 + 200_000
    assert len([n for n in seen if n <= 250_004]) >= 4  # the copy reported in steps
    assert len([n for n in seen if n > 250_004]) >= 3  # and so did the large part
