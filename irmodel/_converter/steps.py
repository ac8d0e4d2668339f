"""The operator changelog as the converter reads it: what each version step changed.

``STEPS[(domain, op, version)]`` lists the changes made at ``version`` (the since_version
of the newer schema); the driver applies them in order going up and in reverse going
down.  A step whose only change is the types the operator accepts has no entry: the
driver checks every converted node's types against the target schema (`fit`).  Steps
where the schema shows no change at all but the documentation changed the meaning are
listed in ``REVIEWED`` with what changed and why nothing needs doing, so that the test
that holds this table to the schemas (every step that is not type-only is here) passes
only after someone read the changelog entry.

Read it like the changelog: opset by opset.
"""

from __future__ import annotations

from . import adapters as a
from . import emulations as e
from . import rewrites as r
from .changes import (ABSENT, ANY, FLOAT, INT64, ONES, AttrAdded, AttrRemoved, AttrRenamed,
                      AttrToInput, AttrValuesAdded, Change, Code, InputAdded, NegativeAxes,
                      OutputAdded, Refused)

ONNX, ML = "", "ai.onnx.ml"

STEPS: dict[tuple[str, str, int], tuple[Change, ...]] = {}
REVIEWED: dict[tuple[str, str, int], str] = {}


def _at(version: int, ops, *changes: Change, domain: str = ONNX) -> None:
    for op in (ops,) if isinstance(ops, str) else ops:
        STEPS[(domain, op, version)] = STEPS.get((domain, op, version), ()) + changes


def _same(version: int, ops, why: str, domain: str = ONNX) -> None:
    for op in (ops,) if isinstance(ops, str) else ops:
        REVIEWED[(domain, op, version)] = why


def changes_of(domain: str, op: str, version: int) -> tuple[Change, ...]:
    return STEPS.get((domain, op, version), ())


_BROADCASTING = ("Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less")
_REDUCE = ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
           "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare")

# -- opset 2 -----------------------------------------------------------------------------------
_at(2, "Pad", AttrRenamed("paddings", "pads"))
_at(2, "Split", Code(a.split_input_to_attr_up, None, "input 'split' became the attribute 'split'"))
_at(2, ("LpPool", "GlobalLpPool"), Code(a.lp_p_up, a.lp_p_down, "p is an int, was a float"))

# -- opset 3 -----------------------------------------------------------------------------------
_at(3, "GRU", AttrAdded("linear_before_reset", old=0),
    Code(None, a.gru_y_h_down, "output Y_h became optional"))

# -- opset 4 -----------------------------------------------------------------------------------
_at(4, "Concat", Code(a.concat_axis_up, None, "axis became required (default was 1)"))

# -- opset 5 -----------------------------------------------------------------------------------
_at(5, "Reshape", AttrRemoved("consumed_inputs"), AttrToInput("shape", 1))

# -- opset 6 -----------------------------------------------------------------------------------
_at(6, ("Abs", "Add", "Ceil", "Clip", "Div", "Dropout", "Elu", "Exp", "Floor", "HardSigmoid",
        "InstanceNormalization", "LeakyRelu", "Log", "Max", "Mean", "Min", "Mul", "Neg", "PRelu",
        "Reciprocal", "Relu", "Selu", "Sigmoid", "Sqrt", "Sub", "Sum", "Tanh"),
    AttrRemoved("consumed_inputs"))
_at(6, "BatchNormalization", AttrRemoved("consumed_inputs", down_value=[0, 0]))
_at(6, "Cast", Code(a.cast_to_int_up, a.cast_to_int_down, "'to' is a type number, was a name"))
_at(6, "Tile", Code(e.tile_up, e.tile_down, "tiles and axis (one axis) became repeats (every axis)"))
_same(6, "Gemm", "Gemm-6 only dropped the legacy consumed_inputs-free spelling; same attributes")

# -- opset 7 -----------------------------------------------------------------------------------
_at(7, _BROADCASTING, AttrRemoved("axis"), AttrRemoved("broadcast"),
    Code(r.legacy_broadcast_up, a.legacy_broadcast_down, "numpy-style broadcasting"))
# (legacy_broadcast_up reads broadcast/axis, so it runs before they are removed)
for _op in _BROADCASTING:
    STEPS[(ONNX, _op, 7)] = STEPS[(ONNX, _op, 7)][2:] + STEPS[(ONNX, _op, 7)][:2]
_at(7, "Gemm", AttrRemoved("broadcast", down_value=1),
    Code(a.gemm_matrices, a.gemm_matrices, "C broadcasts unidirectionally to (M, N)"))
_at(7, ("BatchNormalization", "Dropout"), AttrRemoved("is_test", down_value=1))
_at(7, ("GRU", "LSTM", "RNN"), AttrRemoved("output_sequence"))
_at(7, "AveragePool", AttrAdded("count_include_pad", old=0))
_at(7, "PRelu", Code(None, a.prelu_down, "slope broadcasts unidirectionally"))
_at(7, "Upsample", Code(a.upsample_scales_up, a.upsample_scales_down,
                        "height_scale/width_scale became scales"))

# -- opset 8 -----------------------------------------------------------------------------------
_at(8, ("Max", "Mean", "Min", "Sum"), Code(None, a.same_shapes_down, "multidirectional broadcasting"))
_at(8, "MaxPool", AttrAdded("storage_order", old=0), OutputAdded(1, "Indices"))

# -- opset 9 -----------------------------------------------------------------------------------
_at(9, "BatchNormalization", AttrRemoved("spatial", neutral=1))
_at(9, "Upsample", AttrToInput("scales", 1, elem=FLOAT, as_float=True))
_at(9, ("Flatten", "Greater", "Less"), Code(None, r.widen_down, "integer types"))
_at(9, "Constant", Code(None, r.constant_to_initializer_down, "types other than float"))
_at(9, "Scan", Code(r.scan_8_9_up, r.scan_8_9_down, "no batch axis; sequence_lens removed"))

# -- opset 10 ----------------------------------------------------------------------------------
_at(10, ("AveragePool",), AttrAdded("ceil_mode", old=0))
_at(10, "MaxPool", AttrAdded("ceil_mode", old=0), AttrAdded("dilations", old=ONES))
_at(10, "Upsample", Code(r.upsample_to_resize_up, None, "deprecated: Resize-10 computes the same"))
_at(10, "Resize", Code(None, r.resize_to_upsample_down, "below 10, Resize-10 is Upsample-9"))
_at(10, "Slice", AttrToInput("starts", 1), AttrToInput("ends", 2), AttrToInput("axes", 3),
    Code(None, a.slice_steps_down, "input 'steps' added"))
_at(10, "TopK", AttrToInput("k", 1, single=True))
_same(10, "Dropout", "the mask output's type is bool (was T)")
_at(10, "Mod", Code(None, e.mod_down, "new: below 10 computed in double where that is exact"))

# -- opset 11 ----------------------------------------------------------------------------------
_at(11, ("ArgMax", "ArgMin"), NegativeAxes("axis", default=0))
_at(11, ("Softmax", "LogSoftmax", "Hardmax"), NegativeAxes("axis", default=1))
_at(11, ("Concat", "Gather", "Flatten"), NegativeAxes("axis"))
_at(11, "Split", NegativeAxes("axis", default=0), AttrToInput("split", 1))
_at(11, "Compress", NegativeAxes("axis"))
_at(11, _REDUCE, NegativeAxes("axes"))
_at(11, "Squeeze", NegativeAxes("axes"))
_at(11, "Unsqueeze", Code(None, a.unsqueeze_negative_down, "negative axes"))
_at(11, "Scan", Code(None, a.scan_negative_axes_down, "negative scan axes"))
_at(11, "Clip", AttrToInput("min", 1, elem=None, scalar=True, as_float=True),
    AttrToInput("max", 2, elem=None, scalar=True, as_float=True))
_at(11, "Pad", AttrToInput("pads", 1), AttrToInput("value", 2, elem=None, scalar=True, as_float=True))
_at(11, "Resize", Code(a.resize_10_11_up, a.resize_10_11_down, "roi input, coordinate modes"))
_at(11, "Scatter", Code(r.scatter_to_elements_up, None, "deprecated: ScatterElements-11 is the same"))
_at(11, "ScatterElements", Code(None, r.elements_to_scatter_down, "below 11 it is Scatter-9"))
_at(11, "TopK", AttrAdded("largest", old=1), AttrAdded("sorted", old=1))
_at(11, "Gemm", Code(None, a.gemm_c_optional_down, "input C became optional"))
_at(11, "Equal", Code(None, e.equal_floats_down, "floating-point types (were bool and integers)"))
_at(11, "DepthToSpace", AttrAdded("mode", old="DCR"))
_at(11, "Constant", AttrAdded("sparse_value", old=ABSENT))
_same(11, ("AveragePool", "MaxPool", "Conv", "ConvTranspose", "LpPool", "MaxUnpool"),
      "pads and output-shape wording fixed; kernel_shape inferred; same computation")
_same(11, ("If", "Loop"), "subgraph outputs may differ in shape between iterations/branches")
_same(11, "NonMaxSuppression", "center_point_box wording")
_same(11, "OneHot", "negative indices and axis documented (OneHot-9 computes them the same)")
_same(11, "Slice", "negative axes in the axes input (an input: not checked)")

# -- opset 12 ----------------------------------------------------------------------------------
_at(12, ("ArgMax", "ArgMin"), AttrAdded("select_last_index", old=0),
    Code(None, e.select_last_index_down, "select_last_index=1: the input reversed along the axis"))
_at(12, "Constant", Code(None, a.constant_values_down, "value_float(s), value_int(s), value_string(s)"))
_at(12, "Dropout", AttrToInput("ratio", 1, elem=FLOAT, scalar=True, as_float=True),
    InputAdded(2, "training_mode"), AttrAdded("seed", old=ANY),
    Code(None, r.dropout_mask_down, "the mask in inference is defined (all true)"))
_at(12, "GatherND", AttrAdded("batch_dims", old=0))

# -- opset 13 ----------------------------------------------------------------------------------
_at(13, ("Softmax", "LogSoftmax", "Hardmax"),
    Code(r.coerced_2d_up, r.coerced_2d_down, "one axis, where before the input was cut into 2-D"))
_at(13, ("ReduceSum", "Squeeze", "Unsqueeze"), AttrToInput("axes", 1))
_at(13, "ReduceSum", AttrAdded("noop_with_empty_axes", old=0))
_at(13, "Split", AttrToInput("split", 1))
_at(13, ("QuantizeLinear", "DequantizeLinear"), AttrAdded("axis", old=ANY),
    Code(None, a.per_tensor_down, "per-axis quantization"))
_at(13, "Resize", Code(a.resize_11_13_up, a.resize_11_13_down, "roi and scales optional"))
_same(13, "NegativeLogLikelihoodLoss", "the wording of reduction and weights")

# -- opset 14 ----------------------------------------------------------------------------------
_at(14, ("GRU", "LSTM", "RNN"), AttrAdded("layout", old=0))
_at(14, "Reshape", AttrAdded("allowzero", old=0))
_at(14, "BatchNormalization", Code(a.batchnorm_14_up, a.batchnorm_14_down, "training outputs"))
_at(14, "Trilu", Code(None, e.trilu_down, "new: below 14 a Where over a mask of the last two axes"))

# -- opset 15-16 ---------------------------------------------------------------------------------
_at(15, "Shape", Code(None, r.shape_slice_down, "start and end"))
_at(16, "RoiAlign", AttrAdded("coordinate_transformation_mode", old="output_half_pixel"))
_at(16, ("ScatterElements", "ScatterND"), AttrAdded("reduction", old="none"))

# -- opset 18 ----------------------------------------------------------------------------------
_at(18, _REDUCE[:8] + ("ReduceSumSquare",), AttrToInput("axes", 1),
    AttrAdded("noop_with_empty_axes", old=0))
_at(18, "Split", Code(a.split_num_outputs_up, r.split_num_outputs_down, "num_outputs"))
_at(18, "Pad", Code(None, a.pad_axes_down, "input 'axes'"))
_at(18, "LpPool", AttrAdded("ceil_mode", old=0), AttrAdded("dilations", old=ONES))
_at(18, "OptionalHasElement", Code(None, a.optional_input_required_down, "input optional"))
_at(18, ("ScatterElements", "ScatterND"), AttrValuesAdded("reduction", ("max", "min")))
_at(18, "Resize", AttrAdded("antialias", old=0),
    Code(None, e.resize_axes_down, "axes: roi, scales or sizes for the named axes only"),
    AttrAdded("keep_aspect_ratio_policy", old="stretch"))

# -- opset 19 ----------------------------------------------------------------------------------
_at(19, "AveragePool", AttrAdded("dilations", old=ONES))
_at(19, ("Cast", "CastLike"), AttrAdded("saturate", old=ANY,
                                         note="saturate applies to float8 targets, new in 19"))
_at(19, "QuantizeLinear", AttrAdded("saturate", old=ANY, note="float8 only"))
_at(19, "Pad", AttrValuesAdded("mode", ("wrap",)))
_at(19, "Resize", AttrValuesAdded("coordinate_transformation_mode", ("half_pixel_symmetric",)))

# -- opset 20 ----------------------------------------------------------------------------------
_at(20, "DFT", Code(a.dft_axis_up, a.dft_axis_down, "axis attribute (default 1) became an input"))
_at(20, "GridSample", Code(a.grid_sample_up, a.grid_sample_down, "N-d; modes renamed"))

# -- opset 21 ----------------------------------------------------------------------------------
_at(21, "DequantizeLinear", AttrAdded("block_size", old=0))
_at(21, "QuantizeLinear", AttrAdded("block_size", old=0), AttrAdded("output_dtype", old=0))
_at(21, "GroupNormalization", Code(e.group_norm_up, e.group_norm_down,
                                   "scale and bias per channel (were per group); stash_type"))

# -- opset 23-25 ---------------------------------------------------------------------------------
_at(23, "DequantizeLinear", AttrAdded("output_dtype", old=0))
_at(23, "QuantizeLinear", AttrAdded("precision", old=0))
_at(24, ("Cast", "CastLike"), AttrAdded("round_mode", old=ANY,
                                         note="round_mode applies to float8e8m0, new in 24"))
_at(24, "Attention", InputAdded(6, "nonpad_kv_seqlen"))
_at(25, "Attention", AttrAdded("left_window_size", old=-1), AttrAdded("right_window_size", old=-1))

# -- opset 27-28 ---------------------------------------------------------------------------------
_at(27, "Range", AttrAdded("stash_type", old=1))
_at(28, "SpaceToDepth", AttrAdded("mode", old="DCR"))
_same(28, "DepthToSpace", "wording and types")
_at(28, "Mod", Code(None, a.mod_fmod_down, "fmod=0 defined for floating-point types"))

# -- blank steps read in the changelog: same computation --------------------------------------------
_same(16, ("ScatterElements", "ScatterND"), "")
_same(20, "GridSample", "")

# -- ai.onnx.ml ----------------------------------------------------------------------------------
_at(2, "LabelEncoder", Code(e.label_encoder_up, e.label_encoder_down,
                           "classes_strings (string <-> index) became a map of keys to values"), domain=ML)
_at(4, "LabelEncoder", AttrAdded("keys_tensor", old=ABSENT), AttrAdded("values_tensor", old=ABSENT),
    AttrAdded("default_tensor", old=ABSENT), domain=ML)
for _op in ("TreeEnsembleClassifier", "TreeEnsembleRegressor"):
    _at(3, _op, *(AttrAdded(n, old=ABSENT) for n in
                  ("base_values_as_tensor", "nodes_hitrates_as_tensor", "nodes_values_as_tensor",
                   "class_weights_as_tensor" if _op.endswith("Classifier") else "target_weights_as_tensor")),
        domain=ML)
