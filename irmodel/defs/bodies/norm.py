"""Built bodies of the normalizations: LayerNormalization, RMSNormalization, GroupNormalization.

Each builder takes (attributes, input types, opset version), fills a `BodyBuilder` and
returns True, or returns False where the reference's builder refuses.
"""

from __future__ import annotations

from .base import FLOAT, INT64, BodyBuilder, NodeAttributes, float32, tensor_elem

_STASH_TYPES = (1, 10, 11, 16)  # float, float16, double, bfloat16


def _deviation_and_stddev(b: BodyBuilder, x: str, mean: str, axes: str | list) -> None:
    """``Deviation`` (``x`` minus its ``mean``) and ``StdDev`` (the square root of the mean of
    squares minus the square of the mean, plus ``Epsilon``) over ``axes``, the name of an
    input or (ReduceMean before 18) the list of an attribute: the statistics Layer- and
    GroupNormalization share, with the reference's names."""
    if isinstance(axes, list):
        b.add("ReduceMean", [x], [mean], axes=axes)
        b.add("Mul", [x, x], ["Square"])
        b.add("ReduceMean", ["Square"], ["MeanOfSquare"], axes=axes)
    else:
        b.add("ReduceMean", [x, axes], [mean])
        b.add("Mul", [x, x], ["Square"])
        b.add("ReduceMean", ["Square", axes], ["MeanOfSquare"])
    b.add("Mul", [mean, mean], ["SquareOfMean"])
    b.add("Sub", ["MeanOfSquare", "SquareOfMean"], ["Var"])
    b.add("Add", ["Var", "Epsilon"], ["VarPlusEpsilon"])
    b.add("Sqrt", ["VarPlusEpsilon"], ["StdDev"])
    b.add("Sub", [x, mean], ["Deviation"])


def _layer_normalization(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """LayerNormalization: statistics over the axes from ``axis`` on, in ``stash_type``.

    Version 17 gives ReduceMean its axes as an attribute, 18 as an input; the optional
    outputs Mean and InvStdDev are computed only when the node asks for them.
    """
    x_type = tensor_elem(input_types, 0)
    if x_type is None:
        return False
    stash = attrs.i("stash_type", FLOAT)
    if stash not in (FLOAT, 16):
        return False
    axis = attrs.i("axis", -1)
    b.add("Constant", [], ["FloatEpsilon"],
          value=b.tensor(float32(attrs.f("epsilon", 1e-5)), FLOAT, one_d=False))
    b.add("Cast", ["FloatEpsilon"], ["Epsilon"], to=stash)
    b.add("Shape", ["X"], ["XShape"])
    b.add("Size", ["XShape"], ["Rank"])
    b.const_1d("Zero1D", 0, INT64)
    b.const_1d("Axis1D", axis, INT64)
    b.add("Slice", ["XShape", "Zero1D", "Axis1D"], ["PrefixShape"])
    if axis >= 0:
        b.add("Sub", ["Rank", "Axis1D"], ["NumReducedAxes"])
    else:
        b.add("Neg", ["Axis1D"], ["NumReducedAxes"])
    b.add("ConstantOfShape", ["NumReducedAxes"], ["SuffixShape"], value=b.tensor(1, INT64))
    b.add("Concat", ["PrefixShape", "SuffixShape"], ["ReducedShape"], axis=0)
    b.add("Flatten", ["X"], ["X2D"], axis=axis)
    b.add("Cast", ["X2D"], ["XU"], to=stash)
    if version == 17:
        _deviation_and_stddev(b, "XU", "Mean2D", [1])
    else:
        b.const_1d("Axes_1", 1, INT64)
        _deviation_and_stddev(b, "XU", "Mean2D", "Axes_1")
    b.add("Div", ["Deviation", "StdDev"], ["Normalized"])
    b.add("Cast", ["Normalized"], ["NormalizedT"], to=x_type)
    b.add("Flatten", ["Scale"], ["Scale2D"], axis=0)
    b.add("Mul", ["NormalizedT", "Scale2D"], ["Scaled"])
    if attrs.has_input(2):
        b.add("Flatten", ["B"], ["B2D"], axis=0)
        b.add("Add", ["Scaled", "B2D"], ["Biased"])
    else:
        b.add("Identity", ["Scaled"], ["Biased"])
    b.add("Reshape", ["Biased", "XShape"], ["Y"])
    b.add("Reciprocal", ["StdDev"], ["InvStdDev2D"])
    if attrs.has_output(1):
        b.add("Reshape", ["Mean2D", "ReducedShape"], ["Mean"])
    if attrs.has_output(2):
        b.add("Reshape", ["InvStdDev2D", "ReducedShape"], ["InvStdDev"])
    return True


def _rms_normalization(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """RMSNormalization: X / sqrt(mean(X^2) + epsilon) over the axes from ``axis`` on, times scale."""
    x_type = tensor_elem(input_types, 0)
    if x_type is None:
        return False
    stash = attrs.i("stash_type", FLOAT)
    if stash not in _STASH_TYPES:
        return False
    axis = attrs.i("axis", -1)
    b.add("Constant", [], ["FloatEpsilon"],
          value=b.tensor(float32(attrs.f("epsilon", 1e-5)), FLOAT, one_d=False))
    b.add("Cast", ["FloatEpsilon"], ["Epsilon"], to=stash)
    b.add("Shape", ["X"], ["XShape"])
    b.add("Size", ["XShape"], ["Rank"])
    b.add("Constant", [], ["Axis"], value=b.tensor(axis, INT64, one_d=False))
    if axis >= 0:
        b.add("Identity", ["Axis"], ["PosAxis"])
    else:
        b.add("Add", ["Rank", "Axis"], ["PosAxis"])
    b.add("Constant", [], ["One"], value=b.tensor(1, INT64, one_d=False))
    b.add("Range", ["PosAxis", "Rank", "One"], ["ReduceAxes"])
    b.add("Cast", ["X"], ["XU"], to=stash)
    b.add("Mul", ["XU", "XU"], ["XSquared"])
    b.add("ReduceMean", ["XSquared", "ReduceAxes"], ["XSquaredMean"])
    b.add("Add", ["XSquaredMean", "Epsilon"], ["MeanSquareEpsilon"])
    b.add("Sqrt", ["MeanSquareEpsilon"], ["RMS"])
    b.add("Div", ["XU", "RMS"], ["Normalized"])
    b.add("Cast", ["Normalized"], ["NormalizedT"], to=x_type)
    b.add("Mul", ["NormalizedT", "scale"], ["Y"])
    return True


def _group_normalization(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """GroupNormalization: statistics over [N, groups, C/groups * spatial], then scale and bias.

    Version 18 computes in the input's type and scales by per-group parameters; version 21
    computes in ``stash_type`` and scales by per-channel parameters.
    """
    x_type = tensor_elem(input_types, 0)
    if x_type is None:
        return False
    epsilon = float32(attrs.f("epsilon", 1e-5))
    groups = attrs.i_or_none("num_groups")
    if groups is None:
        return False
    stash = x_type
    if version >= 21:
        stash = attrs.i("stash_type", FLOAT)
        if stash not in _STASH_TYPES:
            return False
    b.const_1d("FloatEpsilon", epsilon, FLOAT)
    b.add("Cast", ["FloatEpsilon"], ["Epsilon"], to=stash)
    x = "X"
    if version >= 21:
        b.add("Cast", ["X"], ["XU"], to=stash)
        x = "XU"
    b.add("Shape", [x], ["XShape"])
    b.add("Shape", ["X"], ["C"], start=1, end=2)
    b.const_1d("NumGroups", groups, INT64)
    b.add("Div", ["C", "NumGroups"], ["GroupSize"])
    b.add("Shape", ["X"], ["N"], start=0, end=1)
    b.add("Shape", ["X"], ["InstanceShape"], start=2)
    b.add("Concat", ["N", "NumGroups", "GroupSize", "InstanceShape"], ["NewShape"], axis=0)
    b.add("Reshape", [x, "NewShape"], ["XReshaped"])
    b.add("Constant", [], ["Shape3D"], value_ints=[0, 0, -1])
    b.add("Reshape", ["XReshaped", "Shape3D"], ["X3D"])
    b.const_1d("Axes2", 2, INT64)
    _deviation_and_stddev(b, "X3D", "Mean", "Axes2")
    if version >= 21:
        b.add("Div", ["Deviation", "StdDev"], ["NormalizedU"])
        b.add("Reshape", ["NormalizedU", "XShape"], ["NormalizedOriginalShape"])
        b.add("Reshape", ["NormalizedOriginalShape", "Shape3D"], ["NormalizedNC"])
        b.add("Cast", ["NormalizedNC"], ["NormalizedT"], to=x_type)
        normalized = "NormalizedT"
    else:
        b.add("Div", ["Deviation", "StdDev"], ["Normalized"])
        normalized = "Normalized"
    b.add("Constant", [], ["ScaleShape"], value_ints=[1, -1, 1])
    b.add("Cast", ["scale"], ["ScaleT"], to=x_type)
    b.add("Cast", ["bias"], ["BiasT"], to=x_type)
    b.add("Reshape", ["ScaleT", "ScaleShape"], ["ScaleReshaped"])
    b.add("Reshape", ["BiasT", "ScaleShape"], ["BiasReshaped"])
    b.add("Mul", ["ScaleReshaped", normalized], ["Scaled"])
    b.add("Add", ["Scaled", "BiasReshaped"], ["Biased"])
    b.add("Reshape", ["Biased", "XShape"], ["Y"])
    return True


BUILDERS = {
    ("", "GroupNormalization"): _group_normalization,
    ("", "LayerNormalization"): _layer_normalization,
    ("", "RMSNormalization"): _rms_normalization,
}
