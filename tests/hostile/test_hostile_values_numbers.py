"""Issue 31, item 1: every number from a file that reaches a message, a size or an
allocation is bounded first.

* an integer in a message is written in full up to `MAX_INT_DIGITS` digits, else by its
  length (`int_text`), and products of a file's dims are bounded (`irmodel.limits`): a
  sparse tensor whose dims multiply to a 5,600-digit number is checked (it made ``check``
  exit 3);
* a float from a file becomes an int as the reference's ``static_cast<int64_t>`` makes it
  on x86-64 (`dims.int64_of_float`): a Resize with ``inf`` among its scales gets the dim
  INT64_MIN, as onnx gives, not an internal error (and so for window sizes, depths, DFT
  and STFT lengths and steps), differentially against onnx.
"""

from __future__ import annotations

import math
import re
import sys

import onnx
import pytest
from hypothesis import given, settings, strategies as st

import irmodel
from irmodel import limits
from irmodel.inference import dims as D
from wirefmt import ParseError
from wirefmt.safetext import MAX_INT_DIGITS, int_text

import hostile_value_models as hv
from hostile_value_models import LONG_DIGITS, run_forms

# -- int_text -------------------------------------------------------------------------------------

def _digits(n: int) -> int:
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return len(str(abs(n)))
    finally:
        sys.set_int_max_str_digits(old)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(), st.integers(1, 20000).map(lambda k: 10 ** k),
                 st.integers(1, 20000).map(lambda k: -(10 ** k) + 1), st.integers(1, 60000).map(lambda b: 1 << b)))
def test_int_text_writes_small_ints_and_says_how_long_a_huge_one_is(n):
    text = int_text(n)
    digits = _digits(n)
    if digits <= MAX_INT_DIGITS:
        assert text == str(n)
    else:
        sign = "a negative" if n < 0 else "a"
        assert text == f"{sign} {digits:,}-digit number"


def test_int_text_of_a_number_past_a_million_bits_is_approximate_and_quick():
    assert int_text(1 << (1 << 21)).startswith("a number of about 631,")
    assert limits.int_text is int_text  # one helper, re-exported


def test_a_json_number_of_thousands_of_digits_is_a_parse_error_saying_its_length():
    with pytest.raises(ParseError, match=r"a 5,000-digit number is out of range"):
        irmodel.from_dict({"ir_version": "1" * 5000}, "ModelProto")
    with pytest.raises(ParseError, match=r"a 301-digit number is out of range for int64"):
        irmodel.from_dict({"ir_version": 1e300}, "ModelProto")
    with pytest.raises(ParseError, match=r"a 61-digit number is not a value of"):
        irmodel.from_dict({"graph": {"node": [{"attribute": [{"name": "a", "type": 10 ** 60}]}]}}, "ModelProto")
    assert irmodel.from_dict({"ir_version": "-" + "0" * 100 + "5"}, "ModelProto").ir_version == -5


# -- products of a file's dims ----------------------------------------------------------------------

def test_a_sparse_tensor_of_a_5600_digit_size_is_checked_and_its_bound_said():
    model = hv.huge_sparse(300, -1)
    with pytest.raises(irmodel.ValidationError) as info:
        irmodel.check_model(model)
    [problem] = [p for p in info.value.problems if p.code == "S808"]
    assert "out of range [0, " in problem.message and "(found -1)" in problem.message
    assert not LONG_DIGITS.search(problem.message)
    irmodel.check_model(hv.huge_sparse(300, (1 << 62) - 1))  # an index past int64's sqrt is in range


def test_a_sparse_index_of_a_small_size_keeps_its_exact_bound():
    values = irmodel.helper.make_tensor("v", 1, [1], [1.0])
    indices = irmodel.helper.make_tensor("i", 7, [1], [12])
    sparse = irmodel.helper.make_sparse_tensor(values, indices, [3, 4])
    model = hv._model([irmodel.helper.make_node("Identity", ["v"], ["o"])], [],
                      [irmodel.helper.make_tensor_value_info("o", 1, [1])], sparse=[sparse])
    with pytest.raises(irmodel.ValidationError, match=re.escape("out of range [0, 11] (found 12)")):
        irmodel.check_model(model)


@pytest.mark.parametrize("rows, sorted_", [([[0] * 300, [0] * 299 + [1]], True),
                                           ([[0] * 299 + [1], [0] * 300], False),
                                           ([[1] + [0] * 299, [0] + [5] * 299], False),
                                           ([[0] * 300, [0] * 300], False)])
def test_coordinate_indices_of_a_huge_dense_shape_are_ordered_lexicographically(rows, sorted_):
    """As the linear indices order them (the reference multiplies them out), without
    computing a 5,600-digit linear index per row; agreed with onnx's checker."""
    values = irmodel.helper.make_tensor("v", 1, [2], [1.0, 2.0])
    indices = irmodel.helper.make_tensor("i", 7, [2, 300], [v for row in rows for v in row])
    sparse = irmodel.helper.make_sparse_tensor(values, indices, [1 << 62] * 300)
    model = hv._model([irmodel.helper.make_node("Identity", ["v"], ["o"])], [],
                      [irmodel.helper.make_tensor_value_info("o", 1, [2])], sparse=[sparse])
    ours = None
    try:
        irmodel.check_model(model)
    except irmodel.ValidationError as exc:
        ours = [p.code for p in exc.problems]
    assert (ours is None) == sorted_ and (sorted_ or ours == ["S809"])


def test_every_command_on_a_sparse_tensor_of_a_5600_digit_size(tmp_path):
    for index in (-1, 0):
        statuses = run_forms(tmp_path, hv.huge_sparse(300, index))
        assert statuses["check"] == (1 if index < 0 else 0)


# -- floats from a file becoming ints ---------------------------------------------------------------

def test_int64_of_float_is_the_x86_cast():
    assert D.int64_of_float(2.9) == 2 and D.int64_of_float(-2.9) == -2
    assert D.int64_of_float(2.5, math.floor) == 2 and D.int64_of_float(-2.5, math.floor) == -3
    for bad in (math.inf, -math.inf, math.nan, 1e300, -1e300, 9.3e18, -9.3e18):
        assert D.int64_of_float(bad) == D.INT64_MIN
    assert D.int64_of_float(-9.223372036854775808e18) == D.INT64_MIN  # exactly INT64_MIN: in range
    assert D.int64_of_float(12) == 12  # an int stays
    assert D.f32(1e39) == math.inf and D.f32(-1e39) == -math.inf and D.f32(1.5) == 1.5
    assert D.float_div(1.0, 0.0) == math.inf and D.float_div(-1.0, 0.0) == -math.inf
    assert D.float_div(1.0, -0.0) == -math.inf and math.isnan(D.float_div(0.0, 0.0))


def _output_dims(result) -> object:
    t = result.graph.output[0].type.tensor_type
    if not t.HasField("shape"):
        return "no rank"
    return [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]


def _onnx_outcome(model) -> object:
    proto = onnx.load_from_string(irmodel.dumps(model))
    try:
        return _output_dims(onnx.shape_inference.infer_shapes(proto, strict_mode=True))
    except onnx.shape_inference.InferenceError:
        return "error"


def _our_outcome(model) -> object:
    try:
        return _output_dims(irmodel.infer_shapes(model, strict_mode=True))
    except irmodel.InferenceError as exc:
        assert "internal error" not in str(exc), str(exc)
        return "error"


@pytest.mark.parametrize("op", hv.FLOAT_OPS)
@pytest.mark.parametrize("value", hv.HOSTILE_FLOATS, ids=repr)
def test_a_hostile_float_becomes_the_dim_onnx_makes_of_it(op, value):
    model = hv.float_input_model(op, value)
    assert _our_outcome(model) == _onnx_outcome(model)


def test_a_resize_with_inf_in_its_scales_is_inferred_as_onnx_infers_it():
    result = irmodel.infer_shapes(hv.float_input_model("Resize", math.inf), strict_mode=True)
    assert _output_dims(result) == [1, 1, D.INT64_MIN, 8]


def test_a_stft_step_of_zero_is_no_internal_error():
    model = hv.float_input_model("STFT-step", 0.0)
    assert _our_outcome(model) == _onnx_outcome(model)


@pytest.mark.parametrize("op", hv.FLOAT_OPS)
def test_every_command_on_a_float_that_is_inf(tmp_path, op):
    run_forms(tmp_path, hv.float_input_model(op, math.inf))


# -- properties -----------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_int64_of_float_is_numpys_cast(x):
    """numpy's float64 -> int64 cast is the processor's (cvttsd2si): the same oracle."""
    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = int(np.array([x]).astype(np.int64)[0])
    assert D.int64_of_float(x) == expected


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 1 << 62), st.floats(width=32, allow_nan=True, allow_infinity=True),
       st.sampled_from(["Resize", "Upsample"]))
def test_a_resize_of_any_dim_by_any_float_scale_is_inferred_as_onnx_infers_it(dim, scale, op):
    if op == "Resize":
        node = irmodel.helper.make_node("Resize", ["x", "", "sc"], ["y"])
        inits = [irmodel.helper.make_tensor("sc", 1, [2], [1.0, scale])]
        opset = 18
    else:
        node = irmodel.helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, scale])
        inits, opset = [], 8
    model = hv._model([node], [irmodel.helper.make_tensor_value_info("x", 1, [1, dim])],
                      [irmodel.helper.make_tensor_value_info("y", 1, None)], inits, opset=opset)
    assert _our_outcome(model) == _onnx_outcome(model)


# -- the version converter --------------------------------------------------------------------------

@pytest.mark.parametrize("p, says", [(math.inf, "is not an integer"), (math.nan, "is not an integer"),
                                     (2.5, "is not an integer"), (1e19, "is outside int64")])
def test_an_lppool_p_that_is_no_int64_is_refused_by_the_converter(p, says):
    from irmodel.version_converter import ConversionError, convert_version

    node = irmodel.helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2], p=p)
    model = hv._model([node], [irmodel.helper.make_tensor_value_info("x", 1, [1, 1, 4])],
                      [irmodel.helper.make_tensor_value_info("y", 1, None)], opset=1)
    model.ir_version = 3
    with pytest.raises(ConversionError, match=says):
        convert_version(model, 2)


def test_a_prelu_slope_of_a_huge_rank_is_judged_without_multiplying_its_dims():
    """PRelu down to 6: the slope must have one element, judged dim by dim (dims of 2**62
    multiply to a 56,000-digit number at rank 3,000, quadratically in the rank)."""
    from irmodel.version_converter import ConversionError, convert_version

    rank = 3_000
    node = irmodel.helper.make_node("PRelu", ["x", "s"], ["y"])
    model = hv._model([node], [irmodel.helper.make_tensor_value_info("x", 1, [2] * rank),
                               irmodel.helper.make_tensor_value_info("s", 1, [1 << 62] * rank)],
                      [irmodel.helper.make_tensor_value_info("y", 1, None)], opset=9)
    with pytest.raises(ConversionError, match="one element"):
        convert_version(model, 6)

    ones = hv._model([node], [irmodel.helper.make_tensor_value_info("x", 1, [2] * 4),
                              irmodel.helper.make_tensor_value_info("s", 1, [1] * rank)],
                     [irmodel.helper.make_tensor_value_info("y", 1, None)], opset=9)
    assert convert_version(ones, 6).opset_import[0].version == 6
