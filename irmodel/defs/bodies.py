"""Context-dependent function bodies, built in Python from a node and its input types.

For some schemas onnx has no stored function body but code that writes one for a given
node (``SetContextDependentFunctionBodyBuilder``): the body depends on the node's
attributes and its inputs' element types (a Cast to the target's type, a constant made
from an attribute).  `build_function_body` is that code for the schemas listed in
`BUILDERS`, one builder per operator family, giving the body onnx's
``OpSchema.get_context_dependent_function_with_opset_version`` gives: the same nodes,
attributes, names and opset imports (``tests/test_defs_bodies.py`` compares them).  The
one field left out is ``doc_string`` (the schema's documentation, which the generated
schema table does not store).

Inference does not use these bodies: the reference's shape inference calls a schema's
inference function or else its *stored* body, never a built one (``ProcessCall`` of
``GetFunction()`` in onnx/shape_inference/implementation.cc), so neither does ours
(GroupNormalization, the one such schema without an inference function, leaves its
outputs untyped in both).  The bodies serve whoever expands a node into its definition.

Schemas with a context-dependent body and no builder here yet are listed by
`missing_builders` (their reference builders are in onnx/defs/*.cc).
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

FLOAT, INT64 = 1, 7
_FLOAT_KIND, _INT_KIND, _INTS_KIND, _TENSOR_KIND = 1, 2, 7, 4  # AttributeProto.AttributeType


class Ref:
    """An attribute that refers to the calling node's attribute of the same (or given) name."""

    __slots__ = ("name", "kind")

    def __init__(self, name: str, kind: int | None):
        self.name = name
        self.kind = kind


class NodeAttributes:
    """The calling node's attributes by name and which inputs it has (``FunctionBodyBuildContext``)."""

    def __init__(self, node):
        self._by_name = {a.name: a for a in node.attribute}
        self._inputs = list(node.input)
        self._outputs = list(node.output)

    def has_output(self, index: int) -> bool:
        return index < len(self._outputs) and self._outputs[index] != ""

    def has_input(self, index: int) -> bool:
        """Input ``index`` is given (present and not the empty name)."""
        return index < len(self._inputs) and self._inputs[index] != ""

    def s(self, name: str, default: bytes) -> bytes:
        a = self._by_name.get(name)
        return a.s if a is not None and a.HasField("s") else default

    def get(self, name: str):
        return self._by_name.get(name)

    def f(self, name: str, default: float) -> float:
        a = self._by_name.get(name)
        return a.f if a is not None else default

    def i(self, name: str, default: int) -> int:
        a = self._by_name.get(name)
        return a.i if a is not None else default

    def i_or_none(self, name: str) -> int | None:
        a = self._by_name.get(name)
        return a.i if a is not None else None


class BodyBuilder:
    """Nodes of one body in order, written as the reference's ``FunctionBuilder`` writes them."""

    def __init__(self) -> None:
        from .. import AttributeProto, NodeProto, TensorProto  # noqa: PLC0415
        self._attribute = AttributeProto
        self._node = NodeProto
        self._tensor = TensorProto
        self.nodes: list = []

    def add(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str], **attributes) -> BodyBuilder:
        node = self._node()
        node.input.extend(inputs)
        node.output.extend(outputs)
        node.op_type = op_type
        for name, value in attributes.items():
            node.attribute.append(self._make_attribute(name, value))
        node.domain = ""
        self.nodes.append(node)
        return self

    def _make_attribute(self, name: str, value):
        a = self._attribute()
        a.name = name
        if isinstance(value, Ref):
            if value.kind is not None:  # the text form ``@name`` without a type leaves it unset
                a.type = value.kind
            a.ref_attr_name = value.name
        elif isinstance(value, bool) or isinstance(value, int):
            a.i = int(value)
            a.type = _INT_KIND
        elif isinstance(value, float):
            a.f = value
            a.type = _FLOAT_KIND
        elif isinstance(value, list):
            a.ints.extend(value)
            a.type = _INTS_KIND
        else:  # a TensorProto
            a.t = value
            a.type = _TENSOR_KIND
        return a

    def scalar_float(self, name: str, value: float) -> BodyBuilder:
        """``Constant <value = float {v}>``: a rank-0 float tensor (the text form names it "")."""
        t = self._tensor()
        t.name = ""
        t.data_type = FLOAT
        t.float_data.append(value)
        return self.add("Constant", [], [name], value=t)

    def tensor(self, value, elem_type: int, one_d: bool = True):
        """``ToTensor`` of one value, as a 1-D tensor of one element or as a scalar."""
        t = self._tensor()
        if one_d:
            t.dims.append(1)
        t.data_type = elem_type
        if elem_type == FLOAT:
            t.float_data.append(value)
        else:
            t.int64_data.append(value)
        return t

    def const_1d(self, name: str, value, elem_type: int) -> BodyBuilder:
        """``Const1D``: a Constant node whose value is a one-element 1-D tensor."""
        return self.add("Constant", [], [name], value=self.tensor(value, elem_type))


def _float32(v: float) -> float:
    """An attribute's float as the reference's C++ ``float`` holds it."""
    import struct  # noqa: PLC0415
    return struct.unpack("<f", struct.pack("<f", v))[0] if math.isfinite(v) else v


# -- builders, one per family -----------------------------------------------------------------
# Each takes (attributes, input types, opset version) and fills a BodyBuilder, or returns
# False where the reference's builder refuses (the body cannot be written for this node).

def _tensor_elem(input_types: Sequence, index: int) -> int | None:
    """The element type of input ``index`` if it is a tensor type, else None."""
    if index >= len(input_types) or input_types[index] is None:
        return None
    tp = input_types[index]
    if tp.WhichOneof("value") != "tensor_type":
        return None
    return tp.tensor_type.elem_type


def _cast_like(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """CastLike: a Cast to the element type of the target input (``saturate`` from version 19)."""
    target = _tensor_elem(input_types, 1)
    if target is None:
        return False
    if version >= 19:
        b.add("Cast", ["input"], ["output"], to=target, saturate=Ref("saturate", _INT_KIND))
    else:
        b.add("Cast", ["input"], ["output"], to=target)
    return True


def _celu(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """Celu: alpha * Elu(X / alpha), alpha a constant from the attribute."""
    b.const_1d("alpha", _float32(attrs.f("alpha", 1.0)), FLOAT)
    b.add("Div", ["X", "alpha"], ["X_alpha"])
    b.add("Elu", ["X_alpha"], ["Elu_Result"], alpha=1.0)
    b.add("Mul", ["alpha", "Elu_Result"], ["Y"])
    return True


def _clip(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """Clip: Where-Less against whichever of min and max the node gives."""
    has_min, has_max = attrs.has_input(1), attrs.has_input(2)
    if not has_min and not has_max:
        b.add("Identity", ["input"], ["output"])
    elif not has_max:
        b.add("Less", ["input", "min"], ["input_less_than_min"])
        b.add("Where", ["input_less_than_min", "min", "input"], ["output"])
    elif not has_min:
        b.add("Less", ["max", "input"], ["input_large_than_max"])
        b.add("Where", ["input_large_than_max", "max", "input"], ["output"])
    else:
        b.add("Less", ["input", "min"], ["input_less_than_min"])
        b.add("Where", ["input_less_than_min", "min", "input"], ["tmp"])
        b.add("Less", ["max", "tmp"], ["output_large_than_max"])
        b.add("Where", ["output_large_than_max", "max", "tmp"], ["output"])
    return True


def _gelu(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """Gelu: 0.5 * X * (1 + erf(X / sqrt 2)), or its tanh approximation."""
    def const(name: str, value: float) -> None:
        b.scalar_float(name, value)
        b.add("CastLike", [name, "X"], [name + "Cast"])

    const("Half", 0.5)
    const("One", 1.0)
    if attrs.s("approximate", b"none") in (b"tanh", "tanh"):
        const("TwoOverPi", _float32(0.63661977236))
        const("C0", _float32(0.044715))
        b.add("Sqrt", ["TwoOverPiCast"], ["SqrtTwoOverPi"])
        const("Three", 3.0)
        b.add("Pow", ["X", "ThreeCast"], ["XCubed"])
        b.add("Mul", ["C0Cast", "XCubed"], ["XCubedC0"])
        b.add("Sum", ["X", "XCubedC0"], ["XC0XCubed"])
        b.add("Mul", ["SqrtTwoOverPi", "XC0XCubed"], ["TanhInput"])
        b.add("Tanh", ["TanhInput"], ["ErfApprox"])
        b.add("Sum", ["OneCast", "ErfApprox"], ["PhiApprox"])
        b.add("Mul", ["HalfCast", "X"], ["MultX"])
        b.add("Mul", ["MultX", "PhiApprox"], ["Y"])
    else:
        const("Two", 2.0)
        b.add("Sqrt", ["TwoCast"], ["SqrtTwo"])
        b.add("Div", ["X", "SqrtTwo"], ["XSqrt"])
        b.add("Erf", ["XSqrt"], ["ErfXSqrt"])
        b.add("Sum", ["OneCast", "ErfXSqrt"], ["Phi"])
        b.add("Mul", ["HalfCast", "X"], ["MultX"])
        b.add("Mul", ["MultX", "Phi"], ["Y"])
    return True


def _softmax_family(log: bool):
    """Softmax and LogSoftmax: exponentials shifted by the max along ``axis``, normalised.

    Before version 18 ReduceMax takes its axes as an attribute, from 18 as an input.
    """
    def build(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
        axis = attrs.i("axis", -1)
        b.const_1d("axes", axis, INT64)
        if version >= 18:
            b.add("ReduceMax", ["input", "axes"], ["X_ReduceMax"], keepdims=1)
        else:
            b.add("ReduceMax", ["input"], ["X_ReduceMax"], keepdims=1, axes=[axis])
        b.add("Sub", ["input", "X_ReduceMax"], ["X_Sub"])
        b.add("Exp", ["X_Sub"], ["X_Exp"])
        b.add("ReduceSum", ["X_Exp", "axes"], ["X_ReduceSum"], keepdims=1)
        if log:
            b.add("Log", ["X_ReduceSum"], ["X_Log"])
            b.add("Sub", ["X_Sub", "X_Log"], ["output"])
        else:
            b.add("Div", ["X_Exp", "X_ReduceSum"], ["output"])
        return True
    return build


def _layer_normalization(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """LayerNormalization: statistics over the axes from ``axis`` on, in ``stash_type``.

    Version 17 gives ReduceMean its axes as an attribute, 18 as an input; the optional
    outputs Mean and InvStdDev are computed only when the node asks for them.
    """
    x_type = _tensor_elem(input_types, 0)
    if x_type is None:
        return False
    stash = attrs.i("stash_type", FLOAT)
    if stash not in (FLOAT, 16):
        return False
    axis = attrs.i("axis", -1)
    b.add("Constant", [], ["FloatEpsilon"],
          value=b.tensor(_float32(attrs.f("epsilon", 1e-5)), FLOAT, one_d=False))
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
        b.add("ReduceMean", ["XU"], ["Mean2D"], axes=[1])
        b.add("Mul", ["XU", "XU"], ["Square"])
        b.add("ReduceMean", ["Square"], ["MeanOfSquare"], axes=[1])
    else:
        b.const_1d("Axes_1", 1, INT64)
        b.add("ReduceMean", ["XU", "Axes_1"], ["Mean2D"])
        b.add("Mul", ["XU", "XU"], ["Square"])
        b.add("ReduceMean", ["Square", "Axes_1"], ["MeanOfSquare"])
    b.add("Mul", ["Mean2D", "Mean2D"], ["SquareOfMean"])
    b.add("Sub", ["MeanOfSquare", "SquareOfMean"], ["Var"])
    b.add("Add", ["Var", "Epsilon"], ["VarPlusEpsilon"])
    b.add("Sqrt", ["VarPlusEpsilon"], ["StdDev"])
    b.add("Sub", ["XU", "Mean2D"], ["Deviation"])
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
    x_type = _tensor_elem(input_types, 0)
    if x_type is None:
        return False
    stash = attrs.i("stash_type", FLOAT)
    if stash not in _STASH_TYPES:
        return False
    axis = attrs.i("axis", -1)
    b.add("Constant", [], ["FloatEpsilon"],
          value=b.tensor(_float32(attrs.f("epsilon", 1e-5)), FLOAT, one_d=False))
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


def _bernoulli(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """Bernoulli: uniform noise compared with the probabilities, cast to ``dtype``."""
    if not input_types or input_types[0] is None:
        return False
    tp = input_types[0]
    x_type = tp.tensor_type.elem_type if tp.WhichOneof("value") == "tensor_type" else 0
    dtype = attrs.i("dtype", x_type)
    b.add("RandomUniformLike", ["input"], ["X_random"], low=0.0, high=1.0, seed=Ref("seed", None), dtype=x_type)
    b.add("Greater", ["X_random", "input"], ["X_greater"])
    b.add("Cast", ["X_greater"], ["output"], to=dtype)
    return True


_STASH_TYPES = (1, 10, 11, 16)  # float, float16, double, bfloat16


def _group_normalization(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """GroupNormalization: statistics over [N, groups, C/groups * spatial], then scale and bias.

    Version 18 computes in the input's type and scales by per-group parameters; version 21
    computes in ``stash_type`` and scales by per-channel parameters.
    """
    x_type = _tensor_elem(input_types, 0)
    if x_type is None:
        return False
    epsilon = _float32(attrs.f("epsilon", 1e-5))
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
    b.add("ReduceMean", ["X3D", "Axes2"], ["Mean"])
    b.add("Mul", ["X3D", "X3D"], ["Square"])
    b.add("ReduceMean", ["Square", "Axes2"], ["MeanOfSquare"])
    b.add("Mul", ["Mean", "Mean"], ["SquareOfMean"])
    b.add("Sub", ["MeanOfSquare", "SquareOfMean"], ["Var"])
    b.add("Add", ["Var", "Epsilon"], ["VarPlusEpsilon"])
    b.add("Sqrt", ["VarPlusEpsilon"], ["StdDev"])
    b.add("Sub", ["X3D", "Mean"], ["Deviation"])
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


BUILDERS: dict[tuple[str, str], Callable] = {
    ("", "Bernoulli"): _bernoulli,
    ("", "CastLike"): _cast_like,
    ("", "Celu"): _celu,
    ("", "Clip"): _clip,
    ("", "Gelu"): _gelu,
    ("", "LayerNormalization"): _layer_normalization,
    ("", "LogSoftmax"): _softmax_family(log=True),
    ("", "RMSNormalization"): _rms_normalization,
    ("", "Softmax"): _softmax_family(log=False),
    ("", "GroupNormalization"): _group_normalization,
}


def _version_for(schema, opset_version: int | None) -> int | None:
    """The builder's opset version: the given one if the schema builds for it, else None."""
    versions = schema.context_dependent_function_opset_versions
    if opset_version is None:
        return max(versions) if versions else None
    return opset_version if opset_version in versions else None


def build_function_body(schema, node, input_types: Sequence, opset_version: int | None = None):
    """The function body onnx builds for ``node`` (a FunctionProto), or None.

    ``schema`` is an `irmodel.defs.OpSchema`; ``node`` a NodeProto (only its attributes
    are read); ``input_types`` one TypeProto (or None) per input.  ``opset_version`` is one
    of the schema's ``context_dependent_function_opset_versions`` (default: the highest).
    None when the schema builds no body at that version, when the builder cannot write one
    for this node (as the reference returns an empty body), or when no builder of ours
    exists (see `missing_builders`).
    """
    version = _version_for(schema, opset_version)
    builder = BUILDERS.get((schema.domain, schema.name))
    if version is None or builder is None:
        return None
    b = BodyBuilder()
    if not builder(b, NodeAttributes(node), list(input_types), version):
        return None
    from .. import FunctionProto, OperatorSetIdProto  # noqa: PLC0415
    f = FunctionProto()
    f.name = schema.name
    f.domain = schema.domain
    f.input.extend(p.name for p in schema.inputs)
    f.output.extend(p.name for p in schema.outputs)
    f.attribute.extend(schema.attributes)
    f.node.extend(b.nodes)
    opset = OperatorSetIdProto()
    opset.domain = schema.domain
    opset.version = version
    f.opset_import.append(opset)
    return f


def missing_builders() -> list[tuple[str, str, int]]:
    """(domain, name, since_version) of the schemas with a built body that no builder here writes."""
    from . import get_all_schemas_with_history  # noqa: PLC0415
    return sorted((s.domain, s.name, s.since_version) for s in get_all_schemas_with_history()
                  if s.context_dependent_function_opset_versions and (s.domain, s.name) not in BUILDERS)


__all__ = ["BUILDERS", "build_function_body", "missing_builders"]
