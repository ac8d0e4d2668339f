"""Built body of SequenceMap: a Loop over the first sequence running the node's ``body``.

The function's inputs and outputs are those of the node, numbered (``additional_inputs_1``,
``out_sequence_0`` ...), not the schema's variadic names.  Where the reference's builder
throws (no graph, an input or output missing, a first input that is not a sequence) ours
raises `irmodel.ValidationError` (a ValueError, as the reference's is) with the same
message; a first input of unknown type, on which the reference dereferences a null
pointer (onnx 1.23.2 crashes), is refused the same way as one that is not a sequence.
"""

from __future__ import annotations

from .base import BOOL, INT64, BodyBuilder, NodeAttributes, input_type

_LOOP_BODY = "SequenceMap_loop_body"


def _refuse(message: str):
    from ...errors import ValidationError  # noqa: PLC0415
    return ValidationError(message)


def _sequence_map(b: BodyBuilder, attrs: NodeAttributes, input_types, version: int) -> bool:
    """SequenceMap: for each index of the first sequence, the body on that element (and on the
    same-index element of every other sequence input, the whole of every tensor input), its
    outputs appended to one sequence per output."""
    body_attr = attrs.get("body")
    if body_attr is None or not body_attr.HasField("g"):
        raise _refuse("Invalid ``body`` argument. Expected a graph")
    body = body_attr.g
    body_inputs, body_outputs = list(body.input), list(body.output)
    if not body_inputs:
        raise _refuse("Expected 1 or more inputs.")
    if not body_outputs:
        raise _refuse("Expected 1 or more outputs.")
    if not attrs.has_input(0):
        raise _refuse("Input 0 expected but not provided")
    first = input_type(input_types, 0)
    if first is None or first.WhichOneof("value") != "sequence_type":
        raise _refuse("Expected a sequence type for input 0")
    inputs = ["input_sequence"]
    for i in range(1, len(body_inputs)):
        if not attrs.has_input(i):
            raise _refuse(f"Input {i} expected but not provided")
        inputs.append(f"additional_inputs_{i}")
    outputs = []
    for i in range(len(body_outputs)):
        if not attrs.has_output(i):
            raise _refuse(f"Output {i} expected but not provided")
        outputs.append(f"out_sequence_{i}")
    b.function_inputs, b.function_outputs = inputs, outputs

    prefix = f"SequenceMap_{inputs[0]}"
    b.add("SequenceLength", [inputs[0]], [f"{prefix}_seqlen"])
    b.add("Constant", [], [f"{prefix}_cond"], value=b.tensor_of([1], BOOL, []))
    loop_inputs = [f"{prefix}_seqlen", f"{prefix}_cond"]
    for name, out in zip(outputs, body_outputs):
        b.add("SequenceEmpty", [], [f"SequenceMap_{name}_seqempty"], dtype=_tensor_elem_of(out))
        loop_inputs.append(f"SequenceMap_{name}_seqempty")
    b.add("Loop", loop_inputs, outputs, body=_loop_body(b, body, inputs, input_types))
    return True


def _tensor_elem_of(value_info) -> int:
    """``type().tensor_type().elem_type()``: 0 for a value that is not a typed tensor."""
    tp = value_info.type
    return tp.tensor_type.elem_type if tp.WhichOneof("value") == "tensor_type" else 0


def _loop_body(b: BodyBuilder, body, inputs: list[str], input_types):
    """The Loop's graph: element ``i`` of each sequence input (a tensor input as it is) bound to the
    body's input names, the body's nodes, each output appended to its carried sequence."""
    from ...messages import GraphProto, TensorShapeProto, TypeProto, ValueInfoProto  # noqa: PLC0415

    def value(name: str, tp) -> object:
        vi = ValueInfoProto()
        vi.name = name
        vi.type = tp
        return vi

    def scalar(elem_type: int):
        tp = TypeProto()
        tp.tensor_type.elem_type = elem_type
        tp.tensor_type.shape = TensorShapeProto()
        return tp

    g = GraphProto()
    g.name = _LOOP_BODY
    counter, cond_in, cond_out = (f"{_LOOP_BODY}_itercount", f"{_LOOP_BODY}_cond_in", f"{_LOOP_BODY}_cond_out")
    g.input.append(value(counter, scalar(INT64)))
    g.input.append(value(cond_in, scalar(BOOL)))
    g.output.append(value(cond_out, scalar(BOOL)))
    g.node.append(b.node("Identity", [cond_in], [cond_out], {}))
    for i, (outer, inner) in enumerate(zip(inputs, body.input)):
        tp = input_type(input_types, i)
        if tp is not None and tp.WhichOneof("value") == "sequence_type":
            g.node.append(b.node("SequenceAt", [outer, counter], [inner.name], {}))
        else:
            g.node.append(b.node("Identity", [outer], [inner.name], {}))
    g.node.extend(body.node)
    g.value_info.extend(body.value_info)
    g.initializer.extend(body.initializer)
    g.sparse_initializer.extend(body.sparse_initializer)
    for out in body.output:
        carried = f"{_LOOP_BODY}_{out.name}"
        tp = TypeProto()
        element = out.type.tensor_type if out.type.WhichOneof("value") == "tensor_type" else None
        tp.sequence_type.elem_type.tensor_type = element if element is not None else TypeProto.Tensor()
        g.input.append(value(f"{carried}_in", tp))
        g.output.append(value(f"{carried}_out", tp))
        g.node.append(b.node("SequenceInsert", [f"{carried}_in", out.name], [f"{carried}_out"], {}))
    return g


BUILDERS = {
    ("", "SequenceMap"): _sequence_map,
}
