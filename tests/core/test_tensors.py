"""Differential: to_array/from_array against onnx.numpy_helper, on the corpus and on generated tensors."""

from __future__ import annotations

import subprocess
import sys
import warnings

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper
from onnx.external_data_helper import _get_all_tensors as ref_all_tensors

import irmodel
from irmodel._dtypes import rows as dtypes
from irmodel import tensors
from irmodel._files.external_data import _get_all_tensors as our_all_tensors

ALL_CODES = sorted(dtypes.ELEM_TYPES)
NUMERIC_CODES = [c for c in ALL_CODES if c != onnx.TensorProto.STRING]
# Per type (the tests are parametrized over all 27 numeric types, so every one is hit).
HYPO = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_same_array(ours, ref, what=""):
    """Same dtype, shape and bits.

    Only for float NaNs is a payload difference tolerated: the reference reads typed
    fields through Python floats, which may quieten a signalling NaN; we read the bits.
    """
    assert ours.dtype == ref.dtype, what
    assert ours.shape == ref.shape, what
    if ref.dtype == object:
        assert ours.tolist() == ref.tolist(), what
        return
    a, b = np.ascontiguousarray(ours), np.ascontiguousarray(ref)
    if a.tobytes() == b.tobytes():
        return
    assert ref.dtype.kind in "fc" or ref.dtype in (np.dtype(ml_dtypes.bfloat16),), f"{what}: bits differ"
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    assert np.array_equal(nan_a, nan_b), f"{what}: NaN positions differ"
    assert a[~nan_a].tobytes() == b[~nan_b].tobytes(), f"{what}: non-NaN bits differ"


def _compare_tensor(ref_tensor, our_tensor, what: str) -> None:
    ref = numpy_helper.to_array(ref_tensor)
    ours = irmodel.to_array(our_tensor)
    assert_same_array(ours, ref, what)
    # from_array of the same array builds the reference's bytes
    name = ref_tensor.name or None
    assert irmodel.dumps(irmodel.from_array(ref, name)) == \
        numpy_helper.from_array(ref, name).SerializeToString(), what


# -- the corpus ----------------------------------------------------------------------------

def test_to_array_matches_reference_on_every_pb_tensor(data_corpus):
    seen = 0
    for path, type_name, data in data_corpus:
        if type_name != "TensorProto":
            continue
        ref = onnx.TensorProto()
        ref.ParseFromString(data)
        _compare_tensor(ref, irmodel.loads(data, "TensorProto"), path)
        seen += 1
    assert seen > 300


def _model_tensor_pairs(data: bytes):
    ref = onnx.ModelProto()
    ref.ParseFromString(data)
    ref_list = list(ref_all_tensors(ref))
    our_list = list(our_all_tensors(irmodel.loads(data)))
    assert [t.name for t in our_list] == [t.name for t in ref_list]
    return zip(ref_list, our_list)


def test_to_array_matches_reference_on_every_model_tensor(node_corpus, data_corpus):
    """Initializers and tensor attributes (also in subgraphs and functions) of every model."""
    models = [(n, d) for n, d in node_corpus]
    models += [(p, d) for p, t, d in data_corpus if t == "ModelProto"]
    seen = set()
    count = 0
    for name, data in models:
        for ref_t, our_t in _model_tensor_pairs(data):
            _compare_tensor(ref_t, our_t, f"{name}:{ref_t.name}")
            seen.add((ref_t.data_type, ref_t.HasField("raw_data")))
            count += 1
    assert count > 4000
    # both storage forms of the common types are exercised by the corpus
    assert {(1, True), (1, False), (7, True), (7, False), (8, False)} <= seen


def test_to_array_over_the_mapped_file_matches_reference(corpus_dir, node_corpus):
    """The mmap path: arrays straight over the mapped file equal the reference's."""
    import os

    for name, data in node_corpus[:400]:
        m = irmodel.load(os.path.join(corpus_dir, f"{name}.onnx"))
        ref = onnx.ModelProto()
        ref.ParseFromString(data)
        for ref_t, our_t in zip(ref_all_tensors(ref), our_all_tensors(m)):
            assert_same_array(irmodel.to_array(our_t), numpy_helper.to_array(ref_t), name)


# -- generated tensors, every type -----------------------------------------------------------

def _np_dtype(code):
    return helper.tensor_dtype_to_np_dtype(code)


shapes = st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple)


@st.composite
def arrays(draw, code):
    shape = draw(shapes)
    dt = _np_dtype(code)
    n = int(np.prod(shape, dtype=np.int64))
    raw = draw(st.binary(min_size=n * dt.itemsize, max_size=n * dt.itemsize))
    arr = np.frombuffer(raw, dtype=dt).reshape(shape).copy()
    if code == onnx.TensorProto.BOOL:
        arr = (arr.view(np.uint8) & 1).view(np.bool_)  # a bool array holds 0/1 bytes
    return arr


@pytest.mark.parametrize("code", NUMERIC_CODES)
@HYPO
@given(data=st.data(), name=st.sampled_from([None, "", "w", "weight/0"]))
def test_from_array_bytes_equal_reference_for_every_type(code, data, name):
    arr = data.draw(arrays(code))
    ours = irmodel.from_array(arr, name)
    ref = numpy_helper.from_array(arr, name)
    assert ours.data_type == code
    assert irmodel.dumps(ours) == ref.SerializeToString()


@pytest.mark.parametrize("code", NUMERIC_CODES)
@HYPO
@given(data=st.data())
def test_raw_round_trip_equals_reference_for_every_type(code, data):
    arr = data.draw(arrays(code))
    blob = numpy_helper.from_array(arr, "x").SerializeToString()
    ref_t = onnx.TensorProto()
    ref_t.ParseFromString(blob)
    ref = numpy_helper.to_array(ref_t)
    ours = irmodel.to_array(irmodel.loads(blob, "TensorProto"))
    assert_same_array(ours, ref, helper.tensor_dtype_to_string(code))
    # and our own round trip needs no reference at all
    assert_same_array(irmodel.to_array(irmodel.from_array(arr)), ref)


def _ref_typed_tensor(code, arr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float8 casts of NaN/inf warn
        # flattened: the reference's float8e8m0 cast fails on 0-d arrays
        return helper.make_tensor("t", code, arr.shape, arr.reshape(-1), raw=False)


@pytest.mark.parametrize("code", NUMERIC_CODES)
@HYPO
@given(data=st.data())
def test_typed_field_storage_matches_reference_for_every_type(code, data):
    """Tensors the reference builds with make_tensor(raw=False): int32_data, float_data, ..."""
    arr = data.draw(arrays(code))
    ref_t = _ref_typed_tensor(code, arr)
    assert not ref_t.HasField("raw_data")
    blob = ref_t.SerializeToString()
    assert_same_array(irmodel.to_array(irmodel.loads(blob, "TensorProto")),
                      numpy_helper.to_array(ref_t), helper.tensor_dtype_to_string(code))


int32s = st.integers(-(2 ** 31), 2 ** 31 - 1)
int64s = st.integers(-(2 ** 63), 2 ** 63 - 1)
uint64s = st.integers(0, 2 ** 64 - 1)
floats32 = st.floats(width=32, allow_nan=True, allow_infinity=True)


@st.composite
def typed_fields(draw, code):
    """Any contents of the type's storage field, out-of-range values included."""
    shape = draw(shapes)
    n = int(np.prod(shape, dtype=np.int64))
    field = helper.tensor_dtype_to_field(code)
    et = dtypes.ELEM_TYPES[code]
    count = {dtypes.C64: 2 * n, dtypes.C128: 2 * n, dtypes.NIB4: (n + 1) // 2,
             dtypes.NIB2: (n + 3) // 4}.get(et.kind, n)
    element = {"float_data": floats32, "double_data": st.floats(), "int32_data": int32s,
               "int64_data": int64s, "uint64_data": uint64s}[field]
    values = draw(st.lists(element, min_size=count, max_size=count))
    t = onnx.TensorProto()
    t.name = "t"
    t.data_type = code
    t.dims.extend(shape)
    getattr(t, field).extend(values)
    return t


@pytest.mark.parametrize("code", NUMERIC_CODES)
@HYPO
@given(data=st.data())
def test_arbitrary_typed_field_contents_decode_like_reference(code, data):
    ref_t = data.draw(typed_fields(code))
    blob = ref_t.SerializeToString()
    assert_same_array(irmodel.to_array(irmodel.loads(blob, "TensorProto")),
                      numpy_helper.to_array(ref_t), helper.tensor_dtype_to_string(code))


@HYPO
@given(st.lists(st.one_of(st.text(max_size=8), st.binary(max_size=8)), max_size=6))
def test_strings_match_reference(values):
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    assert irmodel.dumps(irmodel.from_array(arr, "s")) == \
        numpy_helper.from_array(arr, "s").SerializeToString()
    ref_t = helper.make_tensor("s", onnx.TensorProto.STRING, [len(values)],
                               [v if isinstance(v, bytes) else v.encode() for v in values])
    data = ref_t.SerializeToString()
    try:
        ref = numpy_helper.to_array(ref_t)
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            irmodel.to_array(irmodel.loads(data, "TensorProto"))
        return
    assert_same_array(irmodel.to_array(irmodel.loads(data, "TensorProto")), ref)


def test_unicode_array_and_2d_strings_match_reference():
    arr = np.array([["a", "bé\x00"], ["", "z"]])
    assert irmodel.dumps(irmodel.from_array(arr)) == numpy_helper.from_array(arr).SerializeToString()
    data = numpy_helper.from_array(arr).SerializeToString()
    assert_same_array(irmodel.to_array(irmodel.loads(data, "TensorProto")),
                      numpy_helper.to_array(onnx.load_tensor_from_string(data)))


def test_every_one_of_the_28_types_is_covered():
    assert len(ALL_CODES) == 28
    assert set(ALL_CODES) == set(helper.get_all_tensor_dtypes())
    for code in NUMERIC_CODES:
        assert dtypes.np_dtype(code) == _np_dtype(code)
        assert dtypes.ELEM_TYPES[code].field == helper.tensor_dtype_to_field(code)
        assert dtypes.onnx_type_of(_np_dtype(code)) == code


# -- encodings protobuf allows: several packed chunks, unpacked elements ----------------------

@pytest.mark.parametrize("code,values", [
    (onnx.TensorProto.INT64, [[-1, 2 ** 62, 0], [7, -(2 ** 63)]]),
    (onnx.TensorProto.FLOAT, [[1.5, -0.0], [float("inf"), 3.25]]),
    (onnx.TensorProto.FLOAT16, [[0x3C00, 0x7E00], [0xFFFF, 0x12345]]),
    (onnx.TensorProto.UINT64, [[2 ** 64 - 1], [0, 300]]),
])
def test_field_split_over_several_packed_chunks(code, values):
    parts = []
    for vals in values:
        t = onnx.TensorProto()
        getattr(t, helper.tensor_dtype_to_field(code)).extend(vals)
        parts.append(t.SerializeToString())
    head = onnx.TensorProto(data_type=code, dims=[sum(map(len, values))]).SerializeToString()
    data = head + b"".join(parts)  # protobuf concatenation = merge: repeated fields append
    ref_t = onnx.load_tensor_from_string(data)
    ours = irmodel.loads(data, "TensorProto")
    assert len(ours._raw_chunks(helper.tensor_dtype_to_field(code))) == 2
    assert_same_array(irmodel.to_array(ours), numpy_helper.to_array(ref_t))


def test_unpacked_varint_elements_decode_like_reference():
    # int64_data (field 7) written unpacked, one tag per element, with negative values
    from wirefmt.varint import encode_varint

    body = onnx.TensorProto(data_type=onnx.TensorProto.INT64, dims=[3]).SerializeToString()
    for v in (-5, 2 ** 40, 1):
        body += b"\x38" + encode_varint(v & (2 ** 64 - 1))
    assert_same_array(irmodel.to_array(irmodel.loads(body, "TensorProto")),
                      numpy_helper.to_array(onnx.load_tensor_from_string(body)))


def test_malformed_packed_data_raises_decode_error_not_garbage():
    # int64_data packed with a truncated varint (continuation bit on the last byte)
    body = onnx.TensorProto(data_type=onnx.TensorProto.INT64, dims=[1]).SerializeToString()
    body += b"\x3a\x02\x81\x81"
    with pytest.raises(irmodel.DecodeError):
        irmodel.to_array(irmodel.loads(body, "TensorProto"))
    # float_data packed with 5 bytes
    body = onnx.TensorProto(data_type=onnx.TensorProto.FLOAT, dims=[1]).SerializeToString()
    body += b"\x22\x05" + bytes(5)
    with pytest.raises(irmodel.DecodeError):
        irmodel.to_array(irmodel.loads(body, "TensorProto"))


def test_long_varints_in_a_large_int64_field_match_reference():
    rng = np.random.default_rng(7)
    vals = rng.integers(-(2 ** 63), 2 ** 63 - 1, size=50_000, dtype=np.int64)
    vals[::3] = rng.integers(0, 300, size=vals[::3].size)
    ref_t = helper.make_tensor("big", onnx.TensorProto.INT64, vals.shape, vals)
    data = ref_t.SerializeToString()
    assert_same_array(irmodel.to_array(irmodel.loads(data, "TensorProto")), numpy_helper.to_array(ref_t))


def test_varint_decoder_works_in_blocks(monkeypatch):
    monkeypatch.setattr(tensors, "_VARINT_BLOCK", 7)
    vals = list(range(-20, 20)) + [2 ** 62, -(2 ** 62)]
    ref_t = helper.make_tensor("v", onnx.TensorProto.INT64, [len(vals)], vals)
    data = ref_t.SerializeToString()
    assert_same_array(irmodel.to_array(irmodel.loads(data, "TensorProto")), numpy_helper.to_array(ref_t))


# -- zero copy ---------------------------------------------------------------------------

def _tensor_file(tmp_path, name: str, arr):
    path = tmp_path / "t.pb"
    path.write_bytes(numpy_helper.from_array(arr, name).SerializeToString())
    return irmodel.load(str(path), type_name="TensorProto")


def test_aligned_raw_data_is_a_read_only_view_of_the_mapping(tmp_path):
    arr = np.arange(16, dtype=np.float32)
    # The data starts after dims (2 bytes), data_type (2), name (2 + len) and the raw_data
    # tag and length (2), from a page-aligned mapping.
    t = _tensor_file(tmp_path, "a", arr)  # offset 9: unaligned for float32
    unaligned = irmodel.to_array(t)
    t2 = _tensor_file(tmp_path, "abcd", arr)  # offset 12: aligned
    aligned = irmodel.to_array(t2)
    mapped = np.frombuffer(t2._buf[1], dtype=np.uint8)
    assert np.shares_memory(aligned, mapped)
    assert not aligned.flags.writeable
    assert not np.shares_memory(unaligned, np.frombuffer(t._buf[1], dtype=np.uint8))
    assert unaligned.flags.aligned and not unaligned.flags.writeable
    np.testing.assert_array_equal(aligned, arr)
    np.testing.assert_array_equal(unaligned, arr)


def test_packed_float_data_is_viewed_in_place(tmp_path):
    ref_t = helper.make_tensor("abc", onnx.TensorProto.FLOAT, [64], np.arange(64, dtype=np.float32))
    path = tmp_path / "f.pb"
    path.write_bytes(ref_t.SerializeToString())
    t = irmodel.load(str(path), type_name="TensorProto")
    out = irmodel.to_array(t)
    assert "float_data" not in t.__dict__  # no Python list was built
    np.testing.assert_array_equal(out, numpy_helper.to_array(ref_t))
    assert out.flags.aligned


# -- platforms and packages ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex64, np.uint16])
def test_big_endian_host_path_swaps_raw_bytes(monkeypatch, dtype):
    """On a big-endian host raw_data (always little-endian) must be byte-swapped."""
    arr = (np.arange(6) * 3 + 1).astype(dtype)
    t = irmodel.TensorProto(dims=[6], data_type=dtypes.onnx_type_of(arr.dtype),
                            raw_data=arr.byteswap().tobytes())
    monkeypatch.setattr(tensors, "_LITTLE", False)
    np.testing.assert_array_equal(irmodel.to_array(t), arr)


def test_from_array_refuses_non_native_byte_order_like_reference():
    arr = np.arange(3, dtype=">f4")
    with pytest.raises(ValueError) as ref_err:
        numpy_helper.from_array(arr)
    with pytest.raises(ValueError) as our_err:
        irmodel.from_array(arr)
    assert str(our_err.value) == str(ref_err.value)


def test_without_ml_dtypes_the_types_that_need_it_say_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # makes `import ml_dtypes` fail
    monkeypatch.setattr(dtypes, "_np_cache", {})
    monkeypatch.setattr(dtypes, "_from_np_cache", {})
    monkeypatch.setattr(dtypes, "_from_np_complete", False)
    bf = irmodel.TensorProto(name="bf", dims=[1], data_type=irmodel.TensorProto.BFLOAT16,
                             raw_data=b"\x80\x3f")
    with pytest.raises(ImportError, match=r"ml_dtypes.*") as err:
        irmodel.to_array(bf)
    assert "BFLOAT16" in str(err.value) and "'bf'" in str(err.value)
    # native types still work, both ways
    f = irmodel.from_array(np.arange(3, dtype=np.float32), "f")
    np.testing.assert_array_equal(irmodel.to_array(f), np.arange(3, dtype=np.float32))


def test_import_irmodel_does_not_import_numpy():
    code = "import sys, irmodel; irmodel.to_array; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- errors name the tensor ------------------------------------------------------------------

def test_errors_name_the_tensor():
    t = irmodel.TensorProto(name="w", dims=[3], data_type=1, raw_data=b"\0" * 8)
    with pytest.raises(ValueError, match="'w'"):
        irmodel.to_array(t)
    t = irmodel.TensorProto(name="odd", dims=[1], data_type=1, raw_data=b"\0" * 5)
    with pytest.raises(ValueError, match="'odd'"):
        irmodel.to_array(t)
    t = irmodel.TensorProto(name="u", dims=[1])
    with pytest.raises(irmodel.ValidationError, match="UNDEFINED"):  # the file's fault, not a TypeError
        irmodel.to_array(t)
    t = irmodel.TensorProto(name="neg", dims=[-1], data_type=1, raw_data=b"\0" * 4)
    with pytest.raises(ValueError, match="negative"):
        irmodel.to_array(t)
    seg = irmodel.TensorProto(name="s", dims=[1], data_type=1, raw_data=b"\0" * 4)
    seg.segment.begin = 0
    with pytest.raises(ValueError, match="segments"):
        irmodel.to_array(seg)
    short4 = irmodel.TensorProto(name="i4", dims=[5], data_type=irmodel.TensorProto.INT4,
                                 raw_data=b"\0\0")
    with pytest.raises(ValueError, match="'i4'"):
        irmodel.to_array(short4)


def test_sub_byte_raw_data_with_extra_bytes_is_cut_like_reference():
    for code, raw in ((onnx.TensorProto.INT4, b"\x21\x43\x65"), (onnx.TensorProto.UINT2, b"\xe4\xff\xff"),
                      (onnx.TensorProto.FLOAT6E2M3, b"\xff" * 5)):
        ref_t = onnx.TensorProto(name="x", data_type=code, dims=[3], raw_data=raw)
        data = ref_t.SerializeToString()
        assert_same_array(irmodel.to_array(irmodel.loads(data, "TensorProto")),
                          numpy_helper.to_array(ref_t))
