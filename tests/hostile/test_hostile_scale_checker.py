"""Issue 31, item 4, the checker: work linear in the nodes with small constants.

At most `irmodel.limits.MAX_PROBLEMS_PER_CODE` problems of a code are listed, the rest
summarized in one "and N more" problem of that code; nodes of the same bytes are
checked once and their problems replayed (the same problems as checking each, on the
fast path and off it); sparse indices of a large rank are checked without the dims'
product.  Small versions of the issue's cases here; the full sizes are in
test_hostile_scale_limits.py.
"""

from __future__ import annotations

import collections

import onnx
import pytest

import irmodel
from irmodel import helper as h, limits
from irmodel.checker import check_model
from irmodel.checker.graph import Walker
from wirefmt import encode_varint as _varint

import hostile_models as hm


def _problems(model_bytes: bytes) -> list:
    try:
        check_model(model_bytes)
    except irmodel.ValidationError as exc:
        return list(exc.problems)
    return []


def test_problems_of_a_code_past_the_limit_are_counted_and_summarized(monkeypatch):
    monkeypatch.setattr(limits, "MAX_PROBLEMS_PER_CODE", 50)
    problems = _problems(hm.empty_nodes(300))
    by_code = collections.Counter(p.code for p in problems)
    summaries = [p for p in problems if p.message.startswith("and ")]
    # every node: no op_type (N401), no input or output (N402), no schema for '' (N405)
    assert by_code == {"N401": 51, "N402": 51, "N405": 51}
    assert [(p.code, p.path) for p in summaries] == [("N401", ""), ("N402", ""), ("N405", "")]
    assert all("and 250 more problems of code" in p.message and "MAX_PROBLEMS_PER_CODE" in p.message
               for p in summaries)
    assert problems[-3:] == summaries  # after every listed problem
    listed = [p for p in problems if p not in summaries]
    assert {p.path for p in listed if p.code == "N402"} == {f"graph.node[{i}]" for i in range(50)}


def test_the_listed_problems_are_the_first_ones_found_without_a_limit(monkeypatch):
    data = hm.empty_nodes(120)
    everything = _problems(data)
    monkeypatch.setattr(limits, "MAX_PROBLEMS_PER_CODE", 7)
    capped = _problems(data)
    expected = [p for p in everything if int(p.path.split("[")[1].split("]")[0]) < 7]
    assert [p for p in capped if p.path] == expected


def _model(graph_bytes: bytes) -> bytes:
    m = h.make_model(h.make_graph([], "placeholder", [], []), opset_imports=[h.make_opsetid("", 18)])
    m.ClearField("graph")
    head = irmodel.dumps(m)
    return head + b"\x3a" + _varint(len(graph_bytes)) + graph_bytes




def _frame(node: bytes) -> bytes:
    return b"\x0a" + _varint(len(node)) + node


def _repeating_graph_model() -> bytes:
    """300 nodes in repeating patterns: empty nodes, a Relu with an unknown attribute whose
    copies reassign its output (G207), an unknown op, a Relu of a name never defined
    (G206), valid Relus between them."""
    bad_attr = irmodel.dumps(h.make_node("Relu", ["x"], ["dup"], bogus=3))
    nodes = []
    for i in range(60):
        nodes += [b"", bad_attr, irmodel.dumps(h.make_node("NoSuchOp", ["x"], [f"n{i}"])),
                  irmodel.dumps(h.make_node("Relu", ["nowhere"], [f"u{i}"])),
                  irmodel.dumps(h.make_node("Relu", ["x"], [f"r{i}"]))]
    graph = h.make_graph([], "g", [h.make_tensor_value_info("x", 1, [2])], [h.make_tensor_value_info("r0", 1, [2])])
    return _model(irmodel.dumps(graph) + b"".join(_frame(n) for n in nodes))


def _both_ways(data: bytes) -> tuple:
    """The problems with every fast path on (nodes replayed by their bytes) and with all
    of them off (every node by the full path)."""
    from irmodel._wireview.fastpath import use_fast_paths

    use_fast_paths(True, threshold=1)
    fast = _problems(data)
    use_fast_paths(False)
    slow = _problems(data)
    use_fast_paths(True)
    return fast, slow


def test_the_replayed_problems_equal_the_full_paths_node_by_node():
    fast, slow = _both_ways(_repeating_graph_model())
    assert fast == slow
    codes = collections.Counter(p.code for p in fast)
    assert codes["G207"] == 59 and codes["G206"] == 60 and codes["N411"] == 60 and codes["N401"] == 60


def test_identical_nodes_are_checked_once_whatever_their_number(monkeypatch):
    """The count of full-path node checks (`Walker._node`) does not grow with the number
    of empty nodes: one for the first, replays after."""
    calls = collections.Counter()
    original = Walker._node

    def counting(self, *args, **kw):
        calls["node"] += 1
        return original(self, *args, **kw)

    monkeypatch.setattr(Walker, "_node", counting)
    counts = []
    for n in (2_000, 20_000):
        calls.clear()
        problems = _problems(hm.empty_nodes(n))
        counts.append(calls["node"])
        assert problems[-1].message.startswith(f"and {n - limits.MAX_PROBLEMS_PER_CODE} more")
    assert counts == [1, 1]


def test_a_node_holding_a_graph_is_never_replayed():
    """Two If nodes of the same bytes whose branch uses an outer name defined only before
    the second: the first reports G206 inside its branch, the second does not."""
    branch = h.make_graph([h.make_node("Relu", ["late"], ["b"])], "br", [], [h.make_tensor_value_info("b", 1, None)])
    if_node = irmodel.dumps(h.make_node("If", ["c"], [], then_branch=branch, else_branch=branch))
    define = irmodel.dumps(h.make_node("Relu", ["x"], ["late"]))
    graph = h.make_graph([], "g", [h.make_tensor_value_info("c", 9, []), h.make_tensor_value_info("x", 1, [2])],
                         [h.make_tensor_value_info("late", 1, [2])])
    nodes = [if_node] * 70 + [define] + [if_node] * 70
    fast, slow = _both_ways(_model(irmodel.dumps(graph) + b"".join(_frame(n) for n in nodes)))
    assert fast == slow
    undefined = {p.path.split(".")[1] for p in fast if p.code == "G206"}
    assert undefined == {f"node[{i}]" for i in range(70)}


# -- sparse tensors of a large rank ----------------------------------------------------------

def test_a_sparse_tensor_of_a_large_rank_is_checked_without_the_dims_product():
    assert _problems(hm.sparse_rank(1000)) == []  # coordinates in range, one row


def _sparse_model(dims: list, indices: list, index_dims: list) -> bytes:
    values = h.make_tensor("sp", 1, [len(indices) if len(index_dims) == 1 else index_dims[0]],
                           [1.0] * (index_dims[0]))
    idx = h.make_tensor("sp_i", 7, index_dims, indices)
    sparse = h.make_sparse_tensor(values, idx, dims)
    graph = h.make_graph([], "g", [], [], sparse_initializer=[sparse])
    return irmodel.dumps(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))


@pytest.mark.parametrize("dims, indices, index_dims", [
    ([3, 4], [0, 1, 0, 0], [2, 2]),   # rows out of order
    ([3, 4], [0, 1, 0, 1], [2, 2]),   # a row repeated
    ([3, 4], [0, 1, 2, 3], [2, 2]),   # in order
    ([3, 4], [0, 4, 1, 0], [2, 2]),   # a coordinate out of range
    ([3, 4], [3, 11], [2]),           # linear, in order
    ([3, 4], [5, 2], [2]),            # linear, out of order
    ([3, 4], [3, 12], [2]),           # linear, out of range
])
def test_sparse_index_rules_agree_with_onnx(dims, indices, index_dims):
    data = _sparse_model(dims, indices, index_dims)
    try:
        onnx.checker.check_model(onnx.load_from_string(data))
        reference_ok = True
    except onnx.checker.ValidationError:
        reference_ok = False
    ours = _problems(data)
    assert (not ours) == reference_ok, ours
    assert all(p.code in ("S808", "S809") for p in ours)
