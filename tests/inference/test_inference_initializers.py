"""Initializers seeded from their bytes (`irmodel.inference.initializers`) give what
seeding from their TensorProtos gives: the same inferred bytes (types, constants that
shapes depend on, propagated values) or the same error, for initializers laid out the
fast way and every other way (packed dims, typed data, other fields, non-UTF-8 names,
malformed raw_data), each model inferred with the fast seeding on for every graph and
off."""

from __future__ import annotations

import pytest

import irmodel
from irmodel import helper
from irmodel._wireview import tensorscan
from irmodel._wireview.fastpath import use_fast_paths
from irmodel.inference import InferenceError, infer_shapes, initializers
from irmodel.inference.types import length_field

FLOAT, INT64, INT32 = 1, 7, 6


def _outcome(data: bytes, **kw):
    try:
        return irmodel.dumps(infer_shapes(irmodel.loads(data), **kw))
    except InferenceError as exc:
        return ("error", [(p.code, p.path, p.message) for p in exc.problems])
    except irmodel.DecodeError as exc:
        return ("decode error", str(exc))


def _both(data: bytes, monkeypatch, **kw):
    calls = [0]
    real = initializers.LazyConstant.__init__

    def counted(self, *args):
        calls[0] += 1
        real(self, *args)

    monkeypatch.setattr(initializers.LazyConstant, "__init__", counted)
    use_fast_paths(True, threshold=0)
    fast = _outcome(data, **kw)
    use_fast_paths(False)
    full = _outcome(data, **kw)
    use_fast_paths(True)
    return fast, full, calls[0]


def _model_with_initializer_bytes(nodes, inputs, outputs, tensors: list) -> bytes:
    """A model whose graph's initializers are exactly the serialized ``tensors``."""
    g = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    data = irmodel.dumps(m)
    model = irmodel.loads(data)
    graph = irmodel.dumps(model.graph) + b"".join(length_field(5, t) for t in tensors)
    model.graph = irmodel.loads(length_field(7, graph), "ModelProto").graph
    return irmodel.dumps(model)


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _shape_model(shape_tensors: list, weights: list):
    """Reshape by each shape tensor, Add each weight: the types, constants and values read."""
    nodes, outputs = [], []
    for i in range(len(shape_tensors)):
        nodes.append(helper.make_node("Reshape", ["x", f"s{i}"], [f"r{i}"]))
    for i in range(len(weights)):
        nodes.append(helper.make_node("Add", ["x", f"w{i}"], [f"a{i}"]))
        nodes.append(helper.make_node("Shape", [f"w{i}"], [f"shape{i}"]))
        nodes.append(helper.make_node("Reshape", ["x", f"shape{i}"], [f"rs{i}"]))
    return nodes, [_vi("x", FLOAT, [4, 6])], outputs


def test_fast_seeding_gives_the_same_bytes(monkeypatch):
    shapes = [helper.make_tensor(f"s{i}", INT64, [2], [2 + i % 2 * 4, -1 if i % 3 else 12 // (2 + i % 2 * 4)])
              for i in range(6)]
    shapes.append(helper.make_tensor("s6", INT64, [2], [3, 8]))
    shapes.append(helper.make_tensor("s7", INT32, [2], [3, 8]))  # not int64: Reshape fails on it
    weights = [helper.make_tensor(f"w{i}", FLOAT, [4, 6], [0.5] * 24) for i in range(3)]  # float_data
    weights += [helper.make_tensor(f"w{i}", FLOAT, [4, 6], b"\0" * 96, raw=True) for i in range(3, 6)]
    weights += [helper.make_tensor(f"w{i}", FLOAT, [1, 6], b"\0" * 24, raw=True) for i in range(6, 9)]
    weights += [helper.make_tensor("w9", FLOAT, [200, 6], b"\0" * 4800, raw=True)]  # a two-byte dim
    weights += [helper.make_tensor("w10", FLOAT, [], b"\0" * 4, raw=True)]  # a scalar: no dims
    weights += [helper.make_tensor("w11", FLOAT, [5000, 6], b"\0" * 120000, raw=True)]  # not small
    raw_shapes = [helper.make_tensor(f"s{i}", INT64, [2], b"".join(v.to_bytes(8, "little", signed=True)
                                                                  for v in (3, -1)), raw=True)
                  for i in range(8, 10)]
    nodes, inputs, outputs = _shape_model(shapes + raw_shapes, weights)
    g = helper.make_graph(nodes, "g", inputs, outputs, shapes + raw_shapes + weights)
    data = irmodel.dumps(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
    for kw in (dict(data_prop=True), dict(), dict(data_prop=True, strict_mode=True, check_type=True),
               dict(symbolic=True)):
        fast, full, lazy = _both(data, monkeypatch, **kw)
        assert fast == full, kw
        assert lazy > 0
    out = irmodel.loads(_outcome(data, data_prop=True))
    shapes_out = {vi.name: [d.dim_value or d.dim_param for d in vi.type.tensor_type.shape.dim]
                  for vi in out.graph.value_info}
    assert shapes_out["r8"] == [3, 8] and shapes_out["rs3"] == [4, 6] and shapes_out["shape9"] == [2]


@pytest.mark.parametrize("layout", [
    "fast", "no_raw_data", "doc_after", "raw_then_doc", "packed_dims", "negative_dim", "no_data_type",
    "no_name", "name_not_utf8", "raw_data_short", "raw_data_long", "two_names", "dims_after_name",
    "type_after_name", "ten_byte_dim"])
def test_layouts_fast_or_not(monkeypatch, layout):
    # Each initializer of one layout, many of them, Added to x: the same bytes or the same error.
    def tensor(i):
        name = f"w{i}".encode()
        dims = [(1, 4), (1, 6)]
        fields = [*dims, (2, FLOAT), (8, name), (9, b"\0" * 96)]
        if layout == "no_raw_data":
            fields = fields[:-1]
        elif layout == "doc_after":
            fields = fields[:-1] + [(12, b"doc")]
        elif layout == "raw_then_doc":
            fields += [(12, b"doc")]
        elif layout == "packed_dims":
            fields = [(1, b"\x04\x06")] + fields[2:]
        elif layout == "negative_dim":
            fields[0] = (1, -1)
        elif layout == "no_data_type":
            del fields[2]
        elif layout == "no_name":
            del fields[3]
        elif layout == "name_not_utf8":
            fields[3] = (8, b"w\xff" + name)
        elif layout == "raw_data_short":
            return _tensor_bytes(fields[:-1]) + b"\x4a\x61" + b"\0" * 96  # a length past the end
        elif layout == "raw_data_long":
            return _tensor_bytes(fields[:-1]) + b"\x4a\x5f" + b"\0" * 96  # bytes left after it
        elif layout == "two_names":
            fields.insert(3, (8, b"first"))
        elif layout == "dims_after_name":
            fields.insert(4, (1, 2))
        elif layout == "type_after_name":
            fields.insert(4, (2, INT64))
        elif layout == "ten_byte_dim":
            return b"\x08" + b"\x84" + b"\x80" * 8 + b"\x00" + _tensor_bytes(fields[1:])
        return _tensor_bytes(fields)

    tensors = [tensor(i) for i in range(8)]
    nodes = [helper.make_node("Add", ["x", f"w{i}"], [f"a{i}"]) for i in range(8)]
    data = _model_with_initializer_bytes(nodes, [_vi("x", FLOAT, [4, 6])], [], tensors)
    for kw in (dict(data_prop=True), dict(strict_mode=True)):
        fast, full, lazy = _both(data, monkeypatch, **kw)
        assert fast == full, (layout, kw)
        assert (lazy > 0) == (layout in ("fast", "no_raw_data", "negative_dim", "ten_byte_dim", "no_data_type")), layout


def _tensor_bytes(fields: list) -> bytes:
    """A TensorProto of exactly these ``(number, value)`` fields (ints as varints of any size)."""
    out = []
    for n, v in fields:
        if isinstance(v, bytes):
            out.append(length_field(n, v))
            continue
        if v < 0:
            v += 1 << 64
        head = bytearray([n << 3])
        while v >= 0x80:
            head.append(v & 0x7F | 0x80)
            v >>= 7
        head.append(v)
        out.append(bytes(head))
    return b"".join(out)


def test_lazy_constant_reads_as_the_tensor():
    t = helper.make_tensor("s", INT64, [3], [4, -1, 2])
    seq = irmodel.loads(irmodel.dumps(helper.make_graph([], "g", [], [], [t])), "GraphProto").initializer
    lazy = initializers.LazyConstant(seq, 0, INT64, (3,))
    assert lazy.data_type == INT64 and lazy.dims == [3] and lazy._proto is None
    assert lazy.values(INT64) == [4, -1, 2] and lazy.proto is seq[0]


def test_raw_data_checked_from_its_head_only():
    # The raw_data's tag and length are read, never its bytes (a weight's pages stay untouched).
    class Recording(bytes):
        def __getitem__(self, i):
            read.append(i)
            return bytes.__getitem__(self, i)

    read: list = []
    payload = b"\0" * 300
    head = b"\x08\x96\x01\x10\x02\x42\x01w"  # dims [150], data_type 2, name "w"
    src = Recording(head + b"\x4a\xac\x02" + payload)
    assert [h.name for h in tensorscan.initializer_heads(src, [0, len(src)])] == ["w"]
    assert max(i for i in read if type(i) is int) < len(head) + 3  # the tag and its two-byte length
    for data in (head + b"\x4a\xac\x02" + payload[1:], head + b"\x12\x00", head + b"\x4a" + b"\x80" * 11):
        assert list(tensorscan.initializer_heads(data, [0, len(data)])) == [None]
    assert [h.name for h in tensorscan.initializer_heads(head, [0, len(head)])] == ["w"]
