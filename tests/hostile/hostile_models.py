"""The hostile models of issue 31, one builder per case, as bytes.

Each builder takes a size (the count the issue names: nodes, inputs, dims, ...) whose
default is the issue's full size, and returns the serialized ``ModelProto``.  The bytes
are written field by field with wirefmt's ``tag`` and ``encode_varint`` and the field
numbers of irmodel's own schema (`irmodel.proto.REGISTRY`): no message objects for the
bulk of a model, so that even the 2,000,000-node case builds in about a second, and no
onnx (the reference cannot build some of these, and must not be needed to).

`CASES` lists every case: its name, the issue's class it belongs to, the builder, the
full size and a small size for CI (one that still shows the case's shape: a chain, a
wide node, deep nesting; where the full case is cheap to build its small size is close
to the full one).  `sparse_hole_model` is the one case that writes a file beside the
model (its data file); its builder takes the directory.

The classes (the issue's headings): internal errors, memory from propagated values,
super-linear symbolic inference, large-but-plausible files, valid models refused, work
that follows a file's apparent size, where ours and onnx differ.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

from irmodel.proto import REGISTRY
from wirefmt.varint import encode_varint
from wirefmt.writer import tag

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
FLOAT, INT64, BOOL = 1, 7, 9  # TensorProto.DataType
#: AttributeProto.AttributeType values the builders use.
A_FLOAT, A_INT, A_GRAPH, A_INTS = 1, 2, 5, 7
#: The default-domain opset and the model-local functions' domain.
OPSET = 21
LOCAL = "local"

# ---------------------------------------------------------------- field encoding


@lru_cache(maxsize=None)
def _number(message: str, field: str) -> int:
    for f in REGISTRY.message(message).fields:
        if f.name == field:
            return f.number
    raise KeyError(f"{message}.{field}")


@lru_cache(maxsize=None)
def _tag(message: str, field: str, wire_type: int) -> bytes:
    return tag(_number(message, field), wire_type)


def _len(message: str, field: str, payload: bytes | str) -> bytes:
    """One length-delimited field (a string, bytes, a sub-message or a packed run)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return _tag(message, field, 2) + encode_varint(len(payload)) + payload


def _int(message: str, field: str, value: int) -> bytes:
    """One varint field (negative int64 as its two's complement, as protobuf writes it)."""
    return _tag(message, field, 0) + encode_varint(value)


def _strings(message: str, field: str, values: Iterable[str]) -> bytes:
    t = _tag(message, field, 2)
    out = []
    for v in values:
        b = v.encode()
        out.append(t + encode_varint(len(b)) + b)
    return b"".join(out)


def _packed_ints(message: str, field: str, values: Iterable[int]) -> bytes:
    return _len(message, field, b"".join(encode_varint(v) for v in values))


# ---------------------------------------------------------------- message builders


def tensor(name: str, data_type: int, dims: Iterable[int], *, int64s: Iterable[int] = (),
           floats: Iterable[float] = (), raw: bytes | None = None, external: dict | None = None) -> bytes:
    """A TensorProto's bytes."""
    out = [_packed_ints("TensorProto", "dims", dims) if dims else b"",
           _int("TensorProto", "data_type", data_type)]
    floats = list(floats)
    if floats:
        out.append(_len("TensorProto", "float_data", struct.pack(f"<{len(floats)}f", *floats)))
    int64s = list(int64s)
    if int64s:
        out.append(_packed_ints("TensorProto", "int64_data", int64s))
    out.append(_len("TensorProto", "name", name))
    if raw is not None:
        out.append(_len("TensorProto", "raw_data", raw))
    if external is not None:
        for key, value in external.items():
            entry = _len("StringStringEntryProto", "key", key) + _len("StringStringEntryProto", "value", value)
            out.append(_len("TensorProto", "external_data", entry))
        out.append(_int("TensorProto", "data_location", 1))
    return b"".join(out)


def attribute(name: str, *, i: int | None = None, f: float | None = None, g: bytes | None = None,
              ints: Iterable[int] | None = None) -> bytes:
    """An AttributeProto's bytes: one of an int, a float, a graph (its bytes) or ints."""
    out = [_len("AttributeProto", "name", name)]
    if i is not None:
        out += [_int("AttributeProto", "i", i), _int("AttributeProto", "type", A_INT)]
    elif f is not None:
        out += [tag(_number("AttributeProto", "f"), 5) + struct.pack("<f", f),
                _int("AttributeProto", "type", A_FLOAT)]
    elif g is not None:
        out += [_len("AttributeProto", "g", g), _int("AttributeProto", "type", A_GRAPH)]
    else:
        out += [_packed_ints("AttributeProto", "ints", ints or ()), _int("AttributeProto", "type", A_INTS)]
    return b"".join(out)


def node(op_type: str, inputs: Iterable[str], outputs: Iterable[str], *, name: str = "",
         domain: str = "", attributes: Iterable[bytes] = ()) -> bytes:
    """A NodeProto's bytes (``attributes``: `attribute` results)."""
    out = [_strings("NodeProto", "input", inputs), _strings("NodeProto", "output", outputs)]
    if name:
        out.append(_len("NodeProto", "name", name))
    out.append(_len("NodeProto", "op_type", op_type))
    out.extend(_len("NodeProto", "attribute", a) for a in attributes)
    if domain:
        out.append(_len("NodeProto", "domain", domain))
    return b"".join(out)


_EMPTY_DIM = _len("TensorShapeProto", "dim", b"")


def _dim(d: int | str | None) -> bytes:
    if d is None:
        return _EMPTY_DIM  # a dim with neither a value nor a name
    if isinstance(d, str):
        return _len("TensorShapeProto", "dim", _len("TensorShapeProto.Dimension", "dim_param", d))
    return _len("TensorShapeProto", "dim", _int("TensorShapeProto.Dimension", "dim_value", d))


def value_info(name: str, elem_type: int = FLOAT, shape: Iterable[int | str | None] | None = None) -> bytes:
    """A ValueInfoProto's bytes for a tensor (``shape`` None: no shape at all)."""
    body = _int("TypeProto.Tensor", "elem_type", elem_type)
    if shape is not None:
        body += _len("TypeProto.Tensor", "shape", b"".join(_dim(d) for d in shape))
    return _len("ValueInfoProto", "name", name) + _len("ValueInfoProto", "type",
                                                        _len("TypeProto", "tensor_type", body))


def graph(nodes: Iterable[bytes], name: str, inputs: Iterable[bytes] = (), outputs: Iterable[bytes] = (),
          initializers: Iterable[bytes] = (), sparse_initializers: Iterable[bytes] = ()) -> bytes:
    """A GraphProto's bytes, from the bytes of its parts."""
    t = tag(_number("GraphProto", "node"), 2)
    parts = [b"".join(t + encode_varint(len(n)) + n for n in nodes), _len("GraphProto", "name", name)]
    parts += [_len("GraphProto", "initializer", i) for i in initializers]
    parts += [_len("GraphProto", "input", i) for i in inputs]
    parts += [_len("GraphProto", "output", o) for o in outputs]
    parts += [_len("GraphProto", "sparse_initializer", s) for s in sparse_initializers]
    return b"".join(parts)


def _opset(domain: str, version: int) -> bytes:
    return (_len("OperatorSetIdProto", "domain", domain) if domain else b"") + \
        _int("OperatorSetIdProto", "version", version)


def function(name: str, inputs: list, outputs: list, nodes: Iterable[bytes], opsets: dict) -> bytes:
    """A model-local FunctionProto's bytes, in the domain `LOCAL`."""
    out = [_len("FunctionProto", "name", name), _strings("FunctionProto", "input", inputs),
           _strings("FunctionProto", "output", outputs)]
    out += [_len("FunctionProto", "node", n) for n in nodes]
    out += [_len("FunctionProto", "opset_import", _opset(d, v)) for d, v in opsets.items()]
    out.append(_len("FunctionProto", "domain", LOCAL))
    return b"".join(out)


def model(graph_bytes: bytes, *, opset: int = OPSET, ir_version: int = 10, functions: Iterable[bytes] = (),
          extra_opsets: dict | None = None) -> bytes:
    """A ModelProto's bytes around a graph's."""
    opsets = {"": opset, **(extra_opsets or {})}
    out = [_int("ModelProto", "ir_version", ir_version), _len("ModelProto", "producer_name", "hostile"),
           _len("ModelProto", "graph", graph_bytes)]
    out += [_len("ModelProto", "opset_import", _opset(d, v)) for d, v in opsets.items()]
    out += [_len("ModelProto", "functions", f) for f in functions]
    return b"".join(out)


def _simple(nodes: Iterable[bytes], inputs: Iterable[bytes], outputs: Iterable[bytes], **kw) -> bytes:
    opset = kw.pop("opset", OPSET)
    return model(graph(nodes, "g", inputs, outputs, **kw), opset=opset)


# ---------------------------------------------------------------- internal errors


def huge_sparse_dims(size: int = 300) -> bytes:
    """A sparse initializer of ``size`` dims of 2**62: its element count has about
    ``18.7 * size`` digits (300: 5,600 digits, past Python's 4,300-digit ``str``)."""
    values = tensor("sp", FLOAT, [1], floats=[1.0])
    indices = tensor("sp_indices", INT64, [1], int64s=[0])
    sparse = (_len("SparseTensorProto", "values", values) + _len("SparseTensorProto", "indices", indices)
              + _packed_ints("SparseTensorProto", "dims", [1 << 62] * size))
    return _simple([node("Identity", ["sp"], ["y"])], [], [value_info("y", FLOAT, [None] * size)],
                   sparse_initializers=[sparse])


def resize_inf_scales(size: int = 1) -> bytes:
    """``size`` Resize nodes in a chain, each with scales ``[1, 1, inf, inf]``."""
    scales = tensor("scales", FLOAT, [4], floats=[1.0, 1.0, float("inf"), float("inf")])
    nodes = [node("Resize", [f"r{i}", "", "scales"], [f"r{i + 1}"], name=f"resize{i}") for i in range(size)]
    return _simple(nodes, [value_info("r0", FLOAT, [1, 1, 4, 4])], [value_info(f"r{size}", FLOAT, [None] * 4)],
                   initializers=[scales])


# ---------------------------------------------------------------- memory from propagated values

_AXIS0 = attribute("axis", i=0)


def concat_chain(size: int = 3000) -> bytes:
    """``c{i+1} = Concat(c{i}, c{i})`` ``size`` times from ``Shape(x)``: the shape value
    doubles at each step (2**size elements at the end, if nothing stops it)."""
    nodes = [node("Shape", ["x"], ["c0"])]
    nodes += [node("Concat", [f"c{i}", f"c{i}"], [f"c{i + 1}"], attributes=[_AXIS0]) for i in range(size)]
    return _simple(nodes, [value_info("x", FLOAT, [2, 3, 4, 5])], [value_info(f"c{size}", INT64, [None])])


def many_concat_inputs(size: int = 20000) -> bytes:
    """Two Concats of ``size // 2`` inputs each: the first of ``Shape(x)`` (rank 4), the
    second of the first's result, so the value is ``4 * (size / 2)**2`` elements."""
    half = max(1, size // 2)
    nodes = [node("Shape", ["x"], ["s"]), node("Concat", ["s"] * half, ["c1"], attributes=[_AXIS0]),
             node("Concat", ["c1"] * half, ["c2"], attributes=[_AXIS0])]
    return _simple(nodes, [value_info("x", FLOAT, [2, 3, 4, 5])], [value_info("c2", INT64, [None])])


def add_rank_shape_values(size: int = 100_000, repeats: int | None = None) -> bytes:
    """``Shape(x)`` of a rank-``size`` input added to itself ``repeats`` times in a chain
    (default ``size // 50``: 2,000 at the full rank 100,000)."""
    repeats = max(1, size // 50) if repeats is None else repeats
    nodes = [node("Shape", ["x"], ["a0"])]
    nodes += [node("Add", [f"a{i}", "a0"], [f"a{i + 1}"]) for i in range(repeats)]
    return _simple(nodes, [value_info("x", FLOAT, [1] * size)], [value_info(f"a{repeats}", INT64, [size])])


# ---------------------------------------------------------------- super-linear symbolic inference


def broadcast_equalities(size: int = 3000) -> bytes:
    """``size`` Adds, the i-th of inputs of shapes ``[d{i}]`` and ``[d{i+1}]``: each
    broadcast proves one equality of two named dims, in a chain."""
    inputs = [value_info(f"x{i}", FLOAT, [f"d{i}"]) for i in range(size + 1)]
    nodes = [node("Add", [f"x{i}", f"x{i + 1}"], [f"y{i}"]) for i in range(size)]
    return _simple(nodes, inputs, [value_info(f"y{size - 1}", FLOAT, [None])])


def concat_equalities(size: int = 3000) -> bytes:
    """``size`` Concats on axis 0 of ``[1, d{i}]`` and ``[1, d{i+1}]``: each proves that
    the second dims are equal."""
    inputs = [value_info(f"x{i}", FLOAT, [1, f"d{i}"]) for i in range(size + 1)]
    nodes = [node("Concat", [f"x{i}", f"x{i + 1}"], [f"y{i}"], attributes=[_AXIS0]) for i in range(size)]
    return _simple(nodes, inputs, [value_info(f"y{size - 1}", FLOAT, [2, None])])


def matmul_equalities(size: int = 3000) -> bytes:
    """``size`` MatMuls of ``[1, d{i}]`` by ``[d{i+1}, 1]``: each proves that the inner
    dims are equal."""
    inputs = [value_info(f"x{i}", FLOAT, [1, f"d{i}"]) for i in range(size + 1)]
    inputs += [value_info(f"w{i}", FLOAT, [f"d{i}", 1]) for i in range(size + 1)]
    nodes = [node("MatMul", [f"x{i}", f"w{i + 1}"], [f"y{i}"]) for i in range(size)]
    return _simple(nodes, inputs, [value_info(f"y{size - 1}", FLOAT, [1, 1])])


def max_min_many_inputs(size: int = 250, nodes_count: int = 40) -> bytes:
    """``nodes_count`` Max and Min nodes (alternating), each over the same ``size`` shape
    values ``Shape(x{j})`` of inputs of shape ``[d{j}]``."""
    inputs = [value_info(f"x{j}", FLOAT, [f"d{j}"]) for j in range(size)]
    nodes = [node("Shape", [f"x{j}"], [f"s{j}"]) for j in range(size)]
    names = [f"s{j}" for j in range(size)]
    nodes += [node("Max" if k % 2 == 0 else "Min", names, [f"m{k}"]) for k in range(nodes_count)]
    return _simple(nodes, inputs, [value_info(f"m{k}", INT64, [1]) for k in range(nodes_count)])


def unnamed_dims(size: int = 100_000, values: int = 10) -> bytes:
    """``values`` inputs of rank ``size`` whose dims have neither a value nor a name,
    added together in a chain."""
    inputs = [value_info(f"x{i}", FLOAT, [None] * size) for i in range(values)]
    nodes = [node("Add", [f"x{i}" if i == 0 else f"y{i - 1}", f"x{i + 1}"], [f"y{i}"]) for i in range(values - 1)]
    return _simple(nodes, inputs, [value_info(f"y{values - 2}", FLOAT, [None] * size)])


def neg_chain(size: int = 990) -> bytes:
    """``size`` Neg nodes in a chain on ``Shape(x)`` of an input ``[N]``: an expression
    ``size`` deep in a model that is not nested at all."""
    nodes = [node("Shape", ["x"], ["n0"])]
    nodes += [node("Neg", [f"n{i}"], [f"n{i + 1}"]) for i in range(size)]
    return _simple(nodes, [value_info("x", FLOAT, ["N"])], [value_info(f"n{size}", INT64, [1])])


# ---------------------------------------------------------------- large-but-plausible files


def empty_nodes(size: int = 2_000_000) -> bytes:
    """A graph of ``size`` empty NodeProtos (two bytes each)."""
    t = tag(_number("GraphProto", "node"), 2) + b"\x00"
    return model(t * size + _len("GraphProto", "name", "g"))


def relu_chain(size: int = 200_000) -> bytes:
    """A valid chain of ``size`` Relu nodes on an input ``[1, 8]``."""
    nodes = (node("Relu", [f"r{i}"], [f"r{i + 1}"]) for i in range(size))
    return _simple(nodes, [value_info("r0", FLOAT, [1, 8])], [value_info(f"r{size}", FLOAT, [1, 8])])


def many_outputs(size: int = 100_000) -> bytes:
    """One Split of an input ``[size]`` into ``size`` outputs, each a graph output."""
    outs = [f"o{i}" for i in range(size)]
    split = node("Split", ["x"], outs, attributes=[attribute("num_outputs", i=size)])
    return _simple([split], [value_info("x", FLOAT, [size])], [value_info(o, FLOAT, [1]) for o in outs])


def sparse_rank(size: int = 100_000) -> bytes:
    """A sparse initializer of rank ``size`` (dims of 2**40), one value whose index row
    has ``size`` coordinates."""
    values = tensor("sp", FLOAT, [1], floats=[1.0])
    indices = tensor("sp_indices", INT64, [1, size], int64s=[(1 << 40) - 1] * size)
    sparse = (_len("SparseTensorProto", "values", values) + _len("SparseTensorProto", "indices", indices)
              + _packed_ints("SparseTensorProto", "dims", [1 << 40] * size))
    return _simple([node("Identity", ["sp"], ["y"])], [], [value_info("y", FLOAT, [None] * size)],
                   sparse_initializers=[sparse])


def initializer_dims(size: int = 100_000, tensors: int = 10) -> bytes:
    """``tensors`` empty initializers (a first dim 0) with ``size`` dims in all (2**62
    each, 9-byte varints: about 1 MB at the full size), each through an Identity."""
    per = max(1, size // tensors)
    inits = [tensor(f"w{k}", FLOAT, [0] + [1 << 62] * (per - 1)) for k in range(tensors)]
    nodes = [node("Identity", [f"w{k}"], [f"y{k}"]) for k in range(tensors)]
    return _simple(nodes, [], [value_info(f"y{k}", FLOAT, [None] * per) for k in range(tensors)], initializers=inits)


def many_attributes(size: int = 300_000) -> bytes:
    """One Identity node with ``size`` int attributes of distinct names."""
    attrs = (attribute(f"a{i}", i=1) for i in range(size))
    return _simple([node("Identity", ["x"], ["y"], attributes=attrs)], [value_info("x", FLOAT, [2])],
                   [value_info("y", FLOAT, [2])])


# ---------------------------------------------------------------- valid models refused


def _if_body(name: str, inner: list) -> bytes:
    return graph(inner, name, [], [value_info(f"{name}_y", FLOAT, None)])


def _nested_ifs(prefix: str, depth: int, call: bytes, x: str) -> list:
    """The nodes of a function body: ``depth`` Ifs nested in their then-branches around
    ``call`` (whose output is ``{prefix}_c``); each else-branch is an Identity."""
    inner = [call]
    inner_out = f"{prefix}_c"
    for level in range(depth, 0, -1):
        then = graph(inner, f"{prefix}_t{level}", [], [value_info(inner_out, FLOAT, None)])
        other = graph([node("Identity", [x], [f"{prefix}_e{level}"])], f"{prefix}_e{level}", [],
                      [value_info(f"{prefix}_e{level}", FLOAT, None)])
        out = f"{prefix}_i{level}"
        inner = [node("If", ["cond"], [out], attributes=[attribute("then_branch", g=then),
                                                         attribute("else_branch", g=other)])]
        inner_out = out
    return inner + [node("Identity", [inner_out], ["y"])]


def _function_chain(count: int, depth: int) -> bytes:
    cond = node("Constant", [], ["cond"], attributes=[_bool_value()])
    funcs = []
    for i in range(count):
        if i + 1 < count:
            call = node(f"f{i + 1}", ["x"], [f"f{i}_c"], domain=LOCAL)
        else:
            call = node("Neg", ["x"], [f"f{i}_c"])
        body = [cond] + _nested_ifs(f"f{i}", depth, call, "x")
        funcs.append(function(f"f{i}", ["x"], ["y"], body, {"": OPSET, LOCAL: 1}))
    g = graph([node("f0", ["x"], ["y"], domain=LOCAL)], "g", [value_info("x", FLOAT, [2])],
              [value_info("y", FLOAT, [2])])
    return model(g, functions=funcs, extra_opsets={LOCAL: 1})


def _bool_value() -> bytes:
    t = tensor("cv", BOOL, [], raw=b"\x01")
    return _len("AttributeProto", "name", "value") + _len("AttributeProto", "t", t) + \
        _int("AttributeProto", "type", 4)


def nested_function_ifs(size: int = 10, depth: int = 30) -> bytes:
    """``size`` model-local functions, each calling the next inside ``depth`` nested Ifs
    (valid: onnx's full check accepts it)."""
    return _function_chain(size, depth)


def functions_with_if(size: int = 99) -> bytes:
    """``size`` model-local functions, each calling the next inside one If (valid)."""
    return _function_chain(size, 1)


def layernorm_stash_type(size: int = INT64_MAX) -> bytes:
    """A LayerNormalization whose ``stash_type`` is ``size`` (2**63-1: no data type)."""
    ln = node("LayerNormalization", ["x", "scale", "bias"], ["y", "mean", "inv_std"],
              attributes=[attribute("stash_type", i=size), attribute("axis", i=-1)])
    inputs = [value_info("x", FLOAT, [2, 4]), value_info("scale", FLOAT, [4]), value_info("bias", FLOAT, [4])]
    return _simple([ln], inputs, [value_info("y", FLOAT, [2, 4]), value_info("mean", FLOAT, [2, 1]),
                                    value_info("inv_std", FLOAT, [2, 1])])


# ---------------------------------------------------------------- work that follows apparent size

#: The data file `sparse_hole_model` writes beside the model.
HOLE_FILE = "hole.bin"


def sparse_hole_model(directory: str, size: int = 6 << 30) -> bytes:
    """A model whose one initializer (16 bytes: 4 floats, all zero) is the start of a
    data file of ``size`` bytes written as a hole (`HOLE_FILE` in ``directory``: a few
    KiB on disk where the file system has holes)."""
    with open(os.path.join(directory, HOLE_FILE), "wb") as f:
        f.truncate(size)
    w = tensor("w", FLOAT, [4], external={"location": HOLE_FILE, "offset": "0", "length": "16"})
    return _simple([node("Identity", ["w"], ["y"])], [], [value_info("y", FLOAT, [4])], initializers=[w])


# ---------------------------------------------------------------- where ours and onnx differ


def _scalar(name: str, value: int) -> bytes:
    return tensor(name, INT64, [], int64s=[value])


def range_extremes(size: int = 1) -> bytes:
    """``size`` Ranges from INT64_MAX to INT64_MIN by INT64_MIN (length 2; onnx says 0)."""
    inits = [_scalar("start", INT64_MAX), _scalar("limit", INT64_MIN), _scalar("delta", INT64_MIN)]
    nodes = [node("Range", ["start", "limit", "delta"], [f"r{i}"]) for i in range(size)]
    return _simple(nodes, [], [value_info(f"r{i}", INT64, [None]) for i in range(size)], initializers=inits)


def gathernd_negative_dims(size: int = 1) -> bytes:
    """``size`` GatherNDs whose indices are declared ``[-1, -7]`` (onnx crashes)."""
    nodes = [node("GatherND", ["data", "indices"], [f"y{i}"]) for i in range(size)]
    inputs = [value_info("data", FLOAT, [2, 3]), value_info("indices", INT64, [-1, -7])]
    return _simple(nodes, inputs, [value_info(f"y{i}", FLOAT, [None]) for i in range(size)])


# ---------------------------------------------------------------- the table

INTERNAL = "internal errors"
PROPAGATED = "memory from propagated values"
SYMBOLIC = "super-linear symbolic inference"
LARGE = "large-but-plausible files"
REFUSED = "valid models refused"
APPARENT = "work that follows a file's apparent size"
DIFFER = "where ours and onnx differ"


@dataclass(frozen=True)
class Case:
    """One case of the issue: ``build(size)`` gives the model's bytes (``needs_dir``:
    ``build(directory, size)``, the builder writes a data file there)."""

    name: str
    klass: str
    build: Callable[..., bytes]
    full: int
    small: int
    needs_dir: bool = False

    def bytes_at(self, size: int, directory: str | None = None) -> bytes:
        if self.needs_dir:
            if directory is None:
                raise ValueError(f"{self.name} writes a data file: give a directory")
            return self.build(directory, size)
        return self.build(size)


CASES = [
    Case("huge_sparse_dims", INTERNAL, huge_sparse_dims, 300, 240),
    Case("resize_inf_scales", INTERNAL, resize_inf_scales, 1, 1),
    Case("concat_chain", PROPAGATED, concat_chain, 3000, 60),
    Case("many_concat_inputs", PROPAGATED, many_concat_inputs, 20000, 400),
    Case("add_rank_shape_values", PROPAGATED, add_rank_shape_values, 100_000, 2000),
    Case("broadcast_equalities", SYMBOLIC, broadcast_equalities, 3000, 200),
    Case("concat_equalities", SYMBOLIC, concat_equalities, 3000, 200),
    Case("matmul_equalities", SYMBOLIC, matmul_equalities, 3000, 200),
    Case("max_min_many_inputs", SYMBOLIC, max_min_many_inputs, 250, 25),
    Case("unnamed_dims", SYMBOLIC, unnamed_dims, 100_000, 1000),
    Case("neg_chain", SYMBOLIC, neg_chain, 990, 990),
    Case("empty_nodes", LARGE, empty_nodes, 2_000_000, 5000),
    Case("relu_chain", LARGE, relu_chain, 200_000, 2000),
    Case("many_outputs", LARGE, many_outputs, 100_000, 1000),
    Case("sparse_rank", LARGE, sparse_rank, 100_000, 1000),
    Case("initializer_dims", LARGE, initializer_dims, 100_000, 1000),
    Case("many_attributes", LARGE, many_attributes, 300_000, 3000),
    Case("nested_function_ifs", REFUSED, nested_function_ifs, 10, 10),
    Case("functions_with_if", REFUSED, functions_with_if, 99, 99),
    Case("layernorm_stash_type", REFUSED, layernorm_stash_type, INT64_MAX, INT64_MAX),
    Case("sparse_hole_model", APPARENT, sparse_hole_model, 6 << 30, 1 << 30, needs_dir=True),
    Case("range_extremes", DIFFER, range_extremes, 1, 1),
    Case("gathernd_negative_dims", DIFFER, gathernd_negative_dims, 1, 1),
]
CASES_BY_NAME = {c.name: c for c in CASES}
