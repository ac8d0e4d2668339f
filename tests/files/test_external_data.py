"""External data: interoperability with the reference both ways, laziness, and hostile locations."""

from __future__ import annotations

import builtins
import hashlib
import io
import mmap
import os

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnx.external_data_helper import _get_all_tensors as ref_all_tensors

import irmodel
import irmodel._files.atomic
import irmodel._files.origin
from irmodel._files import external_data as ed
from irmodel._files import external_write as ew
from irmodel._files.external_data import _get_all_tensors as our_all_tensors


# -- models ------------------------------------------------------------------------------

def _reference_model() -> onnx.ModelProto:
    """Initializers of several types and sizes, a Constant attribute, and an If subgraph."""
    rng = np.random.default_rng(1234)
    big = rng.standard_normal((40, 50)).astype(np.float32)  # 8000 bytes
    mid = rng.integers(-1000, 1000, size=300).astype(np.int64)  # 2400 bytes
    small = np.arange(5, dtype=np.float32)  # 20 bytes: under every threshold but 0
    f16 = rng.standard_normal(700).astype(np.float16)  # 1400 bytes
    half = np.full(127, 3, dtype=np.int64)  # 1016 bytes: the getsizeof threshold edge (1016 + 33)
    const = rng.standard_normal(600).astype(np.float32)
    then_init = rng.standard_normal(512).astype(np.float32)
    then_branch = helper.make_graph(
        [helper.make_node("Identity", ["ti"], ["to"])], "then",
        [], [helper.make_tensor_value_info("to", onnx.TensorProto.FLOAT, [512])],
        initializer=[numpy_helper.from_array(then_init, "ti")])
    else_branch = helper.make_graph(
        [helper.make_node("Constant", [], ["eo"],
                          value=numpy_helper.from_array(then_init[::-1].copy(), "ec"))], "else",
        [], [helper.make_tensor_value_info("eo", onnx.TensorProto.FLOAT, [512])])
    nodes = [
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(const, "cv")),
        helper.make_node("Add", ["big", "big"], ["y"]),
        helper.make_node("If", ["cond"], ["z"], then_branch=then_branch, else_branch=else_branch),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("cond", onnx.TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [40, 50]),
         helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, [600]),
         helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [512])],
        initializer=[numpy_helper.from_array(big, "big"), numpy_helper.from_array(mid, "mid"),
                     numpy_helper.from_array(small, "small"), numpy_helper.from_array(f16, "f16"),
                     numpy_helper.from_array(half, "edge"),
                     numpy_helper.from_array(mid[:7].copy(), "weird:name/0")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _arrays_by_tensor(ref_model) -> list:
    return [(t.name, numpy_helper.to_array(t)) for t in ref_all_tensors(ref_model)]


def _assert_same_arrays(ours: list, ref: list) -> None:
    assert [n for n, _ in ours] == [n for n, _ in ref]
    for (name, a), (_, b) in zip(ours, ref):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name


def _our_arrays(model) -> list:
    return [(t.name, irmodel.to_array(t)) for t in our_all_tensors(model)]


OPTIONS = [
    dict(all_tensors_to_one_file=True, size_threshold=1024, convert_attribute=False),
    dict(all_tensors_to_one_file=True, size_threshold=0, convert_attribute=True),
    dict(all_tensors_to_one_file=False, size_threshold=1024, convert_attribute=False),
    dict(all_tensors_to_one_file=False, size_threshold=0, convert_attribute=True),
    dict(all_tensors_to_one_file=True, size_threshold=4096, convert_attribute=True),
    dict(all_tensors_to_one_file=True, size_threshold=1049, convert_attribute=False),
]


def _external_names(model) -> list:
    return [t.name for t in our_all_tensors(model) if ed.uses_external_data(t)]


# -- the reference saves, we load -----------------------------------------------------------

@pytest.mark.parametrize("opts", OPTIONS)
def test_reference_saved_external_data_loads_in_ours(tmp_path, opts):
    ref_model = _reference_model()
    expected = _arrays_by_tensor(ref_model)
    path = str(tmp_path / "model.onnx")
    location = "weights.bin" if opts["all_tensors_to_one_file"] else None
    onnx.save_model(ref_model, path, save_as_external_data=True, location=location, **opts)

    ours = irmodel.load(path)
    assert _external_names(ours)  # the options did move some tensors out
    _assert_same_arrays(_our_arrays(ours), expected)
    # reading left the tensors as they were: still external, no raw_data
    assert all(not t.HasField("raw_data") for t in our_all_tensors(ours) if ed.uses_external_data(t))

    # made inline, our model serializes to exactly what the reference's load gives
    irmodel.load_external_data_for_model(ours, str(tmp_path))
    assert irmodel.dumps(ours) == onnx.load(path).SerializeToString()


def test_reference_selects_the_same_tensors_as_we_do(tmp_path):
    """size_threshold is measured as the reference measures it (sys.getsizeof of the bytes)."""
    for threshold in (0, 20 + 33, 1016 + 33, 1016 + 34, 1400 + 33, 10 ** 9):
        ref_model = _reference_model()
        onnx.external_data_helper.convert_model_to_external_data(
            ref_model, location="x.data", size_threshold=threshold, convert_attribute=True)
        ours = irmodel.loads(_reference_model().SerializeToString())
        irmodel.convert_model_to_external_data(ours, location="x.data", size_threshold=threshold,
                                               convert_attribute=True)
        assert irmodel.dumps(ours) == ref_model.SerializeToString(), threshold


def test_mappings_are_made_lazily_and_cached_per_file(tmp_path, monkeypatch):
    ref_model = _reference_model()
    path = str(tmp_path / "model.onnx")
    onnx.save_model(ref_model, path, save_as_external_data=True, location="w.bin", size_threshold=0)
    maps = []

    class RecordingMmap(mmap.mmap):  # a subclass: io.py checks isinstance(buf, mmap.mmap)
        def __new__(cls, *a, **k):
            maps.append(a)
            return super().__new__(cls, *a, **k)

    monkeypatch.setattr(mmap, "mmap", RecordingMmap)
    m = irmodel.load(path)
    assert len(maps) == 1  # the model file itself; no data file yet
    for t in m.graph.initializer:
        irmodel.to_array(t)
    assert len(maps) == 2  # one mapping for w.bin, shared by all its tensors


def test_external_raw_data_is_a_read_only_view_of_the_data_file(tmp_path):
    ref_model = _reference_model()
    path = str(tmp_path / "model.onnx")
    irmodel.save(irmodel.loads(ref_model.SerializeToString()), path, save_as_external_data=True,
                 size_threshold=0)
    m = irmodel.load(path)
    big = m.graph.initializer[0]
    arr = irmodel.to_array(big)
    mapped = irmodel._files.origin.origin_of(m).data_files[os.path.join(str(tmp_path), "model.onnx.data")]
    assert np.shares_memory(arr, np.frombuffer(mapped.view, dtype=np.uint8))
    assert not arr.flags.writeable and arr.flags.aligned


def test_load_without_external_data_leaves_tensors_alone(tmp_path):
    ref_model = _reference_model()
    path = str(tmp_path / "model.onnx")
    onnx.save_model(_reference_model(), path, save_as_external_data=True, location="w.bin")
    m = irmodel.load(path, load_external_data=False)
    big = m.graph.initializer[0]
    with pytest.raises(irmodel.ExternalDataError, match="load_external_data=False") as err:
        irmodel.to_array(big)
    assert "'big'" in str(err.value) and "'w.bin'" in str(err.value)
    np.testing.assert_array_equal(irmodel.to_array(big, str(tmp_path)),
                                  numpy_helper.to_array(ref_model.graph.initializer[0]))
    assert ed.uses_external_data(big) and not big.HasField("raw_data")


def test_data_in_another_directory_with_load_external_data_for_model(tmp_path):
    ref_model = _reference_model()
    onnx.save_model(_reference_model(), str(tmp_path / "model.onnx"), save_as_external_data=True,
                    location="w.bin")
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    os.replace(tmp_path / "model.onnx", moved / "model.onnx")
    m = irmodel.load(str(moved / "model.onnx"), load_external_data=False)
    irmodel.load_external_data_for_model(m, str(tmp_path))
    assert not _external_names(m)
    _assert_same_arrays(_our_arrays(m), _arrays_by_tensor(ref_model))


# -- we save, the reference loads ------------------------------------------------------------

@pytest.mark.parametrize("opts", OPTIONS)
def test_our_external_data_loads_in_reference_and_passes_its_checker(tmp_path, opts):
    ref_model = _reference_model()
    ours = irmodel.loads(ref_model.SerializeToString())
    path = str(tmp_path / "model.onnx")
    location = "weights.bin" if opts["all_tensors_to_one_file"] else None
    irmodel.save(ours, path, save_as_external_data=True, location=location, **opts)

    onnx.checker.check_model(path)
    loaded = onnx.load(path)
    onnx.checker.check_model(loaded)
    _assert_same_arrays(_arrays_by_tensor(loaded), _arrays_by_tensor(ref_model))

    # the same tensors went out as with the reference, with the reference's keys
    ref_saved = tmp_path / "ref"
    ref_saved.mkdir()
    onnx.save_model(_reference_model(), str(ref_saved / "model.onnx"), save_as_external_data=True,
                    location=location, **opts)
    theirs = onnx.load(str(ref_saved / "model.onnx"), load_external_data=False)
    mine = onnx.load(path, load_external_data=False)
    assert [(t.name, [e.key for e in t.external_data]) for t in ref_all_tensors(mine)] == \
        [(t.name, [e.key for e in t.external_data]) for t in ref_all_tensors(theirs)]
    for t in ref_all_tensors(mine):
        entries = {e.key: e.value for e in t.external_data}
        if entries:
            assert int(entries["offset"]) % ew.ALIGNMENT == 0


def test_default_location_is_the_model_file_name(tmp_path):
    irmodel.save(irmodel.loads(_reference_model().SerializeToString()), str(tmp_path / "m.onnx"),
                 save_as_external_data=True)
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "m.onnx.data"]


def test_lazily_loaded_model_saves_to_a_new_place_without_reading_it_first(tmp_path):
    ref_model = _reference_model()
    src = tmp_path / "src"
    src.mkdir()
    onnx.save_model(_reference_model(), str(src / "model.onnx"), save_as_external_data=True,
                    location="w.bin", size_threshold=0, convert_attribute=True)
    m = irmodel.load(str(src / "model.onnx"))
    dst = tmp_path / "dst"
    dst.mkdir()
    irmodel.save(m, str(dst / "model.onnx"), save_as_external_data=True, size_threshold=1024)
    _assert_same_arrays(_arrays_by_tensor(onnx.load(str(dst / "model.onnx"))),
                        _arrays_by_tensor(ref_model))
    # the in-memory model now describes the saved one and reads from the new files
    _assert_same_arrays(_our_arrays(m), _arrays_by_tensor(ref_model))
    os.unlink(src / "w.bin")
    _assert_same_arrays(_our_arrays(irmodel.load(str(dst / "model.onnx"))),
                        _arrays_by_tensor(ref_model))


def test_saving_over_the_files_a_model_was_loaded_from(tmp_path):
    ref_model = _reference_model()
    path = str(tmp_path / "model.onnx")
    irmodel.save(irmodel.loads(ref_model.SerializeToString()), path, save_as_external_data=True,
                 size_threshold=0)
    m = irmodel.load(path)
    irmodel.save(m, path, save_as_external_data=True, size_threshold=100)
    _assert_same_arrays(_arrays_by_tensor(onnx.load(path)), _arrays_by_tensor(ref_model))


def test_save_refuses_to_replace_a_file_that_unloaded_tensors_live_in(tmp_path):
    path = str(tmp_path / "model.onnx")
    onnx.save_model(_reference_model(), path, save_as_external_data=True, location="w.bin")
    m = irmodel.load(path, load_external_data=False)
    m.graph.initializer.append(irmodel.from_array(np.zeros(2000, np.float32), "extra"))
    before = (tmp_path / "w.bin").read_bytes()
    with pytest.raises(irmodel.ExternalDataError, match="would replace|not loaded"):
        irmodel.save(m, path, save_as_external_data=True, location="w.bin")
    assert (tmp_path / "w.bin").read_bytes() == before


def test_checksums_are_written_and_verified_on_request(tmp_path):
    ref_model = _reference_model()
    path = str(tmp_path / "model.onnx")
    ew.save_with_external_data(irmodel.loads(ref_model.SerializeToString()), path,
                               size_threshold=0, checksum=True)
    onnx.checker.check_model(path)  # the reference accepts the extra key
    m = irmodel.load(path)
    for t in our_all_tensors(m):
        if ed.uses_external_data(t):
            info = ed.ExternalDataInfo(t)
            assert info.checksum == hashlib.sha1(bytes(ed.read_external_data(t))).hexdigest()
    _assert_same_arrays([(t.name, irmodel.to_array(t, verify_checksum=True)) for t in our_all_tensors(m)],
                        _arrays_by_tensor(ref_model))
    # flip one byte of the first tensor: the digest no longer matches
    with open(tmp_path / "model.onnx.data", "r+b") as fh:
        fh.seek(3)
        b = fh.read(1)
        fh.seek(3)
        fh.write(bytes([b[0] ^ 0xFF]))
    m = irmodel.load(path)
    with pytest.raises(irmodel.ExternalDataError, match="checksum mismatch") as err:
        irmodel.to_array(m.graph.initializer[0], verify_checksum=True)
    assert "'big'" in str(err.value)
    irmodel.to_array(m.graph.initializer[0])  # not asked: not verified


@pytest.mark.parametrize("one_file", [True, False])
def test_irmodel_save_passes_checksum_through(tmp_path, one_file):
    ref_model = _reference_model()
    path = str(tmp_path / "model.onnx")
    irmodel.save(irmodel.loads(ref_model.SerializeToString()), path, save_as_external_data=True,
                 all_tensors_to_one_file=one_file, size_threshold=0, checksum=True)
    m = irmodel.load(path)
    external = [t for t in our_all_tensors(m) if ed.uses_external_data(t)]
    assert len(external) == 7  # every initializer (convert_attribute=False)
    for t in external:
        assert ed.ExternalDataInfo(t).checksum == hashlib.sha1(bytes(ed.read_external_data(t))).hexdigest()
        irmodel.to_array(t, verify_checksum=True)
    _assert_same_arrays(_our_arrays(m), _arrays_by_tensor(ref_model))
    # the default, as the reference: no checksum entry
    irmodel.save(irmodel.loads(ref_model.SerializeToString()), path, save_as_external_data=True,
                 all_tensors_to_one_file=one_file, size_threshold=0)
    assert all(e.key != "checksum" for t in our_all_tensors(irmodel.load(path))
               for e in t.external_data)


def test_irmodel_save_refuses_checksum_without_external_data(tmp_path):
    m = irmodel.loads(_reference_model().SerializeToString())
    with pytest.raises(ValueError, match="save_as_external_data"):
        irmodel.save(m, str(tmp_path / "model.onnx"), checksum=True)
    assert os.listdir(tmp_path) == []


def test_verifying_a_tensor_without_checksum_fails(tmp_path):
    path = str(tmp_path / "model.onnx")
    onnx.save_model(_reference_model(), path, save_as_external_data=True, location="w.bin")
    m = irmodel.load(path)
    with pytest.raises(irmodel.ExternalDataError, match="no checksum"):
        irmodel.to_array(m.graph.initializer[0], verify_checksum=True)


def test_failed_data_write_leaves_no_partial_file(tmp_path, monkeypatch):
    path = str(tmp_path / "model.onnx")
    onnx.save_model(_reference_model(), path, save_as_external_data=True, location="w.bin")
    before = sorted(os.listdir(tmp_path)), (tmp_path / "w.bin").read_bytes()
    m = irmodel.load(path)
    calls = []

    def failing_stream(fh, view, hasher):
        calls.append(view.nbytes)
        fh.write(view[:10])
        raise OSError("disk full")

    monkeypatch.setattr(ew, "_stream", failing_stream)
    with pytest.raises(OSError, match="disk full"):
        irmodel.save(m, path, save_as_external_data=True, location="w.bin")
    assert calls
    assert (sorted(os.listdir(tmp_path)), (tmp_path / "w.bin").read_bytes()) == before


def test_data_files_are_streamed_in_bounded_slices(tmp_path, monkeypatch):
    """No write is larger than one slice (or one alignment gap): no whole-tensor bytes object."""
    import irmodel.io

    monkeypatch.setattr(ew, "_CHUNK", 1000)
    writes = []
    real_write = irmodel._files.atomic.AtomicFiles.write

    class Recorder:
        def __init__(self, fh):
            self._fh = fh

        def write(self, data):
            writes.append(memoryview(data).nbytes)
            return self._fh.write(data)

    def recording_write(self, path, write):
        if path.endswith(".data"):
            return real_write(self, path, lambda fh: write(Recorder(fh)))
        return real_write(self, path, write)

    monkeypatch.setattr(irmodel._files.atomic.AtomicFiles, "write", recording_write)
    m = irmodel.loads(_reference_model().SerializeToString())
    ew.save_with_external_data(m, str(tmp_path / "model.onnx"), size_threshold=0)
    assert max(writes) < ew.ALIGNMENT
    assert len(writes) > 20  # the 8000-byte tensor alone takes 8 slices
    _assert_same_arrays(_arrays_by_tensor(onnx.load(str(tmp_path / "model.onnx"))),
                        _arrays_by_tensor(_reference_model()))


# -- hostile external data: refused before the target is read --------------------------------

@pytest.fixture
def file_access(monkeypatch):
    """Every path handed to open/os.open/io.open and every fd handed to mmap, while active."""
    seen: list = []
    real_open, real_os_open, real_io_open, real_mmap = builtins.open, os.open, io.open, mmap.mmap

    def rec_open(file, *a, **k):
        seen.append(("open", file))
        return real_open(file, *a, **k)

    def rec_os_open(path, *a, **k):
        seen.append(("os.open", path))
        return real_os_open(path, *a, **k)

    def rec_io_open(file, *a, **k):
        seen.append(("io.open", file))
        return real_io_open(file, *a, **k)

    class RecordingMmap(real_mmap):  # a subclass: io.py checks isinstance(buf, mmap.mmap)
        def __new__(cls, fd, *a, **k):
            seen.append(("mmap", fd))
            return super().__new__(cls, fd, *a, **k)

    monkeypatch.setattr(builtins, "open", rec_open)
    monkeypatch.setattr(os, "open", rec_os_open)
    monkeypatch.setattr(io, "open", rec_io_open)
    monkeypatch.setattr(mmap, "mmap", RecordingMmap)
    return seen


SECRET = b"top secret, never to be read"


def _model_with_external(tmp_path, entries, name="victim"):
    """A model dir holding model.onnx whose one initializer has ``entries`` as external_data."""
    d = tmp_path / "model_dir"
    d.mkdir(exist_ok=True)
    t = onnx.TensorProto(name=name, data_type=onnx.TensorProto.UINT8, dims=[len(SECRET)])
    t.data_location = onnx.TensorProto.EXTERNAL
    for k, v in entries:
        t.external_data.add(key=k, value=v)
    graph = helper.make_graph([], "g", [], [], initializer=[t])
    path = d / "model.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    return d, str(path)


def _outside_secret(tmp_path):
    p = tmp_path / "outside" / "secret.bin"
    p.parent.mkdir(exist_ok=True)
    p.write_bytes(SECRET)
    return p


def _case_absolute(tmp_path):
    secret = _outside_secret(tmp_path)
    return [("location", str(secret))], "absolute", str(secret)


def _case_dotdot(tmp_path):
    secret = _outside_secret(tmp_path)
    return [("location", "../outside/secret.bin")], r"'\.\.'", str(secret)


def _case_dotdot_inside(tmp_path):
    _outside_secret(tmp_path)  # there, as in the other cases, though this one points inside
    (tmp_path / "model_dir" / "sub").mkdir(parents=True)
    (tmp_path / "model_dir" / "data.bin").write_bytes(SECRET)
    return [("location", "sub/../data.bin")], r"'\.\.'", str(tmp_path / "model_dir" / "data.bin")


def _case_symlink_final(tmp_path):
    secret = _outside_secret(tmp_path)
    (tmp_path / "model_dir").mkdir(exist_ok=True)
    os.symlink(secret, tmp_path / "model_dir" / "data.bin")
    return [("location", "data.bin")], "symlink", str(secret)


def _case_symlink_final_inside(tmp_path):
    d = tmp_path / "model_dir"
    d.mkdir(exist_ok=True)
    (d / "real.bin").write_bytes(SECRET)
    os.symlink("real.bin", d / "data.bin")
    return [("location", "data.bin")], "symlink", str(d / "real.bin")


def _case_symlink_parent(tmp_path):
    secret = _outside_secret(tmp_path)
    (tmp_path / "model_dir").mkdir(exist_ok=True)
    os.symlink(secret.parent, tmp_path / "model_dir" / "sub")
    return [("location", "sub/secret.bin")], "symlink", str(secret)


def _case_hardlink(tmp_path):
    secret = _outside_secret(tmp_path)
    (tmp_path / "model_dir").mkdir(exist_ok=True)
    os.link(secret, tmp_path / "model_dir" / "data.bin")
    return [("location", "data.bin")], "hard links", str(tmp_path / "model_dir" / "data.bin")


def _case_fifo(tmp_path):
    d = tmp_path / "model_dir"
    d.mkdir(exist_ok=True)
    os.mkfifo(d / "data.bin")  # opening it for reading would block
    return [("location", "data.bin")], "not a regular file", str(d / "data.bin")


def _local_data(tmp_path):
    d = tmp_path / "model_dir"
    d.mkdir(exist_ok=True)
    (d / "data.bin").write_bytes(SECRET)
    return str(d / "data.bin")


def _numeric_case(key, value, match):
    def case(tmp_path):
        target = _local_data(tmp_path)
        return [("location", "data.bin"), (key, value)], match, target
    case.__name__ = f"_case_{key}_{value!r}"
    return case


def _case_unknown_key(tmp_path):
    target = _local_data(tmp_path)
    return [("location", "data.bin"), ("__class__", "x")], "unknown key", target


def _case_duplicate_location(tmp_path):
    target = _local_data(tmp_path)
    return [("location", "data.bin"), ("location", "other.bin")], "twice", target


def _case_empty_location(tmp_path):
    target = _local_data(tmp_path)
    return [("offset", "0")], "empty", target


HOSTILE = {
    "absolute": _case_absolute,
    "dotdot": _case_dotdot,
    "dotdot-staying-inside": _case_dotdot_inside,
    "symlink-final-outside": _case_symlink_final,
    "symlink-final-inside": _case_symlink_final_inside,
    "symlink-parent-outside": _case_symlink_parent,
    "hardlink": _case_hardlink,
    "fifo": _case_fifo,
    "offset-negative": _numeric_case("offset", "-1", "non-negative"),
    "length-negative": _numeric_case("length", "-5", "non-negative"),
    "offset-non-numeric": _numeric_case("offset", "12abc", "non-negative"),
    "offset-with-sign": _numeric_case("offset", "+0", "non-negative"),
    "offset-underscore": _numeric_case("offset", "1_0", "non-negative"),
    "offset-non-ascii-digits": _numeric_case("offset", "\uff11", "non-negative"),
    "length-huge": _numeric_case("length", "9" * 30, "non-negative"),
    "offset-past-end": _numeric_case("offset", str(len(SECRET) + 1), "past the end"),
    "length-past-end": _numeric_case("length", str(len(SECRET) + 1), "past the end"),
    "unknown-key": _case_unknown_key,
    "duplicate-key": _case_duplicate_location,
    "no-location": _case_empty_location,
}


def _assert_target_untouched(seen: list, target: str) -> None:
    names = [os.fspath(p) for kind, p in seen if kind != "mmap"]
    assert not [p for p in names if os.path.basename(p) in (os.path.basename(target), "data.bin")], seen
    assert not [p for kind, p in seen if kind == "mmap"], seen  # nothing mapped at all


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_external_data_is_refused_by_to_array_before_reading(tmp_path, file_access, case):
    entries, match, target = HOSTILE[case](tmp_path)
    _, path = _model_with_external(tmp_path, entries)
    m = irmodel.load(path)
    del file_access[:]
    with pytest.raises(irmodel.ExternalDataError, match=match) as err:
        irmodel.to_array(m.graph.initializer[0])
    assert "'victim'" in str(err.value)
    for key, value in entries:
        if key == "location":
            assert repr(value) in str(err.value)
    _assert_target_untouched(file_access, target)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_external_data_is_refused_by_load_external_data_for_model(tmp_path, file_access, case):
    entries, match, target = HOSTILE[case](tmp_path)
    d, path = _model_with_external(tmp_path, entries)
    m = irmodel.load(path, load_external_data=False)
    del file_access[:]
    with pytest.raises(irmodel.ExternalDataError, match=match):
        irmodel.load_external_data_for_model(m, str(d))
    _assert_target_untouched(file_access, target)
    assert not m.graph.initializer[0].HasField("raw_data")


def test_an_enormous_location_is_refused_with_a_short_message(tmp_path, file_access):
    _local_data(tmp_path)
    _, path = _model_with_external(tmp_path, [("location", "data.bin" + "/x" * 200_000)])
    m = irmodel.load(path)
    del file_access[:]
    with pytest.raises(irmodel.ExternalDataError, match="characters long") as err:
        irmodel.to_array(m.graph.initializer[0])
    assert len(str(err.value)) < 1000
    _assert_target_untouched(file_access, "data.bin")


def test_a_symlinked_directory_is_refused_even_inside_the_model_directory(tmp_path):
    """Files are opened component by component without following any symlink: a link
    that points inside today can be swapped for one that points outside tomorrow."""
    d = tmp_path / "model_dir"
    (d / "real").mkdir(parents=True)
    (d / "real" / "data.bin").write_bytes(SECRET)
    os.symlink("real", d / "link")
    _, path = _model_with_external(tmp_path, [("location", "link/data.bin"), ("basepath", "/etc")])
    with pytest.raises(irmodel.ExternalDataError, match="symlink"):
        irmodel.to_array(irmodel.load(path).graph.initializer[0])
    _, path = _model_with_external(tmp_path, [("location", "real/data.bin"), ("basepath", "/etc")])
    assert irmodel.to_array(irmodel.load(path).graph.initializer[0]).tobytes() == SECRET


def test_the_reference_refuses_what_it_documents(tmp_path):
    """Our refusals include the reference's: here the hard-link and outside-symlink cases."""
    for case in ("hardlink", "symlink-parent-outside", "absolute"):
        sub = tmp_path / case
        sub.mkdir()
        entries, _, _ = HOSTILE[case](sub)
        _, path = _model_with_external(sub, entries)
        with pytest.raises((onnx.checker.ValidationError, ValueError)):
            onnx.load(path)
        with pytest.raises(irmodel.ExternalDataError):
            irmodel.to_array(irmodel.load(path).graph.initializer[0])


# -- hostile locations on save ---------------------------------------------------------------

def _model_to_save():
    return irmodel.loads(_reference_model().SerializeToString())


def test_save_refuses_absolute_and_dotdot_locations(tmp_path):
    (tmp_path / "out").mkdir()
    for location in (str(tmp_path / "evil.bin"), "../evil.bin", "a/../../evil.bin", "C:evil.bin"):
        with pytest.raises(irmodel.ExternalDataError, match="absolute|'\\.\\.'") as err:
            irmodel.save(_model_to_save(), str(tmp_path / "out" / "m.onnx"),
                         save_as_external_data=True, location=location)
        assert repr(location) in str(err.value)
    assert sorted(os.listdir(tmp_path)) == ["out"] and os.listdir(tmp_path / "out") == []


def test_save_refuses_to_write_through_a_symlinked_directory(tmp_path):
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    os.symlink(outside, out / "sub")
    with pytest.raises(irmodel.ExternalDataError, match="outside the model directory"):
        irmodel.save(_model_to_save(), str(out / "m.onnx"), save_as_external_data=True,
                     location="sub/w.bin")
    assert os.listdir(outside) == [] and sorted(os.listdir(out)) == ["sub"]


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_save_refuses_to_replace_a_linked_data_file(tmp_path, kind):
    out = tmp_path / "out"
    out.mkdir()
    secret = _outside_secret(tmp_path)
    if kind == "symlink":
        os.symlink(secret, out / "w.bin")
    else:
        os.link(secret, out / "w.bin")
    with pytest.raises(irmodel.ExternalDataError, match="'big'.*'w.bin'") as err:
        irmodel.save(_model_to_save(), str(out / "m.onnx"), save_as_external_data=True,
                     location="w.bin")
    assert kind.replace("hardlink", "hard link") in str(err.value)
    assert secret.read_bytes() == SECRET
    assert not (out / "m.onnx").exists()


def test_save_refuses_a_data_file_that_is_the_model_file(tmp_path):
    with pytest.raises(irmodel.ExternalDataError, match="overwrite the model"):
        irmodel.save(_model_to_save(), str(tmp_path / "m.onnx"), save_as_external_data=True,
                     location="m.onnx")
    assert os.listdir(tmp_path) == []


def test_per_tensor_files_never_use_unsafe_tensor_names(tmp_path):
    m = irmodel.loads(_reference_model().SerializeToString())
    m.graph.initializer[0].name = ".."
    m.graph.node[1].input[0] = ".."
    m.graph.node[1].input[1] = ".."
    irmodel.save(m, str(tmp_path / "m.onnx"), save_as_external_data=True,
                 all_tensors_to_one_file=False, size_threshold=0)
    names = os.listdir(tmp_path)
    assert ".." not in names and "weird:name/0" not in names and "mid" in names
    onnx.checker.check_model(str(tmp_path / "m.onnx"))


# -- progress, protected files, copying (what `irmodel convert` builds on) ---------------------

def test_saving_reports_progress_up_to_the_total_of_the_data_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(ew, "_CHUNK", 1000)
    calls = []
    m = irmodel.loads(_reference_model().SerializeToString())
    ew.save_with_external_data(m, str(tmp_path / "m.onnx"), size_threshold=0, checksum=True,
                               progress=lambda done, total: calls.append((done, total)))
    saved = irmodel.load(str(tmp_path / "m.onnx"))
    total = sum(ed.read_external_data(t).nbytes for t in ed.external_tensors(saved))
    assert calls[0] == (0, total) and calls[-1] == (total, total) and len(calls) > 20
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    _assert_same_arrays(_our_arrays(saved), _arrays_by_tensor(_reference_model()))


def test_save_refuses_a_data_file_that_would_replace_a_protected_file(tmp_path):
    keep = tmp_path / "in.onnx"
    keep.write_bytes(b"the input")
    with pytest.raises(irmodel.ExternalDataError, match="must be kept"):
        ew.save_with_external_data(_model_to_save(), str(tmp_path / "m.onnx"), location="in.onnx",
                                   protect=[str(keep)])
    assert keep.read_bytes() == b"the input" and sorted(os.listdir(tmp_path)) == ["in.onnx"]


def test_copy_external_data_copies_whole_files_and_leaves_sources_alone(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "sub").mkdir(parents=True)
    dst.mkdir()
    onnx.save_model(_reference_model(), str(src / "m.onnx"), save_as_external_data=True,
                    location="sub/w.bin", size_threshold=0)
    m = irmodel.load(str(src / "m.onnx"), load_external_data=False)
    calls = []
    n = ew.copy_external_data(m, str(src), str(dst), progress=lambda d, t: calls.append((d, t)))
    data = (src / "sub" / "w.bin").read_bytes()
    assert n == len(data) and (dst / "sub" / "w.bin").read_bytes() == data and calls[-1] == (n, n)
    before = os.stat(src / "sub" / "w.bin")
    assert ew.copy_external_data(m, str(src), str(src)) == 0  # the same files: nothing to do
    assert os.stat(src / "sub" / "w.bin").st_mtime_ns == before.st_mtime_ns
    with pytest.raises(irmodel.ExternalDataError, match="overwrite the model"):
        ew.copy_external_data(m, str(src), str(dst), model_path=str(dst / "sub" / "w.bin"))
    (src / "sub" / "w.bin").write_bytes(data[:10])
    with pytest.raises(irmodel.ExternalDataError, match="past the end"):
        ew.copy_external_data(m, str(src), str(tmp_path / "elsewhere"))
    assert not (tmp_path / "elsewhere").exists()


def test_location_problem_says_what_check_location_refuses():
    assert ed.location_problem("w.bin") is None and ed.location_problem("sub/w.bin") is None
    for bad in ("", "/abs", "../up", "a/../../b", "dir/", "C:\\w", "a\0b"):
        problem = ed.location_problem(bad)
        assert problem
        with pytest.raises(irmodel.ExternalDataError) as err:
            ed.check_location(bad, "t")
        assert problem in str(err.value)
