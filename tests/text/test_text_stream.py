"""Printing streams (no whole text in memory); ``@file`` data is read only from its directory."""

from __future__ import annotations

import io

import numpy as np
import pytest

import irmodel
from irmodel.parser import ParseError, parse_model
from irmodel.printer import to_text, write_text

onnx = pytest.importorskip("onnx")
from onnx import helper as oh, numpy_helper as nh  # noqa: E402


def _chain(n: int):
    nodes = [oh.make_node("Relu", [f"t{i}"], [f"t{i + 1}"]) for i in range(n)]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("t0", 1, [2])],
                      [oh.make_tensor_value_info(f"t{n}", 1, [2])])
    return irmodel.loads(oh.make_model(g).SerializeToString())


class _Chunks(io.StringIO):
    def __init__(self):
        super().__init__()
        self.sizes: list = []

    def write(self, s: str) -> int:
        self.sizes.append(len(s))
        return super().write(s)


def test_printing_writes_node_by_node():
    out = _Chunks()
    write_text(_chain(500), out)
    assert len(out.sizes) > 500 and max(out.sizes) < 200
    assert out.getvalue() == to_text(_chain(500))


def test_file_data_is_read_back_and_confined_to_its_directory(tmp_path):
    from irmodel._text.datafile import DataFileWriter, file_loader

    w = nh.from_array(np.arange(1024, dtype=np.float32), "w")
    g = oh.make_graph([], "g", [], [], [w])
    data = oh.make_model(g).SerializeToString()
    writer = DataFileWriter(str(tmp_path))
    buf = io.StringIO()
    write_text(irmodel.loads(data), buf, external=writer)
    writer.close()
    text = buf.getvalue()
    assert "@file{" in text
    assert irmodel.dumps(parse_model(text, load_file=file_loader(str(tmp_path)))) == data
    with pytest.raises(ParseError, match="data is in a file"):
        parse_model(text)
    for bad in ("../tensors.bin", "/etc/passwd", ""):
        with pytest.raises(ParseError, match="cannot read"):
            parse_model(text.replace('"tensors.bin"', f'"{bad}"'), load_file=file_loader(str(tmp_path)))
    with pytest.raises(ParseError, match="past its end"):
        parse_model(text.replace("length: 4096", "length: 999999"), load_file=file_loader(str(tmp_path)))


def test_large_raw_tensor_is_written_in_pieces_and_reads_back(monkeypatch):
    """A raw initializer's hex goes out in pieces of HEX_CHUNK bytes, never as one string,
    and each initializer on its own (GPT-2's 1.3 GB of hex used to be joined first)."""
    from irmodel._text import printer as text_printer

    monkeypatch.setattr(text_printer, "HEX_CHUNK", 64)
    data = np.arange(1000, dtype=np.float32)
    g = oh.make_graph([oh.make_node("Add", ["a", "b"], ["c"])], "g", [],
                      [oh.make_tensor_value_info("c", 1, [1000])],
                      initializer=[nh.from_array(data, "a"), nh.from_array(data * 2, "b")])
    m = irmodel.loads(oh.make_model(g).SerializeToString())
    out = _Chunks()
    write_text(m, out)
    assert max(out.sizes) <= 2 * 64 + 200  # a piece of hex, or a line of syntax
    assert irmodel.dumps(parse_model(out.getvalue())) == irmodel.dumps(m)


def test_tensor_without_known_data_type_prints_as_a_literal_and_reads_back():
    """The typed-literal path of `Printer._tensor` (no data_type, or one onnx has no name for)."""
    g = irmodel.helper.make_graph(
        [], "g", [], [irmodel.helper.make_tensor_value_info("a", 1, [1])],
        initializer=[irmodel.TensorProto(name="a", dims=[1], raw_data=b"abcd"),
                     irmodel.TensorProto(name="b", data_type=99, raw_data=b"xy")])
    m = irmodel.helper.make_model(g)
    text = to_text(m)
    assert "@TensorProto{" in text
    assert irmodel.dumps(parse_model(text)) == irmodel.dumps(m)
