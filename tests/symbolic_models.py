"""Decoder-style models for the symbolic inference tests and benchmark (built with irmodel.helper).

Each model has dims named by the graph inputs only (B, S, P, ...): a key/value cache
concatenated with the new keys, Shape -> Gather -> Concat -> Reshape chains, a causal
mask built with Range and sliced with bounds computed from shapes, and lengths doubled
and halved.  `decoder_model(n_layers)` repeats the attention block, so it scales to the
benchmark's size.
"""

from __future__ import annotations

from irmodel import helper as h

FLOAT, INT64 = 1, 7
HEADS, HEAD = 4, 8
HIDDEN = HEADS * HEAD


class _Builder:
    def __init__(self, share_weights: bool = False):
        self.nodes = []
        self.inits = []
        self.n = 0
        self.share = share_weights
        self.shared: dict = {}

    def name(self, hint: str) -> str:
        self.n += 1
        return f"{hint}_{self.n}"

    def node(self, op: str, inputs, n_out: int = 1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(h.make_node(op, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def ints(self, values, scalar: bool = False) -> str:
        name = self.name("c")
        self.inits.append(h.make_tensor(name, INT64, [] if scalar else [len(values)], list(values)))
        return name

    def weight(self, rows: int, cols: int) -> str:
        if self.share and (rows, cols) in self.shared:
            return self.shared[(rows, cols)]
        name = self.name("w")
        self.shared[(rows, cols)] = name
        self.inits.append(h.make_tensor(name, FLOAT, [rows, cols], [0.01 * ((i * 7) % 13) for i in range(rows * cols)]))
        return name


def _attention(b: _Builder, x: str, past_k: str, past_v: str):
    """One attention block over x [B, S, HIDDEN] with a cache [B, HEADS, P, HEAD]."""
    shape_x = b.node("Shape", [x])
    batch = b.node("Gather", [shape_x, b.ints([0], True)], axis=0)
    seq = b.node("Gather", [shape_x, b.ints([1], True)], axis=0)
    heads_shape = b.node("Concat", [b.node("Unsqueeze", [batch, b.ints([0])]),
                                    b.node("Unsqueeze", [seq, b.ints([0])]), b.ints([HEADS, HEAD])], axis=0)

    def split_heads(t):
        return b.node("Transpose", [b.node("Reshape", [t, heads_shape])], perm=[0, 2, 1, 3])

    q = split_heads(b.node("MatMul", [x, b.weight(HIDDEN, HIDDEN)]))
    k = split_heads(b.node("MatMul", [x, b.weight(HIDDEN, HIDDEN)]))
    v = split_heads(b.node("MatMul", [x, b.weight(HIDDEN, HIDDEN)]))
    present_k = b.node("Concat", [past_k, k], axis=2)
    present_v = b.node("Concat", [past_v, v], axis=2)
    scores = b.node("MatMul", [q, b.node("Transpose", [present_k], perm=[0, 1, 3, 2])])
    # causal mask: positions [0, total) compared with the query positions [past, total)
    total = b.node("Gather", [b.node("Shape", [present_k]), b.ints([2], True)], axis=0)
    past_len = b.node("Sub", [total, seq])
    key_pos = b.node("Range", [b.ints([0], True), total, b.ints([1], True)])
    all_pos = b.node("Range", [b.ints([0], True), total, b.ints([1], True)])
    query_pos = b.node("Slice", [all_pos, b.node("Unsqueeze", [past_len, b.ints([0])]),
                                 b.node("Unsqueeze", [total, b.ints([0])]), b.ints([0])])
    allowed = b.node("LessOrEqual", [b.node("Unsqueeze", [key_pos, b.ints([0])]),
                                     b.node("Unsqueeze", [query_pos, b.ints([1])])])
    mask = b.node("Where", [allowed, b.node("Cast", [b.ints([0], True)], to=FLOAT),
                            b.node("Cast", [b.ints([-10000], True)], to=FLOAT)])
    probs = b.node("Softmax", [b.node("Add", [scores, mask])], axis=-1)
    ctx = b.node("MatMul", [probs, present_v])
    merged = b.node("Reshape", [b.node("Transpose", [ctx], perm=[0, 2, 1, 3]), b.ints([0, 0, -1])])
    out = b.node("MatMul", [merged, b.weight(HIDDEN, HIDDEN)])
    return out, present_k, present_v


def _doubling(b: _Builder, x: str, opset: int) -> str:
    """Lengths doubled (Concat, Tile), halved (Split, Slice with computed bounds, Div) and rebuilt."""
    doubled = b.node("Concat", [x, x], axis=1)                        # [B, 2S, H]
    shape_d = b.node("Shape", [doubled])
    two_s = b.node("Gather", [shape_d, b.ints([1])], axis=0)         # [2S]
    half = b.node("Div", [two_s, b.ints([2])])                        # [S]
    if opset >= 18:
        first, second = b.node("Split", [doubled], n_out=2, axis=1, num_outputs=2)   # [B, S, H] each
    else:
        first, second = b.node("Split", [doubled, b.node("Concat", [half, half], axis=0)], n_out=2, axis=1)
    tail = b.node("Slice", [doubled, half, two_s, b.ints([1])])      # [B, S, H]
    tiled = b.node("Tile", [second, b.node("Concat", [b.ints([1]), b.ints([2]), b.ints([1])], axis=0)])
    quarter = b.node("Slice", [tiled, b.ints([0]), b.node("Div", [two_s, b.ints([4])]), b.ints([1])])
    padded = b.node("Pad", [quarter, b.node("Concat", [b.ints([0, 1, 0]), b.ints([0]),
                                                        b.node("Mod", [two_s, b.ints([2])]), b.ints([0])],
                                            axis=0)])
    summed = b.node("Add", [first, tail])
    flat = b.node("Reshape", [summed, b.node("Concat", [b.ints([-1]), b.ints([HIDDEN])], axis=0)])  # [B*S, H]
    back = b.node("Reshape", [flat, b.node("Shape", [x])])
    expanded = b.node("Expand", [b.ints([1], True), b.node("Shape", [padded])])
    b.node("ReduceSum", [expanded, b.ints([1])], keepdims=0)
    b.node("ConstantOfShape", [b.node("Concat", [b.node("Shape", [padded]), b.ints([2])], axis=0)])
    return back


def decoder_model(n_layers: int = 1, opset: int = 18, share_weights: bool = False):
    """A decoder of ``n_layers`` attention blocks with a key/value cache; inputs x [B, S, H] and caches.

    ``share_weights``: one weight per shape for all layers (the benchmark's 100,000-node model).
    """
    b = _Builder(share_weights)
    x = "x"
    inputs = [h.make_tensor_value_info("x", FLOAT, ["B", "S", HIDDEN])]
    outputs = []
    for layer in range(n_layers):
        pk, pv = f"past_k{layer}", f"past_v{layer}"
        inputs += [h.make_tensor_value_info(pk, FLOAT, ["B", HEADS, "P", HEAD]),
                   h.make_tensor_value_info(pv, FLOAT, ["B", HEADS, "P", HEAD])]
        x, present_k, present_v = _attention(b, x, pk, pv)
        x = _doubling(b, x, opset)
        outputs += [present_k, present_v]
    graph = h.make_graph(b.nodes, "decoder", inputs,
                         [h.make_tensor_value_info(x, FLOAT, None)]
                         + [h.make_tensor_value_info(o, FLOAT, None) for o in outputs],
                         initializer=b.inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=9)
