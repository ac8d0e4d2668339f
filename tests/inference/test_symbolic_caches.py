"""The caches of symbolic mode never outlive what they depend on (issue 13's speed work).

Resolved shapes and values (`dims.resolve_tuple`), memoized results (`dims.memo`, the
arithmetic cache) and the engine's outcome token (`symbolic.outcome_token`) are valid
until the next proven equality; these tests prove an equality after the caches were
filled and check that every later read sees it.
"""

from __future__ import annotations

import pytest

import irmodel
from irmodel import helper as h
from irmodel.inference import dims as D
from irmodel.inference.symbolic import rules as S
from irmodel.inference.types import TensorType, type_from_proto

FLOAT = 1


@pytest.fixture
def state():
    token = D.use_symbolic(D.SymbolicState())
    try:
        yield D.symbolic_state()
    finally:
        D.reset_symbolic(token)


def test_resolve_types_keeps_the_list_until_an_equality(state):
    a, b = TensorType(FLOAT, ("M", 4)), TensorType(FLOAT, ("N", 4))
    types = [a, b, None]
    assert S.resolve_types(types) is types  # nothing to rewrite: the same list, the same types
    assert D.resolve_tuple(("M", 4)) == ("M", 4)  # now cached
    D.record_equal("M", "N")
    out = S.resolve_types(types)
    assert out is not types and out[0] == out[1] and out[2] is None
    assert {out[0].shape[0], D.resolve("M"), D.resolve("N")} == {out[0].shape[0]}


def test_resolve_tuple_canonicalizes_expression_texts(state):
    assert D.resolve_tuple(("seq+past", 2)) == ("past + seq", 2)
    assert D.resolve_tuple((1, 2, None)) == (1, 2, None)


def test_memo_and_arithmetic_cache_are_dropped_by_an_equality(state):
    calls = []

    def compute():
        calls.append(1)
        return D.add("M", "N")

    assert D.memo(("sum", "M", "N"), compute) == D.add("M", "N") == "M + N"
    assert D.memo(("sum", "M", "N"), compute) == "M + N" and len(calls) == 1
    D.record_equal("M", "N")
    assert D.memo(("sum", "M", "N"), compute) == D.add(D.resolve("M"), D.resolve("N"))
    assert len(calls) == 2
    assert D.add("M", "N") in ("2*M", "2*N")  # the cached "M + N" is gone


def test_outcome_token(state):
    first = S.outcome_token()
    D.record_equal("a", "a")  # nothing proven
    assert S.outcome_token() == first
    D.record_equal("a", "b + 1")
    second = S.outcome_token()
    assert second != first
    state.frozen += 1
    assert S.outcome_token() != second  # inside a sub-graph nothing is proven
    state.frozen -= 1
    assert S.outcome_token() == second


def test_outcome_token_outside_symbolic_mode():
    assert S.outcome_token() is None


def test_an_equality_proven_late_reaches_values_inferred_before_it():
    """X [M, 4] and Y [N, 4] go through many nodes before a MatMul proves M == N: every
    value of both chains ends with the same dim (the late equality is applied to values
    inferred before it, through the caches filled before it)."""
    nodes, x, y = [], "X", "Y"
    for i in range(5):
        nodes += [h.make_node("Relu", [x], [f"x{i}"]), h.make_node("Relu", [y], [f"y{i}"])]
        x, y = f"x{i}", f"y{i}"
    nodes.append(h.make_node("MatMul", ["A", "Y"], ["prod"]))  # A [2, M] x Y [N, 4]: M == N
    nodes += [h.make_node("Relu", [x], ["x_after"]), h.make_node("Relu", [y], ["y_after"])]
    graph = h.make_graph(nodes, "late", [h.make_tensor_value_info("X", FLOAT, ["M", 4]),
                                         h.make_tensor_value_info("Y", FLOAT, ["N", 4]),
                                         h.make_tensor_value_info("A", FLOAT, [2, "M"])],
                         [h.make_tensor_value_info("x_after", FLOAT, None),
                          h.make_tensor_value_info("y_after", FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    m = irmodel.infer_shapes(irmodel.loads(model.SerializeToString(), "ModelProto"), symbolic=True)
    g = m.graph
    types = {vi.name: type_from_proto(vi.type) for vi in list(g.value_info) + list(g.output)}
    firsts = {types[n].shape[0] for n in types if n[0] in "xy"}
    assert len(firsts) == 1 and firsts <= {"M", "N"}
    assert types["prod"].shape == (2, 4)
