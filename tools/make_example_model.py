"""Build examples/lenet.onnx: a LeNet-5 style CNN with deterministic weights.

Written with irmodel's own message classes (no onnx, no numpy) so the example is
reproducible anywhere: ``python tools/make_example_model.py``.
"""

from __future__ import annotations

import os
import random
import sys
from array import array

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import irmodel  # noqa: E402
from irmodel import (AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,  # noqa: E402
                     TensorProto, TensorShapeProto, TypeProto, ValueInfoProto)

FLOAT = TensorProto.FLOAT


def weight(name: str, dims: list, rng: random.Random) -> TensorProto:
    n = 1
    for d in dims:
        n *= d
    fan_in = n // dims[0]
    scale = (2.0 / fan_in) ** 0.5
    data = array("f", (rng.gauss(0.0, scale) for _ in range(n)))
    if sys.byteorder != "little":
        data.byteswap()
    return TensorProto(name=name, dims=dims, data_type=FLOAT, raw_data=data.tobytes())


def value_info(name: str, dims: list) -> ValueInfoProto:
    shape = TensorShapeProto(dim=[TensorShapeProto.Dimension(dim_param=d) if isinstance(d, str)
                                  else TensorShapeProto.Dimension(dim_value=d) for d in dims])
    return ValueInfoProto(name=name, type=TypeProto(tensor_type=TypeProto.Tensor(elem_type=FLOAT, shape=shape)))


def ints(name: str, values: list) -> AttributeProto:
    return AttributeProto(name=name, type=AttributeProto.INTS, ints=values)


def build() -> ModelProto:
    rng = random.Random(20261123)
    inits = [
        weight("conv1.weight", [6, 1, 5, 5], rng), weight("conv1.bias", [6], rng),
        weight("conv2.weight", [16, 6, 5, 5], rng), weight("conv2.bias", [16], rng),
        weight("fc1.weight", [120, 400], rng), weight("fc1.bias", [120], rng),
        weight("fc2.weight", [84, 120], rng), weight("fc2.bias", [84], rng),
        weight("fc3.weight", [10, 84], rng), weight("fc3.bias", [10], rng),
    ]
    gemm_t = [AttributeProto(name="transB", type=AttributeProto.INT, i=1)]
    nodes = [
        NodeProto(op_type="Conv", name="conv1", input=["image", "conv1.weight", "conv1.bias"], output=["c1"],
                  attribute=[ints("kernel_shape", [5, 5]), ints("pads", [2, 2, 2, 2])]),
        NodeProto(op_type="Relu", name="relu1", input=["c1"], output=["r1"]),
        NodeProto(op_type="MaxPool", name="pool1", input=["r1"], output=["p1"],
                  attribute=[ints("kernel_shape", [2, 2]), ints("strides", [2, 2])]),
        NodeProto(op_type="Conv", name="conv2", input=["p1", "conv2.weight", "conv2.bias"], output=["c2"],
                  attribute=[ints("kernel_shape", [5, 5])]),
        NodeProto(op_type="Relu", name="relu2", input=["c2"], output=["r2"]),
        NodeProto(op_type="MaxPool", name="pool2", input=["r2"], output=["p2"],
                  attribute=[ints("kernel_shape", [2, 2]), ints("strides", [2, 2])]),
        NodeProto(op_type="Flatten", name="flatten", input=["p2"], output=["f"],
                  attribute=[AttributeProto(name="axis", type=AttributeProto.INT, i=1)]),
        NodeProto(op_type="Gemm", name="fc1", input=["f", "fc1.weight", "fc1.bias"], output=["h1"], attribute=gemm_t),
        NodeProto(op_type="Relu", name="relu3", input=["h1"], output=["a1"]),
        NodeProto(op_type="Gemm", name="fc2", input=["a1", "fc2.weight", "fc2.bias"], output=["h2"], attribute=gemm_t),
        NodeProto(op_type="Relu", name="relu4", input=["h2"], output=["a2"]),
        NodeProto(op_type="Gemm", name="fc3", input=["a2", "fc3.weight", "fc3.bias"], output=["logits"],
                  attribute=gemm_t),
        NodeProto(op_type="Softmax", name="softmax", input=["logits"], output=["probabilities"],
                  attribute=[AttributeProto(name="axis", type=AttributeProto.INT, i=1)]),
    ]
    graph = GraphProto(name="lenet5", node=nodes, initializer=inits,
                       input=[value_info("image", ["batch", 1, 28, 28])],
                       output=[value_info("probabilities", ["batch", 10])])
    return ModelProto(ir_version=10, producer_name="irmodel-example", producer_version=irmodel.__version__,
                      doc_string="LeNet-5 style digit classifier with deterministic random weights.",
                      opset_import=[OperatorSetIdProto(domain="", version=21)], graph=graph)


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "examples", "lenet.onnx")
    irmodel.save(build(), out)
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
