"""Element-wise operators: unary math and activations, broadcasting arithmetic and logic,
the variadic Max/Min/Sum/Mean, Softmax and its relatives, Where, Clip, IsNaN/IsInf.

Most share three rules: output 0 is input 0 (type and shape); output 0 has input 0's
element type and the broadcast of two shapes; a boolean output with the broadcast.
"""

from __future__ import annotations

from .. import common as C
from .. import dims as D
from ..errors import fail_shape
from ..merge import merge_in_shape
from ..registry import infers, no_inference
from ..types import TensorType

BOOL = 9


def tensor_shape(ctx, i: int) -> tuple:
    """``getInputType(i)->tensor_type().shape()``: () when the input is not a shaped tensor."""
    t = ctx.input_type(i)
    if type(t) is TensorType and t.shape is not None:
        return t.shape
    return ()


def set_tensor_shape(ctx, o: int, shape) -> None:
    """``*getOutputType(o)->mutable_tensor_type()->mutable_shape() = shape``."""
    out = ctx.output(o)
    elem = out.elem if type(out) is TensorType else None
    ctx.set_output(o, TensorType(elem, tuple(shape)))


def binary_broadcast_shape(ctx, o: int = 0) -> None:
    """When both input shapes are known, output ``o`` gets their broadcast."""
    if C.has_n_input_shapes(ctx, 2):
        set_tensor_shape(ctx, o, C.broadcast([tensor_shape(ctx, 0), tensor_shape(ctx, 1)]))


# -- output 0 is input 0 --------------------------------------------------------------------

_SAME = {
    "Neg": (6, 13), "Abs": (6, 13), "Reciprocal": (6, 13), "Floor": (6, 13), "Ceil": (6, 13), "Sqrt": (6, 13),
    "Relu": (6, 13, 14), "Exp": (6, 13), "Log": (6, 13), "Tanh": (6, 13), "Sigmoid": (6, 13),
    "LeakyRelu": (6, 16), "Selu": (6, 22), "Elu": (6, 22), "HardSigmoid": (6, 22), "HardSwish": (14, 22),
    "Mish": (18, 22), "Softplus": (1, 22), "Softsign": (1, 22), "ThresholdedRelu": (10, 22), "Celu": (12, 28),
    "Gelu": (20,), "Swish": (24,), "PRelu": (6, 7, 9, 16),
    "Sin": (7, 22), "Cos": (7, 22), "Tan": (7, 22), "Asin": (7, 22), "Acos": (7, 22), "Atan": (7, 22),
    "Sinh": (9, 22), "Cosh": (9, 22), "Asinh": (9, 22), "Acosh": (9, 22), "Atanh": (9, 22),
    "Erf": (9, 13), "Sign": (9, 13), "Round": (11, 22), "CumSum": (11, 14), "CumProd": (26,),
    "Clip": (6, 11, 12, 13), "BitwiseNot": (18,), "Shrink": (9,),
}
# Version 1 of these has no inference function in the reference.
_NONE_AT_1 = ("Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Sqrt", "Relu", "Exp", "Log", "Tanh", "Sigmoid",
              "LeakyRelu", "Selu", "Elu", "HardSigmoid", "PRelu", "Clip", "Add", "Sub", "Mul", "Div", "Max",
              "Min", "Sum", "Mean")


def same_as_input(ctx) -> None:
    """``propagateShapeAndTypeFromFirstInput``."""
    C.propagate_shape_and_type(ctx)


for _op, _versions in _SAME.items():
    infers(_op, *_versions)(same_as_input)
for _op in _NONE_AT_1:
    no_inference(_op, 1)
infers("Pow", 1)(same_as_input)
infers(("Add", "Sub", "Mul", "Div"), 6)(same_as_input)
infers(("Max", "Min", "Sum", "Mean"), 6)(same_as_input)
infers(("Softmax", "LogSoftmax", "Hardmax"), 1)(same_as_input)


# -- broadcasting arithmetic -------------------------------------------------------------------

@infers(("Add", "Sub", "Mul", "Div"), 7, 13, 14)
@infers("Mod", 10, 13, 28)
@infers("Pow", 7, 12, 13, 15)
@infers("BitShift", 11, 28)
@infers(("BitwiseAnd", "BitwiseOr", "BitwiseXor"), 18)
def broadcast_arith(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    binary_broadcast_shape(ctx)


# -- logic ----------------------------------------------------------------------------------------

@infers(("And", "Or", "Xor"), 7)
@infers(("Greater", "Less"), 7, 9, 13)
@infers("Equal", 7, 11, 13, 19)
@infers(("LessOrEqual", "GreaterOrEqual"), 16)
def broadcast_logic(ctx) -> None:
    C.set_output_elem(ctx, 0, BOOL)
    binary_broadcast_shape(ctx)


no_inference("LessOrEqual", 12)
no_inference("GreaterOrEqual", 12)


@infers(("And", "Or", "Xor", "Greater", "Less", "Equal"), 1)
@infers("Not", 1)
@infers("IsNaN", 9, 13, 20)
@infers("IsInf", 10, 20)
def logic_same_shape(ctx) -> None:
    """Boolean output with input 0's shape (unary tests; opset-1 logic had no broadcasting)."""
    C.set_output_elem(ctx, 0, BOOL)
    if C.has_input_shape(ctx, 0):
        C.propagate_shape(ctx, 0, 0)


# -- variadic ---------------------------------------------------------------------------------------

@infers(("Max", "Min"), 8, 12, 13)
@infers(("Sum", "Mean"), 8, 13)
def variadic_broadcast(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    shapes = []
    for i in range(ctx.num_inputs):
        t = ctx.input_type(i)
        if type(t) is not TensorType or t.shape is None:
            return
        shapes.append(t.shape)
    set_tensor_shape(ctx, 0, C.broadcast(shapes))


# -- softmax family -----------------------------------------------------------------------------------

def _softmax(default_axis: int):
    def infer(ctx) -> None:
        C.propagate_elem(ctx, 0, 0)
        if not C.has_n_input_shapes(ctx, 1):
            return
        r = len(tensor_shape(ctx, 0))
        name = ctx.node.op_type
        if r == 0:
            raise fail_shape("Input rank must be >= 1 for ", name.lower() if default_axis == 1 else name, ".")
        axis = C.attr_int(ctx, "axis", default_axis)
        axis = D.int32(axis)
        if axis < -r or axis >= r:
            raise fail_shape("'axis' must be in [", -r, " , ", r - 1, "]. Its actual value is: ", axis)
        C.propagate_shape(ctx, 0, 0)
    return infer


infers(("Softmax", "LogSoftmax", "Hardmax"), 11)(_softmax(1))
infers(("Softmax", "LogSoftmax", "Hardmax"), 13)(_softmax(-1))


# -- others ------------------------------------------------------------------------------------------

@infers("SwiGLU", 28)
def swiglu(ctx) -> None:
    C.propagate_elem(ctx, 0, 0)
    if not C.has_n_input_shapes(ctx, 2):
        return
    shape = tensor_shape(ctx, 0)
    b = ctx.input_type(1)
    if type(b) is TensorType and b.shape is not None:
        shape = merge_in_shape(b.shape, shape)
    set_tensor_shape(ctx, 0, shape)


@infers("Where", 9, 16)
def where(ctx) -> None:
    C.propagate_elem(ctx, 1, 0)
    if C.has_n_input_shapes(ctx, 3):
        set_tensor_shape(ctx, 0, C.broadcast([tensor_shape(ctx, i) for i in range(3)]))
