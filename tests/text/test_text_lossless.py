"""Every format feature onnx's text loses comes back byte-identical from ours.

Each case builds a model with the reference's helpers, then checks that
``parse_model(to_text(m))`` serializes to the same bytes, and that onnx's parser
either rejects our text or reads it as it reads its own text of the model (so that
nothing of ours is ever dropped silently).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

import irmodel
from irmodel.parser import parse_function, parse_graph, parse_model, parse_node
from irmodel.printer import to_text

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper as oh, numpy_helper as nh  # noqa: E402
from onnx import parser as onnx_parser, printer as onnx_printer  # noqa: E402


def _model(nodes=(), inits=(), inputs=(), outputs=(), **graph_fields):
    g = oh.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))
    for k, v in graph_fields.items():
        getattr(g, k).extend(v) if isinstance(v, list) else setattr(g, k, v)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)])


def _check(model) -> str:
    data = model.SerializeToString()
    text = to_text(irmodel.loads(data))
    assert irmodel.dumps(parse_model(text)) == data, text
    try:
        theirs = onnx_parser.parse_model(text).SerializeToString()
    except Exception:  # noqa: BLE001 - rejected: fine
        return text
    try:
        own = onnx_parser.parse_model(onnx_printer.to_text(model)).SerializeToString()
    except Exception:  # noqa: BLE001 - onnx cannot read its own text: ours must then be exact
        own = data
    assert theirs == own, text
    return text


def _const(tensor, **attrs):
    return oh.make_node("Constant", [], ["c"], value=tensor, **attrs)


def test_metadata_props_and_doc_strings_everywhere():
    node = oh.make_node("Relu", ["x"], ["y"], doc_string="node doc")
    node.metadata_props.add(key="k", value="v")
    attr_node = oh.make_node("LeakyRelu", ["x"], ["z"], alpha=0.5)
    attr_node.attribute[0].doc_string = "attr doc"
    vi = oh.make_tensor_value_info("x", TensorProto.FLOAT, [2], doc_string="vi doc")
    vi.metadata_props.add(key="a", value="b")
    init = nh.from_array(np.ones(2, np.float32), "w")
    init.doc_string = "tensor doc"
    init.metadata_props.add(key="t", value="u")
    m = _model([node, attr_node], [init], [vi], [oh.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
               doc_string="graph doc")
    m.graph.metadata_props.add(key="g", value="h")
    text = _check(m)
    assert "@{doc_string" in text


def test_denotations_of_types_and_dims():
    vi = oh.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    vi.type.denotation = "TENSOR"
    vi.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    _check(_model([oh.make_node("Relu", ["x"], ["y"])], inputs=[vi]))


@pytest.mark.parametrize("bits", [0x7FC00001, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x80000000])
def test_float32_nan_payloads_and_negative_zero(bits):
    raw = struct.pack("<2I", bits, 0x80000000)
    t = oh.make_tensor("w", TensorProto.FLOAT, [2], raw, raw=True)
    typed = TensorProto(name="v", data_type=TensorProto.FLOAT, dims=[1])
    typed.float_data.append(struct.unpack("<f", struct.pack("<I", bits))[0])
    m = _model(inits=[t, typed])
    attr = oh.make_node("LeakyRelu", ["x"], ["y"])
    a = attr.attribute.add(name="alpha", type=onnx.AttributeProto.FLOAT)
    a.f = struct.unpack("<f", struct.pack("<I", bits))[0]
    m.graph.node.append(attr)
    data = m.SerializeToString()
    assert irmodel.dumps(parse_model(to_text(irmodel.loads(data)))) == data


def test_double_nan_payload():
    t = TensorProto(name="d", data_type=TensorProto.DOUBLE, dims=[1])
    t.raw_data = struct.pack("<Q", 0x7FF0000000000001)
    _check(_model(inits=[t]))


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2, TensorProto.FLOAT16,
                                   TensorProto.BFLOAT16, TensorProto.INT4, TensorProto.UINT4,
                                   TensorProto.FLOAT4E2M1, TensorProto.INT2, TensorProto.UINT2,
                                   TensorProto.FLOAT6E2M3, TensorProto.FLOAT6E3M2, TensorProto.COMPLEX64,
                                   TensorProto.COMPLEX128, TensorProto.BOOL, TensorProto.UINT64])
def test_raw_data_of_every_element_type_stays_raw(dtype):
    raw = bytes(range(7, 7 + 16))
    t = TensorProto(name="w", data_type=dtype, dims=[3])
    t.raw_data = raw
    text = _check(_model(inits=[t]))
    assert "@raw" in text


def test_typed_complex_and_sub_byte_values_are_readable_by_onnx():
    c = TensorProto(name="c", data_type=TensorProto.COMPLEX64, dims=[1])
    c.float_data.extend([1.5, -2.0])
    i4 = TensorProto(name="i", data_type=TensorProto.INT4, dims=[2])
    i4.int32_data.append(0x3F)
    text = _check(_model(inits=[c, i4]))
    assert "..." not in text


def test_segment_sparse_initializer_quantization_training_info():
    t = nh.from_array(np.arange(4, dtype=np.int64), "w")
    t.segment.begin = 1
    t.segment.end = 3
    values = nh.from_array(np.array([1.0, 2.0], np.float32), "sv")
    indices = nh.from_array(np.array([0, 3], np.int64), "si")
    sparse = oh.make_sparse_tensor(values, indices, [4])
    m = _model(inits=[t])
    m.graph.sparse_initializer.append(sparse)
    qa = m.graph.quantization_annotation.add(tensor_name="w")
    qa.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="s")
    ti = m.training_info.add()
    ti.algorithm.CopyFrom(oh.make_graph([oh.make_node("Relu", ["a"], ["b"])], "algo", [], []))
    ti.update_binding.add(key="w", value="b")
    _check(m)


def test_function_attribute_defaults_value_info_and_doc():
    fn = oh.make_function("custom", "f", ["a"], ["b"], [oh.make_node("Relu", ["a"], ["b"])],
                          [oh.make_opsetid("", 21)], attributes=["beta"])
    fn.attribute_proto.append(oh.make_attribute("alpha", 0.25))
    fn.value_info.append(oh.make_tensor_value_info("a", TensorProto.FLOAT, [2]))
    fn.doc_string = "function doc"
    fn.metadata_props.add(key="k", value="v")
    m = _model()
    m.functions.append(fn)
    m.opset_import.append(oh.make_opsetid("custom", 1))
    _check(m)
    assert irmodel.dumps(parse_function(to_text(irmodel.loads(fn.SerializeToString(), "FunctionProto")))) \
        == fn.SerializeToString()


def test_lists_of_graphs_tensors_and_types():
    n = oh.make_node("X", [], ["y"], domain="custom")
    n.attribute.append(oh.make_attribute("ts", [nh.from_array(np.ones(2, np.float32), "a"),
                                                 oh.make_tensor("b", TensorProto.INT64, [1], [5])]))
    n.attribute.append(oh.make_attribute("gs", [oh.make_graph([], "g1", [], []), oh.make_graph([], "g2", [], [])]))
    n.attribute.append(oh.make_attribute("tps", [oh.make_tensor_type_proto(1, [2]), oh.make_sequence_type_proto(
        oh.make_tensor_type_proto(7, None))]))
    text = _check(_model([n]))
    assert "@[" in text


def test_sparse_tensor_attribute():
    values = nh.from_array(np.array([1.0], np.float32), "v")
    indices = nh.from_array(np.array([2], np.int64), "i")
    n = oh.make_node("Constant", [], ["y"], sparse_value=oh.make_sparse_tensor(values, indices, [4]))
    _check(_model([n]))


@pytest.mark.parametrize("value", [b"a\x00b", b"\xff\xfe", b"caf\xc3\xa9", b"\x01\x7f\"\\", b""])
def test_strings_of_any_bytes(value):
    t = oh.make_tensor("s", TensorProto.STRING, [1], [value])
    n = oh.make_node("X", [], ["y"], domain="d", s=value)
    n.attribute[0].s = value
    m = _model([n], [t])
    m.producer_name = "p"
    _check(m)


def test_invalid_utf8_in_string_fields():
    # A loaded model can hold bytes that are not UTF-8 where the schema says string.
    m = _model([oh.make_node("Relu", ["x"], ["y"])])
    data = bytearray(m.SerializeToString())
    model = irmodel.loads(bytes(data))
    node = model.graph.node[0]
    node.MergeFromString(b"\x1a\x02\xff\xfe")  # name = b"\xff\xfe"
    data = irmodel.dumps(model)
    assert irmodel.dumps(parse_model(to_text(irmodel.loads(data)))) == data


def test_constant_whose_tensor_name_needs_quotes():
    t = nh.from_array(np.ones(2, np.float32), "my tensor")
    _check(_model([_const(t)]))


def test_absent_and_empty_defaults():
    node = oh.make_node("Relu", ["x"], ["y"])  # no domain field
    node2 = oh.make_node("Relu", ["y"], ["z"], domain="")  # an empty domain
    t = nh.from_array(np.ones(1, np.float32))  # a Constant's tensor without a name
    m = _model([node, node2, _const(t)])
    m.ClearField("ir_version")
    text = _check(m)
    assert "= .Relu" in text and "= Relu" in text


def test_empty_lists_and_unusual_names():
    n = oh.make_node("X", ["", "float"], ["inf"], domain="my-domain", name="a node")
    n.attribute.add(name="strs", type=onnx.AttributeProto.STRINGS)
    n.attribute.append(oh.make_attribute("bad name", 1))
    vi = oh.make_tensor_value_info("float", TensorProto.FLOAT, [1])
    _check(_model([n], inputs=[vi]))


def test_node_graph_and_function_entry_points():
    node = oh.make_node("Relu", ["x"], ["y"], doc_string="d")
    assert irmodel.dumps(parse_node(to_text(irmodel.loads(node.SerializeToString(), "NodeProto")))) \
        == node.SerializeToString()
    g = oh.make_graph([node], "g", [], [], doc_string="gd")
    assert irmodel.dumps(parse_graph(to_text(irmodel.loads(g.SerializeToString(), "GraphProto")))) \
        == g.SerializeToString()


def test_unknown_fields_are_kept_as_wire_bytes():
    m = _model([oh.make_node("Relu", ["x"], ["y"])], inputs=[oh.make_tensor_value_info("x", 1, [2])])
    model = irmodel.loads(m.SerializeToString())
    model.graph.node[0].MergeFromString(b"\xa0\x06\x05")  # field 100, varint 5
    model.graph.input[0].type.tensor_type.MergeFromString(b"\xa8\x06\x01")
    model.MergeFromString(b"\xaa\x06\x02hi")
    data = irmodel.dumps(model)
    text = to_text(irmodel.loads(data))
    assert "0xa00605" in text
    assert irmodel.dumps(parse_model(text)) == data


# -- float32 values print as onnx prints them ----------------------------------------------
# The shortest decimal that reads back (onnx: ``std::to_chars``), searched from the width of
# what reads back (`irmodel._text.numbers.format_float32`): compared with onnx's printer on
# finite float32 values of every exponent, the ends of the range and values just off powers
# of two (where what reads back is lopsided).

_EDGE_BITS = sorted({1, 2, 3, 0x7FFFFF, 0x800000, 0x800001, 0x7F7FFFFF, 0x7F7FFFFE, 0x3DCCCCCD, 0x3F000000,
                     *((e << 23) + k for e in range(1, 255, 11) for k in (0, 1, 0x7FFFFF))})


def _onnx_float_text(value: float) -> str:
    text = onnx_printer.to_text(oh.make_node("LeakyRelu", ["x"], ["y"], alpha=value))
    return text.split("alpha: float = ", 1)[1].split(">", 1)[0]


def _ours_float_text(value: float) -> str:
    node = irmodel.NodeProto.FromString(oh.make_node("LeakyRelu", ["x"], ["y"], alpha=value).SerializeToString())
    return to_text(node).split("alpha: float = ", 1)[1].split(">", 1)[0]


@pytest.mark.parametrize("bits", _EDGE_BITS)
def test_a_float32_at_an_edge_prints_as_onnx_prints_it(bits):
    for sign in (0, 0x80000000):
        value = struct.unpack("<f", struct.pack("<I", bits | sign))[0]
        assert _ours_float_text(value) == _onnx_float_text(value)


def test_float32_values_of_every_kind_print_as_onnx_prints_them():
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=400, deadline=None)
    @given(st.integers(0, 0xFFFFFFFF).filter(lambda b: (b >> 23) & 0xFF != 0xFF)  # finite
           | st.floats(width=32, allow_nan=False, allow_infinity=False).map(lambda f: struct.unpack(
               "<I", struct.pack("<f", f))[0]))
    def check(bits):
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        assert _ours_float_text(value) == _onnx_float_text(value)
    check()


def test_many_float32_values_in_one_tensor_print_as_onnx_prints_them():
    """Every digit count and both notations at once: 20,000 finite float32 bit patterns
    (uniform over the bits, so every exponent; weights as a model holds them; short
    decimals; integers) in the ``float_data`` of one tensor, printed by both."""
    import random

    rng = random.Random(20261127)
    bits = [b for b in (rng.getrandbits(32) for _ in range(8000)) if (b >> 23) & 0xFF != 0xFF]
    values = [struct.unpack("<f", struct.pack("<I", b))[0] for b in bits]
    values += [rng.gauss(0.0, 0.02) for _ in range(8000)]
    values += [s * m * 10.0 ** e for s in (1, -1) for m in (1, 1.5, 2.5, 5, 7) for e in range(-30, 30)]
    values += [float(rng.randrange(1, 1 << 24)) for _ in range(1000)]
    tensor = oh.make_tensor("t", TensorProto.FLOAT, [len(values)], values)
    node = oh.make_node("Constant", [], ["y"], value=tensor)
    theirs = onnx_printer.to_text(node)
    ours = to_text(irmodel.NodeProto.FromString(node.SerializeToString()))
    assert ours.split("{", 1)[1] == theirs.split("{", 1)[1]
