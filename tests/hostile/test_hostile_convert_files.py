"""`convert` and a save into another directory do work that follows what a model holds
(issue 31): data files are copied with their holes kept, nodes that cannot hold a tensor
are skipped by reading their bytes, and ``infer --json`` writes one value a line."""

from __future__ import annotations

import json
import os

import pytest

import irmodel
from irmodel import helper as h
from irmodel._files import external_data as ed
from irmodel._files.filecopy import data_ranges
from irmodel._walk import NODE, TENSOR, walk
from irmodel._wireview.holders import tensor_holders

import hostile_models as hm
from cli_helpers import run_cli

#: Apparent size of the sparse data files below (a hole but for a few KiB of data).
SPARSE_SIZE = 64 << 20
DATA_AT, DATA = 32 << 20, bytes(range(256)) * 16


def _sparse_model(directory) -> str:
    """`hm.sparse_hole_model` with 4 KiB of data written in the middle of its data file."""
    os.makedirs(directory, exist_ok=True)
    data = hm.sparse_hole_model(str(directory), SPARSE_SIZE)
    with open(os.path.join(directory, hm.HOLE_FILE), "r+b") as f:
        f.seek(DATA_AT)
        f.write(DATA)
    path = os.path.join(directory, "m.onnx")
    with open(path, "wb") as f:
        f.write(data)
    st = os.stat(os.path.join(directory, hm.HOLE_FILE))
    if st.st_blocks * 512 >= SPARSE_SIZE:
        pytest.skip(f"the file system of {directory} stores no holes: nothing to keep")
    return path


def _assert_same_sparse_copy(src: str, dst: str) -> None:
    a, b = os.stat(src), os.stat(dst)
    assert b.st_size == a.st_size == SPARSE_SIZE
    assert b.st_blocks <= a.st_blocks + 16  # (a file system may round an extent up)
    with open(dst, "rb") as f:
        f.seek(DATA_AT)
        assert f.read(len(DATA)) == DATA
        f.seek(0)
        assert f.read(4096) == bytes(4096)
    with open(src, "rb") as fa, open(dst, "rb") as fb:
        assert list(data_ranges(fb.fileno(), SPARSE_SIZE)) == list(data_ranges(fa.fileno(), SPARSE_SIZE))


def test_convert_into_another_directory_keeps_the_holes(tmp_path):
    path = _sparse_model(tmp_path / "in")
    os.mkdir(tmp_path / "out")
    status, out, err = run_cli(["convert", path, str(tmp_path / "out" / "m.onnx")])
    assert status == 0, err
    _assert_same_sparse_copy(str(tmp_path / "in" / hm.HOLE_FILE), str(tmp_path / "out" / hm.HOLE_FILE))
    assert (tmp_path / "out" / "m.onnx").read_bytes() == (tmp_path / "in" / "m.onnx").read_bytes()
    t = irmodel.load(str(tmp_path / "out" / "m.onnx")).graph.initializer[0]
    assert irmodel.to_array(t).tolist() == [0.0] * 4


def test_save_into_another_directory_keeps_the_holes(tmp_path):
    path = _sparse_model(tmp_path / "in")
    os.mkdir(tmp_path / "out")
    irmodel.save(irmodel.load(path), str(tmp_path / "out" / "m.onnx"))
    _assert_same_sparse_copy(str(tmp_path / "in" / hm.HOLE_FILE), str(tmp_path / "out" / hm.HOLE_FILE))


def test_data_ranges_of_plain_empty_and_trailing_hole_files(tmp_path):
    (tmp_path / "full").write_bytes(b"x" * 10000)
    (tmp_path / "empty").write_bytes(b"")
    with open(tmp_path / "tail", "wb") as f:
        f.write(b"y" * 4096)
        f.truncate(SPARSE_SIZE)
    for name, size, expected in (("full", 10000, [(0, 10000)]), ("empty", 0, [])):
        with open(tmp_path / name, "rb") as f:
            assert list(data_ranges(f.fileno(), size)) == expected
    with open(tmp_path / "tail", "rb") as f:
        ranges = list(data_ranges(f.fileno(), SPARSE_SIZE))
    assert ranges[0][0] == 0 and ranges[0][1] >= 4096
    assert sum(b - a for a, b in ranges) < SPARSE_SIZE or os.stat(tmp_path / "tail").st_blocks * 512 >= SPARSE_SIZE


# -- the nodes the external-data walk makes --------------------------------------------------


def _counting_walk(monkeypatch) -> list:
    """Patch the walk that `external_tensors` uses to count the nodes it makes."""
    made: list = []

    def counted(model, pick=None):
        for item in walk(model, pick):
            if item[0] == NODE:
                made.append(item[2])
            yield item

    monkeypatch.setattr(ed, "walk", counted)
    return made


@pytest.mark.parametrize("name", ["empty_nodes", "relu_chain", "many_attributes"])
def test_convert_makes_no_node_of_a_model_without_tensors(tmp_path, monkeypatch, name):
    case = hm.CASES_BY_NAME[name]
    src = tmp_path / "in.onnx"
    src.write_bytes(case.bytes_at(case.small))
    made = _counting_walk(monkeypatch)
    status, _, err = run_cli(["convert", str(src), str(tmp_path / "out.onnx")])
    assert status == 0, err
    assert made == []
    assert (tmp_path / "out.onnx").read_bytes() == src.read_bytes()


def _model_with_tensors_among_plain_nodes(directory) -> irmodel.ModelProto:
    """100 Relus, a Constant whose tensor is external, an If whose branch has an external
    initializer, and an external initializer of the main graph."""
    def external(name: str, location: str) -> irmodel.TensorProto:
        with open(os.path.join(directory, location), "wb") as f:
            f.write(b"\x00\x00\x80\x3f" * 4)
        t = irmodel.TensorProto(name=name, data_type=1, dims=[4])
        t.data_location = irmodel.TensorProto.EXTERNAL
        t.external_data.add(key="location", value=location)
        return t

    nodes = [h.make_node("Relu", [f"r{i}"], [f"r{i + 1}"]) for i in range(100)]
    nodes.append(h.make_node("Constant", [], ["c"], value=external("cv", "c.bin")))
    branch = h.make_graph([h.make_node("Identity", ["b"], ["b_out"])], "then", [],
                          [h.make_tensor_value_info("b_out", 1, [4])], initializer=[external("b", "b.bin")])
    nodes.append(h.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=branch))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("r0", 1, [4]), h.make_tensor_value_info("cond", 9, [])],
                     [h.make_tensor_value_info("y", 1, [4])], initializer=[external("w", "w.bin")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 21)])


def test_skipping_finds_the_same_tensors_as_the_full_walk(tmp_path, fast_paths):
    model = _model_with_tensors_among_plain_nodes(str(tmp_path))
    irmodel.save(model, str(tmp_path / "m.onnx"))
    loaded = irmodel.load(str(tmp_path / "m.onnx"), load_external_data=False)
    names = [t.name for t in ed.external_tensors(loaded)]
    assert names == ["w", "b", "b", "cv"]  # initializers (main graph, then both branches), then attributes
    assert [t.name for t in ed.external_tensors(loaded, tensor_holders)] == names
    made = [item for item in walk(loaded, tensor_holders) if item[0] == NODE]
    assert len(made) == (2 if fast_paths else 104)  # the Constant and the If (branches: plain nodes)


def test_convert_copies_the_files_of_the_tensors_it_found_by_skipping(tmp_path):
    os.mkdir(tmp_path / "in")
    os.mkdir(tmp_path / "out")
    model = _model_with_tensors_among_plain_nodes(str(tmp_path / "in"))
    irmodel.save(model, str(tmp_path / "in" / "m.onnx"))
    status, _, err = run_cli(["convert", str(tmp_path / "in" / "m.onnx"), str(tmp_path / "out" / "m.onnx")])
    assert status == 0, err
    assert sorted(os.listdir(tmp_path / "out")) == ["b.bin", "c.bin", "m.onnx", "w.bin"]
    status, _, err = run_cli(["convert", "--single-file", str(tmp_path / "in" / "m.onnx"),
                              str(tmp_path / "out" / "one.onnx")])
    assert status == 0, err
    one = irmodel.load(str(tmp_path / "out" / "one.onnx"))
    assert list(ed.external_tensors(one)) == []


def test_a_malformed_node_is_still_read_and_refused(tmp_path):
    """A node the byte reader declines (here: a field running past its end) is made, and
    the message path raises the error it deserves: convert says the input is invalid."""
    nodes = [hm.node("Relu", [f"r{i}"], [f"r{i + 1}"]) for i in range(100)]
    nodes.insert(50, b"\x22\x09Relu")  # op_type's length says 9, 4 bytes follow
    data = hm.model(hm.graph(nodes, "g", [hm.value_info("r0", hm.FLOAT, [2])], [hm.value_info("r100")]))
    (tmp_path / "bad.onnx").write_bytes(data)
    status, _, err = run_cli(["convert", str(tmp_path / "bad.onnx"), str(tmp_path / "out.onnx")])
    assert status == 1, err
    assert err.startswith("irmodel: ")


# -- infer --json --------------------------------------------------------------------------


def _reference_values(model) -> list:
    """What ``infer --json`` printed before: every value made as a message."""
    from irmodel._report.summary import type_info

    g = model.graph
    return [{"name": v.name, "role": role, **type_info(v.type)}
            for role, values in (("input", g.input), ("value", g.value_info), ("output", g.output))
            for v in values]


@pytest.mark.parametrize("name", ["relu_chain", "many_outputs", "unnamed_dims", "concat_equalities"])
def test_infer_json_is_the_same_document_one_value_a_line(tmp_path, name):
    case = hm.CASES_BY_NAME[name]
    size = min(case.small, 300)
    path = tmp_path / "m.onnx"
    path.write_bytes(case.bytes_at(size))
    status, out, err = run_cli(["infer", "--json", str(path)])
    assert status == 0, err
    expected = json.loads(json.dumps(_reference_values(irmodel.shape_inference.infer_shapes(
        irmodel.load(str(path))))))
    assert json.loads(out) == expected
    assert out.count("\n") == len(expected) + 2 and out.isascii()


def test_infer_json_of_names_that_are_not_text(tmp_path):
    model = h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y\x1b\u202e"])], "g",
                                      [h.make_tensor_value_info("x", 1, [2])],
                                      [h.make_tensor_value_info("y\x1b\u202e", 1, [2])]),
                         opset_imports=[h.make_opsetid("", 21)])
    data = irmodel.dumps(model).replace(b"y\x1b", b"y\xff")  # invalid UTF-8 in a name
    (tmp_path / "m.onnx").write_bytes(data)
    status, out, err = run_cli(["infer", "--json", str(tmp_path / "m.onnx")])
    assert status == 0, err
    assert out.isascii() and "\x1b" not in out
    doc = json.loads(out)
    assert [v["role"] for v in doc] == ["input", "output"]


def test_explain_json_is_the_same_document(tmp_path):
    from irmodel.inference import explain
    from wirefmt.safetext import json_ready

    path = tmp_path / "m.onnx"
    path.write_bytes(hm.gathernd_negative_dims(3))
    status, out, err = run_cli(["infer", "--explain", "--json", str(path)])
    assert status == 0, err
    expected = json.loads(json.dumps(json_ready(explain(irmodel.load(str(path))).as_dict())))
    assert json.loads(out) == expected


def test_a_copy_maps_no_data_file(tmp_path, monkeypatch):
    """The copy checks and copies the files through descriptors: a data file of many GiB
    takes no address space (the sweep runs convert under RLIMIT_AS 2 GiB)."""
    path = _sparse_model(tmp_path / "in")
    os.mkdir(tmp_path / "out")

    def refused(*args, **kwargs):
        raise AssertionError("a data file was mapped")

    monkeypatch.setattr(ed, "_map_file", refused)
    status, _, err = run_cli(["convert", path, str(tmp_path / "out" / "m.onnx")])
    assert status == 0, err
    _assert_same_sparse_copy(str(tmp_path / "in" / hm.HOLE_FILE), str(tmp_path / "out" / hm.HOLE_FILE))


def test_only_initializers_that_may_be_external_are_made(tmp_path, fast_paths):
    """The walk's pick reads each initializer's header from its bytes: one whose data is in
    the file is not made; an external one, one changed since it was read (here: moved out
    in memory), and one the header reader declines are."""
    model = _model_with_tensors_among_plain_nodes(str(tmp_path))
    plain = [h.make_tensor(f"p{i}", 1, [2], [1.0, 2.0]) for i in range(30)]
    odd = h.make_tensor("odd", 1, [2], [1.0, 2.0])
    odd.segment.begin = 0  # a segment: not a simple tensor for the header reader
    model.graph.initializer[:0] = plain[:15]
    model.graph.initializer.extend(plain[15:] + [odd])
    irmodel.save(model, str(tmp_path / "m.onnx"))
    loaded = irmodel.load(str(tmp_path / "m.onnx"), load_external_data=False)
    moved = loaded.graph.initializer[20]
    moved.data_location = irmodel.TensorProto.EXTERNAL
    moved.external_data.add(key="location", value="p.bin")
    full = [t.name for t in ed.external_tensors(loaded)]
    assert full == ["w", moved.name, "b", "b", "cv"]
    assert [t.name for t in ed.external_tensors(loaded, tensor_holders)] == full
    made = [item[2][2] for item in walk(loaded, tensor_holders)
            if item[0] == TENSOR and item[2][1] == "initializer" and item[2][0] == (None, "graph", None)]
    assert made == ([15, 20, 31] if fast_paths else list(range(32)))
