"""irmodel.helper against onnx.helper: same calls, byte-identical messages, same errors.

Most tests build the same content through both APIs with `call`, which runs the helper
of each library on its own side of every argument and asserts that our bytes equal
protobuf's ``SerializeToString()``.  Results are `Pair`s, so nested content (a tensor
inside an attribute inside a node inside a graph) is compared at every level.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import struct
import subprocess
import sys
import warnings
from typing import Any, NamedTuple

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmodel
from irmodel import helper

TP = onnx.TensorProto
AP = onnx.AttributeProto
SP = onnx.SequenceProto
OP = onnx.OptionalProto
from repo_paths import REPO as ROOT  # noqa: E402
ALL_DTYPES = [v for _, v in TP.DataType.items() if v != TP.UNDEFINED]


class Pair(NamedTuple):
    ours: Any
    ref: Any


class Fresh(NamedTuple):
    """An argument made anew for each side (a generator can be consumed only once)."""

    make: Any


def _side(x, i: int):
    if isinstance(x, Pair):
        return x[i]
    if isinstance(x, Fresh):
        return x.make()
    if isinstance(x, list):
        return [_side(v, i) for v in x]
    if isinstance(x, tuple):
        return tuple(_side(v, i) for v in x)
    if isinstance(x, dict):
        return {k: _side(v, i) for k, v in x.items()}
    return x


def assert_same_bytes(ours, ref) -> None:
    got, want = irmodel.dumps(ours), ref.SerializeToString()
    assert got == want, f"\nours: {got.hex()}\nref:  {want.hex()}"


def call(fn: str, /, *args, **kwargs) -> Pair:
    """Run ``helper.<name>`` and ``onnx.helper.<name>`` on the two sides; compare the bytes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy overflow warnings on casts
        ours = getattr(helper, fn)(*_side(args, 0), **_side(kwargs, 0))
        ref = getattr(oh, fn)(*_side(args, 1), **_side(kwargs, 1))
    assert_same_bytes(ours, ref)
    return Pair(ours, ref)


def errors(fn: str, /, *args, **kwargs) -> tuple[BaseException, BaseException]:
    """The exceptions both helpers raise for the same call (fails if either returns)."""
    out = []
    for i, mod in enumerate((helper, oh)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                getattr(mod, fn)(*_side(args, i), **_side(kwargs, i))
            except Exception as exc:  # noqa: BLE001 (the test compares them)
                out.append(exc)
                continue
        pytest.fail(f"{mod.__name__}.{fn} did not raise")
    return out[0], out[1]


def assert_same_error(fn: str, /, *args, **kwargs) -> BaseException:
    ours, ref = errors(fn, *args, **kwargs)
    assert isinstance(ours, type(ref)), (f"ours raised {type(ours).__name__}: {ours}; "
                                         f"reference {type(ref).__name__}: {ref}")
    return ours


# -- reusable content ------------------------------------------------------------------
def tensor(name="w", dt=TP.FLOAT, dims=(2,), vals=(1.0, 2.5), raw=False) -> Pair:
    return call("make_tensor", name, dt, list(dims), list(vals) if not isinstance(vals, bytes) else vals, raw=raw)


def sparse() -> Pair:
    return call("make_sparse_tensor", tensor("v", TP.FLOAT, [2], [1.0, -3.0]),
                tensor("i", TP.INT64, [2], [1, 5]), [2, 3])


def type_proto() -> Pair:
    return call("make_tensor_type_proto", TP.FLOAT, ["N", 3, None])


def small_graph(name="body") -> Pair:
    x = call("make_tensor_value_info", "x", TP.FLOAT, ["N"])
    y = call("make_tensor_value_info", "y", TP.FLOAT, ["N"])
    n = call("make_node", "Relu", ["x"], ["y"], name="r")
    return call("make_graph", [n], name, [x], [y])


def attribute_values() -> list:
    """``(label, value, attr_type)`` covering every attribute type and inference rule."""
    return [
        ("int", 7, None), ("negative int", -3, None), ("int64 max", 2**63 - 1, None),
        ("int64 min", -(2**63), None), ("bool", True, None), ("numpy int", np.int64(-9), None),
        ("float", 0.1, None), ("float nan", math.nan, None), ("float inf", -math.inf, None),
        ("float -0", -0.0, None), ("float rounds to float32", 1 / 3, None),
        ("float overflows float32", 1e39, None), ("numpy float32", np.float32(2.5), None),
        ("str", "héllo 中", None), ("bytes", b"\x00\xff", None), ("empty str", "", None),
        ("tensor", tensor(), None), ("sparse tensor", sparse(), None), ("graph", small_graph(), None),
        ("type proto", type_proto(), None),
        ("ints", [1, -2, 2**63 - 1], None), ("ints tuple", (4, 5), None), ("ints range", range(3), None),
        ("floats", [1.5, float("nan"), -0.0], None), ("ints and floats -> floats", [1, 2.5], None),
        ("strings", ["a", "é"], None), ("bytes strings", [b"x", b""], None),
        ("str and bytes", ["a", b"b"], None), ("numpy int array", np.array([1, -2]), None),
        ("numpy float array", np.array([0.5, 1e-3], dtype=np.float32), None),
        ("tensors", [tensor(), tensor("u", TP.INT64, [1], [3])], None), ("sparse tensors", [sparse()], None),
        ("graphs", [small_graph("g1"), small_graph("g2")], None), ("type protos", [type_proto()], None),
        ("int with attr_type", 3, AP.INT), ("floats with attr_type", [1, 2], AP.FLOATS),
        *[(f"empty {AP.AttributeType.Name(t)}", [], t) for t in
          (AP.INTS, AP.FLOATS, AP.STRINGS, AP.TENSORS, AP.SPARSE_TENSORS, AP.GRAPHS, AP.TYPE_PROTOS)],
    ]


# -- attributes ------------------------------------------------------------------------
@pytest.mark.parametrize("label,value,attr_type", attribute_values(), ids=lambda v: v if isinstance(v, str) else "")
def test_make_attribute_matches_reference_for_every_type(label, value, attr_type):
    p = call("make_attribute", "a", value, attr_type=attr_type)
    assert p.ours.type == p.ref.type


def test_make_attribute_keeps_doc_string_and_generators():
    call("make_attribute", "a", 1, doc_string="why")
    call("make_attribute", "a", 1, doc_string="")  # empty: left unset, as the reference does
    call("make_attribute", "a", Fresh(lambda: (float(i) for i in range(3))))


def test_make_attribute_copies_message_values():
    t = tensor()
    p = call("make_attribute", "a", t)
    t.ours.name = "changed"
    t.ref.name = "changed"
    assert p.ours.t.name == p.ref.t.name == "w"
    assert_same_bytes(*p)


@pytest.mark.parametrize("kwargs", [{}, {"doc_string": "d"}, {"ref_attr_name": "outer"}])
@pytest.mark.parametrize("attr_type", [AP.FLOAT, AP.INTS, AP.GRAPH, AP.TYPE_PROTOS])
def test_make_attribute_ref_matches_reference(attr_type, kwargs):
    p = call("make_attribute_ref", "alpha", attr_type, **kwargs)
    assert p.ours.ref_attr_name == (kwargs.get("ref_attr_name") or "alpha")


@pytest.mark.parametrize("label,value,attr_type", attribute_values(), ids=lambda v: v if isinstance(v, str) else "")
def test_get_attribute_value_matches_reference(label, value, attr_type):
    p = call("make_attribute", "a", value, attr_type=attr_type)
    ours, ref = helper.get_attribute_value(p.ours), oh.get_attribute_value(p.ref)
    if isinstance(ref, list):
        assert len(ours) == len(ref)
        pairs = list(zip(ours, ref))
    else:
        pairs = [(ours, ref)]
    for o, r in pairs:
        if hasattr(r, "SerializeToString"):
            assert_same_bytes(o, r)
        elif isinstance(r, float) and math.isnan(r):
            assert math.isnan(o)
        else:
            assert type(o) is type(r) and o == r


def test_get_attribute_value_of_a_parsed_string_is_bytes():
    # Read back from bytes, `s` is a memoryview in irmodel; the helper gives bytes as onnx does.
    data = oh.make_attribute("a", "text").SerializeToString()
    assert helper.get_attribute_value(irmodel.loads(data, "AttributeProto")) == b"text"
    node = oh.make_node("N", [], [], k=["x", "y"])
    ours = irmodel.loads(node.SerializeToString(), "NodeProto")
    assert helper.get_node_attr_value(ours, "k") == oh.get_node_attr_value(node, "k") == [b"x", b"y"]


# -- nodes -----------------------------------------------------------------------------
def test_make_node_plain_and_with_every_option():
    call("make_node", "Relu", ["x"], ["y"])
    call("make_node", "Add", ["a", "", "b"], ["c", "d"], name="add", doc_string="adds",
         domain="com.example", overload="v2")
    call("make_node", "Relu", ["x"], ["y"], name="", doc_string="", domain="", overload="")
    call("make_node", "Relu", (), ())


def test_make_node_sorts_attributes_and_skips_none():
    kwargs = {label.replace(" ", "_"): value for label, value, t in attribute_values() if t is None}
    p = call("make_node", "Op", ["x"], ["y"], skipped=None, **kwargs)
    names = [a.name for a in p.ours.attribute]
    assert names == sorted(kwargs)


# -- tensors ---------------------------------------------------------------------------
def _values_for(dt: int, n: int) -> list:
    """Element values of every interesting kind that the data type accepts."""
    if dt == TP.STRING:
        return ["", "a", "é中", "x" * 70, "z"][:n] + ["s"] * max(0, n - 5)
    if dt == TP.BOOL:
        return [bool(i % 2) for i in range(n)]
    np_dtype = oh.tensor_dtype_to_np_dtype(dt)
    if dt in (TP.INT4, TP.UINT4, TP.INT2, TP.UINT2) or np.issubdtype(np_dtype, np.integer):
        import ml_dtypes

        info = ml_dtypes.iinfo(np_dtype)
        pool = [int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 2]
        return [pool[i % len(pool)] for i in range(n)]
    pool = [1.5, -2.25, 0.0, -0.0, 1 / 3, 1e6, float("nan"), float("inf"), -1e-30, 448.0, 1e39]
    if dt in (TP.COMPLEX64, TP.COMPLEX128):
        return [complex(pool[i % len(pool)], -i) for i in range(n)]
    return [pool[i % len(pool)] for i in range(n)]


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=lambda d: TP.DataType.Name(d))
def test_make_tensor_from_values_matches_reference(dt):
    for dims in ([7], [2, 3], [], [0], [1, 1, 1]):
        n = math.prod(dims)
        call("make_tensor", "t", dt, dims, _values_for(dt, n))


@pytest.mark.parametrize("dt", [d for d in ALL_DTYPES if d != TP.STRING], ids=lambda d: TP.DataType.Name(d))
def test_make_tensor_raw_matches_reference(dt):
    for dims in ([7], [2, 3], [], [0]):
        n = math.prod(dims)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            arr = np.array(_values_for(dt, n), dtype=oh.tensor_dtype_to_np_dtype(dt)).reshape(dims)
        from_array = call("make_tensor", "t", dt, dims, arr, raw=True)
        call("make_tensor", "t", dt, dims, bytes(from_array.ref.raw_data), raw=True)


@pytest.mark.parametrize("dt", [d for d in ALL_DTYPES if d != TP.STRING], ids=lambda d: TP.DataType.Name(d))
def test_make_tensor_from_numpy_array_values_matches_reference(dt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        arr = np.array(_values_for(dt, 6), dtype=oh.tensor_dtype_to_np_dtype(dt)).reshape(2, 3)
    call("make_tensor", "t", dt, [2, 3], arr)


def test_make_tensor_conversions_numpy_would_make():
    call("make_tensor", "t", TP.FLOAT, [2, 2], [[1, 2], [3, 4]])  # nested lists flatten
    call("make_tensor", "t", TP.FLOAT, [], 2.5)  # a scalar
    call("make_tensor", "t", TP.STRING, [], "one")
    call("make_tensor", "t", TP.FLOAT, [1], [2**60 + 1])  # int beyond double precision
    call("make_tensor", "t", TP.DOUBLE, [2], [2**70, -(2**53) - 1])
    call("make_tensor", "t", TP.INT32, [2], [1.9, -1.9])  # floats truncate
    call("make_tensor", "t", TP.INT64, [2], ["7", "8"])  # numpy parses strings
    call("make_tensor", "t", TP.BOOL, [3], [0.0, 0.5, 2])
    call("make_tensor", "t", TP.FLOAT, [3], [np.float32(0.1), np.float16(2), True])
    call("make_tensor", "t", TP.STRING, [3], ["a\x00", b"b\x00", "\x00"])  # numpy drops trailing NULs
    call("make_tensor", "t", TP.STRING, [2], ["a", b"b"])  # mixed str and bytes
    call("make_tensor", "t", TP.STRING, [0], [])
    call("make_tensor", "t", TP.UINT64, [2], [2**64 - 1, 0])
    call("make_tensor", "t", TP.FLOAT8E4M3FN, [3], [1e9, -1e9, float("inf")])  # saturates
    call("make_tensor", "t", TP.FLOAT8E8M0, [4], [1.5, 2.0, 3e38, float("nan")])  # rounds up
    call("make_tensor", "t", TP.INT4, [3], [7, -8, 1])  # odd count: padded nibble
    call("make_tensor", "t", TP.UINT2, [5], [3, 2, 1, 0, 3])
    call("make_tensor", "t", TP.FLOAT6E2M3, [5], [1.0, 2.0, -0.5, 7.5, 0.0])


def test_make_tensor_with_large_payloads():
    # Over 64 KiB the encoder passes bytes through instead of copying them into the output plan.
    call("make_tensor", "big", TP.UINT8, [70000], bytes(range(256)) * 273 + bytes(112), raw=True)
    call("make_tensor", "big", TP.FLOAT, [20000], [i / 7 for i in range(20000)])
    call("make_tensor", "big", TP.STRING, [2], ["é" * 40000, b"x" * 70000])
    call("make_attribute", "big", "é" * 70000)


def test_make_tensor_raw_big_endian_array_is_written_little_endian():
    arr = np.arange(4, dtype=">i4")
    p = call("make_tensor", "t", TP.INT32, [4], arr, raw=True)
    assert bytes(p.ours.raw_data) == np.arange(4, dtype="<i4").tobytes()


def test_make_tensor_basic_types_need_no_numpy():
    """FLOAT/DOUBLE/integer/BOOL/STRING tensors from Python lists work with numpy blocked."""
    cases = [
        (TP.FLOAT, [3], [1.5, float("nan"), -0.0]), (TP.DOUBLE, [2], [0.1, float("-inf")]),
        (TP.INT64, [3], [-(2**63), 2**63 - 1, 0]), (TP.INT32, [2], [-(2**31), 5]),
        (TP.INT8, [2], [-128, 127]), (TP.UINT8, [1], [255]), (TP.UINT16, [1], [65535]),
        (TP.INT16, [1], [-5]), (TP.UINT32, [1], [2**32 - 1]), (TP.UINT64, [1], [2**64 - 1]),
        (TP.BOOL, [3], [True, False, 7]), (TP.STRING, [2], ["é", "b"]), (TP.STRING, [1], [b"\xff"]),
        (TP.FLOAT, [2, 2], (1, 2, 3, 4)), (TP.INT64, [], 5), (TP.FLOAT, [3], range(3)),
    ]
    script = (
        "import sys, json, pickle\n"
        "sys.modules['numpy'] = None; sys.modules['ml_dtypes'] = None  # any import of them fails\n"
        "import irmodel; from irmodel import helper\n"
        "out = [irmodel.dumps(helper.make_tensor('t', *case)).hex() for case in pickle.load(sys.stdin.buffer)]\n"
        "try:\n"
        "    helper.make_tensor('t', 10, [1], [1.0])\n"
        "except ImportError as exc:\n"
        "    out.append('ImportError: ' + str(exc))\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(cases), capture_output=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, check=True)
    out = json.loads(proc.stdout)
    assert len(out) == len(cases) + 1
    for case, got in zip(cases, out):
        assert bytes.fromhex(got) == oh.make_tensor("t", *case).SerializeToString()
    assert out[-1].startswith("ImportError: ") and "numpy" in out[-1]


def test_importing_irmodel_helper_does_not_import_numpy():
    code = "import sys, irmodel, irmodel.helper; print('numpy' in sys.modules, 'ml_dtypes' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT}, check=True)
    assert proc.stdout.split() == ["False", "False"]


def test_make_sparse_tensor_matches_reference():
    s = sparse()
    call("make_sparse_tensor", tensor("v", TP.INT32, [0], []), tensor("i", TP.INT64, [0, 2], []), [4, 4])
    assert list(s.ours.dims) == [2, 3]


# -- sequence, map, optional -----------------------------------------------------------
def test_make_sequence_of_every_element_type():
    t = tensor()
    seq_t = call("make_sequence", "s", SP.TENSOR, [t, tensor("w2", TP.INT64, [1], [1])])
    call("make_sequence", "s", SP.SPARSE_TENSOR, [sparse()])
    call("make_sequence", "s", SP.SEQUENCE, [seq_t, seq_t])
    m = call("make_map", "m", TP.INT64, [1, -2], seq_t)
    call("make_sequence", "s", SP.MAP, [m])
    o = call("make_optional", "o", OP.TENSOR, t)
    call("make_sequence", "s", SP.OPTIONAL, [o])
    call("make_sequence", "s", SP.UNDEFINED, [t])  # values ignored
    call("make_sequence", "", SP.TENSOR, [])


def test_make_map_with_string_and_integer_keys():
    values = call("make_sequence", "v", SP.TENSOR, [tensor(), tensor()])
    call("make_map", "m", TP.STRING, [b"k1", "k2".encode()], values)
    for key_type in (TP.INT8, TP.INT16, TP.INT32, TP.INT64, TP.UINT8, TP.UINT16, TP.UINT32, TP.UINT64):
        call("make_map", "m", key_type, [0, 1], values)
    call("make_map", "m", TP.FLOAT, [1.5, 2.5], values)  # keys of other types are dropped


def test_make_optional_of_every_element_type():
    seq = call("make_sequence", "s", SP.TENSOR, [tensor()])
    m = call("make_map", "m", TP.INT32, [1], seq)
    values = {OP.TENSOR: tensor(), OP.SPARSE_TENSOR: sparse(), OP.SEQUENCE: seq, OP.MAP: m}
    values[OP.OPTIONAL] = call("make_optional", "inner", OP.TENSOR, tensor())
    for elem_type, value in values.items():
        call("make_optional", "o", elem_type, value)
    call("make_optional", "o", OP.UNDEFINED, None)


# -- types and value infos -------------------------------------------------------------
SHAPES = [None, [], [1, "N", None], [0, -1, 2**63 - 1], ["é"]]


@pytest.mark.parametrize("shape", SHAPES, ids=repr)
def test_tensor_and_sparse_type_protos_and_value_infos(shape):
    denot = None if not shape else ["D" + str(i) for i in range(len(shape))]
    for kind in ("tensor", "sparse_tensor"):
        call(f"make_{kind}_type_proto", TP.FLOAT, shape)
        call(f"make_{kind}_type_proto", TP.INT64, shape, shape_denotation=denot)
        call(f"make_{kind}_value_info", "v", TP.BFLOAT16, shape)
        call(f"make_{kind}_value_info", "v", TP.BFLOAT16, shape, doc_string="doc", shape_denotation=denot)
    call("make_tensor_sequence_value_info", "s", TP.FLOAT, shape, doc_string="d", elem_shape_denotation=denot)


def test_nested_type_protos_and_value_infos():
    t = type_proto()
    s = call("make_sparse_tensor_type_proto", TP.FLOAT, [3])
    seq = call("make_sequence_type_proto", t)
    opt = call("make_optional_type_proto", seq)
    m = call("make_map_type_proto", TP.STRING, opt)
    call("make_sequence_type_proto", call("make_map_type_proto", TP.INT64, s))
    call("make_optional_type_proto", call("make_optional_type_proto", m))
    for tp in (t, s, seq, opt, m):
        call("make_value_info", "v", tp)
        call("make_value_info", "v", tp, doc_string="doc")
    call("make_empty_tensor_value_info", "")
    call("make_empty_tensor_value_info", "unused")


# -- graphs, functions, models ---------------------------------------------------------
def full_graph() -> Pair:
    x = call("make_tensor_value_info", "x", TP.FLOAT, ["N", 3])
    y = call("make_tensor_value_info", "y", TP.FLOAT, ["N", 3])
    vi = call("make_tensor_value_info", "h", TP.FLOAT, None)
    nodes = [call("make_node", "Add", ["x", "w"], ["h"], name="add"),
             call("make_node", "If", ["c"], ["y"], then_branch=small_graph("t"), else_branch=small_graph("e"))]
    return call("make_graph", nodes, "main", [x], [y], initializer=[tensor("w", TP.FLOAT, [3], [1, 2, 3])],
                doc_string="the graph", value_info=[vi], sparse_initializer=[sparse()])


def test_make_graph_matches_reference():
    full_graph()
    call("make_graph", [], "", [], [])
    call("make_graph", [], "g", [], [], initializer=[], doc_string="", value_info=[], sparse_initializer=[])


def test_make_graph_copies_its_parts_like_protobuf():
    n = call("make_node", "Relu", ["x"], ["y"])
    g = call("make_graph", [n], "g", [], [])
    n.ours.op_type = "Elu"
    n.ref.op_type = "Elu"
    assert g.ours.node[0].op_type == "Relu"
    assert_same_bytes(*g)
    g2 = call("make_graph", [n, n], "g2", [], [])  # the same node twice: two copies
    assert_same_bytes(*g2)


def function() -> Pair:
    mul = call("make_node", "Mul", ["a", "b"], ["c"])
    for side, ref_attr in zip(mul, call("make_attribute_ref", "alpha", AP.FLOAT)):
        side.attribute.append(ref_attr)  # as with onnx: make_node takes values, not AttributeProtos
    body = [mul]
    return call("make_function", "custom", "F", ["a", "b"], ["c"], body,
                [call("make_opsetid", "", 21), call("make_operatorsetid", "custom", 1)],
                attributes=["alpha"], attribute_protos=[call("make_attribute", "beta", 0.5)],
                doc_string="doc", overload="o1",
                value_info=[call("make_tensor_value_info", "c", TP.FLOAT, [1])])


def test_make_function_matches_reference():
    function()
    call("make_function", "d", "G", [], [], [], [])
    call("make_function", "d", "G", ["x"], ["y"], [], [], attributes=None, attribute_protos=None,
         doc_string="", overload="", value_info=None)


def test_make_opsetid_matches_reference():
    for domain, version in (("", 1), ("ai.onnx.ml", 5), ("é", 2**63 - 1), ("x", -1)):
        call("make_opsetid", domain, version)
        call("make_operatorsetid", domain, version)


def test_make_model_defaults_match_reference():
    p = call("make_model", full_graph())
    assert p.ours.ir_version == onnx.IR_VERSION
    assert [(o.domain, o.version) for o in p.ours.opset_import] == [("", onnx.defs.onnx_opset_version())]


def test_make_model_with_opsets_functions_and_fields():
    opsets = [call("make_opsetid", "", 18), call("make_opsetid", "custom", 1)]
    call("make_model", full_graph(), opset_imports=opsets, functions=[function()],
         producer_name="irmodel", producer_version="0.1", domain="org.example", model_version=-3,
         doc_string="doc", ir_version=8)
    call("make_model", small_graph(), opset_imports=[], functions=[])


@pytest.mark.parametrize("opsets", [
    None, [], [("", 1)], [("", 9)], [("", 13), ("ai.onnx.ml", 2)], [("ai.onnx", 28)],
    [("ai.onnx.ml", 3), ("ai.onnx.training", 1)], [("ai.onnx.preview.training", 1)],
    [("ai.onnx.preview", 23), ("", 11)],
], ids=repr)
def test_make_model_gen_version_picks_the_reference_ir_version(opsets):
    kwargs = {} if opsets is None else {"opset_imports": [call("make_opsetid", d, v) for d, v in opsets]}
    p = call("make_model_gen_version", small_graph(), **kwargs)
    call("make_model_gen_version", small_graph(), ir_version=5, **kwargs)
    ids = _side(kwargs.get("opset_imports", []), 0)
    assert p.ours.ir_version == oh.find_min_ir_version_for(_side(kwargs.get("opset_imports", []), 1))
    assert helper.find_min_ir_version_for(ids) == p.ours.ir_version


def test_version_map_and_unknown_opsets_agree_with_reference():
    assert helper.OP_SET_ID_VERSION_MAP == oh.OP_SET_ID_VERSION_MAP
    assert [tuple(r) for r in helper.VERSION_TABLE] == [tuple(r) for r in oh.VERSION_TABLE]
    unknown = call("make_opsetid", "com.vendor", 3)
    assert_same_error("find_min_ir_version_for", [unknown])
    known = call("make_opsetid", "", 17)
    assert (helper.find_min_ir_version_for([unknown.ours, known.ours], ignore_unknown=True)
            == oh.find_min_ir_version_for([unknown.ref, known.ref], ignore_unknown=True))


def test_make_training_info_matches_reference():
    algo, init = small_graph("algo"), small_graph("init")
    for initialization, init_bindings in ((init, [("w", "w_init")]), (None, None), (init, []), (None, [("a", "b")])):
        info = call("make_training_info", algo, [("w", "w_new"), ("é", "中")], initialization, init_bindings)
        model = call("make_model", full_graph())
        model.ours.training_info.append(info.ours)
        model.ref.training_info.append(info.ref)
        assert_same_bytes(*model)


@pytest.mark.parametrize("kind", ["model", "graph", "function", "node", "tensor", "value_info"])
def test_set_metadata_props_matches_reference(kind):
    make = {
        "model": lambda: call("make_model", small_graph()), "graph": small_graph, "function": function,
        "node": lambda: call("make_node", "Relu", ["x"], ["y"]), "tensor": tensor,
        "value_info": lambda: call("make_tensor_value_info", "v", TP.FLOAT, [1]),
    }[kind]
    p = make()
    for props in ({"b": "2", "a": "1", "é": ""}, {}, {"only": "one"}):
        helper.set_metadata_props(p.ours, props)
        oh.set_metadata_props(p.ref, props)
        assert_same_bytes(*p)
    if kind == "model":
        helper.set_model_props(p.ours, {"author": "me"})
        oh.set_model_props(p.ref, {"author": "me"})
        assert_same_bytes(*p)


# -- error behaviour -------------------------------------------------------------------
@pytest.mark.parametrize("name,args,kwargs", [
    ("make_node", ("Relu", [1], ["y"]), {}),
    ("make_node", ("Relu", ["x"], [None]), {}),
    ("make_node", (7, ["x"], ["y"]), {}),
    ("make_node", ("Relu", ["x"], ["y"]), {"name": 5}),
    ("make_node", ("Relu", ["x"], ["y"]), {"bad": object()}),
    ("make_node", ("Relu", ["x"], ["y"]), {"big": 2**63}),
    ("make_attribute", ("a", 2**63), {}),
    ("make_attribute", ("a", -(2**63) - 1), {}),
    ("make_attribute", ("a", [2**64]), {}),
    ("make_attribute", ("a", None), {}),
    ("make_attribute", ("a", 1j), {}),
    ("make_attribute", ("a", []), {}),
    ("make_attribute", ("a", [1, "x"]), {}),
    ("make_attribute", ("a", [None]), {}),
    ("make_attribute", ("a", [True, False]), {}),
    ("make_attribute", ("a", 1), {"attr_type": AP.FLOAT}),
    ("make_attribute", ("a", "s"), {"attr_type": AP.INT}),
    ("make_attribute", ("a", [1.5]), {"attr_type": AP.INTS}),
    ("make_attribute", ("a", ["x"]), {"attr_type": AP.FLOATS}),
    ("make_attribute", ("a", [1]), {"attr_type": AP.STRINGS}),
    ("make_attribute", ("a", [1]), {"attr_type": AP.TENSORS}),
    ("make_attribute", ("a", [1, 2]), {"attr_type": AP.FLOATS, "doc_string": 3}),
    ("make_attribute_ref", ("a", 99), {}),
    ("make_attribute_ref", ("a", AP.INT), {"ref_attr_name": ""}),
    ("make_attribute_ref", ("", AP.INT), {}),
    ("make_tensor", ("t", TP.STRING, [1], [b"x"]), {"raw": True}),
    ("make_tensor", ("t", TP.FLOAT, [2], b"\x00" * 7), {"raw": True}),
    ("make_tensor", ("t", TP.FLOAT, [1], [1.0]), {"raw": True}),
    ("make_tensor", ("t", TP.FLOAT, [1], bytearray(4)), {"raw": True}),
    ("make_tensor", ("t", TP.FLOAT, [3], [1.0, 2.0]), {}),
    ("make_tensor", ("t", TP.STRING, [3], ["a"]), {}),
    ("make_tensor", ("t", TP.INT8, [1], [300]), {}),
    ("make_tensor", ("t", TP.UINT64, [1], [-1]), {}),
    ("make_tensor", ("t", TP.INT64, [1], [2**63]), {}),
    ("make_tensor", ("t", TP.FLOAT, [1], ["x"]), {}),
    ("make_tensor", ("t", TP.STRING, [1], [5]), {}),
    ("make_tensor", ("t", 99, [1], [1.0]), {}),
    ("make_tensor", ("t", TP.FLOAT, [1.5], [1.0]), {}),
    ("make_tensor", ("t", TP.FLOAT, [True], [1.0]), {}),
    ("make_tensor_type_proto", (TP.FLOAT, [1.5]), {}),
    ("make_tensor_type_proto", (TP.FLOAT, [True]), {}),
    ("make_tensor_type_proto", (TP.FLOAT, [1, 2]), {"shape_denotation": ["a"]}),
    ("make_sparse_tensor_type_proto", (TP.FLOAT, [object()]), {}),
    ("make_tensor_value_info", ("v", "FLOAT", [1]), {}),
    ("make_opsetid", ("", 2**63), {}),
    ("make_opsetid", (None, 1), {}),
    ("make_sequence", ("s", 99, []), {}),
    ("make_optional", ("o", 99, None), {}),
    ("find_min_ir_version_for", ([onnx.OperatorSetIdProto(version=99)],), {}),
])
def test_wrong_arguments_raise_what_the_reference_raises(name, args, kwargs):
    assert_same_error(name, *args, **kwargs)


def test_invalid_utf8_for_a_string_field_is_a_value_error():
    # protobuf raises UnicodeDecodeError (a ValueError); the message layer a plain ValueError.
    ours, ref = errors("make_tensor", b"\xff", TP.FLOAT, [1], [1.0])
    assert isinstance(ref, ValueError) and isinstance(ours, ValueError)
    ours, ref = errors("make_node", "Relu", [b"\xc3"], ["y"])
    assert isinstance(ref, ValueError) and isinstance(ours, ValueError)


def test_wrong_message_types_raise_type_error_like_protobuf():
    n, t, g = call("make_node", "Relu", ["x"], ["y"]), tensor(), small_graph()
    assert_same_error("make_graph", [t], "g", [], [])
    assert_same_error("make_graph", [n], "g", [n], [])
    assert_same_error("make_model", n)
    assert_same_error("make_sparse_tensor", g, t, [1])
    assert_same_error("make_sequence", "s", SP.TENSOR, [g])
    assert_same_error("make_map", "m", TP.STRING, ["str keys are not bytes"],
                      call("make_sequence", "s", SP.TENSOR, [t]))
    assert_same_error("make_map", "m", TP.INT64, [True], call("make_sequence", "s", SP.TENSOR, [t]))
    assert_same_error("make_value_info", "v", t)
    assert_same_error("make_function", "d", "f", [], [], [t], [])
    # onnx's own messages are not irmodel's: refused, not silently re-encoded.
    with pytest.raises(TypeError):
        helper.make_graph([n.ref], "g", [], [])


def test_make_model_refuses_repeated_and_message_fields_as_keywords_like_protobuf():
    g = small_graph()
    for kwargs in ({"metadata_props": []}, {"opset_import": []}, {"training_info": []},
                   {"no_such_field": 1}, {"ir_version": "8"}, {"ir_version": True}):
        assert_same_error("make_model", g, **kwargs)


def test_list_attribute_with_a_singular_attr_type_is_a_type_error():
    # The reference trips an internal `raise AssertionError` here; we say what is wrong.
    _, ref = errors("make_attribute", "a", [1], attr_type=AP.INT)
    assert isinstance(ref, AssertionError)
    with pytest.raises(TypeError, match="cannot have type INT"):
        helper.make_attribute("a", [1], attr_type=AP.INT)
    with pytest.raises(TypeError, match="UNDEFINED"):
        helper.make_attribute("a", [], attr_type=AP.UNDEFINED)


def test_make_optional_without_a_value_is_a_value_error():
    _, ref = errors("make_optional", "o", OP.TENSOR, None)
    assert isinstance(ref, AssertionError)  # the reference asserts
    with pytest.raises(ValueError, match="value is required"):
        helper.make_optional("o", OP.TENSOR, None)


def test_unknown_tensor_data_type_is_a_key_error_and_a_value_error():
    with pytest.raises(KeyError):
        helper.make_tensor("t", 99, [1], [1.0])
    with pytest.raises(ValueError):
        helper.make_tensor("t", 99, [1], b"", raw=True)


# -- edits of a model the reference built ------------------------------------------------
def reference_model() -> onnx.ModelProto:
    x = oh.make_tensor_value_info("x", TP.FLOAT, ["N", 4])
    outs = [oh.make_tensor_value_info(n, TP.FLOAT, ["N", 4]) for n in ("y", "aux", "z")]
    body = oh.make_graph([oh.make_node("Neg", ["x"], ["o"], name="inner")], "body", [],
                         [oh.make_tensor_value_info("o", TP.FLOAT, None)])
    nodes = [
        oh.make_node("LeakyRelu", ["x"], ["h"], name="act", alpha=0.1, doc_string="d"),
        oh.make_node("Add", ["h", "w"], ["y"], name="add"),
        oh.make_node("Identity", ["h"], ["aux"], name="copy"),
        oh.make_node("If", ["c"], ["z"], name="branch", then_branch=body, else_branch=body,
                     pads=[1, 2, 3], mode="edge"),
    ]
    w = oh.make_tensor("w", TP.FLOAT, [4], np.arange(4, dtype=np.float32).tobytes(), raw=True)
    g = oh.make_graph(nodes, "g", [x], outs, initializer=[w], doc_string="graph doc")
    m = oh.make_model(g, producer_name="reference", opset_imports=[oh.make_opsetid("", 21)])
    oh.set_model_props(m, {"k": "v"})
    return m


def test_edits_of_a_reference_model_change_exactly_what_was_edited():
    original = reference_model()
    data = original.SerializeToString()

    ours = irmodel.loads(data)
    g = ours.graph
    g.node[1].name = "renamed"
    g.node[0].attribute[0].f = 0.25
    g.node[3].attribute[2].ints.append(-4)  # pads: attributes are sorted (else_branch, mode, pads, ...)
    g.initializer.append(helper.make_tensor("b", TP.INT64, [2], [7, -(2**63)]))
    del g.output[1]
    got = irmodel.dumps(ours)

    ref = onnx.ModelProto()
    ref.CopyFrom(original)
    rg = ref.graph
    rg.node[1].name = "renamed"
    rg.node[0].attribute[0].f = 0.25
    rg.node[3].attribute[2].ints.append(-4)
    rg.initializer.append(oh.make_tensor("b", TP.INT64, [2], [7, -(2**63)]))
    del rg.output[1]
    assert got == ref.SerializeToString()

    back = onnx.ModelProto()
    back.ParseFromString(got)
    bg = back.graph
    assert [n.name for n in bg.node] == ["act", "renamed", "copy", "branch"]
    assert oh.get_node_attr_value(bg.node[0], "alpha") == 0.25
    assert oh.get_node_attr_value(bg.node[3], "pads") == [1, 2, 3, -4]
    assert [t.name for t in bg.initializer] == ["w", "b"]
    assert list(bg.initializer[1].int64_data) == [7, -(2**63)]
    assert [o.name for o in bg.output] == ["y", "z"]
    # Undo the intended edits with the reference API: what remains is the original, bit for bit.
    bg.node[1].name = "add"
    bg.node[0].attribute[0].f = 0.1
    del bg.node[3].attribute[2].ints[-1]
    del bg.initializer[1]
    bg.output.insert(1, original.graph.output[1])
    assert back.SerializeToString() == data


def test_edits_inside_a_subgraph_and_of_lazy_untouched_siblings():
    original = reference_model()
    ours = irmodel.loads(original.SerializeToString())
    ours.graph.node[3].attribute[0].g.node[0].op_type = "Abs"  # else_branch's node only
    ours.producer_version = "2"
    ref = onnx.ModelProto()
    ref.CopyFrom(original)
    ref.graph.node[3].attribute[0].g.node[0].op_type = "Abs"
    ref.producer_version = "2"
    assert irmodel.dumps(ours) == ref.SerializeToString()
    back = onnx.load_from_string(irmodel.dumps(ours))
    assert back.graph.node[3].attribute[1].name == "mode"
    assert oh.get_node_attr_value(back.graph.node[3], "then_branch").node[0].op_type == "Neg"


# -- property: random content, built through both APIs -----------------------------------
NAME = st.text(alphabet="ab_é中🙂\x00", max_size=4)
INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([-(2**63), 2**63 - 1, 0, -1]))
FLOAT = st.one_of(st.floats(), st.sampled_from([-0.0, math.nan, math.inf, -math.inf, 3.4028235e38, 1e-45]))
ELEMENT_STRATEGIES = {  # data type -> strategy for one element (non-raw)
    TP.FLOAT: FLOAT, TP.DOUBLE: FLOAT, TP.INT64: INT64, TP.INT32: st.integers(-(2**31), 2**31 - 1),
    TP.INT8: st.integers(-128, 127), TP.UINT8: st.integers(0, 255), TP.UINT16: st.integers(0, 65535),
    TP.INT16: st.integers(-32768, 32767), TP.UINT32: st.integers(0, 2**32 - 1),
    TP.UINT64: st.integers(0, 2**64 - 1), TP.BOOL: st.booleans(), TP.STRING: NAME,
    TP.FLOAT16: st.floats(width=16), TP.BFLOAT16: FLOAT, TP.INT4: st.integers(-8, 7),
    TP.UINT4: st.integers(0, 15), TP.FLOAT8E4M3FN: FLOAT, TP.FLOAT8E5M2: FLOAT,
}


@st.composite
def tensor_specs(draw, name=NAME):
    dt = draw(st.sampled_from(sorted(ELEMENT_STRATEGIES)))
    dims = draw(st.lists(st.integers(0, 3), max_size=2))
    n = math.prod(dims)
    raw = dt != TP.STRING and draw(st.booleans())
    if raw:
        bits = {TP.INT4: 4, TP.UINT4: 4}.get(dt, 8 * oh.tensor_dtype_to_np_dtype(dt).itemsize)
        vals = draw(st.binary(min_size=-(-n * bits // 8), max_size=-(-n * bits // 8)))
    else:
        vals = draw(st.lists(ELEMENT_STRATEGIES[dt], min_size=n, max_size=n))
    return ("tensor", draw(name), dt, dims, vals, raw)


@st.composite
def type_specs(draw, depth=2):
    kinds = ["tensor", "sparse"] + (["seq", "opt", "map"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind in ("tensor", "sparse"):
        shape = draw(st.none() | st.lists(st.none() | st.integers(0, 2**63 - 1) | NAME, max_size=3))
        return (kind, draw(st.sampled_from([TP.FLOAT, TP.INT64, TP.STRING])), shape)
    inner = draw(type_specs(depth - 1))
    if kind == "map":
        return ("map", draw(st.sampled_from([TP.INT64, TP.STRING])), inner)
    return (kind, inner)


def attr_values(depth: int):
    leaves = [
        INT64, FLOAT, NAME, st.binary(max_size=4), st.lists(INT64, min_size=1, max_size=3),
        st.lists(FLOAT, min_size=1, max_size=3), st.lists(NAME | st.binary(max_size=3), min_size=1, max_size=3),
        tensor_specs(), st.lists(tensor_specs(), min_size=1, max_size=2),
        st.tuples(st.just("sparse"), tensor_specs(), tensor_specs()),
        st.tuples(st.just("type"), type_specs()),
        st.tuples(st.just("empty"), st.sampled_from(sorted(helper._LIST_FIELDS))),
    ]
    if depth > 0:
        leaves.append(st.tuples(st.just("graph"), graph_specs(depth - 1)))
        leaves.append(st.tuples(st.just("graphs"), st.lists(graph_specs(depth - 1), min_size=1, max_size=2)))
    return st.one_of(leaves)


@st.composite
def node_specs(draw, depth: int):
    names = st.lists(NAME, max_size=3)
    return dict(op_type=draw(NAME), inputs=draw(names), outputs=draw(names), name=draw(st.none() | NAME),
                doc_string=draw(st.none() | NAME), domain=draw(st.none() | NAME), overload=draw(st.none() | NAME),
                attrs=draw(st.dictionaries(st.text(alphabet="abcé", min_size=1, max_size=3),
                                           attr_values(depth), max_size=3)))


@st.composite
def graph_specs(draw, depth: int = 2):
    dims = st.none() | st.lists(NAME | st.integers(0, 9), max_size=2)
    vi = st.tuples(NAME, st.sampled_from([TP.FLOAT, TP.INT64]), dims)
    return dict(nodes=draw(st.lists(node_specs(depth), max_size=3)), name=draw(NAME),
                inputs=draw(st.lists(vi, max_size=2)), outputs=draw(st.lists(vi, max_size=2)),
                initializer=draw(st.lists(tensor_specs(), max_size=2)), doc_string=draw(st.none() | NAME))


@st.composite
def model_specs(draw):
    return dict(graph=draw(graph_specs()),
                opsets=draw(st.none() | st.lists(st.tuples(NAME, INT64), max_size=2)),
                fields=draw(st.fixed_dictionaries({}, optional={
                    "producer_name": NAME, "producer_version": NAME, "domain": NAME, "doc_string": NAME,
                    "model_version": INT64, "ir_version": INT64})),
                props=draw(st.dictionaries(NAME, NAME, max_size=2)),
                function=draw(st.none() | st.tuples(NAME, NAME, st.lists(node_specs(0), max_size=2))))


def realize(h, v):
    """Build the message a spec describes with helper module ``h`` (ours or the reference)."""
    if isinstance(v, tuple):
        tag = v[0]
        if tag == "tensor":
            return h.make_tensor(*v[1:])
        if tag == "sparse":
            return h.make_sparse_tensor(realize(h, v[1]), realize(h, v[2]), [3])
        if tag == "graph":
            return build_graph(h, v[1])
        if tag == "graphs":
            return [build_graph(h, g) for g in v[1]]
        if tag == "empty":
            return ("empty", v[1])
        if tag == "type":
            return build_type(h, v[1])
    if isinstance(v, list):
        return [realize(h, x) for x in v]
    return v


def build_type(h, spec):
    kind = spec[0]
    if kind == "tensor":
        return h.make_tensor_type_proto(spec[1], spec[2])
    if kind == "sparse":
        return h.make_sparse_tensor_type_proto(spec[1], spec[2])
    if kind == "seq":
        return h.make_sequence_type_proto(build_type(h, spec[1]))
    if kind == "opt":
        return h.make_optional_type_proto(build_type(h, spec[1]))
    return h.make_map_type_proto(spec[1], build_type(h, spec[2]))


def build_node(h, spec):
    attrs = {}
    for key, value in spec["attrs"].items():
        value = realize(h, value)
        attrs[key] = (h.make_attribute(key, [], attr_type=value[1]) if isinstance(value, tuple)
                      and value[:1] == ("empty",) else value)
    # An AttributeProto is not an accepted make_node value: add empty-list ones afterwards.
    direct = {k: v for k, v in attrs.items() if not hasattr(v, "ref_attr_name")}
    node = h.make_node(spec["op_type"], spec["inputs"], spec["outputs"], name=spec["name"],
                       doc_string=spec["doc_string"], domain=spec["domain"], overload=spec["overload"], **direct)
    for k in sorted(set(attrs) - set(direct)):
        node.attribute.append(attrs[k])
    return node


def build_graph(h, spec):
    vis = [[h.make_tensor_value_info(n, t, s) for n, t, s in spec[k]] for k in ("inputs", "outputs")]
    return h.make_graph([build_node(h, n) for n in spec["nodes"]], spec["name"], vis[0], vis[1],
                        initializer=[realize(h, t) for t in spec["initializer"]], doc_string=spec["doc_string"])


def build_model(h, spec):
    kwargs = dict(spec["fields"])
    if spec["opsets"] is not None:
        kwargs["opset_imports"] = [h.make_opsetid(d, v) for d, v in spec["opsets"]]
    if spec["function"] is not None:
        domain, name, nodes = spec["function"]
        kwargs["functions"] = [h.make_function(domain, name, ["a"], ["b"], [build_node(h, n) for n in nodes],
                                               [h.make_opsetid("", 21)], attributes=["x"])]
    model = h.make_model(build_graph(h, spec["graph"]), **kwargs)
    h.set_metadata_props(model, spec["props"])
    return model


def _both(build, spec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return build(helper, spec), build(oh, spec)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(model_specs())
def test_random_models_serialize_exactly_as_the_reference(spec):
    ours, ref = _both(build_model, spec)
    assert_same_bytes(ours, ref)
    # Read back and re-encode every node from its decoded fields (a rename to the same name
    # also makes the name present, on both sides): still the reference's bytes.
    again = irmodel.loads(irmodel.dumps(ours))
    for node, ref_node in zip(again.graph.node, ref.graph.node):
        node.name = node.name
        ref_node.name = ref_node.name
    assert_same_bytes(again, ref)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(alphabet="abé", min_size=1, max_size=2), attr_values(1), min_size=1, max_size=2))
def test_random_attributes_serialize_exactly_as_the_reference(attrs):
    spec = dict(op_type="Op", inputs=["x"], outputs=["y"], name=None, doc_string=None, domain=None,
                overload=None, attrs=attrs)
    assert_same_bytes(*_both(build_node, spec))


@settings(max_examples=150, deadline=None)
@given(tensor_specs())
def test_random_tensors_serialize_exactly_as_the_reference(spec):
    assert_same_bytes(*_both(realize, spec))


def _message_paths(msg, path=()):
    """Every submessage of a reference message, as ``((field, index or None), ...)`` paths."""
    yield path
    for f, v in msg.ListFields():
        if f.type == f.TYPE_MESSAGE:
            for i, sub in (enumerate(v) if f.is_repeated else [(None, v)]):
                yield from _message_paths(sub, path + ((f.name, i),))


def _resolve(msg, path):
    for name, i in path:
        msg = getattr(msg, name)
        if i is not None:
            msg = msg[i]
    return msg


def _scalar_for(fd, text: str, n: int, f: float):
    if fd.type == fd.TYPE_STRING:
        return text
    if fd.type == fd.TYPE_BYTES:
        return text.encode()
    if fd.type in (fd.TYPE_FLOAT, fd.TYPE_DOUBLE):
        return f
    if fd.type == fd.TYPE_ENUM:
        return fd.enum_type.values[n % len(fd.enum_type.values)].number
    if fd.type == fd.TYPE_INT32:
        return n % 2**31
    if fd.type == fd.TYPE_UINT64:
        return n % 2**64
    return n


EDIT = st.tuples(st.integers(0, 10**6), st.sampled_from(["set", "clear", "del", "add", "append", "touch", "read"]),
                 st.integers(0, 10**6), NAME, INT64, FLOAT)


def _apply_edit(ours, ref, edit) -> None:
    """Apply one random edit to both messages through their common protobuf-style API."""
    pick, op, k, text, n, f = edit
    paths = list(_message_paths(ref))
    path = paths[pick % len(paths)]
    r, o = _resolve(ref, path), _resolve(ours, path)
    fd = r.DESCRIPTOR.fields[k % len(r.DESCRIPTOR.fields)]
    name, is_msg = fd.name, fd.type == fd.TYPE_MESSAGE
    if op == "set" and not fd.is_repeated and not is_msg:
        v = _scalar_for(fd, text, n, f)
        setattr(r, name, v)
        setattr(o, name, v)
    elif op == "clear":
        r.ClearField(name)
        o.ClearField(name)
    elif op == "del" and fd.is_repeated and len(getattr(r, name)):
        i = n % len(getattr(r, name))
        del getattr(r, name)[i]
        del getattr(o, name)[i]
    elif op == "add" and fd.is_repeated and is_msg:
        getattr(r, name).add()
        getattr(o, name).add()
    elif op == "append" and fd.is_repeated and not is_msg:
        v = _scalar_for(fd, text, n, f)
        getattr(r, name).append(v)
        getattr(o, name).append(v)
    elif op == "touch" and not fd.is_repeated and is_msg:  # write into a (possibly absent) submessage
        sub_r, sub_o = getattr(r, name), getattr(o, name)
        for g in sub_r.DESCRIPTOR.fields:
            if not g.is_repeated and g.type in (g.TYPE_STRING, g.TYPE_INT64, g.TYPE_INT32):
                if g.containing_oneof is None or sub_r.WhichOneof(g.containing_oneof.name) in (None, g.name):
                    v = _scalar_for(g, text, n, f)
                    setattr(sub_r, g.name, v)
                    setattr(sub_o, g.name, v)
                    break
    elif op == "read":  # decode lazily held fields; must not change the bytes
        for sub in (getattr(o, name),):
            list(sub) if fd.is_repeated else None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(model_specs(), st.lists(EDIT, min_size=1, max_size=8))
def test_random_edits_of_a_reference_model_match_the_same_edits_in_protobuf(spec, edits):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        data = build_model(oh, spec).SerializeToString()
    ours, ref = irmodel.loads(data), onnx.ModelProto.FromString(data)
    for edit in edits:
        _apply_edit(ours, ref, edit)
        assert_same_bytes(ours, ref)


# -- divergences of the message layer from protobuf, found while testing the helpers ------

def test_core_long_non_ascii_names_in_repeated_strings():
    long_name = "é" * 70000
    call("make_node", "Relu", [long_name], ["y"])


def test_core_reencoding_unpacks_fields_that_arrived_packed():
    # AttributeProto.ints is unpacked in onnx.proto but packed in onnx.proto3 (other writers).
    data = b"\x0a\x01a" + b"\x42\x03\x01\x02\x03" + b"\xa0\x01\x07"
    ours, ref = irmodel.loads(data, "AttributeProto"), onnx.AttributeProto.FromString(data)
    ours.name, ref.name = "b", "b"
    assert_same_bytes(ours, ref)


def test_core_setting_through_unset_oneof_member_clears_the_other():
    ours, ref = irmodel.TypeProto(), onnx.TypeProto()
    for tp in (ours, ref):
        tp.sequence_type.elem_type.tensor_type.elem_type = TP.FLOAT
        tp.tensor_type.elem_type = TP.INT64
    assert_same_bytes(ours, ref)


def test_core_reencoding_keeps_signalling_nan_bits():
    # A signalling NaN cannot survive a round trip through a Python float (the CPU quiets
    # it), so a re-encoded message must keep the float's original bits, as protobuf does.
    snan = bytes.fromhex("0100807f")
    data = oh.make_attribute("a", 1.0).SerializeToString().replace(struct.pack("<f", 1.0), snan)
    ours, ref = irmodel.loads(data, "AttributeProto"), onnx.AttributeProto.FromString(data)
    ours.name, ref.name = "b", "b"
    assert_same_bytes(ours, ref)
    t = oh.make_tensor("t", TP.FLOAT, [2], [1.0, 2.0]).SerializeToString().replace(struct.pack("<f", 2.0), snan)
    ours, ref = irmodel.loads(t, "TensorProto"), onnx.TensorProto.FromString(t)
    assert len(ours.float_data) == len(ref.float_data) == 2  # decoded, then re-encoded below
    ours.name, ref.name = "u", "u"
    assert_same_bytes(ours, ref)


def test_core_refuses_lone_surrogates_on_assignment():
    with pytest.raises(UnicodeEncodeError):
        irmodel.NodeProto().input.append("\ud800")


def test_core_refuses_bool_for_integer_fields():
    with pytest.raises(TypeError):
        irmodel.AttributeProto().i = True


def test_core_refuses_str_for_bytes_fields():
    with pytest.raises(TypeError):
        irmodel.AttributeProto().s = "text"


def test_core_two_handles_to_an_absent_repeated_field_stay_one_list():
    ours, ref = irmodel.NodeProto(), onnx.NodeProto()
    for n in (ours, ref):
        a, b = n.input, n.input
        a.append("x")
        b.append("y")
        b.append("z")
    assert_same_bytes(ours, ref)


@pytest.mark.parametrize("make_view", [
    lambda: memoryview(np.arange(5, dtype=np.float32)),
    lambda: memoryview(np.arange(12, dtype=np.int16).reshape(3, 4)),
    lambda: memoryview(np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]),  # not contiguous
    lambda: memoryview(b"abcdef")[::2],
    lambda: memoryview(np.arange(70_000, dtype=np.float64)),  # over the writer's 64 KiB direct-write size
], ids=["float32", "int16 2-d", "strided 2-d", "strided bytes", "large float64"])
def test_a_memoryview_of_wider_items_is_stored_as_its_bytes(make_view):
    # The reference takes only bytes; ours takes memoryviews (zero-copy) and must encode
    # exactly the bytes they hold, not one byte per element.
    view = make_view()
    ours = irmodel.TensorProto(name="t", raw_data=view)
    ours.string_data.append(view)
    ref = onnx.TensorProto(name="t", raw_data=view.tobytes())
    ref.string_data.append(view.tobytes())
    assert irmodel.dumps(ours) == ref.SerializeToString()
    assert len(ours.raw_data) == view.nbytes and bytes(ours.raw_data) == view.tobytes()
