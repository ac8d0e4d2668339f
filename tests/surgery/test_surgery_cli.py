"""``irmodel extract``, ``inline`` and ``merge``: results as the library's, exit statuses, no
output file on failure."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper as oh, numpy_helper

from irmodel.cli import main

from surgery_helpers import run


def _chain(path, n=4):
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        inits.append(numpy_helper.from_array(np.full(8, i + 1, np.float32), f"W{i}"))
        nodes.append(oh.make_node("Add", [prev, f"W{i}"], [f"v{i}"]))
        prev = f"v{i}"
    g = oh.make_graph(nodes, "chain", [oh.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
                      [oh.make_tensor_value_info(prev, TensorProto.FLOAT, [8])], inits)
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)], ir_version=10), str(path))
    return str(path)


def test_extract(tmp_path, capsys):
    src, out = _chain(tmp_path / "m.onnx"), tmp_path / "p.onnx"
    assert main(["extract", src, "-o", str(out), "--inputs", "v0", "--outputs", "v2"]) == 0
    part = onnx.load(str(out))
    assert [t.name for t in part.graph.initializer] == ["W1", "W2"]
    x = np.zeros(8, np.float32)
    np.testing.assert_array_equal(run(str(out), {"v0": x})["v2"], x + 2 + 3)


@pytest.mark.parametrize("args, words", [
    (["--inputs", "v0", "--outputs", "nope"], "'nope'"),
    (["--inputs", "v1", "--outputs", "v2,v2"], "Duplicate"),
    (["--inputs", ",", "--outputs", "v2"], "empty name"),
])
def test_extract_bad_names(tmp_path, capsys, args, words):
    src, out = _chain(tmp_path / "m.onnx"), tmp_path / "p.onnx"
    assert main(["extract", src, "-o", str(out), *args]) == 2
    assert words in capsys.readouterr().err
    assert not out.exists()


def test_extract_missing_file(tmp_path, capsys):
    assert main(["extract", str(tmp_path / "no.onnx"), "-o", str(tmp_path / "o"), "--inputs", "a",
                 "--outputs", "b"]) == 2
    assert "irmodel:" in capsys.readouterr().err


def _with_function(path):
    f = oh.make_function("local", "twice", ["a"], ["b"], [oh.make_node("Add", ["a", "a"], ["b"])],
                         [oh.make_opsetid("", 17)])
    g = oh.make_graph([oh.make_node("twice", ["x"], ["y"], domain="local")], "g",
                      [oh.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [oh.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    onnx.save(oh.make_model(g, functions=[f], ir_version=10,
                            opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid("local", 1)]), str(path))
    return str(path)


def test_inline(tmp_path):
    src, out = _with_function(tmp_path / "f.onnx"), tmp_path / "i.onnx"
    assert main(["inline", src, "-o", str(out)]) == 0
    m = onnx.load(str(out))
    assert [n.op_type for n in m.graph.node] == ["Add"] and not m.functions
    out2 = tmp_path / "i2.onnx"
    assert main(["inline", src, "-o", str(out2), "--functions", "local:twice", "--exclude"]) == 0
    assert [n.op_type for n in onnx.load(str(out2)).graph.node] == ["twice"]


def test_inline_bad_function_list(tmp_path, capsys):
    src, out = _with_function(tmp_path / "f.onnx"), tmp_path / "i.onnx"
    assert main(["inline", src, "-o", str(out), "--functions", "twice"]) == 2
    assert "DOMAIN:NAME" in capsys.readouterr().err
    assert not out.exists()


def test_merge(tmp_path, capsys):
    a, b = _chain(tmp_path / "a.onnx", 2), _chain(tmp_path / "b.onnx", 2)
    out = tmp_path / "ab.onnx"
    assert main(["merge", a, b, "-o", str(out), "--io-map", "v1:x", "--prefix2", "b_"]) == 0
    x = np.zeros(8, np.float32)
    np.testing.assert_array_equal(run(str(out), {"x": x})["b_v1"], x + 3 + 3)
    bad = tmp_path / "bad.onnx"
    assert main(["merge", a, b, "-o", str(bad), "--io-map", "v1:x"]) == 2  # clashing names
    assert "overlapping" in capsys.readouterr().err and not bad.exists()
    assert main(["merge", a, b, "-o", str(bad), "--io-map", "v1:x", "--rename-auto"]) == 0
    assert main(["merge", a, b, "-o", str(tmp_path / "c.onnx"), "--io-map", "v1"]) == 2


@pytest.mark.parametrize("content", [b"", b"\x0a\xff\xff\xff\xff\x0f", b"\x08\x07\x3a\x03abc"])
@pytest.mark.parametrize("command", ["extract", "inline", "merge"])
def test_not_a_model_exits_1_and_writes_nothing(tmp_path, capsys, content, command):
    bad, out = tmp_path / "bad.onnx", tmp_path / "o.onnx"
    bad.write_bytes(content)
    args = {"extract": ["--inputs", "a", "--outputs", "b"], "inline": [],
            "merge": [str(bad), "--io-map", "a:b"]}[command]
    assert main([command, str(bad), "-o", str(out), *args]) == 1
    assert capsys.readouterr().err.startswith("irmodel:")
    assert not out.exists()
