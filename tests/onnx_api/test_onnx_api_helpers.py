"""numpy_helper, helper's printing and dtype functions, external_data_helper and
model_container, against the reference onnx: the same bytes, text, arrays and errors."""

from __future__ import annotations

import os
import warnings

import ml_dtypes
import numpy as np
import onnx
import onnx.external_data_helper
import onnx.numpy_helper
import pytest
from hypothesis import given, settings, strategies as st

import irmodel
from irmodel import external_data_helper, helper, model_container, numpy_helper


def _ours(msg):
    """The irmodel message with the bytes of a reference (protobuf) message."""
    return irmodel.loads(msg.SerializeToString(), type(msg).__name__)


@pytest.fixture(scope="module")
def node_models(node_corpus):
    """Every 5th model of the reference's node tests (the session's corpus), as protobuf messages."""
    import onnx

    return [onnx.ModelProto.FromString(data) for _name, data in node_corpus[::5]]


# -- helper ---------------------------------------------------------------------------------

def test_printable_graph_node_and_attribute_are_onnxs_text(node_models):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for model in node_models:
            ours = _ours(model)
            assert helper.printable_graph(ours.graph) == onnx.helper.printable_graph(model.graph), model.graph.name
            for node, ref in zip(ours.graph.node, model.graph.node):
                assert helper.printable_node(node, "  ") == onnx.helper.printable_node(ref, "  ")
                for attr, ref_attr in zip(node.attribute, ref.attribute):
                    assert helper.printable_attribute(attr) == onnx.helper.printable_attribute(ref_attr)
            for vi, ref in zip(ours.graph.input, model.graph.input):
                assert helper.printable_value_info(vi) == onnx.helper.printable_value_info(ref)


def test_printable_attribute_of_type_protos_is_onnxs():
    tp = onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, ["N", 3])
    for ref in (onnx.helper.make_attribute("t", tp), onnx.helper.make_attribute("ts", [tp, tp])):
        assert helper.printable_attribute(_ours(ref)) == onnx.helper.printable_attribute(ref)


def test_printable_graph_with_initializers_and_optional_inputs():
    ref_graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [onnx.helper.make_tensor_value_info("x", 1, ["N", 3]), onnx.helper.make_tensor_value_info("w", 1, [3])],
        [onnx.helper.make_tensor_value_info("y", 1, None)],
        [onnx.numpy_helper.from_array(np.ones(3, np.float32), "w"),
         onnx.numpy_helper.from_array(np.ones((), np.int64), "extra")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert helper.printable_graph(_ours(ref_graph)) == onnx.helper.printable_graph(ref_graph)
        assert helper.printable_graph(_ours(ref_graph), "  ") == onnx.helper.printable_graph(ref_graph, "  ")


def _without_doc_strings(data):
    if isinstance(data, dict):
        return {k: _without_doc_strings(v) for k, v in data.items() if k != "doc_string"}
    if isinstance(data, list):
        return [_without_doc_strings(v) for v in data]
    return data


def test_strip_doc_string_clears_every_doc_string(node_models):
    # onnx's own strip_doc_string fails with the pinned protobuf (FieldDescriptor.label is
    # gone), so the expected model is made by protobuf's JSON form without the doc strings.
    from google.protobuf import json_format

    for model in node_models[:50]:
        ref = onnx.ModelProto.FromString(model.SerializeToString())
        ref.doc_string = "top"
        ref.graph.doc_string = "graph"
        ref.graph.node[0].doc_string = "node"
        ours = _ours(ref)
        expected = json_format.ParseDict(
            _without_doc_strings(json_format.MessageToDict(ref, preserving_proto_field_name=True)), onnx.ModelProto())
        helper.strip_doc_string(ours)
        assert ours.SerializeToString() == expected.SerializeToString()
    with pytest.raises(TypeError):
        helper.strip_doc_string("not a message")


def test_dtype_mappings_are_onnxs():
    assert list(helper.get_all_tensor_dtypes()) == sorted(onnx.helper.get_all_tensor_dtypes(),
                                                         key=list(helper.get_all_tensor_dtypes()).index)
    assert set(helper.get_all_tensor_dtypes()) == set(onnx.helper.get_all_tensor_dtypes())
    for code in onnx.helper.get_all_tensor_dtypes():
        assert helper.tensor_dtype_to_np_dtype(code) == onnx.helper.tensor_dtype_to_np_dtype(code)
        assert helper.tensor_dtype_to_storage_tensor_dtype(code) == onnx.helper.tensor_dtype_to_storage_tensor_dtype(code)
        assert helper.tensor_dtype_to_string(code) == onnx.helper.tensor_dtype_to_string(code)
        assert helper.tensor_dtype_to_field(code) == onnx.helper.tensor_dtype_to_field(code)
        if code != onnx.TensorProto.STRING:
            dt = onnx.helper.tensor_dtype_to_np_dtype(code)
            assert helper.np_dtype_to_tensor_dtype(dt) == onnx.helper.np_dtype_to_tensor_dtype(dt)
    for bad in (0, 99, -1):
        with pytest.raises(KeyError):
            helper.tensor_dtype_to_string(bad)
        with pytest.raises(KeyError):
            helper.tensor_dtype_to_np_dtype(bad)
    with pytest.raises(ValueError):
        helper.np_dtype_to_tensor_dtype(np.dtype([("a", np.int8)]))


# -- numpy_helper ---------------------------------------------------------------------------

VALUES = [
    [np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros(0, np.int64)],
    [[np.ones(2, np.int32)], [np.array([1.5])]],
    [{1: np.array([1.0]), 2: np.array([2.0])}],
    [],
]


@pytest.mark.parametrize("value", VALUES, ids=["tensors", "sequences", "maps", "empty"])
def test_from_list_gives_onnxs_bytes_and_to_list_reads_it_back(value):
    ref = onnx.numpy_helper.from_list(value, "s")
    ours = numpy_helper.from_list(value, "s")
    assert ours.SerializeToString() == ref.SerializeToString()
    back = numpy_helper.to_list(_ours(ref))
    expected = onnx.numpy_helper.to_list(ref)
    assert repr(back) == repr(expected)


@pytest.mark.parametrize("value", [{np.int64(1): np.array([1], np.int64), np.int64(2): np.array([2], np.int64)},
                                   {np.int32(3): np.array([1.0], np.float32)}])
def test_from_dict_and_to_dict_are_onnxs(value):
    ref = onnx.numpy_helper.from_dict(value, "m")
    ours = numpy_helper.from_dict(value, "m")
    assert ours.SerializeToString() == ref.SerializeToString()
    assert repr(numpy_helper.to_dict(_ours(ref))) == repr(onnx.numpy_helper.to_dict(ref))


@pytest.mark.parametrize("value", [None, np.array([1, 2], np.int8), [np.array([1.0])],
                                   {1: np.array([1.0])}])
def test_from_optional_and_to_optional_are_onnxs(value):
    ref = onnx.numpy_helper.from_optional(value, "o")
    ours = numpy_helper.from_optional(value, "o")
    assert ours.SerializeToString() == ref.SerializeToString()
    assert repr(numpy_helper.to_optional(_ours(ref))) == repr(onnx.numpy_helper.to_optional(ref))


def test_bad_sequences_maps_and_optionals_raise_onnxs_errors():
    for call, exc in [(lambda m: m.from_list([np.ones(1), [1]]), TypeError),
                      (lambda m: m.from_dict({}), ValueError),
                      (lambda m: m.from_dict({1: np.ones(1), np.str_("key"): np.ones(1)}), TypeError),
                      (lambda m: m.from_dict({1.5: np.ones(1)}), TypeError),
                      (lambda m: m.from_optional(np.ones(1), dtype=99), TypeError),
                      (lambda m: m.create_random_int((2,), np.float32), TypeError)]:
        with pytest.raises(exc):
            call(onnx.numpy_helper)
        with pytest.raises(exc):
            call(numpy_helper)
    broken = onnx.MapProto(name="m", key_type=onnx.TensorProto.INT64, keys=[1, 2])
    broken.values.CopyFrom(onnx.numpy_helper.from_list([np.ones(1)]))
    with pytest.raises(IndexError):
        numpy_helper.to_dict(_ours(broken))
    with pytest.raises(TypeError):
        numpy_helper.to_list(irmodel.SequenceProto(elem_type=99))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=1, max_size=40),
       st.sampled_from(["up", "down", "nearest"]), st.booleans())
def test_to_float8e8m0_is_onnxs(values, mode, saturate):
    x = np.array(values, dtype=np.float32)
    ours = numpy_helper.to_float8e8m0(x, saturate, mode).view(np.uint8)
    ref = onnx.numpy_helper.to_float8e8m0(x, saturate, mode).view(np.uint8)
    np.testing.assert_array_equal(ours, ref)


def test_to_float8e8m0_refuses_an_unknown_rounding_mode():
    with pytest.raises(ValueError, match="Unsupported rounding mode"):
        numpy_helper.to_float8e8m0(np.ones(1, np.float32), round_mode="sideways")


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, ml_dtypes.int4, ml_dtypes.float8_e4m3fn, np.float16])
def test_saturate_cast_and_create_random_int_are_onnxs(dtype):
    x = np.array([-1e6, -3.7, 0.0, 2.5, 1e6], dtype=np.float32)
    np.testing.assert_array_equal(numpy_helper.saturate_cast(x, dtype).astype(np.float64),
                                  onnx.numpy_helper.saturate_cast(x, dtype).astype(np.float64))
    np.testing.assert_array_equal(numpy_helper.create_random_int((3, 4), np.int16, 7),
                                  onnx.numpy_helper.create_random_int((3, 4), np.int16, 7))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7, 8, 9])
def test_private_packing_helpers_are_onnxs(n):
    values = np.arange(n, dtype=np.uint8) % 64
    for name in ("_pack_4bitx2", "_pack_2bitx4", "_pack_6bit"):
        np.testing.assert_array_equal(getattr(numpy_helper, name)(values), getattr(onnx.numpy_helper, name)(values))
    for bits, name in ((4, "_unpack_4bit"), (2, "_unpack_2bit"), (6, "_unpack_6bit")):
        packed = {4: onnx.numpy_helper._pack_4bitx2, 2: onnx.numpy_helper._pack_2bitx4,
                  6: onnx.numpy_helper._pack_6bit}[bits](values % (1 << bits))
        np.testing.assert_array_equal(getattr(numpy_helper, name)(packed, (n,)),
                                      getattr(onnx.numpy_helper, name)(packed, (n,)))


def test_tobytes_little_endian_is_onnxs():
    for arr in (np.arange(5, dtype=">i4"), np.arange(5, dtype="<f8"), np.arange(3, dtype=np.int16)):
        assert numpy_helper.tobytes_little_endian(arr) == onnx.numpy_helper.tobytes_little_endian(arr)


# -- external_data_helper -----------------------------------------------------------------

def _external_tensor(offset=None):
    t = onnx.numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    onnx.external_data_helper.set_external_data(t, "data.bin", offset=offset)
    return t


@pytest.mark.parametrize("offset", [None, 0, 8])
def test_save_external_data_appends_as_onnx(tmp_path, offset):
    for module, sub in ((onnx.external_data_helper, "ref"), (external_data_helper, "ours")):
        d = tmp_path / sub
        d.mkdir()
        (d / "data.bin").write_bytes(b"12345678")
        t = _external_tensor(None if offset is None else 8 + offset)  # at or past the file's end
        t = t if module is onnx.external_data_helper else _ours(t)
        module.save_external_data(t, str(d))
        (tmp_path / f"{sub}.entries").write_text(repr([(e.key, e.value) for e in t.external_data]))
    assert (tmp_path / "ref" / "data.bin").read_bytes() == (tmp_path / "ours" / "data.bin").read_bytes()
    assert (tmp_path / "ref.entries").read_text() == (tmp_path / "ours.entries").read_text()


def test_save_external_data_refuses_what_onnx_refuses(tmp_path):
    (tmp_path / "data.bin").write_bytes(b"x" * 33)
    for offset in (4, 33 + 64 * 1024 + 1):  # before the end; too far past it
        t = _ours(_external_tensor(offset))
        with pytest.raises(irmodel.ValidationError, match="must be between"):
            external_data_helper.save_external_data(t, str(tmp_path))
    t = _ours(_external_tensor())
    t.ClearField("raw_data")
    with pytest.raises(irmodel.ValidationError, match="raw_data field doesn't exist"):
        external_data_helper.save_external_data(t, str(tmp_path))
    evil = _ours(_external_tensor())
    evil.external_data[0].value = "../escape.bin"
    with pytest.raises(irmodel.ValidationError):
        external_data_helper.save_external_data(evil, str(tmp_path))
    assert not (tmp_path.parent / "escape.bin").exists()
    assert (tmp_path / "data.bin").read_bytes() == b"x" * 33


# -- model_container ------------------------------------------------------------------------

def _large_graph(make_large_tensor_proto, helper_module):
    tensors = [make_large_tensor_proto("#big", "W", onnx.TensorProto.FLOAT, (2, 3)),
               make_large_tensor_proto("#be", "B", onnx.TensorProto.INT32, (3,)),
               make_large_tensor_proto("#bf", "F", onnx.TensorProto.BFLOAT16, (3, 2))]
    return helper_module.make_graph([helper_module.make_node("Add", ["X", "W"], ["Y"])], "g",
                                    [helper_module.make_tensor_value_info("X", 1, [2, 3])],
                                    [helper_module.make_tensor_value_info("Y", 1, [2, 3])], tensors)


@pytest.mark.parametrize("one_file", [True, False])
def test_model_container_saves_the_files_onnx_saves_and_loads_them_back(tmp_path, one_file):
    import onnx.model_container

    big = {"#big": np.arange(6, dtype=np.float32).reshape(2, 3),
           "#be": np.arange(3, dtype=">i4"),  # big-endian: written little-endian
           "#bf": np.arange(6, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(2, 3).T}  # not contiguous
    ref = onnx.model_container.make_large_model(_large_graph(onnx.model_container.make_large_tensor_proto,
                                                             onnx.helper), dict(big))
    ours = model_container.make_large_model(_large_graph(model_container.make_large_tensor_proto, helper),
                                            dict(big))
    (tmp_path / "ref").mkdir()
    (tmp_path / "ours").mkdir()
    saved_ref = ref.save(str(tmp_path / "ref" / "m.onnx"), one_file)
    saved = ours.save(str(tmp_path / "ours" / "m.onnx"), one_file)
    assert saved.SerializeToString() == saved_ref.SerializeToString()
    assert sorted(os.listdir(tmp_path / "ref")) == sorted(os.listdir(tmp_path / "ours"))
    for name in os.listdir(tmp_path / "ref"):
        assert (tmp_path / "ref" / name).read_bytes() == (tmp_path / "ours" / name).read_bytes(), name
    back = model_container.ModelContainer()
    back.load(str(tmp_path / "ours" / "m.onnx"))
    assert list(back.large_initializers) == ["#t0", "#t1", "#t2"]
    for key, original in zip(back.large_initializers, big.values()):
        np.testing.assert_array_equal(back[key], original)
    with pytest.raises(ValueError):
        back["#nope"]


def test_model_container_refuses_what_onnx_refuses():
    container = model_container.ModelContainer()
    with pytest.raises(RuntimeError, match="empty"):
        container.model_proto
    with pytest.raises(ValueError, match="must start with '#'"):
        container.set_large_initializers({"big": np.ones(1)})
    graph = _large_graph(model_container.make_large_tensor_proto, helper)
    with pytest.raises(RuntimeError, match="Unable to find large tensor"):
        model_container.make_large_model(graph, {"#big": np.ones(1)})


# -- repr -------------------------------------------------------------------------------------

def test_model_graph_and_function_reprs_are_onnxs(node_models):
    for model in node_models:
        ref = onnx.ModelProto.FromString(model.SerializeToString())
        ref.producer_name, ref.domain = "p", "d"
        ours = _ours(ref)
        assert repr(ours) == repr(ref)
        assert repr(ours.graph) == repr(ref.graph)
    function = onnx.helper.make_function("dom", "f", ["a"], ["b"], [onnx.helper.make_node("Relu", ["a"], ["b"])],
                                         [onnx.helper.make_opsetid("", 18)], ["alpha"], overload="o")
    assert repr(_ours(function)) == repr(function)
    assert repr(irmodel.ModelProto()) == repr(onnx.ModelProto())
