"""A small ONNX model (about 1.6 KB) that uses most of the wire format ONNX files use.

Seeds for the mutators, the benchmark's input and the tests' subject: packed floats and
int64s, raw data, strings, repeated string fields, nested sub-graphs (an ``If``), a
local function, metadata, symbolic and fixed dimensions.  Built with `irmodel.helper`,
so nothing is committed as a binary file.
"""

from __future__ import annotations

import struct


def sample_model():
    """The model as an irmodel ModelProto (valid for onnx's checker)."""
    from irmodel import helper as h  # noqa: PLC0415  (irmodel.fuzz is loaded lazily)

    FLOAT, INT64 = 1, 7
    weight = h.make_tensor("W", FLOAT, [4, 3], [0.5, -1.0, 2.0, 0.25] * 3)
    bias = h.make_tensor("B", FLOAT, [4], struct.pack("<4f", 0.1, 0.2, 0.3, 0.4), raw=True)
    shape = h.make_tensor("shape", INT64, [2], [1, -1])
    cond = h.make_tensor("flag", 9, [], [True])
    mix = h.make_tensor("W2", FLOAT, [4, 4], [float(i % 5) - 2.0 for i in range(16)])
    then_graph = h.make_graph(
        [h.make_node("Relu", ["mm"], ["then_out"], name="then_relu")], "then_branch", [],
        [h.make_tensor_value_info("then_out", FLOAT, ["batch", 4])])
    else_graph = h.make_graph(
        [h.make_node("Neg", ["mm"], ["neg"], name="else_neg"),
         h.make_node("Abs", ["neg"], ["else_out"], name="else_abs")], "else_branch", [],
        [h.make_tensor_value_info("else_out", FLOAT, ["batch", 4])])
    nodes = [
        h.make_node("Reshape", ["X", "shape"], ["flat"], name="reshape"),
        h.make_node("Gemm", ["flat", "W", "B"], ["mm"], name="gemm", doc_string="fully connected", alpha=1.5, beta=0.5, transB=1),
        h.make_node("If", ["flag"], ["branch"], name="choose", then_branch=then_graph,
                    else_branch=else_graph),
        h.make_node("MatMul", ["branch", "W2"], ["mixed"], name="mix"),
        h.make_node("Add", ["mixed", "B"], ["shifted"], name="shift"),
        h.make_node("Transpose", ["shifted"], ["t"], name="transpose", perm=[1, 0]),
        h.make_node("Transpose", ["t"], ["back"], name="transpose_back", perm=[1, 0]),
        h.make_node("Sigmoid", ["back"], ["gate"], name="gate", doc_string="gate in 0..1"),
        h.make_node("Mul", ["gate", "back"], ["gated"], name="apply_gate"),
        h.make_node("Clip", ["gated"], ["clipped"], name="clip", doc_string="no bounds: identity"),
        h.make_node("Scale2", ["clipped"], ["Y"], name="scale", domain="local"),
        h.make_node("Constant", [], ["note"], name="const",
                    value_strings=["alpha", "beta", "gamma"]),
    ]
    graph = h.make_graph(
        nodes, "sample", [h.make_tensor_value_info("X", FLOAT, ["batch", 3])],
        [h.make_tensor_value_info("Y", FLOAT, ["batch", 4]),
         h.make_tensor_value_info("note", 8, [3])],
        initializer=[weight, bias, shape, cond, mix], doc_string="a graph for fuzzing seeds",
        value_info=[h.make_tensor_value_info(name, FLOAT, ["batch", 4])
                    for name in ("mm", "branch", "mixed", "shifted", "back", "gate", "gated")])
    scale = h.make_function(
        "local", "Scale2", ["x"], ["y"],
        [h.make_node("Constant", [], ["two"], value_float=2.0),
         h.make_node("Mul", ["x", "two"], ["y"])],
        [h.make_opsetid("", 17)])
    model = h.make_model(graph, producer_name="irmodel.fuzz", producer_version="0.1",
                         opset_imports=[h.make_opsetid("", 17), h.make_opsetid("local", 1)],
                         functions=[scale], doc_string="sample model for the wire mutator")
    h.set_model_props(model, {"author": "irmodel", "purpose": "fuzzing", "license": "Apache-2.0",
                              "source": "irmodel/fuzz/sample_model.py", "seed": "0"})
    return model


def sample_model_bytes() -> bytes:
    """The serialized sample model."""
    from irmodel import dumps  # noqa: PLC0415
    return dumps(sample_model())
