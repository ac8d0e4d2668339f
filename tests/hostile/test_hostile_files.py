"""Issue 14, files that change under a loaded model: documented (as for any memory-mapped
reader), detected by ``save``/``dumps`` (size, inode, mtime recorded at load) before
anything is written or read from the mapping, and avoidable with ``load(mmap=False)``.

The cases that truncate a mapped file run in a child process: were the check missing,
the next read of the mapping would kill the process with SIGBUS, and it must not take
the test session with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import irmodel
from irmodel import helper as h

from repo_paths import REPO as ROOT  # noqa: E402
OLD = (1_000_000_000, 1_000_000_000_000_000_000)  # atime, mtime (ns): 2001, so any write changes it


def _model_file(directory, external: bool = False) -> str:
    w = irmodel.from_array(np.arange(4096, dtype=np.float32), "w")
    model = h.make_model(h.make_graph([h.make_node("Relu", ["w"], ["y"])], "g", [], [], initializer=[w]),
                         producer_name="original")
    path = os.path.join(directory, "m.onnx")
    if external:
        irmodel.save(model, path, save_as_external_data=True, location="w.bin", size_threshold=0)
        os.utime(os.path.join(directory, "w.bin"), ns=OLD)
    else:
        irmodel.save(model, path)
    os.utime(path, ns=OLD)
    return path


def _child(script: str, directory) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=str(directory),
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": ROOT})


def test_save_refuses_a_truncated_model_file_instead_of_dying_of_sigbus(tmp_path):
    _model_file(tmp_path)
    p = _child("""
        import os, irmodel
        m = irmodel.load("m.onnx")
        m.producer_name = "edited"          # the graph and its weights stay spans of the mapping
        os.truncate("m.onnx", 100)
        for save in (lambda: irmodel.save(m, "out.onnx"), lambda: irmodel.dumps(m)):
            try:
                save()
                print("written")
            except irmodel.SourceChangedError as exc:
                print("refused:", exc.filename, exc.strerror)
        print("out exists:", os.path.exists("out.onnx"))
    """, tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("refused: m.onnx the model file changed since it was loaded (its size was ")
    assert lines[1].startswith("refused:") and lines[2] == "out exists: False"


def test_save_refuses_a_truncated_external_data_file(tmp_path):
    _model_file(tmp_path, external=True)
    p = _child("""
        import os, irmodel
        m = irmodel.load("m.onnx")
        irmodel.load_external_data_for_model(m, ".")   # raw_data: views of the mapped w.bin
        os.truncate("w.bin", 10)
        for kw in ({}, {"save_as_external_data": True, "location": "new.bin"}):
            try:
                irmodel.save(m, "out.onnx", **kw)
                print("written")
            except irmodel.SourceChangedError as exc:
                print("refused:", os.path.basename(exc.filename), "size" in exc.strerror)
        print(sorted(os.listdir(".")))
    """, tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["refused: w.bin True", "refused: w.bin True", "['m.onnx', 'w.bin']"]


def test_save_refuses_a_same_length_rewrite_in_place(tmp_path):
    path = _model_file(tmp_path)
    m = irmodel.load(path)
    m.producer_name = "edited"
    with open(path, "r+b") as f:  # same size, new bytes at the old offsets
        f.seek(os.path.getsize(path) - 4)
        f.write(b"\xff\xff\xff\xff")
    with pytest.raises(irmodel.SourceChangedError, match="modified"):
        irmodel.save(m, str(tmp_path / "out.onnx"))
    assert not os.path.exists(tmp_path / "out.onnx")


def test_a_file_replaced_by_a_rename_is_no_change_to_the_mapped_model(tmp_path):
    path = _model_file(tmp_path)
    original = open(path, "rb").read()
    m = irmodel.load(path)
    other = str(tmp_path / "other.onnx")
    with open(other, "wb") as f:
        f.write(b"\x08\x01")
    os.replace(other, path)  # what save and most tools do: the mapping keeps the old file
    assert irmodel.dumps(m) == original
    irmodel.save(m, path)
    assert open(path, "rb").read() == original


def test_an_unchanged_source_saves_as_before(tmp_path):
    path = _model_file(tmp_path, external=True)
    m = irmodel.load(path)
    irmodel.to_array(m.graph.initializer[0])  # maps w.bin
    m.producer_name = "edited"
    irmodel.save(m, str(tmp_path / "out.onnx"))
    assert irmodel.load(str(tmp_path / "out.onnx")).producer_name == "edited"


def test_mmap_false_makes_the_model_independent_of_its_files(tmp_path):
    path = _model_file(tmp_path, external=True)
    original = open(path, "rb").read()
    m = irmodel.load(path, mmap=False)
    w = irmodel.to_array(m.graph.initializer[0])     # read, not mapped
    assert not w.flags.writeable
    os.truncate(path, 0)
    os.truncate(tmp_path / "w.bin", 0)
    assert irmodel.dumps(m) == original               # nothing of it was in the file any more
    assert np.array_equal(w, np.arange(4096, dtype=np.float32))
    irmodel.save(m, str(tmp_path / "copy.onnx"))
    assert open(tmp_path / "copy.onnx", "rb").read() == original
    with pytest.raises(irmodel.ExternalDataError, match="past the end"):
        irmodel.to_array(m.graph.initializer[0])      # read now: the file is empty now


def test_mmap_false_reads_a_file_object_too(tmp_path):
    path = _model_file(tmp_path)
    with open(path, "rb") as f:
        m = irmodel.load(f, mmap=False)
    assert m.producer_name == "original" and irmodel.dumps(m) == open(path, "rb").read()


def test_the_readme_says_what_happens(tmp_path):
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = readme.split("### Files that change under a loaded model", 1)[1].split("\n## ", 1)[0]
    for fact in ("SIGBUS", "rewritten in place", "SourceChangedError", "mmap=False"):
        assert fact in section
