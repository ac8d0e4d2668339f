"""Models shaped like real exports from ``torch.onnx.export``, built from a seed with irmodel.helper.

The generated models of `generate.py` stress one thing each; real exports are a mix, and
the costs that matter on them are different: thousands of small nodes with short
attributes, long chains of shape arithmetic, ``Constant`` nodes carrying tensors in their
``value`` attribute (some of them large, such as a causal mask), negative axes (every
``axis=-1`` is a ten-byte varint), ~150 initializers holding hundreds of MB after the
nodes, and no ``value_info``.  Four are made here:

* `gpt2`: a transformer decoder laid out as the TorchScript exporter writes GPT-2 at
  opset 14: per layer the decomposed layer norm (ReduceMean, Sub, Pow, Sqrt, Div), the
  ``Conv1D`` projections as MatMul + Add between Shape/Gather/Unsqueeze/Concat/Reshape
  chains, heads split with Split/Reshape/Transpose, the causal mask sliced from a
  ``Constant`` and applied with Where, Softmax, and GELU in its Erf form.  The default
  size is GPT-2 small (12 layers, 768 wide, vocabulary 50257): ~2,600 nodes, 149
  initializers, ~650 MB.  With ``external`` the weights go to one data file (offsets
  aligned to 4096) written in chunks, so a model of several GB never sits in memory.
* `bert`: BERT-base (``BertModel``) as exported at opset 17: word, position and token-type
  embeddings, LayerNormalization nodes, self-attention with Softmax, GELU as Erf, the
  pooler; ~1,000 nodes, ~440 MB.
* `resnet50`: the ResNet-50 of torchvision as exported in eval mode (batch norm folded
  into the convolutions): 122 nodes, 108 initializers, ~100 MB.
* `residual_mlp`: what `torch_residual_mlp.py` exports with torch, node for node: 3,000
  residual blocks of 25 tiny operators (6 of them ``Constant`` scalars), 8 initializers
  each, ~16 MB; the per-node costs of a real export dominate (long names, a TensorProto
  in every fourth node's attribute).  ``python benchmarks/exports.py compare REAL GEN``
  compares a real export with the generated one.

Names follow the exporter (``/transformer/h.0/attn/Constant_3``, its output
``/transformer/h.0/attn/Constant_3_output_0``, initializers ``transformer.h.0.ln_1.weight``
or ``onnx::MatMul_1234``).  The values are float32 noise from numpy's PCG64 with the
given seed: they only need to be there, and to be the same in every run.
"""

from __future__ import annotations

import math
import os

from irmodel import OperatorSetIdProto, TensorProto, helper

FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
ALIGN = 4096
_CHUNK = 1 << 24  # elements per generation step of a large tensor (64 MiB of float32)


class _Weights:
    """Makes initializers: inline (``raw_data``) or appended to an external data file."""

    def __init__(self, seed: int, data_path: str | None = None):
        import numpy as np

        self.np = np
        self.rng = np.random.default_rng(seed)
        self.tensors: list = []
        self.data_path = data_path
        self.fh = open(data_path, "wb") if data_path else None
        self.nbytes = 0
        self.serial = 0

    def _values(self, n: int):
        return self.rng.standard_normal(n, dtype=self.np.float32) * 0.02

    def add(self, name: str, dims: list, fill: float | None = None) -> str:
        n = math.prod(dims)
        self.nbytes += 4 * n
        if self.fh is None:
            data = (self.np.full(n, fill, self.np.float32) if fill is not None else self._values(n)).tobytes()
            self.tensors.append(helper.make_tensor(name, FLOAT, dims, data, raw=True))
            return name
        offset = -(-self.fh.tell() // ALIGN) * ALIGN
        self.fh.write(bytes(offset - self.fh.tell()))
        left = n
        while left:
            k = min(left, _CHUNK)
            chunk = self.np.full(k, fill, self.np.float32) if fill is not None else self._values(k)
            self.fh.write(chunk.tobytes())
            left -= k
        t = TensorProto(name=name, dims=dims, data_type=FLOAT)
        _set_external(t, os.path.basename(self.data_path), offset, 4 * n)
        self.tensors.append(t)
        return name

    def anonymous(self, op: str, dims: list) -> str:
        """An initializer the exporter named after its first user (``onnx::MatMul_1234``)."""
        self.serial += 1
        return self.add(f"onnx::{op}_{1000 + self.serial}", dims)

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()


def _set_external(t, location: str, offset: int, length: int) -> None:
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = t.external_data.add()
        entry.key = key
        entry.value = value


class _Graph:
    """Nodes named as the exporter names them: ``{scope}/{Op}_{n}`` with ``_output_{i}`` outputs."""

    def __init__(self):
        self.nodes: list = []
        self.counts: dict = {}

    def op(self, scope: str, op_type: str, inputs: list, n_out: int = 1, **attrs) -> list:
        key = (scope, op_type)
        k = self.counts.get(key, 0)
        self.counts[key] = k + 1
        name = f"{scope}/{op_type}" + (f"_{k}" if k else "")
        outputs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=name, **attrs))
        return outputs

    def one(self, scope: str, op_type: str, inputs: list, **attrs) -> str:
        return self.op(scope, op_type, inputs, **attrs)[0]

    def const(self, scope: str, values, dtype: int = INT64, dims: list | None = None) -> str:
        """A ``Constant`` node: a scalar (``dims=[]``) or 1-d tensor in its ``value`` attribute."""
        import numpy as np

        arr = np.asarray(values, dtype={INT64: np.int64, FLOAT: np.float32, BOOL: np.bool_}[dtype])
        shape = list(arr.shape) if dims is None else dims
        t = helper.make_tensor("", dtype, shape, arr.tobytes(), raw=True)
        return self.one(scope, "Constant", [], value=t)


def _dims_chain(g: _Graph, scope: str, x: str, last: int) -> str:
    """``x.size()[:-1] + (last,)`` as the exporter spells it: Shape, Gather, Unsqueeze, Concat."""
    parts = []
    for i in (0, 1):
        shape = g.one(scope, "Shape", [x])
        parts.append(g.one(scope, "Gather", [shape, g.const(scope, i, dims=[])], axis=0))
    unsq = [g.one(scope, "Unsqueeze", [p, g.const(scope, [0])]) for p in parts]
    return g.one(scope, "Concat", [*unsq, g.const(scope, [last])], axis=0)


def _conv1d(g: _Graph, w: _Weights, scope: str, x: str, prefix: str, d_in: int, d_out: int) -> str:
    """transformers' ``Conv1D``: view(-1, d_in) @ weight + bias, viewed back to (batch, seq, d_out)."""
    size_out = _dims_chain(g, scope, x, d_out)
    last = g.one(scope, "Gather", [g.one(scope, "Shape", [x]), g.const(scope, -1, dims=[])], axis=0)
    flat_shape = g.one(scope, "Concat", [g.const(scope, [-1]), g.one(scope, "Unsqueeze", [last, g.const(scope, [0])])],
                       axis=0)
    flat = g.one(scope, "Reshape", [x, flat_shape])
    mm = g.one(scope, "MatMul", [flat, w.add(f"{prefix}.weight", [d_in, d_out])])
    add = g.one(scope, "Add", [w.add(f"{prefix}.bias", [d_out]), mm])
    return g.one(scope, "Reshape", [add, size_out])


def _layer_norm(g: _Graph, w: _Weights, scope: str, x: str, prefix: str, d: int) -> str:
    mean = g.one(scope, "ReduceMean", [x], axes=[-1], keepdims=1)
    centred = g.one(scope, "Sub", [x, mean])
    sq = g.one(scope, "Pow", [centred, g.const(scope, 2.0, FLOAT, dims=[])])
    var = g.one(scope, "ReduceMean", [sq], axes=[-1], keepdims=1)
    std = g.one(scope, "Sqrt", [g.one(scope, "Add", [var, g.const(scope, 1e-5, FLOAT, dims=[])])])
    normed = g.one(scope, "Div", [centred, std])
    scaled = g.one(scope, "Mul", [normed, w.add(f"{prefix}.weight", [d], fill=1.0)])
    return g.one(scope, "Add", [scaled, w.add(f"{prefix}.bias", [d], fill=0.0)])


def _split_heads(g: _Graph, scope: str, x: str, heads: int, head_dim: int, key: bool) -> str:
    parts = []
    for i in (0, 1):
        shape = g.one(scope, "Shape", [x])
        parts.append(g.one(scope, "Gather", [shape, g.const(scope, i, dims=[])], axis=0))
    unsq = [g.one(scope, "Unsqueeze", [p, g.const(scope, [0])]) for p in parts]
    shape = g.one(scope, "Concat", [*unsq, g.const(scope, [heads]), g.const(scope, [head_dim])], axis=0)
    r = g.one(scope, "Reshape", [x, shape])
    return g.one(scope, "Transpose", [r], perm=[0, 2, 3, 1] if key else [0, 2, 1, 3])


def _attention(g: _Graph, w: _Weights, scope: str, x: str, mask: str, prefix: str, d: int, heads: int,
               positions: int) -> str:
    qkv = _conv1d(g, w, scope + "/c_attn", x, prefix + ".c_attn", d, 3 * d)
    q, k, v = g.op(scope, "Split", [qkv, g.const(scope, [d, d, d])], n_out=3, axis=2)
    hd = d // heads
    q, k, v = (_split_heads(g, scope, t, heads, hd, key=(t is k)) for t in (q, k, v))
    scores = g.one(scope, "MatMul", [q, k])
    scores = g.one(scope, "Div", [scores, g.const(scope, float(hd) ** 0.5, FLOAT, dims=[])])
    # causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
    lengths = []
    for t in (q, k):
        shape = g.one(scope, "Shape", [t])
        lengths.append(g.one(scope, "Gather", [shape, g.const(scope, -2, dims=[])], axis=0))
    start = g.one(scope, "Sub", lengths[::-1])
    import numpy as np
    tril = np.tril(np.ones((positions, positions), dtype=np.bool_)).reshape(1, 1, positions, positions)
    bias = g.one(scope, "Constant", [], value=helper.make_tensor("", BOOL, list(tril.shape), tril.tobytes(), raw=True))
    s = g.one(scope, "Unsqueeze", [start, g.const(scope, [0])])
    e = g.one(scope, "Unsqueeze", [lengths[1], g.const(scope, [0])])
    rows = g.one(scope, "Slice", [bias, s, e, g.const(scope, [2]), g.const(scope, [1])])
    cols = g.one(scope, "Slice", [rows, g.const(scope, [0]), e, g.const(scope, [3]), g.const(scope, [1])])
    cond = g.one(scope, "Cast", [cols], to=BOOL)
    masked = g.one(scope, "Where", [cond, scores, g.const(scope, -3.4028234663852886e38, FLOAT, dims=[])])
    masked = g.one(scope, "Add", [masked, mask])
    probs = g.one(scope, "Softmax", [masked], axis=-1)
    ctx = g.one(scope, "MatMul", [probs, v])
    # merge heads
    ctx = g.one(scope, "Transpose", [ctx], perm=[0, 2, 1, 3])
    merged = _dims_chain(g, scope, ctx, d)
    ctx = g.one(scope, "Reshape", [ctx, merged])
    return _conv1d(g, w, scope + "/c_proj", ctx, prefix + ".c_proj", d, d)


def _gelu(g: _Graph, scope: str, x: str) -> str:
    """``x * 0.5 * (1 + erf(x / sqrt(2)))``, node for node."""
    div = g.one(scope, "Div", [x, g.const(scope, 1.4142135381698608, FLOAT, dims=[])])
    erf = g.one(scope, "Erf", [div])
    add = g.one(scope, "Add", [erf, g.const(scope, 1.0, FLOAT, dims=[])])
    mul = g.one(scope, "Mul", [x, add])
    return g.one(scope, "Mul", [mul, g.const(scope, 0.5, FLOAT, dims=[])])


def gpt2(layers: int = 12, d: int = 768, heads: int = 12, vocab: int = 50257, positions: int = 1024,
         seed: int = 0, data_path: str | None = None):
    """A GPT-2-shaped decoder; ``(model, info)``.  ``data_path``: weights go there (external)."""
    g, w = _Graph(), _Weights(seed, data_path)
    try:
        ids = "input_ids"
        scope = "/transformer"
        shape = g.one(scope, "Shape", [ids])
        seq = g.one(scope, "Gather", [shape, g.const(scope, -1, dims=[])], axis=0)
        flat_shape = g.one(scope, "Concat", [g.const(scope, [-1]), g.one(scope, "Unsqueeze", [seq, g.const(scope, [0])])],
                           axis=0)
        ids2 = g.one(scope, "Reshape", [ids, flat_shape])
        pos = g.one(scope, "Range", [g.const(scope, 0, dims=[]), seq, g.const(scope, 1, dims=[])])
        pos = g.one(scope, "Unsqueeze", [pos, g.const(scope, [0])])
        wte = w.add("transformer.wte.weight", [vocab, d])
        emb = g.one(scope + "/wte", "Gather", [wte, ids2])
        pemb = g.one(scope + "/wpe", "Gather", [w.add("transformer.wpe.weight", [positions, d]), pos])
        h = g.one(scope, "Add", [emb, pemb])
        # attention_mask[:, None, None, :], then (1.0 - mask) * finfo(float32).min
        mask = g.one(scope, "Reshape", ["attention_mask", flat_shape])
        mask = g.one(scope, "Unsqueeze", [g.one(scope, "Unsqueeze", [mask, g.const(scope, [1])]), g.const(scope, [2])])
        mask = g.one(scope, "Cast", [mask], to=FLOAT)
        mask = g.one(scope, "Sub", [g.const(scope, 1.0, FLOAT, dims=[]), mask])
        mask = g.one(scope, "Mul", [mask, g.const(scope, -3.4028234663852886e38, FLOAT, dims=[])])
        for i in range(layers):
            blk, prefix = f"{scope}/h.{i}", f"transformer.h.{i}"
            a = _attention(g, w, blk + "/attn", _layer_norm(g, w, blk + "/ln_1", h, prefix + ".ln_1", d), mask,
                           prefix + ".attn", d, heads, positions)
            h = g.one(blk, "Add", [a, h])
            x = _layer_norm(g, w, blk + "/ln_2", h, prefix + ".ln_2", d)
            x = _conv1d(g, w, blk + "/mlp/c_fc", x, prefix + ".mlp.c_fc", d, 4 * d)
            x = _gelu(g, blk + "/mlp/act", x)
            x = _conv1d(g, w, blk + "/mlp/c_proj", x, prefix + ".mlp.c_proj", 4 * d, d)
            h = g.one(blk, "Add", [h, x])
        h = _layer_norm(g, w, scope + "/ln_f", h, "transformer.ln_f", d)
        logits = g.op("/lm_head", "MatMul", [h, w.anonymous("MatMul", [d, vocab])])[0]
        g.nodes[-1].output[0] = "logits"
        del logits
    finally:
        w.close()
    graph = helper.make_graph(
        g.nodes, "main_graph",
        [helper.make_tensor_value_info("input_ids", INT64, ["batch_size", "sequence_length"]),
         helper.make_tensor_value_info("attention_mask", INT64, ["batch_size", "sequence_length"])],
        [helper.make_tensor_value_info("logits", FLOAT, ["batch_size", "sequence_length", vocab])],
        initializer=w.tensors)
    model = helper.make_model(graph, ir_version=8, producer_name="pytorch", producer_version="2.1.0",
                              opset_imports=[helper.make_opsetid("", 14)])
    return model, {"nodes": len(g.nodes), "initializers": len(w.tensors), "payload_bytes": w.nbytes}


def _conv(g: _Graph, w: _Weights, scope: str, x: str, c_in: int, c_out: int, k: int, stride: int = 1) -> str:
    p = k // 2
    return g.one(scope, "Conv", [x, w.anonymous("Conv", [c_out, c_in, k, k]), w.anonymous("Conv", [c_out])],
                 dilations=[1, 1], group=1, kernel_shape=[k, k], pads=[p, p, p, p], strides=[stride, stride])


def resnet50(seed: int = 0, width: int = 64, classes: int = 1000):
    """torchvision's ResNet-50 in eval mode, batch norm folded into the convolutions; ``(model, info)``."""
    g, w = _Graph(), _Weights(seed)
    x = g.one("/relu", "Relu", [_conv(g, w, "/conv1", "input", 3, width, 7, 2)])
    x = g.one("/maxpool", "MaxPool", [x], ceil_mode=0, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    c_in = width
    for stage, (blocks, planes) in enumerate(zip((3, 4, 6, 3), (width, 2 * width, 4 * width, 8 * width)), 1):
        for b in range(blocks):
            scope = f"/layer{stage}/layer{stage}.{b}"
            stride = 2 if b == 0 and stage > 1 else 1
            y = g.one(scope + "/relu", "Relu", [_conv(g, w, scope + "/conv1", x, c_in, planes, 1)])
            y = g.one(scope + "/relu_1", "Relu", [_conv(g, w, scope + "/conv2", y, planes, planes, 3, stride)])
            y = _conv(g, w, scope + "/conv3", y, planes, 4 * planes, 1)
            skip = _conv(g, w, scope + "/downsample/downsample.0", x, c_in, 4 * planes, 1, stride) if b == 0 else x
            x = g.one(scope + "/relu_2", "Relu", [g.one(scope, "Add", [y, skip])])
            c_in = 4 * planes
    x = g.one("/avgpool", "GlobalAveragePool", [x])
    x = g.one("", "Flatten", [x], axis=1)
    out = g.op("/fc", "Gemm", [x, w.add("fc.weight", [classes, c_in]), w.add("fc.bias", [classes])],
               alpha=1.0, beta=1.0, transB=1)
    g.nodes[-1].output[0] = "output"
    del out
    graph = helper.make_graph(
        g.nodes, "main_graph",
        [helper.make_tensor_value_info("input", FLOAT, ["batch_size", 3, 224, 224])],
        [helper.make_tensor_value_info("output", FLOAT, ["batch_size", classes])],
        initializer=w.tensors)
    model = helper.make_model(graph, ir_version=8, producer_name="pytorch", producer_version="2.1.0",
                              opset_imports=[helper.make_opsetid("", 17)])
    return model, {"nodes": len(g.nodes), "initializers": len(w.tensors), "payload_bytes": w.nbytes}


def residual_mlp(blocks: int = 3000, width: int = 16, seed: int = 0):
    """The model `torch_residual_mlp.py` exports, built without torch; ``(model, info)``.

    Laid out as the TorchScript exporter lays it out: nodes named by module path, Linear as
    MatMul with a transposed weight named ``onnx::MatMul_N`` plus ``Add(bias, product)``,
    every Python float a scalar ``Constant`` holding ``raw_data``, the named parameters of
    each block first among the initializers and the anonymous MatMul weights last.
    """
    import numpy as np

    g, w = _Graph(), _Weights(seed)
    named: list = []
    anonymous: list = []
    serial = 35 * blocks + 1  # where the exporter's value counter stands when it names the weights

    def scalar(scope: str, value: float) -> str:
        t = TensorProto(data_type=FLOAT, raw_data=np.float32(value).tobytes())
        return g.one(scope, "Constant", [], value=t)

    def weight(dims: list) -> str:
        nonlocal serial
        name = f"onnx::MatMul_{serial}"
        serial += 1
        w.add(name, dims)
        anonymous.append(w.tensors.pop())
        return name

    x = "x"
    for b in range(blocks):
        scope, prefix = f"/blocks.{b}", f"blocks.{b}"
        for param, n in (("scale", width), ("shift", width), ("ln.weight", width), ("ln.bias", width),
                         ("fc1.bias", 2 * width), ("fc2.bias", width)):
            w.add(f"{prefix}.{param}", [n])
        named.extend(w.tensors)
        w.tensors.clear()
        h = g.one(scope + "/ln", "LayerNormalization", [x, prefix + ".ln.weight", prefix + ".ln.bias"],
                  axis=-1, epsilon=float(np.float32(1e-5)))
        h = g.one(scope + "/fc1", "MatMul", [h, weight([width, 2 * width])])
        h = g.one(scope + "/fc1", "Add", [prefix + ".fc1.bias", h])
        half = g.one(scope, "Mul", [h, scalar(scope, 0.5)])
        erf = g.one(scope, "Erf", [g.one(scope, "Div", [h, scalar(scope, math.sqrt(2.0))])])
        h = g.one(scope, "Mul", [half, g.one(scope, "Add", [erf, scalar(scope, 1.0)])])
        h = g.one(scope + "/fc2", "MatMul", [h, weight([2 * width, width])])
        h = g.one(scope + "/fc2", "Add", [prefix + ".fc2.bias", h])
        mean = g.one(scope, "ReduceMean", [g.one(scope, "Pow", [h, scalar(scope, 2.0)])], axes=[-1], keepdims=1)
        root = g.one(scope, "Sqrt", [g.one(scope, "Add", [mean, scalar(scope, 1e-6)])])
        h = g.one(scope, "Div", [h, root])
        h = g.one(scope, "Add", [g.one(scope, "Mul", [h, prefix + ".scale"]), prefix + ".shift"])
        x = g.one(scope, "Add", [x, g.one(scope, "Mul", [h, scalar(scope, 0.5)])])
    g.nodes[-1].output[0] = "y"
    shape = ["batch", "seq", width]
    graph = helper.make_graph(g.nodes, "main_graph", [helper.make_tensor_value_info("x", FLOAT, shape)],
                              [helper.make_tensor_value_info("y", FLOAT, shape)], initializer=named + anonymous)
    opset = OperatorSetIdProto(version=17)  # the exporter writes no empty domain
    model = helper.make_model(graph, ir_version=8, producer_name="pytorch", producer_version="2.13.0",
                              opset_imports=[opset])
    return model, {"nodes": len(g.nodes), "initializers": len(named) + len(anonymous), "payload_bytes": w.nbytes}


def _linear(g: _Graph, w: _Weights, scope: str, x: str, prefix: str, d_in: int, d_out: int) -> str:
    """``nn.Linear`` as the exporter writes it on a 3-d input: MatMul with the transposed weight
    (``onnx::MatMul_N``), then ``Add(bias, product)``."""
    mm = g.one(scope, "MatMul", [x, w.anonymous("MatMul", [d_in, d_out])])
    return g.one(scope, "Add", [w.add(f"{prefix}.bias", [d_out]), mm])


def _layer_norm17(g: _Graph, w: _Weights, scope: str, x: str, prefix: str, d: int) -> str:
    """``nn.LayerNorm`` at opset 17: one LayerNormalization node."""
    return g.one(scope, "LayerNormalization", [x, w.add(f"{prefix}.weight", [d], fill=1.0),
                                               w.add(f"{prefix}.bias", [d], fill=0.0)],
                 axis=-1, epsilon=1e-12)


def bert(layers: int = 12, d: int = 768, heads: int = 12, vocab: int = 30522, positions: int = 512,
         type_vocab: int = 2, seed: int = 0, data_path: str | None = None):
    """A BERT-shaped encoder (transformers' ``BertModel``) as torch exports it at opset 17; ``(model, info)``.

    Embeddings (word + token type + position, the positions sliced from the
    ``position_ids`` buffer held in a ``Constant``), LayerNormalization nodes, per layer
    self-attention (query/key/value projections, heads split by Shape chains, the key
    transposed, scores scaled by a Div, the extended attention mask added, Softmax), GELU
    in its Erf form, and the pooler (first token, Linear, Tanh).  The default size is
    BERT-base: ~1,000 nodes, ~200 initializers, ~440 MB."""
    import numpy as np

    g, w = _Graph(), _Weights(seed, data_path)
    hd = d // heads
    try:
        emb = "/bert/embeddings"
        shape = g.one(emb, "Shape", ["input_ids"])
        seq = g.one(emb, "Gather", [shape, g.const(emb, 1, dims=[])], axis=0)
        ids = np.arange(positions, dtype=np.int64).reshape(1, positions)
        buf = g.one(emb, "Constant", [], value=helper.make_tensor("", INT64, [1, positions], ids.tobytes(), raw=True))
        pos = g.one(emb, "Slice", [buf, g.const(emb, [0]), g.one(emb, "Unsqueeze", [seq, g.const(emb, [0])]),
                                   g.const(emb, [1]), g.const(emb, [1])])
        words = g.one(emb + "/word_embeddings", "Gather",
                      [w.add("bert.embeddings.word_embeddings.weight", [vocab, d]), "input_ids"])
        types = g.one(emb + "/token_type_embeddings", "Gather",
                      [w.add("bert.embeddings.token_type_embeddings.weight", [type_vocab, d]), "token_type_ids"])
        h = g.one(emb, "Add", [words, types])
        h = g.one(emb, "Add", [h, g.one(emb + "/position_embeddings", "Gather",
                                        [w.add("bert.embeddings.position_embeddings.weight", [positions, d]), pos])])
        h = _layer_norm17(g, w, emb + "/LayerNorm", h, "bert.embeddings.LayerNorm", d)
        # get_extended_attention_mask: mask[:, None, None, :], then (1.0 - mask) * finfo(float32).min
        mask = g.one("/bert", "Unsqueeze", [g.one("/bert", "Unsqueeze", ["attention_mask", g.const("/bert", [1])]),
                                            g.const("/bert", [2])])
        mask = g.one("/bert", "Cast", [mask], to=FLOAT)
        mask = g.one("/bert", "Sub", [g.const("/bert", 1.0, FLOAT, dims=[]), mask])
        mask = g.one("/bert", "Mul", [mask, g.const("/bert", -3.4028234663852886e38, FLOAT, dims=[])])
        for i in range(layers):
            blk, prefix = f"/bert/encoder/layer.{i}", f"bert.encoder.layer.{i}"
            att, ap = blk + "/attention/self", prefix + ".attention.self"
            # transpose_for_scores: view(batch, seq, heads, head_dim).permute(0, 2, 1, 3)
            q, k, v = (_split_heads(g, att, _linear(g, w, f"{att}/{n}", h, f"{ap}.{n}", d, d), heads, hd, key=False)
                       for n in ("query", "key", "value"))
            scores = g.one(att, "MatMul", [q, g.one(att, "Transpose", [k], perm=[0, 1, 3, 2])])
            scores = g.one(att, "Div", [scores, g.const(att, float(hd) ** 0.5, FLOAT, dims=[])])
            probs = g.one(att, "Softmax", [g.one(att, "Add", [scores, mask])], axis=-1)
            ctx = g.one(att, "Transpose", [g.one(att, "MatMul", [probs, v])], perm=[0, 2, 1, 3])
            ctx = g.one(att, "Reshape", [ctx, _dims_chain(g, att, ctx, d)])
            out = blk + "/attention/output"
            a = _linear(g, w, out + "/dense", ctx, prefix + ".attention.output.dense", d, d)
            h = _layer_norm17(g, w, out + "/LayerNorm", g.one(out, "Add", [a, h]),
                              prefix + ".attention.output.LayerNorm", d)
            x = _linear(g, w, blk + "/intermediate/dense", h, prefix + ".intermediate.dense", d, 4 * d)
            x = _gelu(g, blk + "/intermediate/intermediate_act_fn", x)
            x = _linear(g, w, blk + "/output/dense", x, prefix + ".output.dense", 4 * d, d)
            h = _layer_norm17(g, w, blk + "/output/LayerNorm", g.one(blk + "/output", "Add", [x, h]),
                              prefix + ".output.LayerNorm", d)
        g.nodes[-1].output[0] = "last_hidden_state"
        h = "last_hidden_state"
        first = g.one("/bert/pooler", "Gather", [h, g.const("/bert/pooler", 0, dims=[])], axis=1)
        pooled = g.one("/bert/pooler/dense", "Gemm", [first, w.add("bert.pooler.dense.weight", [d, d]),
                                                      w.add("bert.pooler.dense.bias", [d])],
                       alpha=1.0, beta=1.0, transB=1)
        g.one("/bert/pooler/activation", "Tanh", [pooled])
        g.nodes[-1].output[0] = "pooler_output"
    finally:
        w.close()
    ints = [helper.make_tensor_value_info(n, INT64, ["batch_size", "sequence_length"])
            for n in ("input_ids", "attention_mask", "token_type_ids")]
    graph = helper.make_graph(
        g.nodes, "main_graph", ints,
        [helper.make_tensor_value_info("last_hidden_state", FLOAT, ["batch_size", "sequence_length", d]),
         helper.make_tensor_value_info("pooler_output", FLOAT, ["batch_size", d])],
        initializer=w.tensors)
    model = helper.make_model(graph, ir_version=8, producer_name="pytorch", producer_version="2.1.0",
                              opset_imports=[helper.make_opsetid("", 17)])
    return model, {"nodes": len(g.nodes), "initializers": len(w.tensors), "payload_bytes": w.nbytes}


def export_shape(path: str) -> dict:
    """What makes a model look like a real export, for `compare`: its op histogram (shares),
    the lengths of its value names, bytes per node and the initializers' count and bytes."""
    import statistics

    import irmodel

    model = irmodel.load(path)
    graph = model.graph
    ops: dict = {}
    names: list = []
    for node in graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
        names.extend(len(v) for v in (*node.input, *node.output) if v)
    nodes = len(graph.node)
    quartiles = statistics.quantiles(names, n=4) if len(names) > 1 else [0, 0, 0]
    return {"nodes": nodes, "file_bytes": os.path.getsize(path),
            "bytes_per_node": round(sum(n.ByteSize() for n in graph.node) / max(nodes, 1), 1),
            "initializers": len(graph.initializer),
            "initializer_bytes": sum(t.ByteSize() for t in graph.initializer),
            "name_length_quartiles": [round(q, 1) for q in quartiles],
            "op_shares": {op: round(count / nodes, 4) for op, count in sorted(ops.items())}}


def _compare(real: str, generated: str) -> None:
    """Print the two models' shapes side by side (the figures RESULTS.md quotes)."""
    a, b = export_shape(real), export_shape(generated)
    for key in a:
        if key == "op_shares":
            for op in sorted(set(a[key]) | set(b[key])):
                print(f"  share of {op:20} {a[key].get(op, 0):>10} {b[key].get(op, 0):>10}")
        else:
            print(f"{key:27} {a[key]!s:>10} {b[key]!s:>10}")


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        _compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: python benchmarks/exports.py compare REAL.onnx GENERATED.onnx")
