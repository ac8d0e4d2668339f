"""``irmodel infer`` and ``check_model(full_check=True)``, against the reference."""

from __future__ import annotations

import json
import os
import warnings

import onnx
import pytest
from onnx import helper as oh
from onnx import shape_inference

import irmodel
from irmodel import cli

from repo_paths import LENET  # noqa: E402


def _run(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _reference_types(model: onnx.ModelProto) -> list[tuple[str, str, object]]:
    """``(role, name, (elem_type, shape))`` of the main graph after onnx's inference."""
    g = shape_inference.infer_shapes(model).graph

    def shape(v):
        t = v.type.tensor_type
        if not t.HasField("shape"):
            return onnx.TensorProto.DataType.Name(t.elem_type), None
        return (onnx.TensorProto.DataType.Name(t.elem_type),
                [d.dim_param if d.HasField("dim_param") else d.dim_value if d.HasField("dim_value") else None
                 for d in t.shape.dim])

    return ([("input", v.name, shape(v)) for v in g.input] + [("value", v.name, shape(v)) for v in g.value_info]
            + [("output", v.name, shape(v)) for v in g.output])


def test_infer_prints_the_types_the_reference_infers(capsys):
    status, out, _ = _run(capsys, "infer", LENET, "--json")
    assert status == 0
    ours = [(v["role"], v["name"], (v["elem_type"], v["shape"])) for v in json.loads(out)]
    assert ours == _reference_types(onnx.load(LENET))
    status, text, _ = _run(capsys, "infer", LENET)
    assert status == 0 and len(text.splitlines()) == len(ours)


def test_infer_output_file_is_the_reference_s_inferred_model(capsys, tmp_path):
    out = tmp_path / "inferred.onnx"
    status, stdout, _ = _run(capsys, "infer", LENET, "-o", str(out))
    assert status == 0 and stdout == ""
    assert out.read_bytes() == shape_inference.infer_shapes(onnx.load(LENET)).SerializeToString()


def _inconsistent_model() -> onnx.ModelProto:
    x = oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    nodes = [oh.make_node("MatMul", ["x", "x"], ["a"], name="first"),
             oh.make_node("Concat", ["x", "x"], ["d"], axis=5, name="second")]
    return oh.make_model(oh.make_graph(nodes, "g", [x], [oh.make_tensor_value_info("d", 1, [2, 3])]),
                         opset_imports=[oh.make_opsetid("", 18)])


def test_strict_infer_lists_every_inconsistent_node_and_exits_1(capsys, tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(_inconsistent_model().SerializeToString())
    status, _, err = _run(capsys, "infer", str(path), "--strict")
    assert status == 1
    assert "node 0 (op_type:MatMul, node name: first)" in err and "node 1 (op_type:Concat" in err
    status, _, _ = _run(capsys, "infer", str(path))  # lenient: as the reference, no error
    assert status == 0


def test_infer_usage_and_io_errors_exit_2(capsys, tmp_path):
    assert _run(capsys, "infer")[0] == 2
    assert _run(capsys, "infer", str(tmp_path / "missing.onnx"))[0] == 2
    assert _run(capsys, "infer", str(tmp_path))[0] == 2


def _reference_verdict(model_bytes: bytes) -> bool:
    try:
        onnx.checker.check_model(onnx.ModelProto.FromString(model_bytes), full_check=True)
    except (onnx.checker.ValidationError, shape_inference.InferenceError):
        return False
    return True


def _our_verdict(model_bytes: bytes) -> bool:
    try:
        irmodel.check_model(model_bytes, full_check=True)
    except irmodel.ValidationError:
        return False
    return True


def test_full_check_runs_strict_inference_like_the_reference():
    bad = _inconsistent_model().SerializeToString()
    assert _reference_verdict(bad) is False
    with pytest.raises(irmodel.InferenceError) as info:
        irmodel.check_model(bad, full_check=True)
    assert [p.path for p in info.value.problems] == ["graph.node[0]", "graph.node[1]"]
    irmodel.check_model(bad)  # without full_check the checker's rules alone pass


@pytest.mark.slow
def test_full_check_verdicts_agree_with_the_reference_on_the_node_corpus(node_corpus):
    differ = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, data in node_corpus:
            if _reference_verdict(data) != _our_verdict(data):
                differ.append(name)
    assert differ == []


def _concat_model(tmp_path) -> str:
    """Concat of a (5, 2) constant and an (N, 2) input: the reference names the result's
    first dim afresh; symbolic inference writes ``N + 5``."""
    x = oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 2])
    y = oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    c = oh.make_tensor("c", onnx.TensorProto.FLOAT, [5, 2], [0.0] * 10)
    node = oh.make_node("Concat", ["c", "x"], ["y"], axis=0)
    model = oh.make_model(oh.make_graph([node], "g", [x], [y], [c]), opset_imports=[oh.make_opsetid("", 18)])
    path = str(tmp_path / "concat.onnx")
    onnx.save(model, path)
    return path


def test_infer_symbolic_prints_what_the_api_infers(tmp_path, capsys):
    path = _concat_model(tmp_path)
    status, out, _ = _run(capsys, "infer", path, "--symbolic", "--json")
    assert status == 0
    printed = {v["name"]: v for v in json.loads(out)}
    api = irmodel.infer_shapes(irmodel.load(path), symbolic=True)
    (y,) = [v for v in api.graph.output if v.name == "y"]
    expected = [d.dim_param or d.dim_value for d in y.type.tensor_type.shape.dim]
    assert expected == ["N + 5", 2]
    assert json.dumps(printed["y"]).count("N + 5") == 1
    # without --symbolic the sum is a fresh name, as the reference gives it
    status, out, _ = _run(capsys, "infer", path, "--json")
    assert status == 0 and "N + 5" not in out
    ref = _reference_types(onnx.load(path))
    assert [r for r in ref if r[1] == "y"][0][2][1][0] not in ("N + 5", None)


def test_infer_explain_symbolic_has_nothing_lost_where_the_sum_is_known(tmp_path, capsys):
    path = _concat_model(tmp_path)
    status, out, _ = _run(capsys, "infer", path, "--explain", "--json")
    assert status == 0 and '"y"' in out
    status, out, _ = _run(capsys, "infer", path, "--explain", "--symbolic", "--json")
    assert status == 0 and '"y"' not in out
