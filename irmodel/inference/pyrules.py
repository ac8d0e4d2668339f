"""Python type-and-shape inference functions of user-registered operator schemas.

onnx lets a program register an `OpSchema` with a Python function
(``schema.set_type_and_shape_inference_function(fn)``, then ``defs.register_schema``);
inference calls ``fn(ctx)`` for each node of that operator, with ctx an
``onnx.shape_inference.InferenceContext`` that hands out protobuf messages.  Here
`PythonRule` wraps such a function into an engine rule: it is found by
`lookup.rule_for` once per (domain, op, version) and run (`engine.Run.op_rules`
caches it), so the built-in operators' path does not change.  `InferenceContext` and
`GraphInferencer` are the messages-in, messages-out views of the engine's context.

Errors: an engine error raised through the function (a sub-graph's inference failed)
stays the node's error, as in the reference; any other exception the function raises
reaches ``infer_shapes``' caller as it was raised (`UserRuleError` carries it past
the engine), as onnx lets a Python exception through.  Out-of-range indices raise
RuntimeError and negative ones TypeError, as onnx's bindings do.
"""

from __future__ import annotations

from .errors import FatalError, HardError, InferenceError, NodeInferenceError
from .types import UNSET, type_from_proto, type_to_proto

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


class UserRuleError(Exception):
    """An exception a registered Python function raised, carried out of the engine to the
    caller (`api.inference_mode` raises ``error`` itself)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _message(obj, type_name: str):
    from ..io import as_message  # noqa: PLC0415
    return as_message(obj, type_name)


def _copy(msg, type_name: str):
    """A message of the caller's own: the function may edit it without touching the model."""
    from ..io import loads  # noqa: PLC0415
    return loads(msg.SerializeToString(), type_name)


def _index(i, count: int, what: str) -> int:
    if not isinstance(i, int):
        raise TypeError(f"{what} index must be an int, not {type(i).__name__}")
    if i < 0:
        raise TypeError(f"{what} index {i} is negative")
    if i >= count:
        raise RuntimeError(f"{what} {i} is out of bounds.")
    return i


class GraphInferencer:
    """Infers the graph of one graph attribute (``onnx.shape_inference.GraphInferencer``)."""

    __slots__ = ("_inferencer",)

    def __init__(self, inferencer) -> None:
        self._inferencer = inferencer

    def do_inferencing(self, input_types: list, input_data: list) -> list:
        """The graph's output types (TypeProto each, empty when unknown) for these input
        types (TypeProto or None each).  ``input_data`` is accepted and, as a sub-graph's
        constant inputs are not propagated here, not read."""
        types = [None if t is None else type_from_proto(_message(t, "TypeProto")) for t in input_types]
        types = [None if t is UNSET else t for t in types]
        return [type_to_proto(t) for t in self._inferencer.infer(types, None)]


class InferenceContext:
    """One node as a Python inference function sees it (``onnx.shape_inference.InferenceContext``).

    Types, values and attributes are handed out as new messages; `set_output_type`
    is how an output's type reaches the engine.
    """

    __slots__ = ("_ctx",)

    def __init__(self, ctx) -> None:
        self._ctx = ctx

    def get_attribute(self, name: str):
        a = self._ctx.attr(name)
        return None if a is None else _copy(a, "AttributeProto")

    def get_num_inputs(self) -> int:
        return self._ctx.num_inputs

    def get_num_outputs(self) -> int:
        return self._ctx.num_outputs

    def has_input(self, index: int) -> bool:
        """False past the last input (no error, as onnx); TypeError for a negative index."""
        _index(index, index + 1, "Input")
        return index < self._ctx.num_inputs and self._ctx.has_input(index)

    def has_output(self, index: int) -> bool:
        _index(index, index + 1, "Output")
        return self._ctx.has_output(index)

    def get_input_type(self, index: int):
        """The input's TypeProto, None when its type is unknown."""
        t = self._ctx.input_type(_index(index, self._ctx.num_inputs, "Input"))
        return None if t is None or t is UNSET else type_to_proto(t)

    def get_input_data(self, index: int):
        """The input's constant value (a TensorProto), None when it is not a known constant."""
        c = self._ctx.input_data(_index(index, self._ctx.num_inputs, "Input"))
        return None if c is None else _copy(c.proto, "TensorProto")

    def get_input_sparse_data(self, index: int):
        s = self._ctx.input_sparse_data(_index(index, self._ctx.num_inputs, "Input"))
        return None if s is None else _copy(s, "SparseTensorProto")

    def get_symbolic_input(self, index: int):
        """The input's value computed by data propagation, as a TensorShapeProto, or None."""
        value = self._ctx.symbolic_input(_index(index, self._ctx.num_inputs, "Input"))
        if value is None:
            return None
        from ..messages import TensorShapeProto  # noqa: PLC0415
        shape = TensorShapeProto()
        for d in value:
            dim = shape.dim.add()
            if type(d) is int:
                dim.dim_value = d
            elif d is not None:
                dim.dim_param = d
        return shape

    def get_output_type(self, index: int):
        """The output's type so far (an empty TypeProto at first), to fill and `set_output_type`."""
        t = self._ctx.output(_index(index, self._ctx.num_outputs, "Output"))
        return type_to_proto(UNSET if t is None else t)

    def set_output_type(self, index: int, type_proto) -> None:
        t = type_from_proto(_message(type_proto, "TypeProto"))
        self._ctx.set_output(_index(index, self._ctx.num_outputs, "Output"), None if t is UNSET else t)

    def get_graph_attribute_inferencer(self, attribute_name: str) -> GraphInferencer:
        try:
            return GraphInferencer(self._ctx.graph_inferencer(attribute_name))
        except NodeInferenceError as exc:
            raise InferenceError([str(exc)]) from None

    def get_display_name(self) -> str:
        return self._ctx.display_name()


class PythonRule:
    """An engine rule calling a registered Python function with an `InferenceContext`.

    Not a plain function, so the node pass does not cache its outcomes per kind of
    node (`nodepass._kind`): the function runs once for every node, as in onnx.
    """

    __slots__ = ("function",)

    def __init__(self, function: Callable[[Any], None]) -> None:
        self.function = function

    def __call__(self, ctx) -> None:
        try:
            self.function(InferenceContext(ctx))
        except (NodeInferenceError, HardError, FatalError, UserRuleError):
            raise
        except InferenceError as exc:  # one of ours the function let through: the node's error
            raise NodeInferenceError(str(exc).split("\n", 1)[0], "type") from None
        except Exception as exc:  # noqa: BLE001 - the function's own: raised to the caller as it is
            raise UserRuleError(exc) from exc
