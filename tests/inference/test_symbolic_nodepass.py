"""The node pass in symbolic mode (`nodepass.infer_nodes_symbolic`) gives the full path's
answers: `infer_shapes(..., symbolic=True)` writes the same bytes with the pass on for
every graph (`use_fast_paths(True, threshold=0)`) and off, on the decoders the symbolic tests build,
on the reference's node-test corpus with each graph's nodes repeated, and on models where
an equality proven late must change what later nodes of a cached kind give.
"""

from __future__ import annotations

import pytest

import irmodel
from irmodel import helper as h
from irmodel._wireview.fastpath import FAST_FROM
from irmodel.inference import nodepass, outcomes
from irmodel.inference.types import type_from_proto
from symbolic_models import decoder_model
from test_inference_fastpath import _doubled, assert_doubled_agree, both

onnx = pytest.importorskip("onnx")

FLOAT, INT64 = 1, 7


def assert_same(data: bytes, monkeypatch, expect_hits: bool = True, **kw):
    fast, full, fast_calls, full_calls = both(data, monkeypatch, symbolic=True, **kw)
    assert fast == full
    if expect_hits:
        assert fast_calls < full_calls, "the pass took no node from the cache"
    return fast


def _types(data: bytes) -> dict:
    g = irmodel.loads(data).graph
    return {vi.name: type_from_proto(vi.type) for vi in list(g.value_info) + list(g.output)}


@pytest.mark.parametrize("layers,opset,share", [(2, 13, False), (2, 18, False), (6, 18, True)])
def test_decoders(monkeypatch, layers, opset, share):
    data = irmodel.dumps(decoder_model(layers, opset, share))
    out = assert_same(data, monkeypatch)
    assert_same(data, monkeypatch, strict_mode=True, check_type=True)
    # Every dim of the decoder is known (the symbolic tests' claim), also through hits.
    for name, t in _types(out).items():
        assert t.shape is not None and all(not (type(d) is str and d.startswith("unk__")) for d in t.shape), name


@pytest.fixture(scope="module")
def doubled_corpus(node_corpus) -> list:
    return [(name, _doubled(data)) for name, data in node_corpus]


@pytest.mark.slow
def test_corpus_doubled(doubled_corpus, monkeypatch):
    assert_doubled_agree(doubled_corpus, monkeypatch, symbolic=True)


def _late_model(repeat: int = 4) -> bytes:
    """Y [N, 4] and X [M, 4]; the same kinds of node (Relu of Y, Shape of Y, a Reshape to
    that shape, a Concat with X) before and after a MatMul that proves M == N."""
    nodes = []

    def chain(tag: str):
        for i in range(repeat):
            nodes.append(h.make_node("Relu", ["Y"], [f"relu_{tag}{i}"]))
            nodes.append(h.make_node("Shape", ["Y"], [f"shape_{tag}{i}"]))
            nodes.append(h.make_node("Reshape", ["Z", f"shape_{tag}{i}"], [f"reshaped_{tag}{i}"]))
            nodes.append(h.make_node("Add", [f"relu_{tag}{i}", "X"], [f"sum_{tag}{i}"]))
            nodes.append(h.make_node("Concat", ["X", f"relu_{tag}{i}"], [f"cat_{tag}{i}"], axis=0))

    chain("before")
    nodes.append(h.make_node("MatMul", ["A", "Y"], ["prod"]))  # A [2, M] x Y [N, 4]: M == N
    chain("after")
    graph = h.make_graph(nodes, "late", [h.make_tensor_value_info("X", FLOAT, ["M", 4]),
                                         h.make_tensor_value_info("Y", FLOAT, ["N", 4]),
                                         h.make_tensor_value_info("Z", FLOAT, ["K"]),
                                         h.make_tensor_value_info("A", FLOAT, [2, "M"])],
                         [h.make_tensor_value_info("prod", FLOAT, None)])
    return irmodel.dumps(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))


def test_an_equality_proven_late_changes_later_nodes(monkeypatch):
    out = assert_same(_late_model(), monkeypatch)
    types = _types(out)
    # After the MatMul, N and M are one name: the later nodes of each cached kind see it
    # (a replay of the earlier outcomes would keep them apart, or leave the Add unknown).
    m = types["relu_after0"].shape[0]
    assert m in ("M", "N")
    for i in range(4):
        assert types[f"relu_after{i}"].shape == (m, 4)
        assert types[f"reshaped_after{i}"].shape == (m, 4)
        assert types[f"sum_after{i}"].shape == (m, 4)
        assert types[f"cat_after{i}"].shape == (f"2*{m}", 4)


def test_an_equality_proven_by_a_node_of_a_cached_kind(monkeypatch):
    """Concat proves its inputs' other dims equal: after a Concat that proves a new
    equality among a run of cached Concats and Relus, the later ones see it."""
    nodes = []
    for i in range(4):
        nodes.append(h.make_node("Concat", ["P", "Q"], [f"pq{i}"], axis=0))
    nodes.append(h.make_node("Concat", ["P", "R"], ["pr"], axis=0))  # R [1, S]: S == T
    for i in range(4):
        nodes.append(h.make_node("Concat", ["P", "Q"], [f"pq_after{i}"], axis=0))
        nodes.append(h.make_node("Relu", ["R"], [f"r_after{i}"]))
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("P", FLOAT, [2, "T"]),
                                      h.make_tensor_value_info("Q", FLOAT, [3, "T"]),
                                      h.make_tensor_value_info("R", FLOAT, [1, "S"])], [])
    data = irmodel.dumps(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))
    types = _types(assert_same(data, monkeypatch))
    t = types["pq_after0"].shape[1]
    assert t in ("S", "T") and types["r_after3"].shape == (1, t) and types["pr"].shape == (3, t)


def test_symbolic_pass_is_on_by_default_for_large_graphs(monkeypatch):
    """At the default `fastpath.FAST_FROM` the decoder's later layers are replayed, not inferred."""
    from irmodel.inference import engine

    calls = [0]
    original = engine.Scope.process_node

    def counted(self, node, keep=None):
        calls[0] += 1
        return original(self, node, keep)

    monkeypatch.setattr(engine.Scope, "process_node", counted)
    model = decoder_model(8, 18, True)
    assert len(model.graph.node) >= FAST_FROM
    irmodel.infer_shapes(irmodel.loads(irmodel.dumps(model)), symbolic=True)
    assert 0 < calls[0] < len(model.graph.node) // 2


def test_constants_keyed_by_value_without_their_names(monkeypatch):
    """Reshape targets in initializers with other names: the same value hits, another
    value must not."""
    targets = [[2, 6], [2, 6], [3, 4], [2, 6], [4, 3], [-1, 6], [0, -1]]
    nodes, inits = [], []
    for i, target in enumerate(targets * 2):
        inits.append(h.make_tensor(f"t{i}", INT64, [2], target))
        nodes.append(h.make_node("Reshape", ["X", f"t{i}"], [f"r{i}"]))
        nodes.append(h.make_node("Shape", [f"r{i}"], [f"s{i}"]))
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", FLOAT, [3, "N"])], [], initializer=inits)
    data = irmodel.dumps(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))
    types = _types(assert_same(data, monkeypatch))
    for i, target in enumerate(targets * 2):
        shape = types[f"r{i}"].shape
        if -1 not in target and 0 not in target:
            assert shape == tuple(target)
    assert types["r5"].shape[1] == 6 and types["r6"].shape[0] == 3
    inits = irmodel.loads(data).graph.initializer
    first = outcomes._unnamed_bytes(inits[0])
    assert first is not None and first == outcomes._unnamed_bytes(inits[1]) != outcomes._unnamed_bytes(inits[2])
