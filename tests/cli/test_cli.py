"""The command line, run as users run it: ``python -m irmodel ...`` in a subprocess.

Expected values come from the reference (`onnx.load`, `numpy_helper`, protobuf's own
serializer), never from a previous run of ours.  Every run also checks that stderr holds
no traceback.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import resource
import subprocess
import sys
from collections import Counter

import numpy as np
import onnx
import pytest
from google.protobuf import descriptor_pb2, json_format
from onnx import TensorProto, helper, numpy_helper

import irmodel
from irmodel import cli
from irmodel.cli.progress import Progress
from irmodel._report.summary import summarize
from irmodel._report.dump import preview_values
from cli_helpers import LENET, ROOT, assert_fails, run
from protobuf_layout import reference_layout, sample_file_descriptor


def ref_type_text(vi) -> str:
    """``FLOAT[batch, 1, 28]`` for a reference ValueInfoProto holding a tensor type."""
    t = vi.type.tensor_type
    dims = ", ".join(str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim)
    return f"{TensorProto.DataType.Name(t.elem_type)}[{dims}]"


def ref_subgraph_count(model) -> int:
    """Graph-valued attributes at any depth, counted on the reference's own objects."""
    def count(nodes):
        n = 0
        for node in nodes:
            for a in node.attribute:
                for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    n += 1 + count(g.node)
        return n
    return count(model.graph.node) + sum(count(f.node) for f in model.functions)


def corpus_file(tmp_path, node_corpus, name: str) -> str:
    data = dict(node_corpus)[name]
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(data)
    return str(path)


# -- inspect ---------------------------------------------------------------------------------

def test_inspect_text_reports_what_the_reference_reads():
    ref = onnx.load(LENET)
    p = run("inspect", LENET)
    assert p.returncode == 0 and p.stderr == ""
    out = p.stdout

    def has(pattern: str) -> bool:
        return re.search(pattern, out, re.M) is not None

    assert has(rf"^ir_version:\s+{ref.ir_version}$")
    assert has(rf"^producer:\s+{re.escape(ref.producer_name)} {re.escape(ref.producer_version)}$")
    assert has(rf"^opset_import:\s+ai\.onnx {ref.opset_import[0].version}$")
    assert has(rf"^graph:\s+{ref.graph.name}$")
    for vi in list(ref.graph.input) + list(ref.graph.output):
        assert has(rf"^  {vi.name}\s+{re.escape(ref_type_text(vi))}$"), vi.name
    assert has(rf"^nodes:\s+{len(ref.graph.node)}$")
    for op, n in Counter(node.op_type for node in ref.graph.node).items():
        assert has(rf"^  {op}\s+{n}$"), op
    nbytes = sum(numpy_helper.to_array(t).nbytes for t in ref.graph.initializer)
    assert has(rf"^initializers:\s+{len(ref.graph.initializer)}, {nbytes} bytes")
    assert has(r"^external data:\s+\(none\)$") and has(r"^subgraphs:\s+0$")
    assert has(rf"^file:\s+.*lenet\.onnx, {os.path.getsize(LENET)} bytes")


def test_inspect_json_reports_what_the_reference_reads():
    ref = onnx.load(LENET)
    p = run("inspect", "--json", LENET)
    assert p.returncode == 0
    s = json.loads(p.stdout)
    assert s["ir_version"] == ref.ir_version
    assert (s["producer_name"], s["producer_version"]) == (ref.producer_name, ref.producer_version)
    assert s["opset_import"] == [{"domain": o.domain, "version": o.version} for o in ref.opset_import]
    assert [(v["name"], v["elem_type"], v["shape"]) for v in s["inputs"] + s["outputs"]] == [
        (vi.name, TensorProto.DataType.Name(vi.type.tensor_type.elem_type),
         [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim])
        for vi in list(ref.graph.input) + list(ref.graph.output)]
    assert s["node_count"] == len(ref.graph.node)
    assert s["op_types"] == dict(Counter(n.op_type for n in ref.graph.node))
    arrays = [numpy_helper.to_array(t) for t in ref.graph.initializer]
    assert s["initializer_count"] == len(arrays)
    assert s["initializers_by_dtype"] == {"FLOAT": {"count": len(arrays), "bytes": sum(a.nbytes for a in arrays)}}
    assert s["external_data"] == [] and s["functions"] == [] and s["subgraph_count"] == 0


def test_inspect_shows_symbolic_and_unknown_dims(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, ["batch", None, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)
    s_in = helper.make_tensor_sequence_value_info("s", TensorProto.INT64, ["n"])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x, s_in], [y])
    path = tmp_path / "dims.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    out = run("inspect", str(path)).stdout
    assert re.search(r"^  x\s+FLOAT16\[batch, \?, 3\]$", out, re.M)
    assert re.search(r"^  s\s+sequence\(INT64\[n\]\)$", out, re.M)
    assert re.search(r"^  y\s+FLOAT16 \(unknown rank\)$", out, re.M)
    s = json.loads(run("inspect", "--json", str(path)).stdout)
    assert s["inputs"][0]["shape"] == ["batch", None, 3]
    assert s["outputs"][0]["shape"] is None


def test_inspect_lists_functions_metadata_and_sparse_initializers(tmp_path):
    fn = helper.make_function("custom.ops", "ScaledRelu", ["x", "s"], ["y"],
                              [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mul", ["r", "s"], ["y"])],
                              [helper.make_opsetid("", 18)])
    values = numpy_helper.from_array(np.array([1.5, -2.0], dtype=np.float32), "sp")
    indices = numpy_helper.from_array(np.array([1, 3], dtype=np.int64), "sp_idx")
    sparse = helper.make_sparse_tensor(values, indices, [4])
    graph = helper.make_graph(
        [helper.make_node("ScaledRelu", ["x", "s"], ["y"], domain="custom.ops")], "with_fn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], sparse_initializer=[sparse])
    model = helper.make_model(graph, functions=[fn], domain="org.example", model_version=7,
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("custom.ops", 1)])
    helper.set_model_props(model, {"author": "tests", "license": "MIT"})
    path = tmp_path / "fn.onnx"
    onnx.save(model, path)
    ref = onnx.load(str(path))
    out = run("inspect", str(path)).stdout
    assert re.search(r"^functions:\s+1$", out, re.M)
    assert re.search(r"^  custom\.ops::ScaledRelu \(2 nodes\)$", out, re.M)
    assert re.search(r"^  custom\.ops::ScaledRelu\s+1$", out, re.M)  # in the op histogram
    assert re.search(r"^opset_import:\s+ai\.onnx 18, custom\.ops 1$", out, re.M)
    assert re.search(r"^domain:\s+org\.example$", out, re.M) and re.search(r"^model_version:\s+7$", out, re.M)
    assert re.search(r'^  author = "tests"$', out, re.M) and re.search(r'^  license = "MIT"$', out, re.M)
    assert re.search(r"^sparse initializers: 1$", out, re.M)
    s = json.loads(run("inspect", "--json", str(path)).stdout)
    assert s["functions"] == [{"domain": f.domain, "name": f.name, "overload": f.overload, "nodes": len(f.node),
                               "inputs": list(f.input), "outputs": list(f.output)} for f in ref.functions]
    assert s["metadata_props"] == [{"key": p.key, "value": p.value} for p in ref.metadata_props]
    dump = run("dump", str(path)).stdout
    assert "functions[0]: custom.ops::ScaledRelu" in dump
    assert "sparse_initializer[0]: dims [4]" in dump and "values: sp FLOAT[2] raw_data 8 bytes [1.5, -2]" in dump


def _external_model(tmp_path, location: str = "weights.bin") -> str:
    path = tmp_path / "ext.onnx"
    onnx.save_model(onnx.load(LENET), path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=1024)
    return str(path)


def test_inspect_shows_external_data_files_and_their_size_on_disk(tmp_path):
    path = _external_model(tmp_path)
    stored = onnx.load(path, load_external_data=False)
    external = [t for t in stored.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    referenced = sum(int(e.value) for t in external for e in t.external_data if e.key == "length")
    size = os.path.getsize(tmp_path / "weights.bin")
    assert external and referenced
    p = run("inspect", path)
    assert p.returncode == 0
    assert re.search(rf"^  weights\.bin: {size} bytes .*on disk; {len(external)} tensors, {referenced} bytes",
                     p.stdout, re.M), p.stdout
    s = json.loads(run("inspect", "--json", path).stdout)
    assert s["external_data"] == [{"location": "weights.bin", "status": "ok", "file_size": size,
                                   "tensors": len(external), "bytes": referenced}]
    # the tensors' sizes come from their headers, so the total is that of the inline model
    assert s["initializer_bytes"] == sum(numpy_helper.to_array(t).nbytes for t in onnx.load(LENET).graph.initializer)


def test_inspect_and_dump_never_open_the_external_data_file(tmp_path):
    # A FIFO with no writer blocks whoever opens it for reading: had either command
    # opened the data file, this would hang until the timeout.
    path = _external_model(tmp_path)
    os.remove(tmp_path / "weights.bin")
    os.mkfifo(tmp_path / "weights.bin")
    p = run("inspect", "--json", path, timeout=30)
    # measured as a read would see it (a read refuses a FIFO), without opening it
    assert p.returncode == 0 and json.loads(p.stdout)["external_data"][0]["status"] == "not a regular file"
    p = run("dump", path, timeout=30)
    assert p.returncode == 0 and "external weights.bin, offset " in p.stdout


def test_inspect_reports_missing_and_unsafe_external_files(tmp_path):
    path = _external_model(tmp_path)
    os.remove(tmp_path / "weights.bin")
    p = run("inspect", path)
    assert p.returncode == 0 and re.search(r"^  weights\.bin: missing;", p.stdout, re.M)
    m = onnx.load(path, load_external_data=False)
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../../etc/passwd"
    onnx.save(m, tmp_path / "unsafe.onnx")
    s = json.loads(run("inspect", "--json", str(tmp_path / "unsafe.onnx")).stdout)
    assert [(e["location"], e["status"], e["file_size"]) for e in s["external_data"]] == \
        [("../../etc/passwd", "unsafe location", None)]


def test_inspect_counts_subgraphs_and_ops_like_the_reference_on_the_whole_corpus(node_corpus):
    with_subgraphs = 0
    for name, data in node_corpus:
        ref = onnx.ModelProto.FromString(data)
        s = summarize(irmodel.loads(data))
        expected_ops = Counter((n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type
                               for n in ref.graph.node)
        assert (s["subgraph_count"], s["op_types"], s["node_count"]) == \
            (ref_subgraph_count(ref), dict(expected_ops), len(ref.graph.node)), name
        with_subgraphs += s["subgraph_count"] > 0
    assert with_subgraphs > 20  # If, Loop, Scan, SequenceMap models are in the corpus


@pytest.mark.parametrize("name", ["test_if", "test_loop16_seq_none"])
def test_inspect_of_models_with_subgraphs(tmp_path, node_corpus, name):
    path = corpus_file(tmp_path, node_corpus, name)
    expected = ref_subgraph_count(onnx.load(path))
    assert expected > 0
    assert re.search(rf"^subgraphs:\s+{expected}$", run("inspect", path).stdout, re.M)
    assert json.loads(run("inspect", "--json", path).stdout)["subgraph_count"] == expected


# -- dump ------------------------------------------------------------------------------------

HEX_RUN = re.compile(r"(?:\b[0-9a-f]{2} ){17,}")
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{64,}")


def assert_no_raw_bytes(text: str, file_size: int) -> None:
    assert not HEX_RUN.search(text) and not BASE64_RUN.search(text)
    assert max(len(line) for line in text.splitlines()) < 1000
    assert len(text) < file_size // 10  # summaries, not data


def test_dump_text_shows_ops_and_tensor_summaries():
    ref = onnx.load(LENET)
    p = run("dump", LENET)
    assert p.returncode == 0 and p.stderr == ""
    out = p.stdout
    for i, node in enumerate(ref.graph.node):
        ins, outs = ", ".join(node.input), ", ".join(node.output)
        assert f"node[{i}]: {node.op_type} {node.name} ({ins}) -> ({outs})" in out
    for i, t in enumerate(ref.graph.initializer):
        a = numpy_helper.to_array(t)
        dims = ", ".join(str(d) for d in t.dims)
        values = ", ".join("%.6g" % v for v in a.ravel()[:8]) + (", ..." if a.size > 8 else "")
        assert f"initializer[{i}]: {t.name} FLOAT[{dims}] raw_data {a.nbytes} bytes [{values}]" in out
    assert "kernel_shape = INTS [5, 5]" in out
    assert "input[0]: image FLOAT[batch, 1, 28, 28]" in out
    assert f'doc_string: "{ref.doc_string}"' in out
    assert_no_raw_bytes(out, os.path.getsize(LENET))


def test_dump_json_is_to_dict_and_protobufs_json(tmp_path):
    p = run("dump", "--json", LENET)
    assert p.returncode == 0
    got = json.loads(p.stdout)
    assert got == irmodel.to_dict(irmodel.load(LENET))
    assert got == json_format.MessageToDict(onnx.load(LENET), preserving_proto_field_name=True)


def test_dump_of_a_model_with_subgraphs(tmp_path, node_corpus):
    path = corpus_file(tmp_path, node_corpus, "test_loop16_seq_none")
    ref = onnx.load(path)
    out = run("dump", path).stdout
    assert "body = GRAPH" in out and "then_branch = GRAPH" in out and "else_branch = GRAPH" in out
    body = ref.graph.node[0].attribute[0].g
    for node in body.node:
        assert f": {node.op_type} (" in out
    const = numpy_helper.to_array(body.node[4].attribute[0].t)  # const_tensor_x, in float_data
    assert f"t: const_tensor_x FLOAT[5] float_data [{', '.join('%g' % v for v in const)}]" in out


def test_dump_of_a_tensor_file_with_type(data_corpus):
    path, _, data = next(item for item in data_corpus if item[1] == "TensorProto" and len(item[2]) > 4000)
    ref = onnx.TensorProto.FromString(data)
    a = numpy_helper.to_array(ref).ravel()
    p = run("dump", "--type", "TensorProto", path)
    assert p.returncode == 0
    dims = ", ".join(str(d) for d in ref.dims)
    values = ", ".join("%.6g" % v for v in a[:8])
    assert p.stdout.splitlines()[0] == (f"TensorProto: {ref.name + ' ' if ref.name else ''}"
                                        f"{TensorProto.DataType.Name(ref.data_type)}[{dims}] "
                                        f"raw_data {a.nbytes} bytes [{values}, ...]")
    assert_no_raw_bytes(p.stdout, len(data))


SUBBYTE = {TensorProto.UINT4, TensorProto.INT4, TensorProto.FLOAT4E2M1, TensorProto.UINT2,
           TensorProto.INT2, TensorProto.FLOAT6E2M3, TensorProto.FLOAT6E3M2}
BIT_TYPES = {TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ,
             TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ, TensorProto.FLOAT8E8M0}


def _sample_array(code: int, n: int = 11):
    np_dt = helper.tensor_dtype_to_np_dtype(code)
    rng = random.Random(code)
    if code in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
        return np.array([complex(rng.gauss(0, 3), rng.gauss(0, 3)) for _ in range(n)], dtype=np_dt)
    if np_dt == np.bool_:
        return np.array([rng.random() < 0.5 for _ in range(n)])
    kind = np.dtype(np_dt).kind
    if kind in "iu" or code in (TensorProto.UINT4, TensorProto.INT4, TensorProto.UINT2, TensorProto.INT2):
        import ml_dtypes
        info = ml_dtypes.iinfo(np_dt)
        lo, hi = int(info.min), int(info.max)
        return np.array([lo, hi] + [rng.randint(lo, hi) for _ in range(n - 2)], dtype=np_dt)
    special = [1.0, 0.5] if code == TensorProto.FLOAT8E8M0 else [float("nan"), -0.0]
    return np.array(special + [rng.gauss(0, 3) for _ in range(n - 2)]).astype(np_dt)


@pytest.mark.parametrize("raw", [True, False], ids=["raw_data", "typed_field"])
@pytest.mark.parametrize("code", [c for _, c in TensorProto.DataType.items() if c not in (0, 8)],
                         ids=[n for n, c in TensorProto.DataType.items() if c not in (0, 8)])
def test_dump_previews_the_values_the_reference_decodes(code, raw):
    arr = _sample_array(code)
    if raw:
        t = numpy_helper.from_array(arr, "t")
    else:
        t = helper.make_tensor("t", code, arr.shape, arr if code in SUBBYTE | BIT_TYPES else arr.tolist())
    expected = numpy_helper.to_array(t).ravel()[:8]
    source, values = preview_values(irmodel.loads(t.SerializeToString(), "TensorProto"))
    assert source == ("raw_data" if raw else source) and source
    assert len(values) == len(expected)
    for ours, ref in zip(values, expected):
        ref = complex(ref) if isinstance(ref, complex) or np.iscomplexobj(ref) else \
            (bool(ref) if code == TensorProto.BOOL else
             (int(ref) if np.issubdtype(np.asarray(ref).dtype, np.integer) or code in SUBBYTE - {23, 27, 28}
              else float(ref)))
        assert ours == ref or (ours != ours and ref != ref), (ours, ref)


def test_dump_preview_reads_packed_typed_data_without_decoding_it():
    t = helper.make_tensor("big", TensorProto.FLOAT, [100000], np.arange(100000, dtype=np.float32).tolist())
    loaded = irmodel.loads(t.SerializeToString(), "TensorProto")
    assert preview_values(loaded) == ("float_data", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    assert loaded._raw_chunks("float_data") is not None  # still undecoded in the buffer


# -- raw -------------------------------------------------------------------------------------

LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)  ( *)(\d+)(?:: | \{)")


def parse_offsets(out: str) -> list:
    """``[(depth, number, tag_offset, data_offset, length)]`` from ``raw --offsets`` output."""
    rows = []
    for line in out.splitlines()[1:]:
        m = LINE.match(line)
        if m:
            t, d, ln, indent, number = m.groups()
            rows.append((len(indent) // 2, int(number), int(t), int(d), int(ln)))
    return rows


def test_raw_offsets_of_a_model_match_the_reference():
    ref = onnx.load(LENET)
    p = run("raw", "--offsets", LENET)
    assert p.returncode == 0 and p.stdout.splitlines()[0].split() == ["offset", "data", "length", "field"]
    rows = parse_offsets(p.stdout)
    layout = reference_layout(ref)
    assert [r[1:] for r in rows if r[0] == 0] == layout
    graph = next(e for e in layout if e[0] == 7)
    in_graph = [r[1:] for r in rows if r[0] == 1 and graph[2] <= r[2] < graph[2] + graph[3]]
    assert in_graph == [(n, graph[2] + t, graph[2] + d, ln) for n, t, d, ln in reference_layout(ref.graph)]
    assert f'8: "{ref.graph.initializer[0].name}"' in p.stdout
    assert_no_raw_bytes(p.stdout, 10 * os.path.getsize(LENET))


def test_raw_on_a_non_onnx_protobuf_file(tmp_path):
    fdp = sample_file_descriptor()
    path = tmp_path / "geometry.desc"
    path.write_bytes(fdp.SerializeToString())
    p = run("raw", "--offsets", str(path))
    assert p.returncode == 0
    rows = parse_offsets(p.stdout)
    layout = reference_layout(fdp)
    assert [r[1:] for r in rows if r[0] == 0] == layout
    point = next(e for e in layout if e[0] == 4)  # message_type[0]
    in_point = [r[1:] for r in rows if r[0] == 1 and point[2] <= r[2] < point[2] + point[3]]
    assert in_point == [(n, point[2] + t, point[2] + d, ln) for n, t, d, ln in reference_layout(fdp.message_type[0])]
    plain = run("raw", str(path)).stdout
    assert plain.splitlines()[0] == f'1: "{fdp.name}"'
    assert f'2: "{fdp.package}"' in plain


def test_raw_max_depth_limits_expansion():
    out = run("raw", "--max-depth", "1", LENET).stdout
    assert "\n  1 {" not in out and "\n  1: " in out  # graph's fields are shown, not expanded
    assert "    " not in out  # nothing at depth 2
    assert "{...}  # message of" in out


def test_raw_of_a_truncated_file_prints_the_valid_prefix_then_fails(tmp_path):
    data = open(LENET, "rb").read()
    layout = reference_layout(onnx.load(LENET))
    graph = next(e for e in layout if e[0] == 7)
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[:graph[2] + 100])  # inside the graph
    p = run("raw", str(path))
    assert_fails(p, 1, "malformed protobuf", f"at offset {graph[1] + 1}")
    assert [line.split(":")[0] for line in p.stdout.splitlines()] == [str(e[0]) for e in layout if e[1] < graph[1]]


def test_raw_reads_from_a_pipe():
    fdp = sample_file_descriptor()
    p = run("raw", "/dev/stdin", input=fdp.SerializeToString())
    assert p.returncode == 0 and p.stdout.startswith(f'1: "{fdp.name}"')


def test_inspect_reads_from_a_pipe_as_from_the_file():
    # A pipe is not summarized from mapped bytes (it can be read once): it is loaded, and
    # the summary is the file's.
    data = open(LENET, "rb").read()
    piped = run("inspect", "--json", "/dev/stdin", input=data)
    from_file = run("inspect", "--json", LENET)
    assert piped.returncode == 0 and from_file.returncode == 0, piped.stderr
    assert json.loads(piped.stdout) == json.loads(from_file.stdout)


# -- errors --------------------------------------------------------------------------------

COMMANDS = [["inspect"], ["inspect", "--json"], ["dump"], ["dump", "--json"], ["raw"], ["raw", "--offsets"]]


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_a_missing_file_is_an_io_error(tmp_path, cmd):
    assert_fails(run(*cmd, str(tmp_path / "nope.onnx")), 2, "nope.onnx", "No such file or directory")


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_a_directory_is_an_io_error(tmp_path, cmd):
    assert_fails(run(*cmd, str(tmp_path)), 2, "Is a directory")


def test_permission_denied_is_an_io_error(tmp_path, monkeypatch, capsys):
    # Root reads any file, so the error is raised where the file is opened.
    path = tmp_path / "m.onnx"
    path.write_bytes(open(LENET, "rb").read())

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr("builtins.open", refuse)
    assert cli.main(["inspect", str(path)]) == 2
    assert cli.main(["raw", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"irmodel: {path}: Permission denied"] * 2


def test_an_empty_file_is_not_a_model_but_is_an_empty_message(tmp_path):
    # protobuf (and onnx.load) read 0 bytes as a ModelProto with nothing set; the checker
    # then rejects it.  inspect and dump say so; raw shows the empty message it is.
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    assert onnx.load(str(path)).ByteSize() == 0
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(onnx.load(str(path)))
    for cmd in (["inspect"], ["inspect", "--json"], ["dump"], ["dump", "--json"]):
        assert_fails(run(*cmd, str(path)), 1, "empty file")
    p = run("raw", str(path))
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")


def test_another_protobuf_file_is_not_a_model(tmp_path):
    path = tmp_path / "other.pb"
    path.write_bytes(descriptor_pb2.FieldDescriptorProto(name="x", json_name="y").SerializeToString())
    assert_fails(run("inspect", str(path)), 1, "not an ONNX model")


def test_random_bytes_are_an_invalid_model(tmp_path):
    data = random.Random(1).randbytes(4096)
    with pytest.raises(Exception):
        onnx.load_model_from_string(data)  # the reference refuses these bytes too
    path = tmp_path / "random.onnx"
    path.write_bytes(data)
    for cmd in (["inspect"], ["dump"], ["dump", "--json"]):
        assert_fails(run(*cmd, str(path)), 1, "not a valid ONNX file", "at offset")
    assert_fails(run("raw", str(path)), 1, "malformed protobuf", "at offset")


@pytest.mark.parametrize("cmd", [["inspect"], ["dump"], ["dump", "--json"]], ids=" ".join)
def test_a_truncated_model_is_invalid_with_offset_and_path(tmp_path, cmd):
    data = open(LENET, "rb").read()[:150000]
    with pytest.raises(Exception):
        onnx.load_model_from_string(data)
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data)
    assert_fails(run(*cmd, str(path)), 1, "at offset", "in ModelProto")


@pytest.mark.parametrize("args", [
    [], ["inspect"], ["bogus", LENET], ["inspect", "--nope", LENET], ["raw", "--max-depth", "x", LENET],
    ["raw", "--max-depth", "101", LENET], ["dump", "--type", "NoSuchProto", LENET], ["inspect", LENET, "extra"],
], ids=lambda a: " ".join(a) or "nothing")
def test_bad_arguments_are_a_usage_error(args):
    assert_fails(run(*args), 2, "--help")


def test_help_and_version():
    p = run("--help")
    assert p.returncode == 0 and all(c in p.stdout for c in ("inspect", "dump", "raw"))
    p = run("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"irmodel {irmodel.__version__}"


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path):
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"x{i + 1}"]) for i in range(5000)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("x5000", TensorProto.FLOAT, [1])])
    path = tmp_path / "chain.onnx"
    onnx.save(helper.make_model(graph), path)
    proc = subprocess.Popen([sys.executable, "-m", "irmodel", "dump", str(path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"ModelProto\n"
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0 and err == ""


@pytest.mark.parametrize("cmd", [["inspect"], ["dump"], ["raw"]], ids=" ".join)
def test_the_commands_do_not_import_numpy(cmd):
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "irmodel", *cmd, LENET],
                       capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0
    imported = p.stderr.decode()
    assert "irmodel" in imported and "numpy" not in imported


def test_a_3_gib_model_is_summarised_without_reading_its_weights(tmp_path):
    """A sparse file: 3 GiB of raw_data that the commands must not read into memory.

    The data segment is capped at 512 MiB (the mapping of the file does not count), so
    a copy of the weights would fail; a read through the mapping would take seconds.
    """
    from wirefmt.varint import encode_varint

    n = 3 << 30
    tensor = b"\x08" + encode_varint(n // 4) + b"\x10\x01\x42\x01w\x4a" + encode_varint(n)
    graph = b"\x12\x01g\x2a" + encode_varint(len(tensor) + n) + tensor
    head = b"\x08\x0a\x3a" + encode_varint(len(graph) + n) + graph
    path = tmp_path / "sparse.onnx"
    with open(path, "wb") as f:
        f.write(head)
        f.seek(len(head) + n)
        f.write(b"\x42\x02\x10\x15")  # opset_import { version: 21 } after the weights

    def cap_memory():
        resource.setrlimit(resource.RLIMIT_DATA, (512 << 20, 512 << 20))

    p = run("inspect", "--json", str(path), preexec_fn=cap_memory)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["initializer_bytes"] == n and s["opset_import"] == [{"domain": "", "version": 21}]
    p = run("dump", str(path), preexec_fn=cap_memory)
    assert p.returncode == 0 and f"w FLOAT[{n // 4}] raw_data {n} bytes [0, 0, 0, 0, 0, 0, 0, 0, ...]" in p.stdout
    p = run("raw", str(path), preexec_fn=cap_memory)
    assert p.returncode == 0 and f"9: <{n} bytes: 00 00" in p.stdout and p.stdout.rstrip().endswith("}")


# -- progress ------------------------------------------------------------------------------

class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_waits_a_second_then_draws_rate_limited_and_erases():
    now = [0.0]
    term = FakeTerminal()
    with Progress("copy", 200, stream=term, clock=lambda: now[0]) as progress:
        progress(10)
        assert term.getvalue() == ""  # quick work shows nothing
        now[0] = 1.5
        progress(50)
        assert term.getvalue() == "\r\x1b[Kirmodel: copy: 50/200 (25%)"
        now[0] = 1.6
        progress(60)  # within the interval: not redrawn
        assert term.getvalue().count("irmodel:") == 1
        now[0] = 2.0
        progress(100)
        assert term.getvalue().endswith("irmodel: copy: 100/200 (50%)")
    assert term.getvalue().endswith("\r\x1b[K")


def test_progress_is_silent_when_stderr_is_not_a_terminal():
    stream = io.StringIO()
    with Progress("copy", 10, stream=stream, clock=lambda: 100.0) as progress:
        progress(5)
    assert stream.getvalue() == "" and not progress.enabled
