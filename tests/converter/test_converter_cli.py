"""``irmodel opset``: what it prints, what it writes, its exit status."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as oh
from onnx import numpy_helper

import irmodel
from irmodel.cli import main


def _model(path, axes_constant: bool = True):
    inits = [numpy_helper.from_array(np.array([1], np.int64), "ax")] if axes_constant else []
    inputs = [oh.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])]
    if not axes_constant:
        inputs.append(oh.make_tensor_value_info("ax", T.INT64, [1]))
    g = oh.make_graph([oh.make_node("Softmax", ["x"], ["y"], axis=1, name="sm"),
                       oh.make_node("ReduceMax", ["y", "ax"], ["z"], name="rm")], "g", inputs,
                      [oh.make_tensor_value_info("z", T.FLOAT, [2, 1, 4])], inits)
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)], ir_version=8), str(path))
    return str(path)


def test_converts_writes_and_lists_each_changed_node(tmp_path, capsys):
    src = _model(tmp_path / "m.onnx")
    out = tmp_path / "out.onnx"
    assert main(["opset", src, "--to", "12", "-o", str(out)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == "graph.node[0]: Softmax -> Transpose, Softmax, Transpose"
    assert text[1] == "graph.node[1]: ReduceMax -> ReduceMax"
    assert text[-1].startswith("ai.onnx opset 18 -> 12: 2 nodes changed; written to")
    m = onnx.load(str(out))
    assert [o.version for o in m.opset_import] == [12]
    onnx.checker.check_model(m)


def test_without_output_nothing_is_written(tmp_path, capsys):
    src = _model(tmp_path / "m.onnx")
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["opset", src, "--to", "13"]) == 0
    assert "would change" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_unconvertible_nodes_are_listed_status_1_nothing_written(tmp_path, capsys):
    src = _model(tmp_path / "m.onnx", axes_constant=False)
    out = tmp_path / "out.onnx"
    assert main(["opset", src, "--to", "13", "-o", str(out), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["from"] == 18 and data["to"] == 13
    assert [(p["code"], p["path"], p["op_type"], p["node_name"]) for p in data["problems"]] == [
        ("V002", "graph.node[1]", "ReduceMax", "rm")]
    assert not out.exists()


@pytest.mark.parametrize("argv", [["--to", "x"], ["--to", "0"], []])
def test_usage_errors_exit_2(tmp_path, argv):
    src = _model(tmp_path / "m.onnx")
    assert main(["opset", src, *argv]) == 2


def test_target_beyond_the_known_opsets_is_status_1(tmp_path, capsys):
    src = _model(tmp_path / "m.onnx")
    assert main(["opset", src, "--to", "999"]) == 1
    assert "V008" in capsys.readouterr().out


def test_missing_file_is_status_2(tmp_path):
    assert main(["opset", str(tmp_path / "nope.onnx"), "--to", "13"]) == 2


def test_not_a_model_is_status_1(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff\xff\xff")
    assert main(["opset", str(bad), "--to", "13"]) == 1
    assert irmodel  # the command reads with irmodel only
