"""Issue 31, item 2: data propagation within explicit budgets (`irmodel.limits`).

A value of more than `MAX_VALUE_ELEMENTS` elements is not kept, and once a run has kept
`MAX_PROPAGATED_ELEMENTS` elements nothing more is propagated; a value not kept is
unknown, so the dims depending on it are exactly those of inference without data
propagation, and ``explain`` names the budget.  The small versions lower a budget (the
limits are read at each use) so the budget engages on a model of a few nodes; the
full-size cases of the issue run in a child process under 2 GiB of address space and
10 s of CPU (`test_the_issues_cases_at_full_size_end_within_10_s_and_2_gib`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import irmodel
from irmodel import limits
from irmodel.inference import explain, nodepass
from irmodel.inference.explain import VALUE_BUDGET

import hostile_value_models as hv
from cli_helpers import ROOT, run_cli
from hostile_value_models import run_forms

MODES = ({"data_prop": True}, {"symbolic": True})


def _dims(model) -> object:
    t = model.graph.output[0].type.tensor_type
    if not t.HasField("shape"):
        return "no rank"
    return [d.dim_value if d.HasField("dim_value") else "?" for d in t.shape.dim]


def _out(model, **options) -> object:
    return _dims(irmodel.infer_shapes(model, strict_mode=True, **options))


@pytest.fixture
def small_value_budget(monkeypatch):
    monkeypatch.setattr(limits, "MAX_VALUE_ELEMENTS", 10)


@pytest.fixture
def small_run_budget(monkeypatch):
    monkeypatch.setattr(limits, "MAX_PROPAGATED_ELEMENTS", 20)


# -- the budget of one value ------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES, ids=["data_prop", "symbolic"])
def test_a_chain_of_concats_is_propagated_within_the_budget(mode):
    assert _out(hv.concat_chain(5, 3), **mode) == [2] * 18


@pytest.mark.parametrize("mode", MODES, ids=["data_prop", "symbolic"])
def test_a_value_over_the_budget_is_unknown_and_the_dims_are_those_without_propagation(small_value_budget, mode):
    model = hv.concat_chain(5, 3)  # values of 6, 9, 12, ... elements: the third is refused
    assert _out(model, **mode) == _out(model) == ["?"] * 18


@pytest.mark.parametrize("symbolic", [False, True])
def test_explain_names_the_budget_of_a_value(small_value_budget, symbolic):
    result = explain(hv.concat_chain(5, 3), data_prop=True, symbolic=symbolic)
    assert result.values_not_propagated == [
        ("c2", "over the 10 elements a propagated value may have (MAX_VALUE_ELEMENTS; 12 counted)")]
    [loss] = [loss for loss in result.losses if loss.value == "out"]
    assert loss.reason == VALUE_BUDGET and loss.op_type == "ConstantOfShape"
    assert "input 0 'c4': its value was not propagated" in loss.detail and "MAX_VALUE_ELEMENTS" in loss.detail


def test_without_a_refused_value_explain_says_data_dependent():
    model = hv.concat_chain(2, 3)
    model.graph.node[0].op_type = "Identity"  # s is x itself: a float tensor, no value at all
    result = explain(model, data_prop=True)
    assert result.values_not_propagated == []
    assert {loss.reason for loss in result.losses} <= {"data-dependent", "inference-error", "untyped-input"}


@pytest.mark.parametrize("mode", MODES, ids=["data_prop", "symbolic"])
def test_a_wide_concat_is_refused_by_the_sum_of_its_input_lengths(mode, monkeypatch):
    """The value is never made: refused by its length, counted without a copy."""
    made = []
    real_keep = __import__("irmodel.inference.dataprop", fromlist=["keep_value"]).keep_value

    def keep(scope, name, value, count=None):
        made.append(len(value))
        return real_keep(scope, name, value, count)

    from irmodel.inference import dataprop, nodepass
    from irmodel.inference.symbolic import values
    for module in (dataprop, nodepass, values):
        monkeypatch.setattr(module, "keep_value", keep)
    model = hv.concat_wide(2000, 3)  # 6,000 elements (a rank over 1,024: none, as in the reference)
    assert _out(model, **mode) == _out(model) == "no rank"
    assert max(made) <= 3
    result = explain(model, data_prop=True, symbolic="symbolic" in mode)
    if "symbolic" in mode:  # counted until past the budget
        assert result.values_not_propagated[0][0] == "c"
    else:
        assert result.values_not_propagated == [
            ("c", "over the 4,096 elements a propagated value may have (MAX_VALUE_ELEMENTS; 6,000 counted)")]


def test_a_shape_of_rank_over_the_budget_is_not_propagated_and_adds_stay_cheap():
    model = hv.add_repeat(20, 5000)
    assert _out(model, data_prop=True) == _out(model) == "no rank"  # (a rank over 1,024)
    assert [name for name, _ in explain(model, data_prop=True).values_not_propagated] == ["s"]


# -- the budget of a run --------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES, ids=["data_prop", "symbolic"])
def test_once_the_run_budget_is_spent_no_value_is_propagated(small_run_budget, mode):
    model = hv.add_repeat(10, 3)  # s, a0, a1, ...: 3 elements each; the 7th does not fit in 20
    assert _out(model, **mode) == _out(model) == ["?"] * 3
    result = explain(model, data_prop=True, symbolic="symbolic" in mode)
    names = [name for name, _ in result.values_not_propagated]
    assert names[0] == "a5" and set(names) == {f"a{k}" for k in range(5, 10)}
    assert all("MAX_PROPAGATED_ELEMENTS" in why for _, why in result.values_not_propagated)
    [loss] = [loss for loss in result.losses if loss.value == "out"]
    assert loss.reason == VALUE_BUDGET and "MAX_PROPAGATED_ELEMENTS" in loss.detail


@pytest.mark.parametrize("mode", MODES, ids=["data_prop", "symbolic"])
def test_a_large_graph_replayed_from_the_node_cache_honours_the_run_budget(monkeypatch, mode):
    """Over 64 nodes the node pass replays cached outcomes, values included: each replayed
    value is counted too (`dataprop.keep_value`)."""
    model = irmodel.loads(irmodel.dumps(hv.add_repeat(200, 2)))  # read from bytes: the node pass applies
    replayed = []
    real = nodepass._replay_valued
    monkeypatch.setattr(nodepass, "_replay_valued", lambda *a: replayed.append(1) or real(*a))
    assert _out(model, **mode) == [2, 2]  # 201 values of 2 elements
    assert len(replayed) > 100
    monkeypatch.setattr(limits, "MAX_PROPAGATED_ELEMENTS", 150)
    assert _out(model, **mode) == _out(model) == ["?", "?"]


# -- the command line ---------------------------------------------------------------------------------

def test_every_command_names_the_budget_where_it_engages(tmp_path, small_value_budget):
    model = hv.concat_chain(5, 3)
    run_forms(tmp_path, model)
    path = str(tmp_path / "m.onnx")
    status, out, _ = run_cli(["infer", path, "--explain", "--data-prop"])
    assert status == 0
    assert "values not propagated (over a budget of irmodel.limits): 1" in out
    assert "  c2: over the 10 elements a propagated value may have (MAX_VALUE_ELEMENTS; 12 counted)" in out
    assert "out: dim 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17 unknown, lost at node 6 ConstantOfShape: " \
           "value-budget: input 0 'c4': its value was not propagated" in out
    status, out, _ = run_cli(["infer", path, "--explain", "--data-prop", "--json"])
    data = json.loads(out)
    assert data["values_not_propagated"] == [{"value": "c2", "reason": "value-budget", "detail": (
        "over the 10 elements a propagated value may have (MAX_VALUE_ELEMENTS; 12 counted)")}]


@pytest.mark.parametrize("builder, args", [(hv.concat_wide, (300, 20)), (hv.add_repeat, (30, 5000))],
                         ids=["wide", "add"])
def test_every_command_on_small_versions_of_the_issues_cases(tmp_path, builder, args):
    run_forms(tmp_path, builder(*args))


def test_every_command_with_the_run_budget_spent(tmp_path, small_run_budget):
    run_forms(tmp_path, hv.add_repeat(10, 3))


def test_an_explained_name_with_control_characters_is_escaped(tmp_path, small_value_budget):
    model = hv.concat_chain(5, 3)
    for node in model.graph.node:
        node.output[:] = [o.replace("c", "c\x1b[2J") for o in node.output]
        node.input[:] = [i.replace("c", "c\x1b[2J") for i in node.input]
    run_forms(tmp_path, model, (["infer", "--explain", "--data-prop"], ["infer", "--explain", "--symbolic"]))


# -- the issue's cases at full size ---------------------------------------------------------------

_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
resource.setrlimit(resource.RLIMIT_CPU, (10, 10))
sys.path[:0] = [{tests!r}, {hostile!r}]
import irmodel, hostile_value_models as hv
from irmodel.inference import explain, nodepass
builder, args = hv.FULL_SIZE[{case!r}]
model = builder(*args)
irmodel.save(model, {path!r})
for options in ({{"data_prop": True}}, {{"symbolic": True}}, {{"data_prop": True, "strict_mode": True, "check_type": True}}):
    irmodel.infer_shapes(model, **options)
explain(model, data_prop=True)
print("ok")
"""

_CLI_FORMS = (["infer", "--data-prop"], ["infer", "--symbolic"], ["infer", "--explain", "--data-prop"],
              ["infer", "--strict", "--check-type", "--data-prop"], ["check"])


def _limited():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (10, 10))


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(hv.FULL_SIZE))
def test_the_issues_cases_at_full_size_end_within_10_s_and_2_gib(tmp_path, case):
    """Each case through the API (one child: build, save, infer in three modes, explain)
    and through the command line (one child per form), each under RLIMIT_AS 2 GiB and
    RLIMIT_CPU 10 s: a process past either dies of a signal or MemoryError, and fails here."""
    path = str(tmp_path / "case.onnx")
    script = _CHILD.format(tests=os.path.join(ROOT, "tests"), hostile=os.path.dirname(__file__), case=case,
                           path=path)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == b"ok", (p.returncode, p.stderr[-1000:])
    for form in _CLI_FORMS:
        p = subprocess.run([sys.executable, "-m", "irmodel", form[0], path, *form[1:]], capture_output=True,
                           cwd=ROOT, timeout=300, preexec_fn=_limited)
        assert p.returncode in (0, 1), (form, p.returncode, p.stderr[-1000:])
        assert b"Traceback" not in p.stderr and b"out of memory" not in p.stderr, (form, p.stderr[-1000:])


# -- properties -----------------------------------------------------------------------------------

class _Budgets:
    """`irmodel.limits`' budgets set for a block (hypothesis runs many examples per test,
    where a function-scoped monkeypatch would not be reset between them)."""

    def __init__(self, **values):
        self.values = values
        self.saved = {}

    def __enter__(self):
        for name, value in self.values.items():
            self.saved[name] = getattr(limits, name)
            setattr(limits, name, value)

    def __exit__(self, *exc):
        for name, value in self.saved.items():
            setattr(limits, name, value)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 30), st.sampled_from(MODES))
def test_a_value_is_kept_exactly_when_it_is_within_the_budget_of_a_value(n, rank, budget, mode):
    model = hv.concat_chain(n, rank)  # the last value has (n + 1) * rank elements, the longest
    with _Budgets(MAX_VALUE_ELEMENTS=budget):
        got = _out(model, **mode)
    assert got == ([2] * (n + 1) * rank if (n + 1) * rank <= budget else _out(model))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 8), st.integers(1, 4), st.integers(1, 40), st.sampled_from(MODES))
def test_a_value_is_kept_exactly_when_the_run_has_room_for_it(n, rank, budget, mode):
    model = hv.add_repeat(n, rank)  # n + 1 values of ``rank`` elements: Shape's, then each Add's
    with _Budgets(MAX_PROPAGATED_ELEMENTS=budget):
        got = _out(model, **mode)
    assert got == ([2] * rank if (n + 1) * rank <= budget else _out(model))


# -- symbolic mode: nothing built to be refused ---------------------------------------------------

def _shapes(n: int, rank: int) -> irmodel.ModelProto:
    inputs = [irmodel.helper.make_tensor_value_info("x", 1, [1] * rank)]
    nodes = [irmodel.helper.make_node("Shape", ["x"], [f"s{k}"]) for k in range(n)]
    return hv._model(nodes, inputs, [irmodel.helper.make_tensor_value_info(f"s{n - 1}", 7, None)])


def test_a_shape_over_the_budget_is_refused_by_its_rank_in_symbolic_mode(monkeypatch):
    from irmodel.inference.symbolic import values

    calls = []
    real = values.keep_value
    monkeypatch.setattr(values, "keep_value", lambda scope, name, value, count=None: calls.append(
        (len(value), count)) or real(scope, name, value, count))
    irmodel.infer_shapes(_shapes(3, 5000), symbolic=True)
    assert calls == [(0, 5000)] * 3


def test_once_the_run_budget_is_spent_no_symbolic_rule_runs(small_run_budget, monkeypatch):
    from irmodel.inference.symbolic import values

    runs = []
    real = values.RULES["Shape"]
    monkeypatch.setitem(values.RULES, "Shape", lambda ctx: runs.append(1) or real(ctx))
    model = _shapes(10, 8)  # 8 elements each: two fit in 20, the third spends the budget
    irmodel.infer_shapes(model, symbolic=True)
    assert len(runs) == 3
    result = explain(model, symbolic=True)
    assert [name for name, _ in result.values_not_propagated] == [f"s{k}" for k in range(2, 10)]


def test_a_value_refused_inside_a_function_body_is_not_named_by_its_private_name(small_value_budget):
    """explain names values of the model's graphs, never a function body's (its values are the
    callee's private copies, as for types); the caller's value stays unknown."""
    h = irmodel.helper
    body = [h.make_node("Concat", ["a", "a", "a", "a"], ["b"], axis=0)]
    fn = h.make_function("local", "F", ["a"], ["b"], body, [h.make_opsetid("", 18)])
    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("F", ["s"], ["c"], domain="local"),
             h.make_node("ConstantOfShape", ["c"], ["out"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", 1, [2, 2, 2])],
                     [h.make_tensor_value_info("out", 1, None)])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("local", 1)], functions=[fn])
    assert _out(model, data_prop=True) == _out(model) == ["?"] * 12
    assert explain(model, data_prop=True).values_not_propagated == []
    with _Budgets(MAX_VALUE_ELEMENTS=4096):
        assert _out(model, data_prop=True) == [2] * 12
