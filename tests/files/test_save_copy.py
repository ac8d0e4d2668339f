"""Saving a model loaded from a file copies its unchanged runs file-to-file in the kernel.

Every path (copy_file_range, sendfile, the buffer fallback, an output without a
descriptor, a root whose buffer was replaced) must give exactly the bytes the reference
writes for the same edit.
"""

from __future__ import annotations

import errno
import io
import os

import numpy as np
import pytest
from onnx import helper as oh, numpy_helper

import irmodel
from reference_helpers import gemm_model_file, reference_edit
import irmodel._files.filecopy as filecopy


def _count(monkeypatch, name: str) -> list:
    calls = []
    real = getattr(os, name)

    def counted(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(os, name, counted)
    return calls


def test_edit_and_save_copies_in_the_kernel(tmp_path, monkeypatch):
    path = gemm_model_file(tmp_path, 600)
    calls = _count(monkeypatch, "copy_file_range")
    m = irmodel.load(path)
    m.producer_name = "edited"
    out = str(tmp_path / "out.onnx")
    irmodel.save(m, out)
    assert calls, "the unchanged graph was not copied by copy_file_range"
    assert open(out, "rb").read() == reference_edit(path)


@pytest.mark.parametrize("refuse", [["copy_file_range"], ["copy_file_range", "sendfile"]])
def test_kernel_refusals_fall_back(tmp_path, monkeypatch, refuse):
    path = gemm_model_file(tmp_path, 600)

    def unsupported(*args):
        raise OSError(errno.EXDEV, "cross-device")

    for name in refuse:
        monkeypatch.setattr(filecopy, f"_{name}", unsupported)
    m = irmodel.load(path)
    m.producer_name = "edited"
    out = str(tmp_path / "out.onnx")
    irmodel.save(m, out)
    assert open(out, "rb").read() == reference_edit(path)


def test_unexpected_kernel_errors_are_raised(tmp_path, monkeypatch):
    path = gemm_model_file(tmp_path, 600)

    def broken(*args):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(filecopy, "_copy_file_range", broken)
    m = irmodel.load(path)
    m.producer_name = "edited"
    out = tmp_path / "out.onnx"
    with pytest.raises(OSError, match="I/O error"):
        irmodel.save(m, str(out))
    assert not out.exists()


def test_output_without_a_descriptor(tmp_path):
    path = gemm_model_file(tmp_path, 600)
    m = irmodel.load(path)
    m.producer_name = "edited"
    buf = io.BytesIO()
    irmodel.save(m, buf)
    assert buf.getvalue() == reference_edit(path)
    assert irmodel.dumps(m) == reference_edit(path)


def test_unchanged_model_saves_identical(tmp_path):
    path = gemm_model_file(tmp_path, 600)
    out = str(tmp_path / "same.onnx")
    irmodel.save(irmodel.load(path), out)
    assert open(out, "rb").read() == open(path, "rb").read()


def test_a_replaced_buffer_is_not_copied_from_the_old_file(tmp_path):
    path = gemm_model_file(tmp_path, 600)
    other = oh.make_model(oh.make_graph([], "other", [], [], [numpy_helper.from_array(
        np.full((512, 1024), 7, dtype=np.float32), "z")]), producer_name="q")
    m = irmodel.load(path)
    m.CopyFrom(irmodel.loads(other.SerializeToString()))
    out = str(tmp_path / "out.onnx")
    irmodel.save(m, out)
    assert open(out, "rb").read() == other.SerializeToString()


def test_the_source_descriptor_is_closed_with_the_model(tmp_path):
    path = gemm_model_file(tmp_path, 600)
    before = set(os.listdir("/proc/self/fd"))
    m = irmodel.load(path)
    assert len(set(os.listdir("/proc/self/fd")) - before) >= 1
    del m
    import gc

    gc.collect()
    assert set(os.listdir("/proc/self/fd")) - before == set()


def test_two_thread_copy_of_a_shifted_range(tmp_path, monkeypatch):
    # Small chunks so the 2.4 MB model takes the parallel path of a 1.5 GB one.
    monkeypatch.setattr(filecopy, "CHUNK", 1 << 16)
    monkeypatch.setattr(filecopy, "PARALLEL_MIN", 1 << 17)
    calls = _count(monkeypatch, "copy_file_range")
    path = gemm_model_file(tmp_path, 600)
    m = irmodel.load(path)
    m.producer_name = "edited"  # 1 byte longer: the copied data is shifted
    out = str(tmp_path / "out.onnx")
    irmodel.save(m, out)
    assert len(calls) > 10 and any(len(c) == 5 for c in calls)  # explicit offsets: the threads ran
    assert open(out, "rb").read() == reference_edit(path)


def test_an_error_in_the_helper_thread_is_raised(tmp_path, monkeypatch):
    monkeypatch.setattr(filecopy, "CHUNK", 1 << 16)
    monkeypatch.setattr(filecopy, "PARALLEL_MIN", 1 << 17)
    real = os.copy_file_range

    def failing_late(src, dst, count, offset_src=None, offset_dst=None):
        if offset_src is not None and offset_src > 2_000_000:
            raise OSError(errno.EIO, "I/O error late in the file")
        return real(src, dst, count, offset_src, offset_dst)

    monkeypatch.setattr(os, "copy_file_range", failing_late)
    path = gemm_model_file(tmp_path, 600)
    m = irmodel.load(path)
    m.producer_name = "edited"
    out = tmp_path / "out.onnx"
    with pytest.raises(OSError, match="late in the file"):
        irmodel.save(m, str(out))
    assert not out.exists()
