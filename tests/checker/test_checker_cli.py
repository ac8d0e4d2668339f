"""``irmodel check PATH [--json]``: exit 0 valid, 1 invalid (every problem), 2 usage or I/O.

Run as users run it (``python -m irmodel`` in a subprocess) and in process through
``cli.main``; the problems printed are compared with what ``irmodel.check_model`` lists,
and the verdict with onnx's.  Also: a model file over 2 GiB is checked without reading
its weights.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import onnx
import pytest

import irmodel
from irmodel import cli
from test_checker_rules import base_model
from cli_helpers import LENET, ROOT, assert_fails, run


def _save(model, path) -> str:
    irmodel.save(model, str(path))
    return str(path)


@pytest.fixture
def invalid_model(tmp_path) -> str:
    m = base_model()
    m.graph.node[1].input[1] = "nowhere"
    m.graph.node[2].attribute.append(irmodel.helper.make_attribute("beta", 1))
    return _save(m, tmp_path / "bad.onnx")


def test_valid_model_exits_0():
    p = run("check", LENET)
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout == f"{LENET}: valid\n"
    onnx.checker.check_model(LENET)


def test_invalid_model_exits_1_with_one_line_per_problem(invalid_model):
    p = run("check", invalid_model)
    assert p.returncode == 1 and p.stderr == ""
    with pytest.raises(irmodel.ValidationError) as info:
        irmodel.check_model(invalid_model)
    assert p.stdout.splitlines() == [str(problem) for problem in info.value.problems]
    assert [line.split(": ")[1].split()[0] for line in p.stdout.splitlines()] == ["G206", "N411"]
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(invalid_model)


def test_json_lists_the_problems(invalid_model):
    p = run("check", invalid_model, "--json")
    assert p.returncode == 1
    problems = json.loads(p.stdout)
    assert [(q["code"], q["path"], q["node_name"], q["op_type"]) for q in problems] == [
        ("G206", "graph.node[1].input[1]", "add", "Add"),
        ("N411", "graph.node[2].attribute[1]", "leaky", "LeakyRelu")]
    assert all(set(q) == {"code", "path", "node_name", "op_type", "message"} for q in problems)


def test_json_of_a_valid_model_is_an_empty_list():
    p = run("check", "--json", LENET)
    assert p.returncode == 0 and json.loads(p.stdout) == []


def test_a_problem_with_newlines_in_names_stays_on_one_line(tmp_path):
    m = base_model()
    m.graph.node[0].name = "two\nlines"
    m.graph.node[0].input[0] = "no\nwhere"
    p = run("check", _save(m, tmp_path / "m.onnx"))
    assert p.returncode == 1 and len(p.stdout.splitlines()) == 1


def test_bytes_that_are_not_a_model_exit_1(tmp_path):
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\x0a\x05ab")
    p = run("check", str(path))
    assert p.returncode == 1 and p.stdout.startswith("B001 not an ONNX model")
    p = run("check", "--json", str(path))
    assert p.returncode == 1 and json.loads(p.stdout)[0]["code"] == "B001"


@pytest.mark.parametrize("args, fragment", [
    (["check", "/nonexistent/model.onnx"], "No such file"),
    (["check", "/"], "Is a directory"),
    (["check"], "the following arguments are required: PATH"),
    (["check", "a", "b"], "unrecognized arguments"),
])
def test_usage_and_io_errors_exit_2(args, fragment):
    assert_fails(run(*args), 2, fragment)


def test_in_process_main(invalid_model, capsys):
    assert cli.main(["check", LENET]) == 0
    assert cli.main(["check", invalid_model, "--json"]) == 1
    out = capsys.readouterr().out
    assert json.loads(out[out.index("["):])[0]["code"] == "G206"
    assert cli.main(["check", "/nonexistent"]) == 2


# -- a file over 2 GiB -----------------------------------------------------------------------------

RAW_SIZE = (1 << 31) + 4096


def _write_valid_sparse_model(path: str) -> None:
    """A valid model whose initializer holds 2 GiB + 4 KiB of raw_data, written as a hole."""
    from wirefmt import encode_varint

    def field(number, body):
        return encode_varint(number << 3 | 2) + encode_varint(len(body)) + body

    m = irmodel.helper.make_model(irmodel.helper.make_graph(
        [irmodel.helper.make_node("Identity", ["big"], ["y"])], "g", [],
        [irmodel.helper.make_tensor_value_info("y", irmodel.TensorProto.FLOAT, [RAW_SIZE // 4])]),
        opset_imports=[irmodel.helper.make_opsetid("", 18)])
    rest = irmodel.dumps(m.graph)
    tensor_head = (encode_varint(1 << 3) + encode_varint(RAW_SIZE // 4)  # dims
                   + encode_varint(2 << 3) + encode_varint(1)  # data_type FLOAT
                   + field(8, b"big") + encode_varint(9 << 3 | 2) + encode_varint(RAW_SIZE))
    tensor_len = len(tensor_head) + RAW_SIZE
    init_prefix = encode_varint(5 << 3 | 2) + encode_varint(tensor_len)
    graph_len = len(init_prefix) + tensor_len + len(rest)
    with open(path, "wb") as f:
        f.write(encode_varint(1 << 3) + encode_varint(10))
        f.write(encode_varint(7 << 3 | 2) + encode_varint(graph_len))
        f.write(init_prefix + tensor_head)
        f.seek(RAW_SIZE, os.SEEK_CUR)
        f.write(rest)
        f.write(field(8, irmodel.dumps(m.opset_import[0])))  # opset_import


def test_model_over_2_gib_is_checked_without_reading_its_weights(tmp_path):
    path = str(tmp_path / "big.onnx")
    try:
        _write_valid_sparse_model(path)
    except OSError as exc:
        pytest.fail(f"cannot create the sparse test file: {exc}")
    assert os.path.getsize(path) > 1 << 31
    # VmHWM, the peak of this process's own memory map (ru_maxrss would include the peak
    # of the pytest process that started it: Linux carries it through fork and exec).
    code = ("import irmodel, sys; irmodel.check_model(sys.argv[1]); "
            "print([line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')][0])")
    p = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert int(p.stdout) < 200 * 1024  # KiB: the 2 GiB payload was never read
    assert run("check", path).returncode == 0


def test_checker_needs_the_standard_library_only_and_loads_lazily():
    code = ("import sys, irmodel; lazy = 'irmodel.checker' not in sys.modules and 'irmodel.defs' not in sys.modules; "
            "irmodel.check_model(sys.argv[1]); "
            "print(lazy, sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'onnx', 'google')))")
    p = subprocess.run([sys.executable, "-c", code, LENET], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "True []"
