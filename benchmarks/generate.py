"""Reproducible synthetic models for the benchmarks, generated from a seed.

Shapes of model, each stressing a different thing:

* ``structure``: many nodes with attributes and small weights (the full-walk benchmark);
* ``weights``: a single file of mostly weights, under protobuf's 2 GiB limit;
* ``external``: weights in an external data file (built by bench_external_data.py);
* ``gpt2``, ``resnet50``, ``gpt2-external``, ``residual-mlp``: shaped like real exports
  (`exports.py`): a GPT-2 decoder in one file, a ResNet-50, a bigger decoder whose weights
  (over 2 GiB) are in an external data file, and 75,000 tiny nodes as torch exports a
  residual MLP.

``run_all.py`` generates them (each in a process of its own) and runs the suite.

Models are built with irmodel's own classes and streamed to disk: the weights are never
held in memory as one object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import irmodel  # noqa: E402
from irmodel import (AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,  # noqa: E402
                     TensorProto, TensorShapeProto, TypeProto, ValueInfoProto)

OPS = [("Conv", 3), ("Relu", 1), ("Add", 2), ("Mul", 2), ("MatMul", 2), ("Gemm", 3),
       ("Transpose", 1), ("Reshape", 2), ("Softmax", 1), ("LayerNormalization", 3)]


def _value_info(name: str, dims) -> ValueInfoProto:
    shape = TensorShapeProto(dim=[TensorShapeProto.Dimension(dim_param=d) if isinstance(d, str)
                                  else TensorShapeProto.Dimension(dim_value=d) for d in dims])
    return ValueInfoProto(name=name, type=TypeProto(tensor_type=TypeProto.Tensor(elem_type=1, shape=shape)))


def _attributes(op: str, rng: random.Random) -> list:
    attrs = [AttributeProto(name="axis", type=AttributeProto.INT, i=rng.randint(-3, 3))]
    if op in ("Conv", "Transpose"):
        attrs.append(AttributeProto(name="perm" if op == "Transpose" else "kernel_shape",
                                    type=AttributeProto.INTS, ints=[rng.randint(1, 7) for _ in range(4)]))
    if op in ("Gemm", "LayerNormalization"):
        attrs.append(AttributeProto(name="alpha", type=AttributeProto.FLOAT, f=rng.random()))
    if op == "Reshape":
        attrs.append(AttributeProto(name="mode", type=AttributeProto.STRING, s=b"constant"))
    return attrs


def structure_model(nodes: int, seed: int = 0) -> ModelProto:
    """``nodes`` nodes with 1-3 attributes each and one small weight per ten nodes."""
    rng = random.Random(seed)
    node_list, inits = [], []
    last = "input"
    for i in range(nodes):
        op, arity = OPS[rng.randrange(len(OPS))]
        inputs = [last] + [f"w{i}_{k}" for k in range(arity - 1)]
        out = f"t{i}"
        node_list.append(NodeProto(op_type=op, name=f"{op.lower()}_{i}", input=inputs, output=[out],
                                   attribute=_attributes(op, rng)))
        if i % 10 == 0:
            inits.append(TensorProto(name=f"w{i}_0", dims=[4, 4], data_type=1, raw_data=rng.randbytes(64)))
        last = out
    graph = GraphProto(name="structure", node=node_list, initializer=inits,
                       input=[_value_info("input", ["batch", 64])], output=[_value_info(last, ["batch", 64])])
    return ModelProto(ir_version=10, producer_name="irmodel-bench", opset_import=[OperatorSetIdProto(version=21)],
                      graph=graph)


def write_weights_model(path: str, total_bytes: int, seed: int = 0, tensors: int = 16) -> dict:
    """A model of ``tensors`` float tensors holding ``total_bytes`` of deterministic data.

    Returns ``{"nodes": ..., "payload_bytes": ...}``: one Identity node per tensor, and the
    bytes of tensor data (the rest of the file is the graph's structure).

    Written as protobuf bytes by hand around streamed payloads (each tensor's raw_data is
    produced in 16 MiB chunks), so generation needs little memory.
    """
    from wirefmt.varint import encode_varint

    rng = random.Random(seed)
    per = (total_bytes // tensors) // 4 * 4
    # Fields in number order around the graph (7), as protobuf writes them, so that the
    # file is canonical and a re-serialization by either side can be byte-identical.
    head = irmodel.dumps(ModelProto(ir_version=10, producer_name="irmodel-bench"))
    tail = irmodel.dumps(ModelProto(opset_import=[OperatorSetIdProto(version=21)]))
    tensor_heads = []
    for k in range(tensors):
        header = irmodel.dumps(TensorProto(name=f"weight_{k}", dims=[per // 4], data_type=1))
        header += encode_varint(9 << 3 | 2) + encode_varint(per)
        tensor_heads.append(header)
    nodes = b"".join(encode_varint(1 << 3 | 2) + encode_varint(len(n)) + n for n in
                     (irmodel.dumps(NodeProto(op_type="Identity", input=[f"weight_{k}"], output=[f"out_{k}"]))
                      for k in range(tensors)))
    outputs = b"".join(encode_varint(12 << 3 | 2) + encode_varint(len(v)) + v for v in
                       (irmodel.dumps(_value_info(f"out_{k}", [per // 4])) for k in range(tensors)))
    graph_len = len(nodes) + len(outputs) + sum(
        len(encode_varint(5 << 3 | 2)) + len(encode_varint(len(h) + per)) + len(h) + per for h in tensor_heads)
    chunk = 1 << 24
    with open(path, "wb") as f:
        f.write(head)
        f.write(encode_varint(7 << 3 | 2) + encode_varint(graph_len))
        f.write(nodes)
        for h in tensor_heads:
            f.write(encode_varint(5 << 3 | 2) + encode_varint(len(h) + per) + h)
            left = per
            while left:
                n = min(chunk, left)
                f.write(rng.randbytes(n))
                left -= n
        f.write(outputs)
        f.write(tail)
    return {"nodes": tensors, "payload_bytes": tensors * per}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=["structure", "weights", "gpt2", "gpt2-external", "resnet50", "residual-mlp"])
    p.add_argument("out")
    p.add_argument("--nodes", type=int, default=75000)
    p.add_argument("--size-mb", type=float, default=1536)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", type=int, default=12, help="gpt2: decoder layers")
    p.add_argument("--width", type=int, default=768, help="gpt2: model width; resnet50: the first stage's")
    p.add_argument("--heads", type=int, default=12, help="gpt2: attention heads (dividing --width)")
    p.add_argument("--vocab", type=int, default=50257, help="gpt2: vocabulary")
    p.add_argument("--positions", type=int, default=1024, help="gpt2: context length")
    p.add_argument("--classes", type=int, default=1000, help="resnet50: output classes")
    p.add_argument("--blocks", type=int, default=3000, help="residual-mlp: residual blocks (25 nodes each)")
    p.add_argument("--json", action="store_true", help="print what was written as one JSON line")
    a = p.parse_args()
    if a.kind == "structure":
        model = structure_model(a.nodes, a.seed)
        info = {"nodes": a.nodes, "payload_bytes": sum(len(t.raw_data) for t in model.graph.initializer)}
        irmodel.save(model, a.out)
    elif a.kind in ("gpt2", "gpt2-external"):
        import exports  # noqa: PLC0415 (beside this file; imports numpy)

        data = a.out + ".data" if a.kind == "gpt2-external" else None
        model, info = exports.gpt2(a.layers, a.width, a.heads, a.vocab, a.positions, a.seed, data_path=data)
        irmodel.save(model, a.out)
        if data:
            info["data_bytes"] = os.path.getsize(data)
    elif a.kind == "resnet50":
        import exports  # noqa: PLC0415

        model, info = exports.resnet50(a.seed, a.width, a.classes)
        irmodel.save(model, a.out)
    elif a.kind == "residual-mlp":
        import exports  # noqa: PLC0415

        model, info = exports.residual_mlp(a.blocks, a.width, a.seed)
        irmodel.save(model, a.out)
    else:
        info = write_weights_model(a.out, int(a.size_mb * (1 << 20)), a.seed)
    size = os.path.getsize(a.out)
    print(json.dumps({"path": a.out, "bytes": size, **info}) if a.json else f"wrote {a.out} ({size} bytes)")


if __name__ == "__main__":
    main()
