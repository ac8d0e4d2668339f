"""Issue 31, items 4 and 5, inference: linear work on large graphs, nesting bounded by a
named limit and never by Python's stack, an invalid ``stash_type`` reported.

Small versions of the issue's cases; the full sizes are in test_hostile_scale_limits.py.
"""

from __future__ import annotations

import collections
import sys

import onnx
import pytest

import irmodel
from irmodel import limits
from irmodel.checker import check_model
from irmodel.inference import InferenceError, explain, infer_shapes
from irmodel.inference import engine, nesting

import hostile_models as hm


def _count_process_node(monkeypatch) -> collections.Counter:
    calls: collections.Counter = collections.Counter()
    original = engine.Scope.process_node

    def counting(self, *args, **kw):
        calls["node"] += 1
        return original(self, *args, **kw)

    monkeypatch.setattr(engine.Scope, "process_node", counting)
    return calls


@pytest.mark.parametrize("run", ["infer_shapes", "data_prop", "symbolic", "explain"])
def test_empty_nodes_are_inferred_once_whatever_their_number(monkeypatch, run):
    calls = _count_process_node(monkeypatch)
    counts = []
    for n in (2_000, 40_000):
        calls.clear()
        m = irmodel.loads(hm.empty_nodes(n))
        if run == "explain":
            assert explain(m).as_dict()["operators_without_inference"][0]["op_type"] == ""
        else:
            infer_shapes(m, strict_mode=True, data_prop=run == "data_prop", symbolic=run == "symbolic")
        counts.append(calls["node"])
    assert counts == [1, 1]


def test_a_relu_chain_costs_a_constant_number_of_full_node_inferences(monkeypatch):
    calls = _count_process_node(monkeypatch)
    counts = []
    for n in (2_000, 20_000):
        calls.clear()
        out = infer_shapes(irmodel.loads(hm.relu_chain(n)), data_prop=True)
        assert len(out.graph.value_info) == n - 1
        counts.append(calls["node"])
    assert counts[0] == counts[1] <= 2


def test_an_empty_node_that_fails_fails_as_on_the_full_path(fast_paths):
    """Without an opset for '' the first empty node is an error (raised at once), on the
    fast path as off it."""
    m = irmodel.loads(hm.empty_nodes(100))
    del m.opset_import[:]
    m.opset_import.add(domain="other", version=1)
    with pytest.raises(InferenceError) as err:
        infer_shapes(irmodel.loads(irmodel.dumps(m)), strict_mode=True)
    assert "No opset import for domain" in str(err.value)


# -- nesting through function calls -----------------------------------------------------------

NESTED = {"nested_function_ifs": hm.nested_function_ifs(10, 30), "functions_with_if": hm.functions_with_if(99)}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_functions_nesting_ifs_are_accepted_as_onnx_accepts_them(name):
    data = NESTED[name]
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)  # the reference accepts it
    check_model(data, full_check=True)
    out = infer_shapes(irmodel.loads(data), strict_mode=True, check_type=True)
    reference = onnx.shape_inference.infer_shapes(onnx.load_from_string(data), strict_mode=True, check_type=True)
    assert irmodel.dumps(out.graph.output[0]) == reference.graph.output[0].SerializeToString()
    assert not explain(irmodel.loads(data)).as_dict()["values"]


def test_a_run_too_deep_for_the_callers_stack_is_run_again_on_a_deeper_one(monkeypatch):
    """Under a recursion limit that leaves room for a few levels only, the run restarts on a
    thread of its own and gives the same model as with room to spare."""
    data = hm.nested_function_ifs(4, 4)
    expected = irmodel.dumps(infer_shapes(irmodel.loads(data), strict_mode=True, data_prop=True))
    threads = []
    original = nesting.run_with_room

    def spy(fn):
        def wrapped():
            import threading
            threads.append(threading.current_thread().name)
            return fn()
        return original(wrapped)

    monkeypatch.setattr("irmodel.inference.api.run_with_room", spy)
    old = sys.getrecursionlimit()
    depth = len(__import__("traceback").extract_stack())
    sys.setrecursionlimit(depth + 250)
    try:
        got = irmodel.dumps(infer_shapes(irmodel.loads(data), strict_mode=True, data_prop=True))
    finally:
        sys.setrecursionlimit(old)
    assert got == expected
    assert threads == [threads[0], "irmodel-deep-inference"]


def test_nesting_past_the_limit_is_an_inference_error_naming_it(monkeypatch):
    monkeypatch.setattr(limits, "MAX_NESTING", 6)
    data = hm.nested_function_ifs(3, 3)  # 3 calls and 9 Ifs: 12 levels
    with pytest.raises(InferenceError) as err:
        infer_shapes(irmodel.loads(data), strict_mode=True)
    assert "MAX_NESTING" in str(err.value)
    with pytest.raises(InferenceError, match="MAX_NESTING"):  # in every mode: the run cannot go on
        infer_shapes(irmodel.loads(data))
    monkeypatch.setattr(limits, "MAX_NESTING", 12)
    infer_shapes(irmodel.loads(data), strict_mode=True)


# -- LayerNormalization's stash_type -------------------------------------------------------------

def test_a_stash_type_that_is_no_element_type_is_a_type_error_in_strict_mode():
    data = hm.layernorm_stash_type((1 << 63) - 1)
    with pytest.raises(InferenceError) as err:
        infer_shapes(irmodel.loads(data), strict_mode=True)
    assert [p.code for p in err.value.problems] == ["I101"]
    assert "stash_type 9223372036854775807" in err.value.problems[0].message
    with pytest.raises(InferenceError):
        check_model(data, full_check=True)
    out = infer_shapes(irmodel.loads(data))  # not strict: the outputs keep their declared types
    assert [o.type.tensor_type.elem_type for o in out.graph.output] == [1, 1, 1]


@pytest.mark.parametrize("stash", [1, 10, (1 << 32) + 1])
def test_a_stash_type_the_reference_reads_as_an_element_type_is_inferred_as_it_does(stash):
    data = hm.layernorm_stash_type(stash)
    m = onnx.load_from_string(data)
    for o in m.graph.output[1:]:
        o.type.tensor_type.ClearField("elem_type")
    data = m.SerializeToString()
    ours = infer_shapes(irmodel.loads(data))
    reference = onnx.shape_inference.infer_shapes(onnx.load_from_string(data))
    assert [irmodel.dumps(o) for o in ours.graph.output] == [o.SerializeToString() for o in reference.graph.output]
