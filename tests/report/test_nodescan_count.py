"""`irmodel._wireview.nodescan.count_ops`: a run of nodes counted by kind (one pattern match per
node, `node_op` once per distinct kind) gives exactly what `node_op` gives node by node,
on any bytes; and the summary of a large graph (which takes that path) is the full
walk's.  The pattern's compiled form is kept in the code cache (`codecache.compiled_pattern`)."""

from __future__ import annotations

import os
import subprocess
import sys

import onnx
import onnx.external_data_helper
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from onnx import helper as oh

import irmodel
from irmodel._files import codecache
from irmodel._wireview import nodescan, patterns
from irmodel._wireview.fastpath import FAST_FROM
from irmodel._wireview.nodes import node_op
from irmodel._report.summary import Census, summarize
from wirefmt import DecodeError
from summary_both_ways import summaries_both_ways

from repo_paths import REPO as ROOT  # noqa: E402


@pytest.fixture(autouse=True)
def _pattern(tmp_path_factory):
    """The node pattern compiled into a cache of the test's own (whatever the user's
    cache holds, or whether there is one)."""
    cache = codecache.FileCodeCache(str(tmp_path_factory.mktemp("cache")))
    saved = dict(patterns._COMPILED)
    source_cache = codecache.DEFAULT
    codecache.DEFAULT = cache
    patterns.forget()
    try:
        assert patterns.compiled("node-run") is not None
        yield
    finally:
        codecache.DEFAULT = source_cache
        patterns.forget()
        patterns._COMPILED.update(saved)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 127
        n >>= 7
        if not n:
            out.append(b)
            return bytes(out)
        out.append(b | 128)


def _ld(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _run(nodes: list, between=lambda i: b"", length=_varint) -> tuple:
    """(buffer, spans) of nodes laid side by side, each behind a graph's node tag (and
    its length as ``length`` writes it), ``between(i)`` before the i-th."""
    src, spans = bytearray(b"\x12\x01g"), []
    for i, node in enumerate(nodes):
        src += between(i) + b"\x0a" + length(len(node))
        spans += [len(src), len(src) + len(node)]
        src += node
    return bytes(src), spans


def _one_by_one(src, spans, depth=2) -> tuple:
    counts: dict = {}
    walk = []
    for i in range(0, len(spans), 2):
        op = node_op(src, spans[i], spans[i + 1], depth)
        if op is None:
            walk.append(i >> 1)
        else:
            counts[op] = counts.get(op, 0) + 1
    return counts, walk


def _same(nodes: list, **how) -> tuple:
    src, spans = _run(nodes, **how)
    got = nodescan.count_ops(src, spans, 2)
    assert got == _one_by_one(src, spans)
    return got


_TENSOR = b"\x08\x01\x10\x07" + _ld(9, b"\x01" + b"\0" * 7)          # dims [1], INT64, raw_data
_CONSTANT = _ld(1, b"value") + _ld(5, _TENSOR) + b"\xa0\x01\x04"      # attribute value: t
_PLAIN = [
    _ld(1, b"x") + _ld(2, b"y") + _ld(3, b"relu_1") + _ld(4, b"Relu"),
    _ld(2, b"c") + _ld(3, b"const") + _ld(4, b"Constant") + _ld(5, _CONSTANT),
    _ld(1, b"a") + _ld(1, b"b") + _ld(2, b"s") + _ld(4, b"Add"),
    _ld(1, b"a") + _ld(2, b"z") + _ld(4, b"Op") + _ld(7, b"com.x"),
    _ld(4, b"Gemm") + _ld(5, _ld(1, b"alpha") + b"\x15\0\0\x80\x3f" + b"\xa0\x01\x01"),
    _ld(1, b"q" * 127) + _ld(4, b"Long") + _ld(6, b"doc") + _ld(7, b"ai.onnx") + _ld(8, b"ov"),
]
_ODD = [
    _ld(4, b"Relu") + _ld(4, b"Sigmoid"),                      # the last op_type wins
    _ld(4, b"Relu") + b"\x20\x05",                             # a varint field
    _ld(4, b"Re\xfflu"),                                       # invalid UTF-8
    _ld(7, b"com.x") + _ld(4, b"Op") + _ld(7, b""),            # the last domain wins
    _ld(4, b"Relu") + _ld(1, b"late input"),                   # a name after the op type
    _ld(1, b"x" * 128) + _ld(4, b"Relu"),                      # a two-byte length
    b"\x0a\x81\x00x" + _ld(4, b"Relu"),                        # a non-canonical length
    _ld(4, b"Relu") + b"\x9a\x10\x00",                         # an unknown field, long tag
    _ld(4, b"Relu") + b"\x0b\x0c",                             # an empty group
    _ld(4, b"Relu") + b"\x22\x05ab",                           # a length past the node's end
    _ld(4, b"If") + _ld(5, _ld(6, b"")),                       # a graph attribute
    _ld(4, b"C") + _ld(5, _ld(5, b"\x70\x01")),                # a tensor with data_location
    _ld(4, b"C") + _ld(5, _ld(5, b"\x70")),                    # a tensor cut in a varint
    _ld(4, b"C") + _ld(5, b"\x15\x00\x00"),                    # an attribute cut in a float
    _ld(4, b"Big") + _ld(5, _ld(1, b"value") + _ld(5, _ld(9, b"\0" * 300))),  # a long attribute
    b"",                                                        # no field at all
    _ld(1, b"only a name"),
]


def test_plain_and_odd_nodes_are_counted_as_node_op_counts_them():
    counts, walk = _same((_PLAIN + _ODD) * 8)
    assert counts[("Relu", "")] >= 8 and counts[("Op", "com.x")] == counts[("Op", "")] == 8 and walk


def test_a_refused_kind_sends_every_node_of_that_kind_to_the_walk():
    graph_node = _ld(1, b"c") + _ld(4, b"If") + _ld(5, _ld(6, b""))
    nodes = [_PLAIN[0]] * 40 + [graph_node] + [_PLAIN[1]] * 40 + [graph_node]
    counts, walk = _same(nodes)
    assert walk == [40, 81] and counts == {("Relu", ""): 40, ("Constant", ""): 40}
    # In three runs (cut by long nodes): each run's matches are found again for the
    # refused kind, at that run's own offsets.
    long_node = _ld(1, b"c") + _ld(4, b"Constant") + _ld(5, _ld(1, b"value") + _ld(5, _ld(9, b"\0" * 5000)))
    nodes = ([_PLAIN[0]] * 70 + [graph_node] + [long_node] + [_PLAIN[1]] * 3 + [graph_node] * 2
             + [_PLAIN[0]] * 70 + [long_node] + [graph_node] + [_PLAIN[1]] * 69)
    counts, walk = _same(nodes)
    assert walk == [70, 75, 76, 148] and counts == {("Relu", ""): 140, ("Constant", ""): 74}


def test_long_nodes_split_the_run_and_are_read_alone():
    long_node = _ld(1, b"c") + _ld(4, b"Constant") + _ld(5, _ld(1, b"value") + _ld(5, _ld(9, b"\0" * 5000)))
    assert len(long_node) > nodescan.LONG_NODE
    counts, walk = _same([long_node] + _PLAIN * 12 + [long_node, long_node] + _PLAIN * 12 + [long_node])
    assert counts[("Constant", "")] == 24 + 4 and walk == []


@pytest.mark.parametrize("how", [
    {"between": lambda i: _ld(2, b"graph name") if i == 30 else b""},   # another field among the nodes
    {"between": lambda i: b"\x0a\x00" if i == 30 else b""},             # an empty node (not in spans)
    {"length": lambda n: bytes([n | 128, 0]) if n < 128 else _varint(n)},  # lengths in two bytes, one zero
    {"length": lambda n: _varint(n)[:-1] + bytes([_varint(n)[-1] | 128, 0])},  # and in three
])
def test_runs_whose_matches_are_not_their_nodes_are_read_node_by_node(how):
    _same((_PLAIN + _ODD) * 5, **how)
    _same(_PLAIN * 15, **how)


def test_short_runs_and_no_cache_take_node_op_alone():
    src, spans = _run(_PLAIN * 2)
    assert len(spans) < 2 * FAST_FROM
    assert nodescan.count_ops(src, spans, 2) == _one_by_one(src, spans)
    patterns._COMPILED["node-run"] = None  # as without a code cache
    src, spans = _run(_PLAIN * 20)
    assert nodescan.count_ops(src, spans, 2) == _one_by_one(src, spans)


_FIELD = st.one_of(
    st.sampled_from(_PLAIN + _ODD),
    st.builds(_ld, st.integers(1, 20), st.binary(max_size=140)),
    st.builds(lambda n, v: _varint(n << 3) + _varint(v), st.integers(1, 20), st.integers(0, 1 << 64)),
    st.binary(max_size=6),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.slow
@given(st.lists(st.lists(_FIELD, max_size=5).map(b"".join), min_size=FAST_FROM, max_size=90),
       st.sampled_from([b"", b"\x0a\x00", _ld(2, b"n"), b"\x0a\x03\x22\x01A"]), st.sets(st.integers(0, 89)))
def test_any_run_of_node_bytes_is_counted_as_node_op_counts_it(nodes, junk, where):
    _same(nodes)
    _same(nodes, between=lambda i: junk if i in where else b"")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=6))
def test_mutated_plain_runs_are_counted_as_node_op_counts_them(edits):
    src, spans = _run(_PLAIN * 12)
    data = bytearray(src)
    for pos, value in edits:
        data[pos % len(data)] = value
    data = bytes(data)
    assert nodescan.count_ops(data, spans, 2) == _one_by_one(data, spans)


# -- the summary of a large graph ------------------------------------------------------------

def _large_model(extra=()) -> onnx.ModelProto:
    nodes = []
    for i in range(40):
        value = oh.make_tensor(f"v{i}", onnx.TensorProto.INT64, [1], [i % 3])
        nodes += [oh.make_node("Constant", [], [f"c{i}"], value=value, name=f"/m/Constant_{i}"),
                  oh.make_node("Add", ["x", f"c{i}"], [f"a{i}"], name=f"/m/Add_{i}"),
                  oh.make_node("Custom", [f"a{i}"], [f"b{i}"], domain="my.domain", alpha=1.0)]
    nodes += list(extra)
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", onnx.TensorProto.INT64, [1])],
                      [oh.make_tensor_value_info("b0", onnx.TensorProto.INT64, [1])])
    return oh.make_model(g)


def _external_constant(name: str, location: str) -> onnx.NodeProto:
    t = oh.make_tensor("c", onnx.TensorProto.FLOAT, [4], b"\0" * 16, raw=True)
    onnx.external_data_helper.set_external_data(t, location, offset=0, length=16)
    t.ClearField("raw_data")
    return oh.make_node("Constant", [], [name], value=t)


def test_a_large_graph_is_streamed_and_summarized_as_the_full_walk_and_the_reference():
    branch = oh.make_graph([_external_constant("k", "sub.bin")], "b", [],
                           [oh.make_tensor_value_info("k", onnx.TensorProto.FLOAT, [4])])
    extra = [_external_constant("e1", "w.bin"), oh.make_node("If", ["x"], ["i"], then_branch=branch,
                                                            else_branch=branch),
             _external_constant("e2", "w.bin")]
    model = _large_model(extra)
    data = model.SerializeToString()
    streamed, full = summaries_both_ways(data)
    assert streamed == full
    expected: dict = {}
    for n in model.graph.node:
        key = (n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type
        expected[key] = expected.get(key, 0) + 1
    assert streamed["op_types"] == dict(sorted(expected.items(), key=lambda kv: (-kv[1], kv[0])))
    assert [(e["location"], e["tensors"]) for e in streamed["external_data"]] == [("w.bin", 2), ("sub.bin", 2)]
    assert Census(irmodel.loads(data)).streamed == 120


def test_progress_is_reported_for_a_streamed_graph():
    seen = []
    nodes = [oh.make_node("Relu", ["x"], ["x"]) for _ in range(3000)]
    g = oh.make_graph(nodes, "g", [], [])
    summarize(irmodel.loads(oh.make_model(g).SerializeToString()), progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (3000, 3000) and all(t == 3000 for _, t in seen)


_BASE = _large_model([_external_constant("e1", "w.bin")]).SerializeToString()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_BASE) - 1), st.integers(0, 255)), min_size=1, max_size=4))
def test_streamed_and_full_agree_on_mutated_large_graphs(edits):
    data = bytearray(_BASE)
    for pos, value in edits:
        data[pos] = value
    try:
        irmodel.loads(bytes(data)).graph  # noqa: B018  (a broken top level is not the census' business)
    except DecodeError:
        return
    streamed, full = summaries_both_ways(bytes(data))
    assert streamed == full


# -- the pattern's compiled form, kept -------------------------------------------------------

def test_a_pattern_is_compiled_once_and_loaded_after(tmp_path):
    cache = codecache.FileCodeCache(str(tmp_path))
    source = b"(?:\\x0a(.))*+"
    first = codecache.compiled_pattern("t", source, codecache.DOTALL, cache)
    assert (cache.misses, cache.saved) == (1, 1)
    second = codecache.compiled_pattern("t", source, codecache.DOTALL, cache)
    assert cache.hits == 1 and cache.saved == 1
    for p in (first, second):
        assert p.fullmatch(b"\x0aa\x0a\n")[1] == b"\n" and p.fullmatch(b"\x0b") is None
    # another source of the same length under the same name: compiled afresh
    other = codecache.compiled_pattern("t", b"(?:\\x0b(.))*+", codecache.DOTALL, cache)
    assert other.fullmatch(b"\x0bq") and cache.saved == 2
    # a damaged entry: compiled afresh, never an error
    (entry,) = [os.path.join(cache.directory, f) for f in os.listdir(cache.directory)]
    for junk in (b"", b"\xff\x00garbage", open(entry, "rb").read()[:-9]):
        open(entry, "wb").write(junk)
        p = codecache.compiled_pattern("t", source, codecache.DOTALL, cache)
        assert p.fullmatch(b"\x0aa")[1] == b"a"


def test_a_process_that_finds_the_pattern_kept_does_not_import_re(tmp_path):
    data = _large_model().SerializeToString()
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    code = ("import sys, irmodel\nfrom irmodel._report.summary import summarize\n"
            f"s = summarize(irmodel.load({str(path)!r}))\n"
            "print(repr(('re' in sys.modules, sorted(s['op_types'].items()))))")
    env = {**os.environ, codecache.ENV: str(tmp_path / "cache")}
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=ROOT,
                              env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        runs.append(eval(proc.stdout.strip().splitlines()[-1]))  # noqa: S307 - our own repr
    assert runs[0][1] == runs[1][1] == sorted(summarize(irmodel.loads(data))["op_types"].items())
    assert runs[0][0] and not runs[1][0]  # compiled (with re) once, then loaded


def test_a_pattern_is_not_compiled_where_it_cannot_be_kept(tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_bytes(b"")
    for cache in (codecache.FileCodeCache(""), codecache.FileCodeCache(str(blocker / "cache"))):
        assert not cache.can_save()
        assert codecache.compiled_pattern("t", b"x", 0, cache, only_if_kept=True) is None
        assert codecache.compiled_pattern("t", b"x", 0, cache).fullmatch(b"x")  # compiled, not kept
    kept = codecache.FileCodeCache(str(tmp_path / "kept"))
    assert kept.can_save()
    assert codecache.compiled_pattern("t", b"x", 0, kept, only_if_kept=True).fullmatch(b"x")
    assert kept.saved == 1


def test_without_a_code_cache_a_large_graph_is_read_node_by_node(tmp_path):
    data = _large_model().SerializeToString()
    code = ("import sys, irmodel\nfrom irmodel._report.summary import summarize\nfrom irmodel._wireview import patterns\n"
            f"s = summarize(irmodel.loads({data!r}))\n"
            "print(repr(('re' in sys.modules, patterns._COMPILED.get('node-run', 'absent'), sorted(s['op_types'].items()))))")
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, codecache.ENV: ""}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    imported_re, pattern, ops = eval(proc.stdout.strip().splitlines()[-1])  # noqa: S307 - our own repr
    assert not imported_re and pattern is None
    assert ops == sorted(summarize(irmodel.loads(data))["op_types"].items())
