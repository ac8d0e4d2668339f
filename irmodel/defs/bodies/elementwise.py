"""Built bodies of elementwise operators: CastLike, Celu, Clip, Gelu, Softmax, LogSoftmax, Bernoulli.

Each builder takes (attributes, input types, opset version), fills a `BodyBuilder` and
returns True, or returns False where the reference's builder refuses.
"""

from __future__ import annotations

from .base import (FLOAT, INT64, INT_KIND, BodyBuilder, NodeAttributes, Ref, elem_or_zero, float32,
                   int32, tensor_elem)


def _cast_like(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """CastLike: a Cast to the element type of the target input (``saturate`` from version 19)."""
    target = tensor_elem(input_types, 1)
    if target is None:
        return False
    if version >= 19:
        b.add("Cast", ["input"], ["output"], to=target, saturate=Ref("saturate", INT_KIND))
    else:
        b.add("Cast", ["input"], ["output"], to=target)
    return True


def _celu(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """Celu: alpha * Elu(X / alpha), alpha a constant from the attribute."""
    b.const_1d("alpha", float32(attrs.f("alpha", 1.0)), FLOAT)
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
        const("TwoOverPi", float32(0.63661977236))
        const("C0", float32(0.044715))
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


def _bernoulli(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """Bernoulli: uniform noise compared with the probabilities, cast to ``dtype``."""
    x_type = elem_or_zero(input_types, 0)
    if x_type is None:
        return False
    dtype = int32(attrs.i("dtype", x_type))  # held as a DataType enum
    b.add("RandomUniformLike", ["input"], ["X_random"], low=0.0, high=1.0, seed=Ref("seed", None), dtype=x_type)
    b.add("Greater", ["X_random", "input"], ["X_greater"])
    b.add("Cast", ["X_greater"], ["output"], to=dtype)
    return True


BUILDERS = {
    ("", "Bernoulli"): _bernoulli,
    ("", "CastLike"): _cast_like,
    ("", "Celu"): _celu,
    ("", "Clip"): _clip,
    ("", "Gelu"): _gelu,
    ("", "LogSoftmax"): _softmax_family(log=True),
    ("", "Softmax"): _softmax_family(log=False),
}
