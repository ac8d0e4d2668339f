"""Rich models and hostile variants of them, for the tests/hostile/test_hostile_*.py files.

`rich_model` builds (with `irmodel.helper`) a model that holds every kind of thing a
command walks: sub-graphs (If, Loop, a graphs attribute), a local function with an
attribute reference, tensors of every element type (typed fields and raw), a string
tensor, a sparse initializer, a tensor attribute, every value type (tensor, sparse,
sequence, map, optional, with symbolic dims), metadata, training_info, and initializers
in external data files (one beside the model, one in a sub-directory).

`mutants` yields seeded variants, as bytes: byte-level damage (flips, cuts, inserts,
splices) and structure-preserving ones that overwrite a string of the model in place
with hostile bytes of the same length (control characters, bidi overrides, invalid
UTF-8, NUL, "²"), so that the result still decodes and reaches the layers above the
wire decoder.  `hand_built` gives one hostile model per class of issue 14.
"""

from __future__ import annotations

import os
import random

import irmodel
from irmodel import TensorProto, helper as h
from irmodel._dtypes.rows import ELEM_TYPES
from wirefmt.varint import encode_varint

#: Same-length replacements for a string's bytes: what a hostile producer would write.
HOSTILE_BYTES = [b"\x1b", b"\x07", b"\x00", b"\xff", b"\x80", b"\xc2\x9b", b"\xe2\x80\xae",
                 b"\xc2\xb2", b"\x7f", b"\r", b"\x08", b"/", b"..", b"\\", b"\xed\xa0\x80"]
#: Characters that must never reach an output raw (those a model can put there).
CONTROL_TEXT = "\x1b]0;pwned\x07\x1b[2J\u202e\x9b\x00\x7f"
#: The model-local function's domain, name and the data files' names.
FUNCTION_DOMAIN, FUNCTION_NAME = "local.fn", "Twice"
DATA_FILE, SUB_DATA_FILE = "w.bin", os.path.join("sub", "x.bin")


def _tensors_of_every_type() -> list:
    out = []
    for code, et in sorted(ELEM_TYPES.items()):
        if et.bits == 0:
            out.append(h.make_tensor(f"t_{et.name.lower()}", code, [2], [b"ab", b"\xffz"]))
            continue
        vals = [1, 0, 1, 1] if et.family == "bool" else [1, 2, 3, 0]
        if et.family == "complex":
            vals = [1 + 2j, 3j, 0, 1]
        out.append(h.make_tensor(f"t_{et.name.lower()}", code, [2, 2], vals))
        if et.raw_format or et.sub_byte:
            out.append(h.make_tensor(f"r_{et.name.lower()}", code, [4],
                                     b"\x01" * (-(-4 * et.bits // 8)), raw=True))
    return out


def _subgraph(name: str, op: str = "Identity") -> irmodel.GraphProto:
    inner = h.make_node(op, ["x"], [f"{name}_y"], name=f"{name}_node")
    return h.make_graph([inner], name, [], [h.make_tensor_value_info(f"{name}_y", 1, ["n"])])


def _value_infos() -> list:
    t = h.make_tensor_type_proto(1, ["batch", 3, None])
    return [
        h.make_tensor_value_info("x", 1, ["batch", 3]),
        h.make_sparse_tensor_value_info("sp_in", 1, [4, "k"]),
        h.make_value_info("seq_in", h.make_sequence_type_proto(t)),
        h.make_value_info("map_in", h.make_map_type_proto(7, t)),
        h.make_value_info("opt_in", h.make_optional_type_proto(t)),
    ]


def _write_external(directory: str, name: str, location: str, payload: bytes, offset: int) -> TensorProto:
    """An initializer whose data is ``payload`` at ``offset`` of ``directory/location``."""
    path = os.path.join(directory, location)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "r+b" if os.path.exists(path) else "wb") as f:
        f.seek(offset)
        f.write(payload)
    t = TensorProto(name=name, data_type=1, dims=[len(payload) // 4])
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location.replace(os.sep, "/")), ("offset", str(offset)),
                       ("length", str(len(payload)))):
        t.external_data.add(key=key, value=value)
    return t


def rich_model(directory: str) -> irmodel.ModelProto:
    """The model of the module docstring; its data files are written to ``directory``."""
    inits = _tensors_of_every_type()
    inits.append(_write_external(directory, "ext_w", DATA_FILE, bytes(range(64)), 0))
    inits.append(_write_external(directory, "ext_w2", DATA_FILE, b"\x00\x00\x80\x3f" * 4, 4096))
    inits.append(_write_external(directory, "ext_x", SUB_DATA_FILE, b"\x00\x00\x00\x40" * 8, 0))
    values = h.make_tensor("sp_values", 1, [2], [1.5, 2.5])
    indices = h.make_tensor("sp_indices", 7, [2], [0, 3])
    sparse = h.make_sparse_tensor(values, indices, [4])
    nodes = [
        h.make_node("If", ["cond"], ["if_out"], name="branch", then_branch=_subgraph("then"),
                    else_branch=_subgraph("else", "Neg")),
        h.make_node("Loop", ["trip", "cond"], ["loop_out"], name="loop", body=_subgraph("body")),
        h.make_node("Constant", [], ["c"], name="const", value=h.make_tensor("cv", 1, [2], [1.0, 2.0])),
        h.make_node("Custom", ["x"], ["s"], name="strings", domain="custom.domain",
                    names=[b"a", b"b"], graphs=[_subgraph("g1"), _subgraph("g2")]),
        h.make_node(FUNCTION_NAME, ["x"], ["fx"], name="call", domain=FUNCTION_DOMAIN, alpha=2.0),
    ]
    graph = h.make_graph(nodes, "main", _value_infos(), [h.make_tensor_value_info("fx", 1, ["batch", 3])],
                         initializer=inits, sparse_initializer=[sparse], doc_string="the main graph")
    fn_node = h.make_node("Mul", ["a", "a"], ["b"], name="mul")
    fn_node.attribute.append(h.make_attribute_ref("alpha", irmodel.AttributeProto.FLOAT))
    function = h.make_function(FUNCTION_DOMAIN, FUNCTION_NAME, ["a"], ["b"], [fn_node],
                               [h.make_opsetid("", 18)], attributes=["alpha"], doc_string="twice")
    model = h.make_model(graph, producer_name="hostile-tests", producer_version="1.0",
                         opset_imports=[h.make_opsetid("", 18), h.make_opsetid(FUNCTION_DOMAIN, 1),
                                        h.make_opsetid("custom.domain", 1)],
                         functions=[function], doc_string="a model\nwith two lines")
    h.set_model_props(model, {"author": "tests", "note": "metadata value"})
    algorithm = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "training", [], [])
    model.training_info.append(h.make_training_info(algorithm, [("t", "x")], None, []))
    return model


def model_strings(model) -> list:
    """Every distinct string of ``model`` (names, types, domains, locations, ...), the
    targets of `overwrite_string`, longest first so that a short one is not a part of a
    longer one by accident."""
    found: set = set()
    stack = [model]
    while stack:
        msg = stack.pop()
        for f, value in msg.ListFields():
            items = value if f.repeated else [value]
            if f.kind == 11:  # MESSAGE
                stack.extend(items)
            elif f.kind == 9:  # STRING
                found.update(s for s in items if isinstance(s, str) and len(s) >= 1)
    return sorted(found, key=lambda s: (-len(s), s))


def overwrite_string(data: bytes, strings: list, rng: random.Random) -> bytes:
    """Overwrite one occurrence of one of ``strings`` in ``data`` with hostile bytes of
    the same length (the wire structure stays valid)."""
    for _ in range(8):
        target = rng.choice(strings).encode()
        starts = [i for i in _find_all(data, target)]
        if not starts:
            continue
        start = rng.choice(starts)
        out = bytearray(data)
        pos = start + rng.randrange(len(target))
        piece = rng.choice(HOSTILE_BYTES)
        piece = piece[:start + len(target) - pos]
        out[pos:pos + len(piece)] = piece
        return bytes(out)
    return data


def _find_all(data: bytes, needle: bytes):
    i = data.find(needle)
    while i >= 0:
        yield i
        i = data.find(needle, i + 1)


def _byte_mutation(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    kind = rng.randrange(6)
    if kind == 0:  # flip a few bytes
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
    elif kind == 1:  # a random byte value
        out[rng.randrange(len(out))] = rng.randrange(256)
    elif kind == 2:  # cut
        del out[rng.randrange(len(out)):][:rng.randint(1, 64)]
    elif kind == 3:  # insert
        i = rng.randrange(len(out))
        out[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    elif kind == 4:  # splice: copy a slice elsewhere
        a = rng.randrange(len(out))
        piece = out[a:a + rng.randint(1, 200)]
        b = rng.randrange(len(out))
        out[b:b] = piece
    else:  # a varint byte made huge
        i = rng.randrange(len(out))
        out[i:i + 1] = b"\xff" * rng.randint(1, 9) + b"\x01"
    return bytes(out)


def mutants(base: bytes, strings: list, count: int, seed: int):
    """``count`` seeded variants of ``base``: half structure-preserving string overwrites
    (some stacked), half byte-level damage (some on top of an overwrite)."""
    rng = random.Random(seed)
    for _ in range(count):
        data = base
        for _ in range(rng.randint(1, 3)):
            data = overwrite_string(data, strings, rng)
        if rng.random() < 0.5:
            data = _byte_mutation(data, rng)
        yield data


# -- hand-built hostile models, one or more per class of issue 14 ---------------------------

def _tag(number: int, wt: int) -> bytes:
    return encode_varint(number << 3 | wt)


def _ld(number: int, body: bytes) -> bytes:
    return _tag(number, 2) + encode_varint(len(body)) + body


def replace_string(data: bytes, old: str, new: bytes) -> bytes:
    """``data`` with the length-delimited string ``old`` (with its length prefix) replaced
    by ``new``, where the enclosing lengths allow it: only for same-length replacement."""
    assert len(new) == len(old.encode()), (old, new)
    i = data.index(old.encode())
    return data[:i] + new + data[i + len(new):]


def tensor_with_dims(dims: list, name: str = "w", data_type: int = 1) -> bytes:
    """A ModelProto holding one initializer with these dims, serialized by hand (dims
    the helper would refuse to multiply out)."""
    t = b"".join(_tag(1, 0) + encode_varint(d & ((1 << 64) - 1)) for d in dims)
    t += _tag(2, 0) + encode_varint(data_type) + _ld(8, name.encode())
    return _tag(1, 0) + b"\x08" + _ld(7, _ld(5, t))


def nested_groups(levels: int, inner_fields: int) -> bytes:
    """A model whose unknown field 100 is ``levels`` groups deep, with ``inner_fields``
    varint fields in the innermost group."""
    body = (_tag(1, 0) + b"\x01") * inner_fields
    for _ in range(levels):
        body = _tag(100, 3) + body + _tag(100, 4)
    return _tag(1, 0) + b"\x08" + body


def packed_floats(nbytes: int) -> bytes:
    """A model with a FLOAT initializer whose packed float_data holds ``nbytes`` bytes."""
    t = _tag(1, 0) + b"\x02" + _tag(2, 0) + b"\x01" + _ld(4, b"\x00" * nbytes) + _ld(8, b"f")
    return _tag(1, 0) + b"\x08" + _ld(7, _ld(5, t))


def depth_bomb(levels: int) -> bytes:
    """Graph > node > attribute > graph ... ``levels`` times (3 message levels each)."""
    graph = b""
    for _ in range(levels):
        attribute = _ld(1, b"body") + _tag(20, 0) + b"\x05" + _ld(6, graph)
        graph = _ld(1, _ld(4, b"If") + _ld(5, attribute))
    return _tag(1, 0) + b"\x08" + _ld(7, graph)


def external_model(entries: list, name: str = "victim") -> bytes:
    """A model with one external FLOAT initializer with these ``(key, value)`` entries
    (values as bytes, so that they may be invalid UTF-8)."""
    t = _tag(1, 0) + b"\x04" + _tag(2, 0) + b"\x01" + _ld(8, name.encode())
    for key, value in entries:
        t += _ld(13, _ld(1, key.encode() if isinstance(key, str) else key) +
                 _ld(2, value.encode() if isinstance(value, str) else value))
    t += _tag(14, 0) + b"\x01"
    return _tag(1, 0) + b"\x08" + _ld(7, _ld(5, t))


def with_strings(**fields) -> bytes:
    """A small model whose strings are given as bytes (invalid UTF-8 and control
    characters allowed): op_type, domain, node name, input name, doc_string,
    producer_name, metadata value, dim_param, graph name, function name and domain,
    attribute name, tensor name."""
    f = {"op_type": b"Relu", "domain": b"", "node": b"n", "input": b"x", "doc": b"doc",
         "producer": b"p", "meta": b"v", "dim": b"batch", "graph": b"g", "fname": b"F",
         "fdomain": b"d", "attr": b"a", "tensor": b"t"}
    f.update(fields)
    attr = _ld(1, f["attr"]) + _tag(20, 0) + b"\x02" + _tag(3, 0) + b"\x01"
    node = _ld(1, f["input"]) + _ld(2, b"y") + _ld(3, f["node"]) + _ld(4, f["op_type"]) + \
        _ld(5, attr) + (_ld(7, f["domain"]) if f["domain"] else b"")
    shape = _ld(1, _ld(2, f["dim"]))
    vtype = _ld(1, _tag(1, 0) + b"\x01" + _ld(2, shape))
    value = _ld(1, f["input"]) + _ld(2, vtype)
    tensor = _tag(1, 0) + b"\x01" + _tag(2, 0) + b"\x01" + _ld(8, f["tensor"]) + _ld(9, b"\x00" * 4)
    graph = _ld(1, node) + _ld(2, f["graph"]) + _ld(5, tensor) + _ld(11, value)
    function = _ld(1, f["fname"]) + _ld(7, _ld(4, b"Relu")) + _ld(10, f["fdomain"])
    meta = _ld(1, b"k") + _ld(2, f["meta"])
    return (_tag(1, 0) + b"\x08" + _ld(2, f["producer"]) + _ld(6, f["doc"]) + _ld(7, graph) +
            _ld(8, _tag(2, 0) + b"\x12") + _ld(14, meta) + _ld(25, function))


def hand_built(directory: str) -> dict:
    """``{name: bytes}``: hostile models, one or more per class of issue 14.  External
    data ones refer to files in ``directory`` (written here)."""
    with open(os.path.join(directory, DATA_FILE), "r+b" if os.path.exists(
            os.path.join(directory, DATA_FILE)) else "wb") as fh:
        fh.seek(0)
        fh.write(b"\x00" * 16)
    out = {}
    # invalid UTF-8 in proto2 string fields
    for key in ("op_type", "domain", "node", "input", "doc", "producer", "meta", "dim", "graph",
                "fname", "fdomain", "attr", "tensor"):
        out[f"utf8-{key}"] = with_strings(**{key: b"a\xff\xfeb"})
    # control characters from the model
    for key in ("op_type", "domain", "node", "input", "doc", "producer", "meta", "dim", "graph",
                "fname", "fdomain", "attr", "tensor"):
        out[f"control-{key}"] = with_strings(**{key: CONTROL_TEXT.encode()})
    # numbers from the file
    out["dims-250x2^62"] = tensor_with_dims([1 << 62] * 250)
    out["dims-negative"] = tensor_with_dims([-1, 1 << 62])
    out["dims-huge-then-zero"] = tensor_with_dims([1 << 62] * 200 + [0])
    out["dims-unknown-dtype"] = tensor_with_dims([2, 2], data_type=99)
    out["ext-length-superscript"] = external_model([("location", DATA_FILE), ("length", "²")])
    out["ext-offset-arabic-digit"] = external_model([("location", DATA_FILE), ("offset", "\u0663")])
    out["ext-location-nul"] = external_model([("location", "w.b\x00n")])
    out["ext-location-invalid-utf8"] = external_model([("location", b"w\xff.bin")])
    out["ext-key-invalid-utf8"] = external_model([("location", DATA_FILE), (b"\xffk", "1")])
    out["ext-location-control"] = external_model([("location", "\x1b[2J.bin")])
    out["ext-name-control"] = external_model([("location", DATA_FILE)], name=CONTROL_TEXT)
    # truth of output
    out["packed-float-7-bytes"] = packed_floats(7)
    # limits
    out["depth-101"] = depth_bomb(34)
    out["depth-99"] = depth_bomb(33)
    # claims
    out["nested-groups-99"] = nested_groups(99, 2000)
    long_name = "n" * 300
    out["long-tensor-name"] = irmodel.dumps(h.make_model(h.make_graph(
        [], "g", [], [], initializer=[h.make_tensor(long_name, 1, [300], [1.0] * 300)])))
    return out
