"""``irmodel print`` and ``irmodel parse``: the three forms of large tensors, exit statuses."""

from __future__ import annotations

import numpy as np
import pytest

from irmodel.cli import main

onnx = pytest.importorskip("onnx")
from onnx import helper as oh, numpy_helper as nh  # noqa: E402


@pytest.fixture()
def model_path(tmp_path):
    w = nh.from_array(np.arange(64 * 64, dtype=np.float32).reshape(64, 64), "w")
    g = oh.make_graph([oh.make_node("MatMul", ["x", "w"], ["y"])], "g",
                      [oh.make_tensor_value_info("x", 1, [1, 64])], [oh.make_tensor_value_info("y", 1, [1, 64])], [w])
    path = tmp_path / "m.onnx"
    onnx.save(oh.make_model(g), str(path))
    return path


@pytest.mark.parametrize("flags", [[], ["--external-data", "DATA"]])
def test_print_then_parse_gives_the_model_back(model_path, tmp_path, flags):
    flags = [str(tmp_path / "data") if f == "DATA" else f for f in flags]
    text = tmp_path / "m.txt"
    assert main(["print", str(model_path), "-o", str(text), *flags]) == 0
    out = tmp_path / "back.onnx"
    extra = ["--data-dir", str(tmp_path / "data")] if flags else []
    assert main(["parse", str(text), "-o", str(out), *extra]) == 0
    assert out.read_bytes() == model_path.read_bytes()


def test_elided_text_is_refused_unless_accepted(model_path, tmp_path, capsys):
    text = tmp_path / "m.txt"
    assert main(["print", str(model_path), "-o", str(text), "--elide-tensors", "10"]) == 0
    assert "@elided" in text.read_text() and "sha1" in text.read_text()
    out = tmp_path / "back.onnx"
    assert main(["parse", str(text), "-o", str(out)]) == 1
    assert "elided" in capsys.readouterr().err
    assert main(["parse", str(text), "-o", str(out), "--accept-elided"]) == 0
    back = onnx.load(str(out))
    assert list(back.graph.initializer[0].dims) == [64, 64] and not back.graph.initializer[0].raw_data


def test_print_to_stdout(model_path, capsys):
    assert main(["print", str(model_path), "--elide-tensors", "10"]) == 0
    assert capsys.readouterr().out.startswith("<\n   ir_version:")


def test_parse_error_is_status_1(tmp_path, capsys):
    text = tmp_path / "bad.txt"
    text.write_text("g () => (")
    assert main(["parse", str(text), "-o", str(tmp_path / "x.onnx")]) == 1
    assert "line: 1" in capsys.readouterr().err
