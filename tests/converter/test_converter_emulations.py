"""Operators computed with older ones: Trilu, Mod, ArgMax/ArgMin select_last_index, Tile,
GroupNormalization, Equal on floats, Resize-18's axes (`irmodel._converter.emulations`).

Differential in onnxruntime: the node tests' models are converted down and run on the
tests' inputs against their expected outputs; models built here run unconverted and
converted on the same inputs.  Where onnxruntime has no kernel for the older operator
(Tile-1), the model converted down is checked by onnx's full check and converted back up,
and that must compute the original's outputs.  onnx's converter raises "No Adapter" or
"No Previous Version" for every one of these.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as oh
from onnx import numpy_helper

import irmodel
from irmodel import version_converter as vc

import converter_sweep as cs

PREFIXES = ("test_tril", "test_triu", "test_mod_", "test_argmax", "test_argmin", "test_group_normalization",
            "test_resize_")


@pytest.fixture(scope="module")
def cases() -> dict:
    """name -> (model bytes, inputs, expected outputs) of the node tests of these operators."""
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = node.collect_testcases(None)
    out = {}
    for c in found:
        if c.name.startswith(PREFIXES) and c.data_sets:
            ins, outs = c.data_sets[0]
            if all(isinstance(x, np.ndarray) for x in list(ins) + list(outs)):
                out[c.name] = (c.model.SerializeToString(), list(ins), list(outs))
    return out


def _ours(model):
    return irmodel.loads(model if isinstance(model, bytes) else model.SerializeToString(), "ModelProto")


def _run(model, inputs) -> list:
    """onnxruntime's outputs; an IR version newer than onnxruntime reads is lowered (the
    node tests of new operators carry the newest, and the converted model needs none of it)."""
    m = _ours(model) if isinstance(model, bytes) else model
    if m.ir_version > 8:
        m = irmodel.loads(irmodel.dumps(m), "ModelProto")
        m.ir_version = 8
    return cs.run(irmodel.dumps(m), inputs)


def _converted_computes(cases, name: str, target: int) -> bool:
    data, ins, outs = cases[name]
    out = vc.convert_version(_ours(data), target)
    assert all(o.version == target for o in out.opset_import if o.domain == "")
    return cs.matches(_run(out, ins), outs)


def _ops(model) -> list[str]:
    return [n.op_type for n in model.graph.node]


# -- Trilu --------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", [9, 11, 13])
def test_trilu_node_tests_compute_the_same_below_14(cases, target):
    names = [n for n in cases if n.startswith(("test_tril", "test_triu"))]
    assert len(names) >= 18
    wrong = [n for n in names if not _converted_computes(cases, n, target)]
    assert wrong == []


def _trilu(dims, k=None, upper=1):
    inputs = [oh.make_tensor_value_info("x", T.FLOAT, dims)]
    inits = []
    if k is not None:
        inits.append(numpy_helper.from_array(np.array(k, np.int64), "k"))
    g = oh.make_graph([oh.make_node("Trilu", ["x"] + (["k"] if k is not None else []), ["y"], upper=upper)],
                      "g", inputs, [oh.make_tensor_value_info("y", T.FLOAT, dims)], inits)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 14)], ir_version=8)


@pytest.mark.parametrize("k, upper", [(None, 1), (1, 1), (-1, 0), (2, 0)])
def test_trilu_with_dims_known_only_when_run_makes_its_mask_with_range(k, upper):
    """Range from 11, its function body (a Loop) below."""
    m = _trilu(["b", "m", "n"], k, upper)
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 5
    expected = _run(m.SerializeToString(), [x])
    for target, made_by in ((11, "Range"), (9, "Loop")):
        out = vc.convert_version(_ours(m), target)
        assert made_by in _ops(out) and "Trilu" not in _ops(out)
        np.testing.assert_array_equal(_run(out, [x])[0], expected[0])


def test_trilu_with_known_dims_and_constant_k_is_a_where_over_a_constant_mask():
    m = _trilu([3, 4], 1, 1)
    out = vc.convert_version(_ours(m), 9)
    assert _ops(out) == ["Constant", "Constant", "Where"]
    x = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    np.testing.assert_array_equal(_run(out, [x])[0], np.triu(x, 1))


def test_trilu_below_9_is_reported_where_does_not_exist():
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(_trilu([3, 4])), 8)
    (p,) = info.value.problems
    assert p.op_type == "Trilu" and p.code == "V001"


# -- Mod ----------------------------------------------------------------------------------------

#: The reasons a Mod node test is reported below 10 (its type cannot be computed exactly in
#: double, or float fmod=0, which is new in 28); every other node test must compute right.
MOD_REPORTED = ("cannot be computed exactly", "is new in version 28")


@pytest.mark.parametrize("target", [7, 8, 9])
def test_mod_node_tests_compute_the_same_below_10_or_are_reported_for_their_type(cases, target):
    names = [n for n in cases if n.startswith("test_mod_")]
    right, reported, wrong = [], [], []
    for n in names:
        try:
            (right if _converted_computes(cases, n, target) else wrong).append(n)
        except vc.ConversionError as e:
            assert any(r in str(e) for r in MOD_REPORTED), str(e)
            reported.append(n)
    assert wrong == []
    assert len(right) >= 9 and {"test_mod_mixed_sign_float32", "test_mod_mixed_sign_int32",
                                 "test_mod_broadcast", "test_mod_uint32"} <= set(right)


def _mod(elem, fmod, dtype):
    g = oh.make_graph([oh.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)], "g",
                      [oh.make_tensor_value_info("a", elem, [8]), oh.make_tensor_value_info("b", elem, [8])],
                      [oh.make_tensor_value_info("y", elem, [8])])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("elem, dtype, fmod", [(T.INT32, np.int32, 0), (T.INT32, np.int32, 1),
                                               (T.INT8, np.int8, 1), (T.FLOAT, np.float32, 1),
                                               (T.FLOAT16, np.float16, 1)])
def test_mod_edges_match_onnxruntime_mod_13(elem, dtype, fmod):
    """Signs, zero dividends, exact multiples, large quotients, float division by zero."""
    a = np.array([-7, 7, -7, 7, 0, 12, -100, 127], dtype)
    b = np.array([3, -3, -3, 3, 5, 4, 3, 1], dtype)
    if dtype in (np.float32, np.float16):
        a = (a / np.array(4, dtype)).astype(dtype)
        b[4] = 0
        a[6] = dtype(1000.25)
    m = _mod(elem, fmod, dtype)
    expected = _run(m.SerializeToString(), [a, b])[0]
    got = _run(vc.convert_version(_ours(m), 9), [a, b])[0]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("elem", [T.INT64, T.UINT64, T.DOUBLE])
def test_mod_on_types_a_double_does_not_hold_exactly_is_reported(elem):
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(_mod(elem, 1, None)), 9)
    assert info.value.problems[0].code == "V004"


# -- ArgMax / ArgMin select_last_index ------------------------------------------------------------

@pytest.mark.parametrize("target", [7, 10, 11])
def test_select_last_index_node_tests_compute_the_same_below_12(cases, target):
    names = [n for n in cases if n.startswith(("test_argmax", "test_argmin")) and "select_last_index" in n]
    assert len(names) >= 12
    wrong = [n for n in names if not _converted_computes(cases, n, target)]
    assert wrong == []


def _argmax_last(dims, axis=1):
    g = oh.make_graph([oh.make_node("ArgMax", ["x"], ["y"], axis=axis, select_last_index=1)], "g",
                      [oh.make_tensor_value_info("x", T.FLOAT, dims)],
                      [oh.make_tensor_value_info("y", T.INT64, None)])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], ir_version=8)


def test_select_last_index_with_the_axis_size_unknown_reverses_with_a_slice_from_10():
    m = _argmax_last([2, "n"], axis=-1)
    x = np.array([[1, 3, 3, 0], [2, 2, 1, 2]], np.float32)
    expected = _run(m.SerializeToString(), [x])[0]
    out = vc.convert_version(_ours(m), 10)
    assert "Slice" in _ops(out) and "Gather" in _ops(out)
    np.testing.assert_array_equal(_run(out, [x])[0], expected)
    with pytest.raises(vc.ConversionError) as info:  # Slice-1 has no steps
        vc.convert_version(_ours(m), 9)
    assert info.value.problems[0].op_type == "ArgMax"


def test_dims_too_large_for_a_constant_are_read_when_the_graph_runs():
    """No constant sized by the model's dims is made: a declared 10**5 x 10**5 Trilu input,
    a 10**9-long ArgMax axis, 10**9 GroupNormalization channels convert in moments."""
    big = 10**9
    out = vc.convert_version(_ours(_trilu([10**5, 10**5], 1)), 11)
    assert "Range" in _ops(out)
    out = vc.convert_version(_ours(_argmax_last([2, big])), 11)
    assert "Slice" in _ops(out)
    scale = np.ones(3, np.float32)
    out = vc.convert_version(_ours(_group_norm(18, scale, scale, False, dims=(1, 3 * big, 1))), 21)
    assert "Expand" in _ops(out)
    assert all(t.ByteSize() < 1000 for t in out.graph.initializer)


# -- Tile 1 <-> 6 -------------------------------------------------------------------------------

def _tile13(repeats, elem=T.FLOAT, dims=(2, 3)):
    g = oh.make_graph([oh.make_node("Tile", ["x", "r"], ["y"])], "g", [oh.make_tensor_value_info("x", elem, dims)],
                      [oh.make_tensor_value_info("y", elem, [d * r for d, r in zip(dims, repeats)])],
                      [numpy_helper.from_array(np.array(repeats, np.int64), "r")])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("repeats", [[1, 4], [3, 1], [1, 1], [0, 1]])
def test_tile_down_to_1_and_back_computes_the_same(repeats):
    """onnxruntime runs no Tile-1: the model below 6 must pass onnx's full check, and
    converted back up compute what the original computes."""
    m = _tile13(repeats)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = _run(m.SerializeToString(), [x])[0]
    down = vc.convert_version(_ours(m), 5)
    assert _ops(down).count("Tile") == sum(1 for r in repeats if r != 1)
    onnx.checker.check_model(onnx.load_from_string(irmodel.dumps(down)), full_check=True)
    back = vc.convert_version(down, 13)
    np.testing.assert_array_equal(_run(back, [x])[0], expected)


def test_tile_down_repeating_several_axes_is_a_chain_of_tile_1():
    """One Tile-1 per axis.  Going back up needs the rank of the chain's inner values,
    which inference does not give for Tile-1 (onnx's neither): reported (V007)."""
    down = vc.convert_version(_ours(_tile13([2, 3])), 5)
    onnx.checker.check_model(onnx.load_from_string(irmodel.dumps(down)), full_check=True)
    tiles = [n for n in down.graph.node if n.op_type == "Tile"]
    consts = {n.output[0]: float(irmodel.numpy_helper.to_array(n.attribute[0].t))
              for n in down.graph.node if n.op_type == "Constant"}
    assert [(consts[n.input[1]], consts[n.input[2]]) for n in tiles] == [(2.0, 0.0), (3.0, 1.0)]
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(down, 13)
    assert [p.code for p in info.value.problems] == ["V007"]


@pytest.mark.parametrize("tiles, axis", [(3, 0), (2, 1), (2, -1)])
def test_tile_1_up_repeats_the_whole_input_along_its_axis(tiles, axis):
    g = oh.make_graph([oh.make_node("Tile", ["x", "t", "a"], ["y"])], "g",
                      [oh.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                      [oh.make_tensor_value_info("y", T.FLOAT, None)],
                      [numpy_helper.from_array(np.array(tiles, np.float32), "t"),
                       numpy_helper.from_array(np.array(axis, np.float32), "a")])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 5)], ir_version=3)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    up = vc.convert_version(_ours(m), 13)
    up.ir_version = 8
    np.testing.assert_array_equal(_run(up, [x])[0], np.concatenate([x] * tiles, axis=axis))


def test_tile_down_with_repeats_known_only_when_run_or_integers_is_reported():
    g = oh.make_graph([oh.make_node("Tile", ["x", "r"], ["y"])], "g",
                      [oh.make_tensor_value_info("x", T.FLOAT, [2, 3]), oh.make_tensor_value_info("r", T.INT64, [2])],
                      [oh.make_tensor_value_info("y", T.FLOAT, None)])
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], ir_version=8)), 5)
    assert info.value.problems[0].code == "V002"
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(_tile13([2, 2], T.INT32)), 5)
    assert info.value.problems[0].code == "V004"


# -- GroupNormalization 18 <-> 21 ----------------------------------------------------------------

def _group_norm(opset: int, scale, bias, as_inputs: bool, dims=(2, 6, 3, 3)):
    inputs = [oh.make_tensor_value_info("x", T.FLOAT, list(dims))]
    inits = []
    if as_inputs:
        inputs += [oh.make_tensor_value_info("scale", T.FLOAT, [len(scale)]),
                   oh.make_tensor_value_info("bias", T.FLOAT, [len(bias)])]
    else:
        inits = [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")]
    g = oh.make_graph([oh.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=3,
                                    epsilon=1e-5)], "g", inputs,
                      [oh.make_tensor_value_info("y", T.FLOAT, list(dims))], inits)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)], ir_version=8)


@pytest.mark.parametrize("as_inputs", [False, True])
def test_group_norm_18_up_to_21_and_back_computes_the_same(as_inputs):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 3, 3)).astype(np.float32)
    scale, bias = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    m = _group_norm(18, scale, bias, as_inputs)
    feeds = [x] + ([scale, bias] if as_inputs else [])
    expected = _run(m.SerializeToString(), feeds)[0]
    up = vc.convert_version(_ours(m), 21)
    assert _ops(up)[-1] == "GroupNormalization"
    np.testing.assert_allclose(_run(up, feeds)[0], expected, rtol=1e-4, atol=1e-5)
    down = vc.convert_version(up, 18)
    np.testing.assert_allclose(_run(down, feeds)[0], expected, rtol=1e-4, atol=1e-5)
    if not as_inputs:  # per-channel constants equal within each group: one node again
        assert _ops(down) == ["Constant", "Constant", "GroupNormalization"]


@pytest.mark.parametrize("target", [18, 17])
def test_group_norm_21_node_tests_compute_the_same_below_21(cases, target):
    names = [n for n in cases if n.startswith("test_group_normalization")]
    assert len(names) >= 4
    wrong = [n for n in names if not _converted_computes(cases, n, target)]
    assert wrong == []


# -- Equal on floats below 11 ---------------------------------------------------------------------

@pytest.mark.parametrize("elem, dtype", [(T.FLOAT, np.float32), (T.DOUBLE, np.float64), (T.FLOAT16, np.float16)])
@pytest.mark.parametrize("target", [7, 10])
def test_equal_on_floats_below_11_matches_equal_13_with_nan_and_infinities(elem, dtype, target):
    g = oh.make_graph([oh.make_node("Equal", ["a", "b"], ["y"])], "g",
                      [oh.make_tensor_value_info("a", elem, [9]), oh.make_tensor_value_info("b", elem, [1])],
                      [oh.make_tensor_value_info("y", T.BOOL, [9])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], ir_version=8)
    out = vc.convert_version(_ours(m), target)
    assert "Equal" not in _ops(out)
    a = np.array([1, np.nan, np.inf, -np.inf, 2, 0, -0.0, 3, 65504], dtype)
    for b in (np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0, 65504):
        feeds = [a, np.array([b], dtype)]
        np.testing.assert_array_equal(_run(out, feeds)[0], _run(m.SerializeToString(), feeds)[0])


def test_equal_on_integers_below_11_stays_equal():
    g = oh.make_graph([oh.make_node("Equal", ["a", "b"], ["y"])], "g",
                      [oh.make_tensor_value_info("a", T.INT32, [3]), oh.make_tensor_value_info("b", T.INT32, [3])],
                      [oh.make_tensor_value_info("y", T.BOOL, [3])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], ir_version=8)
    assert _ops(vc.convert_version(_ours(m), 7)) == ["Equal"]


# -- Resize-18's axes -----------------------------------------------------------------------------

@pytest.mark.parametrize("target", [17, 13, 11])
def test_resize_axes_node_tests_compute_the_same_below_18(cases, target):
    names = [n for n in cases if n.startswith("test_resize_") and "_axes_" in n]
    assert len(names) >= 6
    wrong = [n for n in names if not _converted_computes(cases, n, target)]
    assert wrong == []


def test_resize_axes_with_the_rank_unknown_is_reported():
    g = oh.make_graph([oh.make_node("Resize", ["x", "", "s"], ["y"], axes=[2, 3])], "g",
                      [oh.make_tensor_value_info("x", T.FLOAT, None), oh.make_tensor_value_info("s", T.FLOAT, [2])],
                      [oh.make_tensor_value_info("y", T.FLOAT, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)], ir_version=8)
    with pytest.raises(vc.ConversionError) as info:
        vc.convert_version(_ours(m), 13)
    assert info.value.problems[0].code == "V007"
