"""``irmodel convert``, run as users run it (``python -m irmodel convert ...``), checked with the reference.

Every output is read back with `onnx.load` (which resolves external data the
reference's way) and compared with the arrays of the model we started from; which
tensors go external is compared with the reference's own `convert_model_to_external_data`.
"""

from __future__ import annotations

import hashlib
import os
import pty
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import ExternalDataInfo as RefInfo
from onnx.external_data_helper import _get_all_tensors as ref_all_tensors
from onnx.external_data_helper import convert_model_to_external_data as ref_convert
from onnx.external_data_helper import uses_external_data

from irmodel import cli
from irmodel._files.external_write import ALIGNMENT
from cli_helpers import assert_fails

from repo_paths import REPO as ROOT  # noqa: E402
UNSAFE_NAME = "weird:name/0"  # not a file name: --file-per-tensor must invent one


def run(*args, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    """``irmodel convert ARGS`` in a subprocess; never a traceback, whatever happened."""
    p = subprocess.run([sys.executable, "-m", "irmodel", "convert", *map(str, args)],
                       capture_output=True, cwd=ROOT, timeout=timeout, **kw)
    p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode()
    assert "Traceback" not in p.stderr, p.stderr
    return p


def ok(*args) -> None:
    p = run(*args)
    assert (p.returncode, p.stdout, p.stderr) == (0, "", ""), p.stderr


# -- models ------------------------------------------------------------------------------

def make_model() -> onnx.ModelProto:
    """Initializers on both sides of the 1024 threshold, an unsafe name, a Constant, a subgraph."""
    rng = np.random.default_rng(7)
    then_branch = helper.make_graph(
        [helper.make_node("Identity", ["ti"], ["to"])], "then", [],
        [helper.make_tensor_value_info("to", TensorProto.FLOAT, [512])],
        initializer=[numpy_helper.from_array(rng.standard_normal(512).astype(np.float32), "ti")])
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["ei"], ["eo"])], "else", [],
        [helper.make_tensor_value_info("eo", TensorProto.FLOAT, [512])],
        initializer=[numpy_helper.from_array(np.zeros(512, np.float32), "ei")])
    const = numpy_helper.from_array(rng.standard_normal(600).astype(np.float32), "cv")
    nodes = [helper.make_node("Constant", [], ["c"], value=const),
             helper.make_node("Add", ["big", "big"], ["y"]),
             helper.make_node("If", ["cond"], ["z"], then_branch=then_branch, else_branch=else_branch)]
    inits = [numpy_helper.from_array(rng.standard_normal((40, 50)).astype(np.float32), "big"),
             numpy_helper.from_array(rng.integers(-9, 9, 300).astype(np.int64), "mid"),
             numpy_helper.from_array(np.arange(5, dtype=np.float32), "small"),
             numpy_helper.from_array(np.full(127, 3, dtype=np.int64), "edge"),  # 1016 + 33 bytes
             numpy_helper.from_array(rng.integers(-9, 9, 200).astype(np.int64), UNSAFE_NAME)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
                               for n, shape in (("y", [40, 50]), ("c", [600]), ("z", [512]))],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def arrays(model: onnx.ModelProto) -> dict:
    """Every tensor's array, as the reference decodes it (its data must be inline or loaded)."""
    return {t.name: numpy_helper.to_array(t) for t in ref_all_tensors(model)}


def assert_same_arrays(path, expected: onnx.ModelProto) -> None:
    got, want = arrays(onnx.load(str(path))), arrays(expected)
    assert got.keys() == want.keys()
    for name, a in want.items():
        assert got[name].dtype == a.dtype and got[name].tobytes() == a.tobytes(), name


def external_names(path) -> set:
    return {t.name for t in ref_all_tensors(onnx.load(str(path), load_external_data=False))
            if uses_external_data(t)}


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "in" / "model.onnx"
    path.parent.mkdir()
    onnx.save(make_model(), str(path))
    return path


@pytest.fixture
def external_model(tmp_path):
    """The model saved by the reference with its data in ``w.bin`` beside it."""
    path = tmp_path / "ext" / "model.onnx"
    path.parent.mkdir()
    onnx.save_model(make_model(), str(path), save_as_external_data=True, location="w.bin",
                    size_threshold=0)
    return path


# -- --external-data -----------------------------------------------------------------------

@pytest.mark.parametrize("threshold", [None, 0, 1049, 1050, 4096])
def test_external_data_moves_the_tensors_the_reference_moves(model_file, tmp_path, threshold):
    out = tmp_path / "out.onnx"
    ok(model_file, out, "--external-data", *(["--size-threshold", threshold] if threshold is not None else []))
    expected = make_model()
    ref_convert(expected, size_threshold=1024 if threshold is None else threshold)
    assert external_names(out) == {t.name for t in ref_all_tensors(expected) if uses_external_data(t)}
    assert external_names(out) and sorted(os.listdir(tmp_path)) == ["in", "out.onnx", "out.onnx.data"]
    for t in ref_all_tensors(onnx.load(str(out), load_external_data=False)):
        if uses_external_data(t):
            info = RefInfo(t)
            assert info.location == "out.onnx.data" and info.offset % ALIGNMENT == 0
    assert_same_arrays(out, make_model())


@pytest.mark.parametrize("options", [
    [], ["--size-threshold", "0"], ["--location", "weights.bin"], ["--one-file", "--checksum"],
    ["--file-per-tensor"], ["--file-per-tensor", "--size-threshold", "0", "--checksum"],
], ids=lambda o: " ".join(o) or "defaults")
def test_external_then_single_file_round_trips_as_the_reference(model_file, tmp_path, options):
    ext, single = tmp_path / "ext.onnx", tmp_path / "single.onnx"
    ok(model_file, ext, "--external-data", *options)
    assert_same_arrays(ext, make_model())
    ok(ext, single, "--single-file")
    # What the reference's own load makes of our external model, serialized by protobuf:
    # the bytes must be ours.  (Not the original bytes: loading sets data_location DEFAULT.)
    assert single.read_bytes() == onnx.load(str(ext)).SerializeToString()
    assert external_names(single) == set()
    assert_same_arrays(single, make_model())


def test_file_per_tensor_names_files_after_tensors_and_invents_safe_names(model_file, tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    ok(model_file, out_dir / "m.onnx", "--external-data", "--file-per-tensor", "--size-threshold", "0")
    files = set(os.listdir(out_dir)) - {"m.onnx"}
    safe = {"big", "mid", "small", "edge", "ti", "ei"}
    assert safe <= files and len(files) == len(safe) + 1
    (invented,) = files - safe
    assert "/" not in invented and ":" not in invented
    locations = {t.name: RefInfo(t).location
                 for t in ref_all_tensors(onnx.load(str(out_dir / "m.onnx"), load_external_data=False))
                 if uses_external_data(t)}
    assert locations[UNSAFE_NAME] == invented and locations["big"] == "big"
    assert_same_arrays(out_dir / "m.onnx", make_model())


def test_checksum_records_the_sha1_of_each_tensors_bytes(model_file, tmp_path):
    out = tmp_path / "out.onnx"
    ok(model_file, out, "--external-data", "--checksum", "--location", "w.bin")
    data = (tmp_path / "w.bin").read_bytes()
    infos = [RefInfo(t) for t in ref_all_tensors(onnx.load(str(out), load_external_data=False))
             if uses_external_data(t)]
    assert infos
    for info in infos:
        assert info.checksum == hashlib.sha1(data[info.offset:info.offset + info.length]).hexdigest()
    onnx.checker.check_model(str(out))  # the reference accepts the checksum key


def test_external_data_of_an_external_model_is_rewritten_beside_out(external_model, tmp_path):
    out = tmp_path / "again" / "m.onnx"
    out.parent.mkdir()
    ok(external_model, out, "--external-data", "--location", "new.bin")
    assert sorted(os.listdir(out.parent)) == ["m.onnx", "new.bin"]
    assert_same_arrays(out, make_model())


# -- --single-file -------------------------------------------------------------------------

def test_single_file_inlines_external_data_read_from_ins_directory(external_model, tmp_path):
    out = tmp_path / "single.onnx"
    ok(external_model, out, "--single-file")
    assert external_names(out) == set()
    assert out.read_bytes() == onnx.load(str(external_model)).SerializeToString()


def test_a_result_over_the_protobuf_limit_is_written_with_a_warning(external_model, tmp_path,
                                                                      monkeypatch, capsys):
    # A real 2 GiB file would take seconds to write; the limit is lowered instead.
    out = tmp_path / "single.onnx"
    monkeypatch.setattr(cli.convert, "PROTOBUF_LIMIT", 1000)
    assert cli.main(["convert", str(external_model), str(out), "--single-file"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("irmodel: warning: ") and "2 GiB" in err[0]
    assert_same_arrays(out, make_model())


# -- no flag: a copy as it is --------------------------------------------------------------

def test_a_copy_of_a_single_file_model_is_byte_identical(model_file, tmp_path):
    out = tmp_path / "copy.onnx"
    ok(model_file, out)
    assert out.read_bytes() == model_file.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["copy.onnx", "in"]


def test_a_copy_elsewhere_takes_the_data_files_along(tmp_path):
    src = tmp_path / "src"
    (src / "weights").mkdir(parents=True)
    first = src / "first.onnx"
    onnx.save(make_model(), str(first))
    ok(first, src / "model.onnx", "--external-data", "--location", "weights/w.bin", "--checksum")
    out = tmp_path / "dst" / "model.onnx"
    out.parent.mkdir()
    ok(src / "model.onnx", out)
    assert out.read_bytes() == (src / "model.onnx").read_bytes()  # locations and offsets unchanged
    assert (out.parent / "weights" / "w.bin").read_bytes() == (src / "weights" / "w.bin").read_bytes()
    assert sorted(os.listdir(out.parent)) == ["model.onnx", "weights"]
    assert_same_arrays(out, make_model())


def test_a_copy_in_the_same_directory_leaves_the_data_files_alone(external_model):
    data = external_model.parent / "w.bin"
    before = os.stat(data)
    out = external_model.parent / "copy.onnx"
    ok(external_model, out)
    after = os.stat(data)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert out.read_bytes() == external_model.read_bytes()
    assert_same_arrays(out, make_model())


def test_a_copy_replaces_a_stale_data_file_of_the_same_name(external_model, tmp_path):
    out = tmp_path / "dst" / "m.onnx"
    out.parent.mkdir()
    (out.parent / "w.bin").write_bytes(b"stale")
    ok(external_model, out)
    assert (out.parent / "w.bin").read_bytes() == (external_model.parent / "w.bin").read_bytes()


# -- IN == OUT -----------------------------------------------------------------------------

@pytest.mark.parametrize("options", [[], ["--single-file"], ["--external-data"],
                                     ["--external-data", "--location", "w.bin", "--size-threshold", "0"],
                                     ["--external-data", "--file-per-tensor"]],
                         ids=lambda o: " ".join(o) or "copy")
def test_converting_a_file_in_place_is_safe(external_model, options):
    # The reference's files: model.onnx and w.bin.  In place, new data files may replace
    # the one being read (w.bin): its old contents stay mapped until the rename.
    ok(external_model, external_model, *options)
    assert_same_arrays(external_model, make_model())


def test_a_data_file_may_not_replace_the_input(model_file, tmp_path):
    before = model_file.read_bytes()
    p = run(model_file, tmp_path / "in" / "out.onnx", "--external-data", "--location", "model.onnx")
    assert_fails(p, 2, "out.onnx", "model.onnx", "must be kept")
    assert model_file.read_bytes() == before
    assert sorted(os.listdir(model_file.parent)) == ["model.onnx"]


def test_a_data_file_may_not_replace_the_output(model_file, tmp_path):
    assert_fails(run(model_file, tmp_path / "out.onnx", "--external-data", "--location", "out.onnx"),
                 2, "would overwrite the model file")
    assert not (tmp_path / "out.onnx").exists()


# -- invalid input (status 1) ---------------------------------------------------------------

MODES = [[], ["--single-file"], ["--external-data"]]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m) or "copy")
def test_missing_external_data_is_an_invalid_input_and_nothing_is_written(external_model, tmp_path, mode):
    os.unlink(external_model.parent / "w.bin")
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    assert_fails(run(external_model, out, *mode), 1, str(external_model), "'w.bin'", "no such file")
    assert os.listdir(out.parent) == []


@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m) or "copy")
def test_an_unsafe_location_in_the_input_is_refused(tmp_path, mode):
    (tmp_path / "secret").write_bytes(bytes(64))
    model = make_model()
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value="../secret")
    path = tmp_path / "in" / "m.onnx"
    path.parent.mkdir()
    path.write_bytes(model.SerializeToString())
    assert_fails(run(path, tmp_path / "out.onnx", *mode), 1, "'../secret'", "'..'")
    assert not (tmp_path / "out.onnx").exists()


def test_bad_input_files(tmp_path, model_file):
    out = tmp_path / "out.onnx"
    random = tmp_path / "random.onnx"
    random.write_bytes(np.random.default_rng(1).bytes(4096))
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(model_file.read_bytes()[:-300])
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    assert_fails(run(random, out), 1, "not a valid ONNX file", "at offset")
    assert_fails(run(truncated, out, "--external-data"), 1, "not a valid ONNX file", "at offset")
    assert_fails(run(empty, out, "--single-file"), 1, "empty file")
    assert not out.exists()


# -- usage and I/O errors (status 2) ---------------------------------------------------------

def test_bad_paths_are_io_errors(model_file, tmp_path):
    assert_fails(run(tmp_path / "nope.onnx", tmp_path / "o.onnx"), 2, "nope.onnx", "No such file")
    assert_fails(run(tmp_path, tmp_path / "o.onnx"), 2, "Is a directory")
    assert_fails(run(model_file, tmp_path / "no" / "o.onnx"), 2, "no", "No such file")
    assert_fails(run(model_file, tmp_path), 2, "Is a directory")
    assert_fails(run(model_file, os.devnull), 2, os.devnull, "Not a regular file")
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


@pytest.mark.parametrize("options", [
    ["--single-file", "--external-data"], ["--external-data", "--one-file", "--file-per-tensor"],
    ["--location", "w.bin"], ["--single-file", "--checksum"], ["--file-per-tensor"],
    ["--size-threshold", "10"], ["--external-data", "--file-per-tensor", "--location", "w.bin"],
    ["--external-data", "--size-threshold", "-1"], ["--external-data", "--size-threshold", "1k"],
    ["--nope"],
], ids=" ".join)
def test_conflicting_or_misplaced_options_are_usage_errors(model_file, tmp_path, options):
    assert_fails(run(model_file, tmp_path / "o.onnx", *options), 2, "--help")
    assert not (tmp_path / "o.onnx").exists()


@pytest.mark.parametrize("location", ["/tmp/w.bin", "../w.bin", "a/../../w.bin", "", "sub/", "C:\\w.bin"])
def test_an_unsafe_location_option_is_refused(model_file, tmp_path, location):
    assert_fails(run(model_file, tmp_path / "o.onnx", "--external-data", "--location", location),
                 2, "--location", "unsafe location")
    assert sorted(os.listdir(tmp_path)) == ["in"]


def test_missing_operands_are_usage_errors(model_file):
    assert_fails(run(), 2, "--help")
    assert_fails(run(model_file), 2, "OUT", "--help")


def test_help_documents_the_three_ways(tmp_path):
    p = run("--help")
    assert p.returncode == 0
    for option in ("--external-data", "--single-file", "--location", "--size-threshold", "--one-file",
                   "--file-per-tensor", "--checksum", "2 GiB", "exit status"):
        assert option in p.stdout, option


# -- progress ------------------------------------------------------------------------------

# The convert commands below take milliseconds: the one-second delay and the rate limit are
# taken away (keyword defaults of Progress) so that every report is drawn.
INSTANT_PROGRESS = ("import sys, irmodel.cli.progress as p\n"
                    "p.Progress.__init__.__kwdefaults__.update(delay=0.0, interval=0.0)\n"
                    "from irmodel.cli import main\n"
                    "sys.exit(main(sys.argv[1:]))\n")


def convert_in_a_terminal(*args) -> str:
    """Run convert with stderr on a pseudo-terminal (stdout a pipe); what the terminal got."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-c", INSTANT_PROGRESS, "convert", *map(str, args)],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        assert proc.wait(timeout=60) == 0, err
        assert proc.stdout.read() == b""
        proc.stdout.close()
    finally:
        os.close(master)
    return err.decode()


@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m) or "copy")
def test_a_progress_line_is_drawn_when_stderr_is_a_terminal(external_model, tmp_path, mode):
    out = tmp_path / "out" / "m.onnx"  # another directory: the copy copies the data file
    out.parent.mkdir()
    draws = convert_in_a_terminal(external_model, out, *mode).split("\r\x1b[K")
    assert draws[0] == "" and draws[-1] == "", draws  # each draw erases the last; the end erases all
    assert len(draws) >= 3 and all(re.fullmatch(r"irmodel: convert: \S+ \S+/\S+ \S+ \(\d+%\)", d)
                                   for d in draws[1:-1]), draws
    assert not draws[-2].startswith("irmodel: convert: 0 B/"), draws  # it moved
    assert_same_arrays(out, make_model())


def test_no_progress_line_when_stderr_is_captured(external_model, tmp_path):
    p = subprocess.run([sys.executable, "-c", INSTANT_PROGRESS, "convert", str(external_model),
                        str(tmp_path / "out.onnx"), "--single-file"], capture_output=True, cwd=ROOT, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")


def test_convert_does_not_import_numpy(model_file, tmp_path):
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "irmodel", "convert", str(model_file),
                        str(tmp_path / "o.onnx"), "--external-data"], capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0
    imported = p.stderr.decode()
    assert "irmodel" in imported and "numpy" not in imported


def test_make_model_is_what_the_reference_checker_accepts():
    onnx.checker.check_model(make_model())
