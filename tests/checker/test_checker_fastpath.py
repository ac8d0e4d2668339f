"""The checker's fast path over a graph's nodes and initializers (irmodel/checker/fastnodes.py)
reports exactly what the full path reports: same codes, paths, names, messages, order.

Each model is checked twice, with the fast paths taken for every graph (``use_fast_paths(True, threshold=1)``)
and never (``use_fast_paths(False)``), on the whole reference corpus, on the semantic
mutants of tests/checker_mutants.py and on large generated graphs with problems sprinkled
over many nodes and initializers; the verdict itself is the reference's (onnx.checker).
"""

from __future__ import annotations

import os
import random
import sys

import pytest

import irmodel
from irmodel._wireview.fastpath import use_fast_paths
from irmodel.checker import fastnodes, graph as checker_graph
from checker_mutants import MUTATORS
from test_checker_diff import assert_same_verdict
from repo_paths import REPO

PER_KIND = 40


def _problems(data, monkeypatch, fast: bool, **kwargs) -> list | None:
    use_fast_paths(fast, threshold=1)
    try:
        irmodel.check_model(data, **kwargs)
    except irmodel.ValidationError as exc:
        return [(p.code, p.path, p.node_name, p.op_type, p.message) for p in exc.problems]
    except irmodel.DecodeError as exc:
        return ["DecodeError", str(exc)]
    return None


def assert_same_problems(data, monkeypatch, what: str, **kwargs) -> list | None:
    fast = _problems(data, monkeypatch, True, **kwargs)
    full = _problems(data, monkeypatch, False, **kwargs)
    assert fast == full, what
    return full


@pytest.mark.slow
def test_corpus_same_problems(node_corpus, data_corpus, monkeypatch):
    invalid = 0
    for name, data in node_corpus:
        invalid += assert_same_problems(data, monkeypatch, name) is not None
    for path, type_name, data in data_corpus:
        if type_name == "ModelProto":
            invalid += assert_same_problems(data, monkeypatch, path) is not None
    assert len(node_corpus) > 1000


@pytest.fixture(scope="module")
def reference_models(node_corpus) -> list:
    import onnx

    return [(name, onnx.ModelProto.FromString(data)) for name, data in node_corpus]


@pytest.mark.parametrize("kind", sorted(MUTATORS))
def test_mutants_same_problems(kind, reference_models, monkeypatch):
    rng = random.Random("fast " + kind)
    tried = 0
    for name, model in rng.sample(reference_models, PER_KIND):
        mutant = MUTATORS[kind](rng, model)
        if mutant is not None:
            assert_same_problems(mutant.SerializeToString(), monkeypatch, f"{kind} of {name}")
            tried += 1
    assert tried >= 4, kind


def _big_model(nodes: int, seed: int):
    """A valid chain of ``nodes`` nodes of ten kinds (the benchmark's model, smaller)."""
    import onnx

    bench = os.path.join(REPO, "benchmarks")
    sys.path.insert(0, bench)
    try:
        from bench_checker import valid_structure_model
    finally:
        sys.path.remove(bench)
    return onnx.ModelProto.FromString(irmodel.dumps(valid_structure_model(nodes, seed)))


def _sprinkle(model, rng: random.Random, count: int):
    """``count`` problems of assorted kinds at random nodes and initializers of ``model``."""
    import onnx
    from onnx import helper as oh

    g = model.graph
    for _ in range(count):
        what = rng.choice(["unknown_op", "bad_attr_type", "unknown_attr", "dup_output", "undefined_input",
                           "empty_input", "missing_attr_value", "bad_raw_length", "dup_initializer",
                           "extra_input", "bad_utf8_name", "long_name", "subgraph", "no_type"])
        k = rng.randrange(1, len(g.node) - 1)
        node = g.node[k]
        if what == "unknown_op":
            node.op_type = "NoSuchOp"
        elif what == "bad_attr_type":
            node.attribute.append(oh.make_attribute("axis", 1.5)) if node.op_type == "Softmax" else None
            if node.op_type != "Softmax":
                node.attribute.append(oh.make_attribute("alpha", "text"))
        elif what == "unknown_attr":
            node.attribute.append(oh.make_attribute("nonsense", 3))
        elif what == "dup_output":
            node.output[0] = g.node[k - 1].output[0]
        elif what == "undefined_input":
            node.input[0] = "never_defined"
        elif what == "empty_input":
            node.input[0] = ""
        elif what == "missing_attr_value":
            a = node.attribute.add()
            a.name, a.type = "perm", onnx.AttributeProto.INTS
        elif what == "bad_raw_length":
            t = g.initializer[rng.randrange(len(g.initializer))]
            t.raw_data = t.raw_data[:-3]
        elif what == "dup_initializer":
            g.initializer[rng.randrange(1, len(g.initializer))].name = g.initializer[0].name
        elif what == "extra_input":
            node.input.extend(["input"] * 4)
        elif what == "bad_utf8_name":
            node.name = "n\udcff".encode("utf-8", "surrogateescape").decode("latin-1")
        elif what == "long_name":
            node.name = "x" * 300
            node.doc_string = "why " * 50
        elif what == "subgraph":
            body = oh.make_graph([oh.make_node("Identity", [node.input[0]], ["sub_out"])], "body", [],
                                 [oh.make_tensor_value_info("sub_out", onnx.TensorProto.FLOAT, None)])
            node.attribute.append(oh.make_attribute("body", body))
        elif what == "no_type":
            a = node.attribute.add()
            a.name, a.i = "axis", 1
    return model


@pytest.mark.parametrize("seed", range(12))
def test_big_graphs_with_problems_same_problems(seed, monkeypatch):
    rng = random.Random(seed)
    model = _big_model(400, seed)
    if seed:
        _sprinkle(model, rng, rng.choice([1, 3, 10]))
    data = model.SerializeToString()
    problems = assert_same_problems(data, monkeypatch, f"seed {seed}")
    use_fast_paths(True, threshold=1)
    assert_same_verdict(data, f"seed {seed}")
    if seed == 0:
        assert problems is None


def test_big_graph_fast_path_is_taken(monkeypatch):
    """On a large valid graph the full path runs once per kind of node, not per node."""
    model = _big_model(2000, 1)
    calls = []
    full = checker_graph.Walker._node

    def counting(self, *args, **kwargs):
        calls.append(1)
        return full(self, *args, **kwargs)

    monkeypatch.setattr(checker_graph.Walker, "_node", counting)
    irmodel.check_model(model.SerializeToString())
    assert 0 < len(calls) < 200


def test_node_pattern_cache(tmp_path, monkeypatch):
    """The compiled node pattern is kept in the code cache, used again only for the same
    source, and a damaged entry falls back to compiling."""
    import re

    from irmodel._files import codecache

    cache = codecache.FileCodeCache(str(tmp_path))
    monkeypatch.setattr(codecache, "DEFAULT", cache)
    source, sample = rb"((?:\x0a(?>\x01.|\x02..))*+)(\x22.)?", b"\x0a\x01a\x0a\x02bc\x22x"
    expected = re.compile(source, re.S).fullmatch(sample).groups()
    first = codecache.compiled_pattern("node", source, re.S)
    second = codecache.compiled_pattern("node", source, re.S)
    assert (cache.saved, cache.hits) == (1, 1)
    assert first.fullmatch(sample).groups() == second.fullmatch(sample).groups() == expected
    for entry in os.listdir(cache.directory):
        with open(os.path.join(cache.directory, entry), "wb") as fh:
            fh.write(b"\x00damaged")
    assert codecache.compiled_pattern("node", source, re.S).fullmatch(sample).groups() == expected
    other = codecache.compiled_pattern("node", source + b"?", re.S)  # another source: compiled for itself
    assert other.pattern == source + b"?"


def test_an_overlong_length_prefix_is_refused_on_both_paths(monkeypatch):
    """A length prefix in 6 bytes (0x81 0x80 0x80 0x80 0x80 0x00 is 1) is refused by the
    strict reader, as upb and C++ protobuf refuse it; the fast path reads an initializer's
    lengths with the same reader, so both paths give the same problems."""
    from wirefmt import encode_varint

    def field(tag: int, payload: bytes) -> bytes:
        return bytes([tag]) + encode_varint(len(payload)) + payload

    overlong_one = b"\x81\x80\x80\x80\x80\x00"
    plain = b"\x08\x01" + b"\x10\x01" + field(0x42, b"v") + field(0x4A, b"\x00" * 4)
    # the same kind of tensor (dims, type, raw_data length), its name's length in 6 bytes:
    # the fast path takes it on the first one's verdict unless it reads the prefix strictly
    tensor = b"\x08\x01" + b"\x10\x01" + b"\x42" + overlong_one + b"w" + field(0x4A, b"\x00" * 4)
    graph = field(0x2A, plain) + field(0x2A, tensor) + field(0x12, b"g")
    model = b"\x08\x08" + field(0x42, b"\x10\x12") + field(0x3A, graph)
    problems = assert_same_problems(model, monkeypatch, "overlong length")
    assert problems is not None
    assert "longer than 5 bytes" in str(problems)


def test_nodes_differing_only_in_float_attribute_values_share_one_verdict(monkeypatch):
    """A Gemm's alpha that differs at every node does not send every node to the full
    path (`irmodel._wireview.nodes.masked_floats`), and the problems stay the full path's."""
    from onnx import helper as oh

    model = _big_model(600, 3)
    rng = random.Random(3)
    gemms = [node for node in model.graph.node if node.op_type == "Gemm"]
    assert len(gemms) > 20
    for node in gemms:
        for attr in node.attribute:
            if attr.name == "alpha":
                attr.f = rng.uniform(0.01, 10.0)
    # one Gemm whose alpha is an int: a problem the shared verdict must not hide
    bad = gemms[len(gemms) // 2]
    del bad.attribute[:]
    bad.attribute.extend([oh.make_attribute("alpha", 3), oh.make_attribute("transB", 1)])
    data = model.SerializeToString()
    problems = assert_same_problems(data, monkeypatch, "varying alpha")
    assert problems is not None and len(problems) == 1
    calls = []
    kinds = fastnodes.attribute_kinds

    def counting(fields, **options):
        calls.append(1)
        return kinds(fields, **options)

    use_fast_paths(True)
    monkeypatch.setattr(fastnodes, "attribute_kinds", counting)
    with pytest.raises(irmodel.ValidationError):
        irmodel.check_model(data)
    assert 0 < len(calls) < 12  # a few kinds, not one per Gemm


def test_masked_floats_zeroes_only_a_float_value_after_a_name():
    from irmodel._wireview.nodes import masked_floats

    def attr(*fields: bytes) -> bytes:
        body = b"".join(fields)
        return b"\x2a" + bytes([len(body)]) + body

    name = lambda text: b"\x0a" + bytes([len(text)]) + text  # noqa: E731
    f = lambda value: b"\x15" + value  # noqa: E731
    typ = b"\xa0\x01\x01"
    one = attr(name(b"alpha"), f(b"\x01\x02\x03\x04"), typ)
    two = attr(name(b"alpha"), f(b"\x09\x08\x07\x06"), typ)
    assert masked_floats(one) == masked_floats(two) == attr(name(b"alpha"), f(b"\x00" * 4), typ)
    assert len(masked_floats(one)) == len(one)
    # no float field, or a float field that is not right after the name: unchanged
    ints = attr(name(b"axis"), b"\x18\x15", b"\xa0\x01\x02")
    assert masked_floats(ints) == ints
    late = attr(typ, name(b"alpha"), f(b"\x01\x02\x03\x04"))
    assert masked_floats(late) == late
    # 0x15 inside a name or a string value is not a field
    odd = attr(name(b"a\x15bcd"), b"\x22\x05\x15abcd", b"\xa0\x01\x03")
    assert masked_floats(odd) == odd
    # a float field cut short by the attribute's end is left alone
    short = attr(name(b"alpha"), b"\x15\x01\x02")
    assert masked_floats(short) == short
    # several attributes: each masked on its own
    assert masked_floats(one + ints + two) == masked_floats(two + ints + one)


def test_masked_kind_masks_the_attribute_fields_of_a_node_kind_only():
    from irmodel._wireview.nodes import masked_floats, masked_kind

    def field(tag: int, body: bytes) -> bytes:
        return bytes([tag, len(body)]) + body

    name = field(0x0A, b"alpha")
    one = field(0x2A, name + b"\x15\x01\x02\x03\x04" + b"\xa0\x01\x01")
    two = field(0x2A, name + b"\x15\x09\x08\x07\x06" + b"\xa0\x01\x01")
    ints = field(0x2A, field(0x0A, b"axis") + b"\x18\x15" + b"\xa0\x01\x02")
    op, doc, domain = field(0x22, b"Gemm"), field(0x32, b"\x2a\x15"), field(0x3A, b"ai.\x15")
    kind = op + one + ints + doc + domain
    assert masked_kind(kind) == op + masked_floats(one + ints) + doc + domain
    assert masked_kind(kind) == masked_kind(op + two + ints + doc + domain) != kind
    # nothing to mask (no float value, or 0x15 only in the op_type, doc_string or domain):
    # the same object, which the caller takes as "no masked key"
    for plain in (op + ints + doc + domain, field(0x22, b"Op\x15") + doc, op + doc + domain):
        assert masked_kind(plain) is plain


def test_malformed_packed_dims_of_a_known_kind_are_refused_on_both_paths(monkeypatch):
    """The fast path keys an initializer by its packed dims' bytes without decoding them;
    the full path decodes the first of each key.  Tensors whose dims run ends inside a
    varint (and a good one before and after) get the full path's problems on both paths."""
    from wirefmt import encode_varint

    def field(tag: int, payload: bytes) -> bytes:
        return bytes([tag]) + encode_varint(len(payload)) + payload

    def tensor(name: bytes, dims: bytes) -> bytes:
        return field(0x0A, dims) + b"\x10\x01" + field(0x42, name) + field(0x4A, b"\x00" * 4)

    inits = [tensor(b"a", b"\x01"), tensor(b"b", b"\x81"), tensor(b"c", b"\x81"), tensor(b"d", b"\x01")]
    graph = b"".join(field(0x2A, t) for t in inits) + field(0x12, b"g")
    model = b"\x08\x08" + field(0x42, b"\x10\x12") + field(0x3A, graph)
    problems = assert_same_problems(model, monkeypatch, "malformed packed dims")
    assert problems is not None


def _constant_chain(values: list, tensor_of):
    """A valid chain ``x -> Add(x, c0) -> Add(., c1) ...``, ``c_i`` a Constant whose
    ``value`` is ``tensor_of(i, v)`` (a scalar FLOAT tensor in raw_data when valid), as
    torch exports the Python floats of a model."""
    import onnx
    from onnx import helper as oh

    nodes = []
    last = "x"
    for i, v in enumerate(values):
        nodes.append(oh.make_node("Constant", [], [f"/b.{i}/Constant_output_0"], name=f"/b.{i}/Constant",
                                  value=tensor_of(i, v)))
        nodes.append(oh.make_node("Add", [last, f"/b.{i}/Constant_output_0"], [f"/b.{i}/Add_output_0"],
                                  name=f"/b.{i}/Add"))
        last = f"/b.{i}/Add_output_0"
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                          [oh.make_tensor_value_info(last, onnx.TensorProto.FLOAT, [2])])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _scalar(dtype: int, raw: bytes, dims=(), name: str = ""):
    import onnx

    t = onnx.TensorProto(data_type=dtype, dims=list(dims), raw_data=raw)
    if name:
        t.name = name
    return t


def test_constant_nodes_holding_scalar_tensors_take_the_fast_path(monkeypatch):
    """Constant nodes whose ``value`` is a scalar in raw_data (a different value at each
    node) share one verdict per tensor kind (dims, data_type, raw_data's length): the full
    path runs a few times, not once per Constant."""
    import struct

    rng = random.Random(7)
    values = [rng.uniform(-3, 3) for _ in range(300)]
    model = _constant_chain(values, lambda i, v: _scalar(1, struct.pack("<f", v), name="c" if i % 7 == 0 else ""))
    data = model.SerializeToString()
    assert assert_same_problems(data, monkeypatch, "constants") is None
    assert_same_verdict(data, "constants")
    calls = []
    full = checker_graph.Walker._node

    def counting(self, *args, **kwargs):
        calls.append(1)
        return full(self, *args, **kwargs)

    use_fast_paths(True)
    monkeypatch.setattr(checker_graph.Walker, "_node", counting)
    irmodel.check_model(data)
    assert 0 < len(calls) <= 4  # Add, and a Constant with and without a tensor name


_BAD_CONSTANTS = {
    "short raw_data": lambda v: _scalar(1, v[:3]),
    "raw_data for 2 of 4 elements": lambda v: _scalar(1, v * 2, dims=(4,)),
    "no data_type": lambda v: __import__("onnx").TensorProto(raw_data=v),
    "UNDEFINED": lambda v: _scalar(0, v),
    "STRING in raw_data": lambda v: _scalar(8, v),
    "negative dim": lambda v: _scalar(1, v, dims=(-1,)),
    "0-element with data": lambda v: _scalar(1, v, dims=(0,)),
    "unknown data type": lambda v: _scalar(99, v),
    "float_data and raw_data": lambda v: __import__("onnx").TensorProto(data_type=1, raw_data=v, float_data=[1.0]),
}


@pytest.mark.parametrize("what", sorted(_BAD_CONSTANTS))
def test_constant_nodes_with_a_bad_tensor_same_problems(what, monkeypatch):
    """Among many valid Constant scalars, a few whose tensor breaks a rule (or is read
    differently: FLOAT6's padding bits): the fast path reports what the full path does,
    at each of them, however many valid ones of their kind came before."""
    import struct

    rng = random.Random(what)
    values = [rng.uniform(-3, 3) for _ in range(200)]
    bad = set(rng.sample(range(10, 200), 3))
    make = _BAD_CONSTANTS[what]

    def tensor_of(i, v):
        raw = struct.pack("<f", v)
        return make(raw) if i in bad else _scalar(1, raw)

    data = _constant_chain(values, tensor_of).SerializeToString()
    problems = assert_same_problems(data, monkeypatch, what)
    if what == "unknown data type":  # raw_data of a type the rules do not know has no size rule
        assert problems is None
    else:
        assert problems is not None and len({p[1] for p in problems}) >= len(bad), problems
    use_fast_paths(True, threshold=1)
    assert_same_verdict(data, what)


def test_float6_initializers_with_padding_bits_same_problems(monkeypatch):
    """Initializers of one kind (dims, FLOAT6, raw_data's length) whose raw bytes differ in
    the padding bits: the fast path does not share the first one's verdict
    (`tensorscan.tensor_kind` declines FLOAT6)."""
    import onnx
    from onnx import helper as oh

    inits = [_scalar(27, b"\xc1" if i % 5 == 3 else b"\x3f", dims=(1,), name=f"w{i}") for i in range(80)]
    graph = oh.make_graph([oh.make_node("Identity", ["w1"], ["y"])], "g", [],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT6E2M3, [1])], initializer=inits)
    data = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 21)]).SerializeToString()
    problems = assert_same_problems(data, monkeypatch, "float6 initializers")
    assert problems is not None and len(problems) == 16


def test_float6_constants_with_padding_bits_same_problems(monkeypatch):
    """Constant FLOAT6 scalars of one tensor kind, the few with padding bits set after many
    clean ones (of other values): each is reported, as the full path reports it."""
    values = list(range(120))
    bad = {30, 31, 77}

    def tensor_of(i, v):
        return _scalar(27, bytes([0xC0 | v % 64 if i in bad else v % 64]), dims=(1,))

    data = _constant_chain(values, tensor_of).SerializeToString()
    problems = assert_same_problems(data, monkeypatch, "float6 constants")
    assert problems is not None and len(problems) == len(bad)


def test_nodes_the_fast_path_sends_to_the_full_path_are_traced():
    """The tracer names each node the checker's fast path leaves to the full path: one with
    a typed tensor (not read from its bytes) at every node, one with a long field (not the
    node pattern's); the scalar Constants in raw_data are not among them."""
    import struct

    from irmodel._wireview.fastpath import trace

    def tensor_of(i, v):
        if i == 5:
            import onnx

            return onnx.TensorProto(data_type=1, float_data=[v])
        return _scalar(1, struct.pack("<f", v), name="n" * 200 if i == 9 else "")

    data = _constant_chain([float(i) for i in range(100)], tensor_of).SerializeToString()
    use_fast_paths(True, threshold=1)
    with trace() as log:
        irmodel.check_model(data)
    found = {(d.index, d.reason.split(" ")[0]) for d in log if d.reader == "node"}
    assert found == {(10, "a"), (18, "not")}, found
