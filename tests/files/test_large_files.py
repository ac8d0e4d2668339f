"""Files over 2 GiB (protobuf's hard limit) load, through a sparse file."""

from __future__ import annotations

import os

import pytest

import irmodel
from wirefmt.varint import encode_varint

RAW_SIZE = (1 << 31) + 4096  # a tensor payload just over 2 GiB


def _len_prefix(number: int, length: int) -> bytes:
    return encode_varint(number << 3 | 2) + encode_varint(length)


def _field(number: int, body: bytes) -> bytes:
    return _len_prefix(number, len(body)) + body


def write_sparse_model(path: str) -> None:
    """Model: graph(initializer(raw_data of RAW_SIZE zero bytes), name after it), then metadata.

    The payload is a hole made with seek: nothing of it is ever held in memory or written.
    """
    tensor_head = _field(1, b"") + _field(8, b"big") + _len_prefix(9, RAW_SIZE)
    tensor_len = len(tensor_head) + RAW_SIZE
    graph_tail = _field(2, b"after-the-weights")
    graph_len = len(_len_prefix(5, tensor_len)) + tensor_len + len(graph_tail)
    metadata = _field(14, _field(1, b"key") + _field(2, b"value"))
    with open(path, "wb") as f:
        f.write(encode_varint(1 << 3) + encode_varint(10))  # ir_version = 10
        f.write(_len_prefix(7, graph_len))
        f.write(_len_prefix(5, tensor_len))
        f.write(tensor_head)
        f.seek(RAW_SIZE, os.SEEK_CUR)
        f.write(graph_tail)
        f.write(metadata)


@pytest.fixture(scope="module")
def big_model(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("big") / "big.onnx")
    try:
        write_sparse_model(path)
    except OSError as exc:  # a filesystem without sparse files or space: say so, loudly
        pytest.fail(f"cannot create the sparse test file: {exc}")
    yield path
    os.unlink(path)


def test_model_over_2_gib_loads_and_fields_after_the_weights_read(big_model):
    assert os.path.getsize(big_model) > 1 << 31
    m = irmodel.load(big_model)
    assert m.ir_version == 10
    assert [(p.key, p.value) for p in m.metadata_props] == [("key", "value")]
    assert m.graph.name == "after-the-weights"
    t = m.graph.initializer[0]
    assert t.name == "big"
    assert len(t.raw_data) == RAW_SIZE
    assert t.raw_data[RAW_SIZE - 1] == 0


def test_model_over_2_gib_saves_with_an_edit_streaming(big_model, tmp_path):
    m = irmodel.load(big_model)
    m.producer_name = "edited"
    out = str(tmp_path / "edited.onnx")
    irmodel.save(m, out)
    try:
        again = irmodel.load(out)
        assert again.producer_name == "edited"
        assert again.graph.name == "after-the-weights"
        assert len(again.graph.initializer[0].raw_data) == RAW_SIZE
        assert os.path.getsize(out) == os.path.getsize(big_model) + len("edited") + 2
    finally:
        os.unlink(out)
