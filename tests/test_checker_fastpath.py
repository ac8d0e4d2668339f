"""The checker's fast path over a graph's nodes and initializers (irmodel/checker/fastnodes.py)
reports exactly what the full path reports: same codes, paths, names, messages, order.

Each model is checked twice, with the fast path taken for every graph (``_FAST_FROM`` 1)
and never (``_FAST_FROM`` above any graph), on the whole reference corpus, on the semantic
mutants of tests/checker_mutants.py and on large generated graphs with problems sprinkled
over many nodes and initializers; the verdict itself is the reference's (onnx.checker).
"""

from __future__ import annotations

import os
import random
import sys

import pytest

import irmodel
from irmodel.checker import graph as checker_graph
from checker_mutants import MUTATORS
from test_checker_diff import assert_same_verdict

PER_KIND = 40


def _problems(data, monkeypatch, fast: bool, **kwargs) -> list | None:
    monkeypatch.setattr(checker_graph, "_FAST_FROM", 1 if fast else 1 << 62)
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

    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
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
    monkeypatch.setattr(checker_graph, "_FAST_FROM", 1)
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

    from irmodel import codecache
    from irmodel.checker import fastnodes

    cache = codecache.FileCodeCache(str(tmp_path))
    monkeypatch.setattr(codecache, "DEFAULT", cache)
    source, sample = rb"((?:\x0a(?>\x01.|\x02..))*+)(\x22.)?", b"\x0a\x01a\x0a\x02bc\x22x"
    expected = re.compile(source, re.S).fullmatch(sample).groups()
    first = fastnodes._compiled(source, re.S)
    second = fastnodes._compiled(source, re.S)
    assert (cache.saved, cache.hits) == (1, 1)
    assert first.fullmatch(sample).groups() == second.fullmatch(sample).groups() == expected
    for entry in os.listdir(cache.directory):
        with open(os.path.join(cache.directory, entry), "wb") as fh:
            fh.write(b"\x00damaged")
    assert fastnodes._compiled(source, re.S).fullmatch(sample).groups() == expected
    other = fastnodes._compiled(source + b"?", re.S)  # another source: compiled for itself
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
