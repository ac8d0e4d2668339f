"""The summary of a plain model from its bytes alone (`irmodel._report.bytesummary`): the
full summary wherever it answers, None for everything it must leave to the message path,
and never an exception, whatever the bytes."""

from __future__ import annotations

import os
import threading

import onnx
import onnx.external_data_helper
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from onnx import helper as oh

import irmodel
from irmodel._report.bytesummary import summarize_buffer, summarize_path
from irmodel._report.summary import summarize
from irmodel._wireview.fastpath import use_fast_paths
from irmodel._wireview.modelscan import model_layout
from import_probe import modules_after


def _full(data: bytes) -> dict:
    use_fast_paths(False)
    try:
        return summarize(irmodel.loads(data))
    finally:
        use_fast_paths(True)


def test_it_is_the_full_summary_on_the_node_corpus(node_corpus):
    answered = 0
    for name, data in node_corpus:
        found = summarize_buffer(data)
        if found is not None:
            answered += 1
            assert found == _full(data), name
    # most reference node models are plain: the byte path is what answers for them
    assert answered >= len(node_corpus) * 3 // 4


def test_it_is_the_full_summary_on_the_wheel_models(data_corpus):
    models = [(p, d) for p, t, d in data_corpus if t == "ModelProto"]
    answered = [p for p, d in models if summarize_buffer(d) is not None]
    assert answered
    assert [p for p, d in models if p in answered and summarize_buffer(d) != _full(d)] == []


def _graph(nodes=None, initializer=(), sparse=()) -> onnx.GraphProto:
    nodes = nodes or [oh.make_node("Relu", ["x"], ["y"])]
    return oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                         [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
                         initializer=list(initializer), sparse_initializer=list(sparse))


def _plain() -> onnx.ModelProto:
    w = oh.make_tensor("w", onnx.TensorProto.FLOAT, [2], [1.0, 2.0])
    return oh.make_model(_graph(initializer=[w]), producer_name="p", doc_string="d")


def _with_metadata():
    m = _plain()
    oh.set_model_props(m, {"k": "v"})
    return m


def _with_function():
    f = oh.make_function("local", "F", ["a"], ["b"], [oh.make_node("Relu", ["a"], ["b"])],
                         [oh.make_opsetid("", 17)])
    return oh.make_model(_graph([oh.make_node("F", ["x"], ["y"], domain="local")]), functions=[f],
                         opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid("local", 1)])


def _with_training_info():
    m = _plain()
    m.training_info.add().algorithm.CopyFrom(_graph())
    return m


def _with_sparse():
    values = oh.make_tensor("v", onnx.TensorProto.FLOAT, [1], [1.0])
    indices = oh.make_tensor("i", onnx.TensorProto.INT64, [1], [0])
    return oh.make_model(_graph(sparse=[oh.make_sparse_tensor(values, indices, [2])]))


def _with_external(location="w.bin", **entries):
    t = oh.make_tensor("w", onnx.TensorProto.FLOAT, [4], b"\0" * 16, raw=True)
    onnx.external_data_helper.set_external_data(t, location, **({"offset": 0, "length": 16} | entries))
    return oh.make_model(_graph(initializer=[t]))


def _with_strings():
    return oh.make_model(_graph(initializer=[oh.make_tensor("s", onnx.TensorProto.STRING, [1], [b"abc"])]))


def _with_subgraph():
    branch = oh.make_graph([oh.make_node("Identity", ["x"], ["z"])], "b", [],
                           [oh.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [2])])
    node = oh.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
    return oh.make_model(_graph([node]))


DECLINED = {"metadata_props": _with_metadata, "functions": _with_function, "training_info": _with_training_info,
            "sparse initializer": _with_sparse, "string initializer": _with_strings, "sub-graph": _with_subgraph}


@pytest.mark.parametrize("kind", DECLINED)
def test_what_the_byte_path_leaves_to_the_message_path(kind):
    data = DECLINED[kind]().SerializeToString()
    assert summarize_buffer(data) is None
    assert irmodel.loads(data)  # a model the message path summarizes
    summarize(irmodel.loads(data))


def test_a_plain_model_is_read_from_its_bytes():
    data = _plain().SerializeToString()
    found = summarize_buffer(data)
    assert found is not None and found == _full(data)
    assert found["producer_name"] == "p" and found["doc_string"] == "d"


def test_a_second_graph_field_merges_so_it_is_left_to_the_message_path():
    data = _plain().SerializeToString()
    graph = onnx.ModelProto()
    graph.graph.name = "other"
    twice = data + graph.SerializeToString()
    assert summarize_buffer(twice) is None
    assert _full(twice)["graph_name"] == "other"  # protobuf merges the two graphs


def test_no_graph_and_wrong_wire_types_decline():
    assert model_layout(b"", 0, 0) is None  # no graph: the command line says "not a model"
    assert model_layout(b"\x08\x07", 0, 2) is None  # ir_version alone
    bad = b"\x0a\x02\x08\x01" + _plain().SerializeToString()  # ir_version as a length-delimited field
    assert model_layout(bad, 0, len(bad)) is None


def test_invalid_utf8_in_a_reported_string_declines():
    m = _plain()
    data = m.SerializeToString().replace(b"\x12\x01p", b"\x12\x01\xff")  # producer_name
    assert summarize_buffer(data) is None
    assert _full(data)["producer_name"] == b"\xff"


_BASE = _plain().SerializeToString()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_BASE) - 1), st.integers(0, 255)), min_size=1, max_size=4),
       st.integers(0, len(_BASE)))
def test_mutated_or_cut_bytes_decline_or_agree(edits, cut):
    data = bytearray(_BASE)
    for pos, value in edits:
        data[pos] = value
    data = bytes(data[:cut])
    found = summarize_buffer(data)  # never raises
    if found is not None:
        assert found == _full(data)


def test_summarize_path_leaves_pipes_and_missing_files_alone(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(_BASE)
    found = summarize_path(str(path))
    assert found is not None and found[1] == len(_BASE) and found[0] == _full(_BASE)
    assert summarize_path(str(tmp_path / "missing.onnx")) is None
    assert summarize_path(str(tmp_path)) is None  # a directory
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    assert summarize_path(str(empty)) is None
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # No writer: opening the FIFO would wait for one.  The byte path must not open it.
    done = []
    worker = threading.Thread(target=lambda: done.append(summarize_path(str(fifo))), daemon=True)
    worker.start()
    worker.join(10)
    assert done == [None]
    # With a writer waiting, nothing is read from it either.
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        os.write(fd, _BASE)
        assert summarize_path(str(fifo)) is None
        assert os.read(fd, len(_BASE) + 1) == _BASE
    finally:
        os.close(fd)


MESSAGE_LAYER = {"irmodel.messages", "wirefmt.message", "wirefmt.containers", "irmodel.io", "irmodel._report.summary"}


@pytest.mark.parametrize("external", [False, True])
def test_a_summary_from_the_bytes_imports_no_message_class_nor_re(tmp_path, external):
    path = tmp_path / "m.onnx"
    path.write_bytes(_with_external().SerializeToString() if external else _BASE)
    (tmp_path / "w.bin").write_bytes(b"\0" * 16)
    loaded = modules_after("import sys\nfrom irmodel._report.bytesummary import summarize_path\n"
                           "assert summarize_path(sys.argv[1]) is not None\n"
                           "import irmodel.proto\n"
                           "assert 'REGISTRY' not in vars(irmodel.proto), 'every message spec was built'", path)
    assert ("irmodel._files.external_data" in loaded) == external
    assert not loaded & (MESSAGE_LAYER | {"re"})  # `re` would cost more than the summary


def test_inspect_of_a_plain_model_imports_no_message_class(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(_BASE)
    loaded = modules_after("import sys\nfrom irmodel.cli import main\nassert main(['inspect', sys.argv[1]]) == 0",
                           path)
    assert "irmodel._report.bytesummary" in loaded and not loaded & MESSAGE_LAYER


def _ld(number: int, payload: bytes) -> bytes:
    """A length-delimited field (tag and length as varints)."""
    def varint(n):
        out = bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_runs_of_graph_fields_with_long_items_names_twice_and_unknown_fields():
    # A run of nodes broken by a node whose length takes three bytes (a 20 KB Constant),
    # the graph's name given twice (the last wins), an unknown field in the middle.
    big = oh.make_node("Constant", [], ["c"], value=oh.make_tensor("v", onnx.TensorProto.FLOAT, [5000],
                                                                   [0.5] * 5000))
    nodes = [oh.make_node("Relu", ["x"], ["a"]), big, oh.make_node("Add", ["a", "c"], ["b"]),
             oh.make_node("Relu", ["b"], ["y"])]
    graph = _graph(nodes).SerializeToString() + _ld(99, b"unknown") + _ld(2, b"second name")
    data = oh.make_model(_graph()).SerializeToString()
    model = onnx.ModelProto()
    model.ParseFromString(data)
    model.ClearField("graph")
    data = model.SerializeToString() + _ld(7, graph)
    found = summarize_buffer(data)
    assert found is not None
    assert found == _full(data)
    assert found["graph_name"] == "second name" and found["node_count"] == 4
    assert found["op_types"] == {"Relu": 2, "Add": 1, "Constant": 1}


def test_a_graph_item_running_past_the_end_declines():
    data = oh.make_model(_graph()).SerializeToString()
    for cut in range(1, 12):
        assert summarize_buffer(data[:-cut]) is None or summarize_buffer(data[:-cut]) == _full(data[:-cut])


def _full_in(data: bytes, base_dir: str) -> dict:
    use_fast_paths(False)
    try:
        return summarize(irmodel.loads(data), base_dir=base_dir)
    finally:
        use_fast_paths(True)


@pytest.mark.parametrize("case", ["present", "missing", "unsafe location", "invalid offset", "no base_dir"])
def test_external_initializers_are_read_from_the_bytes_too(tmp_path, case):
    if case == "unsafe location":
        data = _with_external("../w.bin").SerializeToString()
    elif case == "invalid offset":
        m = _with_external()
        next(e for e in m.graph.initializer[0].external_data if e.key == "offset").value = "x1"
        data = m.SerializeToString()
    else:
        data = _with_external().SerializeToString()
    if case != "missing":
        (tmp_path / "w.bin").write_bytes(b"\0" * 16)
    base_dir = None if case == "no base_dir" else str(tmp_path)
    found = summarize_buffer(data, base_dir)
    assert found is not None
    assert found == _full_in(data, base_dir)
    assert len(found["external_data"]) == 1


def test_an_external_tensor_whose_entries_are_not_plain_declines():
    data = _with_external("wQ.bin").SerializeToString().replace(b"wQ.bin", b"w\xff.bin")  # same length
    assert summarize_buffer(data) is None  # invalid UTF-8 in an entry: the message path's bytes
    assert _full(data)["external_data"][0]["location"] == b"w\xff.bin"


def test_summarize_path_measures_data_files_beside_the_model(tmp_path):
    data = _with_external().SerializeToString()
    (tmp_path / "m.onnx").write_bytes(data)
    (tmp_path / "w.bin").write_bytes(b"\0" * 16)
    found = summarize_path(str(tmp_path / "m.onnx"))
    assert found is not None
    assert found[0]["external_data"][0]["status"] == "ok"
    assert found[0] == _full_in(data, str(tmp_path))
