"""`irmodel.load` from every kind of source: regular files are mapped, everything else read.

Pipes, FIFOs and ``/dev/stdin`` have no size and cannot be mapped; file objects are
read from their current position; an empty file is an empty message, as for protobuf.
Each result is compared with the reference's parse of the same bytes.
"""

from __future__ import annotations

import io
import json
import mmap
import os
import subprocess
import sys
import threading

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import irmodel
from reference_helpers import reference_dict

from repo_paths import REPO as ROOT  # noqa: E402


def _model_bytes() -> bytes:
    """A model larger than a pipe's buffer (64 KiB), so a reader must loop."""
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(rng.standard_normal(20_000).astype(np.float32), f"w{i}")
             for i in range(3)]
    graph = helper.make_graph(
        [helper.make_node("Add", ["w0", "w1"], ["s"]), helper.make_node("Mul", ["s", "w2"], ["y"])],
        "g", [], [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [20_000])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="sources", doc_string="from a pipe")
    data = model.SerializeToString()
    assert len(data) > 200_000
    return data


DATA = _model_bytes()
EXPECTED = reference_dict("ModelProto", DATA)


def _feed(write_end, data: bytes) -> threading.Thread:
    """Write ``data`` to a pipe end (an fd or a path) from a thread, then close it."""
    def run():
        with open(write_end, "wb") as f:
            f.write(data)
    t = threading.Thread(target=run)
    t.start()
    return t


def test_a_fifo_path_is_read_not_mapped(tmp_path):
    fifo = str(tmp_path / "model.fifo")
    os.mkfifo(fifo)
    writer = _feed(fifo, DATA)
    m = irmodel.load(fifo)
    writer.join(timeout=30)
    assert not isinstance(m._buf[0], mmap.mmap)
    assert irmodel.to_dict(m) == EXPECTED


def test_a_pipe_file_object_is_read():
    r, w = os.pipe()
    writer = _feed(w, DATA)
    with os.fdopen(r, "rb") as f:
        m = irmodel.load(f)
    writer.join(timeout=30)
    assert irmodel.to_dict(m) == EXPECTED


def test_a_pipe_is_read_from_its_current_position():
    r, w = os.pipe()
    prefix = b"not part of the model"
    writer = _feed(w, prefix + DATA)
    with os.fdopen(r, "rb") as f:
        assert f.read(len(prefix)) == prefix  # the rest may already sit in f's buffer
        m = irmodel.load(f)
    writer.join(timeout=30)
    assert irmodel.to_dict(m) == EXPECTED


def test_dev_stdin_fed_from_a_pipe():
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import irmodel; "
            "print(json.dumps(irmodel.to_dict(irmodel.load(open('/dev/stdin', 'rb')))))")
    proc = subprocess.run([sys.executable, "-c", code, ROOT], input=DATA, capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    assert json.loads(proc.stdout) == EXPECTED


@pytest.mark.parametrize("how", ["seek", "read"])
def test_a_regular_file_object_is_mapped_from_its_current_position(tmp_path, how):
    prefix = b"\xff" * 1000  # not a valid start of a model: decoding from 0 would fail
    path = tmp_path / "prefixed.bin"
    path.write_bytes(prefix + DATA)
    with open(path, "rb") as f:
        if how == "seek":
            f.seek(len(prefix))
        else:
            f.read(len(prefix))  # f has read ahead: only tell() knows where we are
        m = irmodel.load(f)
    assert isinstance(m._buf[0], mmap.mmap)
    assert irmodel.to_dict(m) == EXPECTED


def test_a_regular_file_object_at_its_end_is_an_empty_model(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(DATA)
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        m = irmodel.load(f)
    assert irmodel.to_dict(m) == reference_dict("ModelProto", b"") == {}


@pytest.mark.parametrize("start", [0, 7])
def test_bytesio_without_a_descriptor_is_read_from_its_position(start):
    f = io.BytesIO(b"\x00" * start + DATA)
    f.seek(start)
    assert irmodel.to_dict(irmodel.load(f)) == EXPECTED


@pytest.mark.parametrize("how", ["path", "file object", "pipe", "fifo"])
def test_an_empty_source_is_an_empty_model(tmp_path, how):
    assert reference_dict("ModelProto", b"") == {}
    if how in ("path", "file object"):
        path = tmp_path / "empty.onnx"
        path.write_bytes(b"")
        if how == "path":
            m = irmodel.load(str(path))
        else:
            with open(path, "rb") as f:
                m = irmodel.load(f)
    elif how == "pipe":
        r, w = os.pipe()
        os.close(w)
        with os.fdopen(r, "rb") as f:
            m = irmodel.load(f)
    else:
        fifo = str(tmp_path / "empty.fifo")
        os.mkfifo(fifo)
        writer = _feed(fifo, b"")
        m = irmodel.load(fifo)
        writer.join(timeout=30)
    assert irmodel.to_dict(m) == {}
    assert irmodel.dumps(m) == b""
    assert m.graph.name == "" and not m.HasField("graph")


def test_a_tensor_from_a_pipe(tmp_path):
    t = numpy_helper.from_array(np.arange(50_000, dtype=np.int64), "t").SerializeToString()
    r, w = os.pipe()
    writer = _feed(w, t)
    with os.fdopen(r, "rb") as f:
        got = irmodel.load(f, type_name="TensorProto")
    writer.join(timeout=30)
    assert irmodel.to_dict(got) == reference_dict("TensorProto", t)
