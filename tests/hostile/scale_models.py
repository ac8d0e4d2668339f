"""Large-but-plausible models of issue 31 (item 4), built as bytes at any size.

Each builder takes a size and returns a serialized ModelProto, written by hand on the
wire (the sizes the issue names take seconds to build through message objects):

* `empty_nodes(n)`: a graph of ``n`` empty NodeProtos (2 bytes each: 4 MB at 2,000,000);
* `relu_chain(n)`: a valid chain of ``n`` Relu nodes (5 MB at 200,000);
* `many_outputs(n)`: one Split node with ``n`` outputs, each a graph output;
* `sparse_rank(n)`: a sparse initializer whose dense shape has ``n`` dims;
* `initializer_dims(n)`: initializers holding ``n`` dims in all (1 MB at ~100,000 big dims);
* `nested_function_ifs(functions, ifs)`: ``functions`` model-local functions, each
  calling the next inside ``ifs`` nested Ifs (valid: onnx's full check accepts it);
* `function_chain(functions)`: a chain of functions, one If each;
* `layer_norm_stash(stash_type)`: a LayerNormalization with that ``stash_type``.
"""

from __future__ import annotations

from wirefmt.varint import encode_varint

#: The opset the builders import (LayerNormalization exists from 17).
OPSET = 18
IR_VERSION = 8


def _tag(number: int, wt: int) -> bytes:
    return encode_varint(number << 3 | wt)


def _ld(number: int, body: bytes) -> bytes:
    return _tag(number, 2) + encode_varint(len(body)) + body


def _int(number: int, value: int) -> bytes:
    return _tag(number, 0) + encode_varint(value & ((1 << 64) - 1))


def _str(number: int, text: str) -> bytes:
    return _ld(number, text.encode())


def node(op: str, inputs: list, outputs: list, name: str = "", attrs: bytes = b"",
         domain: str = "") -> bytes:
    """A NodeProto's bytes (``attrs``: AttributeProto fields already framed as field 5)."""
    body = b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs)
    if name:
        body += _str(3, name)
    body += _str(4, op) + attrs
    if domain:
        body += _str(7, domain)
    return body


def tensor_type(elem_type: int, dims: list | None) -> bytes:
    """A TypeProto holding a tensor type (``dims`` ints or strings; None: no shape)."""
    inner = _int(1, elem_type)
    if dims is not None:
        shape = b"".join(_ld(1, _int(1, d) if isinstance(d, int) else _str(2, d)) for d in dims)
        inner += _ld(2, shape)
    return _ld(1, inner)


def value_info(name: str, elem_type: int | None = 1, dims: list | None = None) -> bytes:
    body = _str(1, name)
    if elem_type is not None:
        body += _ld(2, tensor_type(elem_type, dims))
    return body


def graph(nodes, inputs=(), outputs=(), initializers=(), sparse=(), name: str = "g") -> bytes:
    """A GraphProto from framed-less node / value info / tensor bodies."""
    parts = [_ld(1, n) for n in nodes]
    parts.append(_str(2, name))
    parts += [_ld(5, t) for t in initializers]
    parts += [_ld(11, v) for v in inputs]
    parts += [_ld(12, v) for v in outputs]
    parts += [_ld(15, s) for s in sparse]
    return b"".join(parts)


def model(graph_body: bytes, functions=(), opsets=(("", OPSET),)) -> bytes:
    out = _int(1, IR_VERSION) + _ld(7, graph_body)
    for domain, version in opsets:
        out += _ld(8, _str(1, domain) + _int(2, version))
    out += b"".join(_ld(25, f) for f in functions)
    return out


# -- the cases ---------------------------------------------------------------------------

def empty_nodes(n: int) -> bytes:
    """``n`` NodeProtos with no field at all: each is a problem (no op_type)."""
    return _int(1, IR_VERSION) + _ld(7, _ld(1, b"") * n + _str(2, "g")) + \
        _ld(8, _str(1, "") + _int(2, OPSET))


def relu_chain(n: int) -> bytes:
    """x -> Relu -> ... -> Relu (``n`` nodes) -> y: a valid model."""
    names = ["x"] + [f"t{i}" for i in range(n - 1)] + ["y"]
    nodes = [node("Relu", [names[i]], [names[i + 1]]) for i in range(n)]
    return model(graph(nodes, [value_info("x", 1, [2, "N"])], [value_info("y", 1, [2, "N"])]))


def many_outputs(n: int) -> bytes:
    """A Split of a [n, 4] input into ``n`` outputs (opset 18's ``num_outputs``), each a
    graph output: a valid model."""
    outs = [f"out_{i}" for i in range(n)]
    attr = _ld(5, _str(1, "num_outputs") + _int(20, 2) + _int(3, n))
    nodes = [node("Split", ["x"], outs, attrs=attr)]
    return model(graph(nodes, [value_info("x", 1, [n, 4])], [value_info(o, 1, [1, 4]) for o in outs]))


def sparse_rank(n: int, dim: int = 1) -> bytes:
    """A sparse initializer of ``n`` dims (each ``dim``) with one value at index 0 (valid
    while the dims' product is at least 1)."""
    values = _int(1, 1) + _int(2, 1) + _str(8, "sp") + _ld(9, b"\x00" * 4)
    indices = _int(1, 1) + _int(2, 7) + _str(8, "sp_i") + _ld(9, b"\x00" * 8)  # 1-D: linearized
    sp = _ld(1, values) + _ld(2, indices) + b"".join(_int(3, dim) for _ in range(n))
    return model(graph([], sparse=[sp]))


def initializer_dims(n: int, dim: int = 1, tensors: int = 1) -> bytes:
    """``tensors`` FLOAT initializers sharing ``n`` dims of ``dim`` among them (no data:
    each is a problem unless the dims make 0 elements)."""
    per = max(1, n // tensors)
    inits = [b"".join(_int(1, dim) for _ in range(per)) + _int(2, 1) + _str(8, f"w{t}")
             for t in range(tensors)]
    return model(graph([], initializers=inits))


def _if_nest(depth: int, innermost: bytes) -> bytes:
    """A node ``If(c){ If(c){ ... innermost ... } } else {Relu(x)}`` ``depth`` deep: each
    then branch outputs its inner node's output, each else branch Relu of the outer ``x``."""
    body = innermost
    for level in range(depth):
        inner_out = f"r{level - 1}" if level else "r"
        then = graph([body], outputs=[value_info(inner_out, 1, None)], name=f"t{level}")
        other = graph([node("Relu", ["x"], [f"e{level}"])], outputs=[value_info(f"e{level}", 1, None)],
                      name=f"e{level}")
        attrs = _ld(5, _str(1, "then_branch") + _int(20, 5) + _ld(6, then)) + \
            _ld(5, _str(1, "else_branch") + _int(20, 5) + _ld(6, other))
        body = node("If", ["c"], [f"r{level}"], attrs=attrs)
    return body


def nested_function_ifs(functions: int, ifs: int, domain: str = "local") -> bytes:
    """Functions F0..F{k-1}: Fi(c, x) -> r{ifs-1} calls F{i+1} inside ``ifs`` nested Ifs;
    the last one is a Relu.  The graph calls F0.  Accepted by onnx's full check."""
    fns = []
    for i in range(functions):
        if i + 1 < functions:
            inner = node(f"F{i + 1}", ["c", "x"], ["r"], domain=domain)
        else:
            inner = node("Relu", ["x"], ["r"])
        body = _if_nest(ifs, inner) if ifs else inner
        out = f"r{ifs - 1}" if ifs else "r"
        fn = _str(1, f"F{i}") + _str(4, "c") + _str(4, "x") + _str(5, out) + _ld(7, body) + \
            _ld(9, _str(1, "") + _int(2, OPSET)) + _ld(9, _str(1, domain) + _int(2, 1)) + \
            _str(10, domain)
        fns.append(fn)
    nodes = [node("F0", ["c", "x"], ["y"], domain=domain)]
    g = graph(nodes, [value_info("c", 9, []), value_info("x", 1, [2])], [value_info("y", 1, [2])])
    return model(g, fns, opsets=(("", OPSET), (domain, 1)))


def function_chain(functions: int) -> bytes:
    """``functions`` functions each calling the next inside one If."""
    return nested_function_ifs(functions, 1)


def layer_norm_stash(stash_type: int) -> bytes:
    """LayerNormalization(X, Scale) -> (Y, Mean, InvStdDev) with this ``stash_type``."""
    attr = _ld(5, _str(1, "stash_type") + _int(20, 2) + _int(3, stash_type))
    nodes = [node("LayerNormalization", ["X", "S"], ["Y", "M", "R"], attrs=attr)]
    g = graph(nodes, [value_info("X", 1, [2, 3]), value_info("S", 1, [3])],
              [value_info("Y", 1, [2, 3]), value_info("M", 1, [2, 1]), value_info("R", 1, [2, 1])])
    return model(g)


#: The issue's sizes: name -> (builder, full-size argument, small argument).
CASES = {
    "empty-nodes": (empty_nodes, 2_000_000, 2_000),
    "relu-chain": (relu_chain, 200_000, 500),
    "many-outputs": (many_outputs, 100_000, 500),
    "sparse-rank": (sparse_rank, 100_000, 500),
    "initializer-dims": (initializer_dims, 500_000, 500),
}
