"""Symbolic inference on hostile models: work near-linear in the equalities and dims (issue 31).

Each class of model that made ``infer --symbolic`` super-linear or refuse a valid model
has a small version here (fast, asserting the documented result through the API and the
command line) and the full size of the issue (marked slow, run in a child process under
2 GiB of address space and 10 s of CPU, asserting it finishes with exit 0):

* chains of proven dim equalities (broadcasts of dims that cannot be 1, Concats, MatMuls):
  every name of the chain ends as the one surviving name (`dims.record_equal`: a fresh
  ``unk__`` name is eliminated first, then the smaller name);
* Max and Min over many shape values: past the expression cap (`expr.MAX_SIZE`) the
  value is unknown and the dim a fresh name, and the work per node is bounded;
* values of a very large rank of unnamed dims;
* 990 unary minus signs, in a dim_param and as a chain of Neg nodes: an expression's
  depth is not the model's nesting (no "model nested too deeply", I100);
* a shape value multiplied by 2**62 again and again: the coefficient is capped
  (`expr.MAX_COEFF`), never thousands of digits (formatting it was an internal error).

Scaling is asserted by counting operations (canonical expressions made), never by time.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import irmodel
from irmodel import helper as h
from irmodel.inference.symbolic import expr as X, parsing as P
from cli_helpers import run, run_cli

F, I64 = 1, 7
OPSET = [h.make_opsetid("", 17)]


def _model(nodes, inputs, outputs):
    return h.make_model(h.make_graph(nodes, "g", inputs, outputs), opset_imports=OPSET)


def broadcast_chain(n: int):
    """``n`` Adds of ``[a_i + 2]`` and ``[a_{i+1} + 2]``: neither can be 1, so each proves
    a_i == a_{i+1}; a last Add of x_0 and x_n shows the chain's result."""
    ins = [h.make_tensor_value_info(f"x{i}", F, [f"a{i} + 2"]) for i in range(n + 1)]
    nodes = [h.make_node("Add", [f"x{i}", f"x{i + 1}"], [f"y{i}"]) for i in range(n)]
    nodes.append(h.make_node("Add", ["x0", f"x{n}"], ["z"]))
    outs = [h.make_tensor_value_info(f"y{i}", F, None) for i in range(n)]
    outs.append(h.make_tensor_value_info("z", F, None))
    return _model(nodes, ins, outs)


def concat_chain(n: int):
    """``n`` Concats on axis 1 of ``[d_i, 2]`` and ``[d_{i+1}, 2]``: each proves d_i == d_{i+1};
    a last Concat of x_0 and x_n shows the chain's result."""
    ins = [h.make_tensor_value_info(f"x{i}", F, [f"d{i}", 2]) for i in range(n + 1)]
    nodes = [h.make_node("Concat", [f"x{i}", f"x{i + 1}"], [f"y{i}"], axis=1) for i in range(n)]
    nodes.append(h.make_node("Concat", ["x0", f"x{n}"], ["z"], axis=1))
    outs = [h.make_tensor_value_info(f"y{i}", F, None) for i in range(n)]
    outs.append(h.make_tensor_value_info("z", F, None))
    return _model(nodes, ins, outs)


def matmul_chain(n: int):
    """``x_i [m, a_i] @ w_i [a_{i+1}, k]`` proves a_i == a_{i+1}; a last Add of x_0 and x_n
    shows it (two different names could each be 1: without the equality, unknown)."""
    ins = [h.make_tensor_value_info(f"x{i}", F, ["m", f"a{i}"]) for i in range(n + 1)]
    ins += [h.make_tensor_value_info(f"w{i}", F, [f"a{i + 1}", "k"]) for i in range(n)]
    nodes = [h.make_node("MatMul", [f"x{i}", f"w{i}"], [f"y{i}"]) for i in range(n)]
    nodes.append(h.make_node("Add", ["x0", f"x{n}"], ["z"]))
    outs = [h.make_tensor_value_info(f"y{i}", F, None) for i in range(n)]
    outs.append(h.make_tensor_value_info("z", F, None))
    return _model(nodes, ins, outs)


def max_min(n_nodes: int, n_inputs: int):
    """``n_nodes`` Max/Min nodes, each over the shapes of ``n_inputs`` values (rotated, so
    that no two nodes are alike), feeding a ConstantOfShape."""
    ins = [h.make_tensor_value_info(f"x{i}", F, [f"d{i}"]) for i in range(n_inputs)]
    nodes = [h.make_node("Shape", [f"x{i}"], [f"s{i}"]) for i in range(n_inputs)]
    outs = []
    for j in range(n_nodes):
        nodes.append(h.make_node("Max" if j % 2 == 0 else "Min",
                                 [f"s{(i + j) % n_inputs}" for i in range(n_inputs)], [f"m{j}"]))
        nodes.append(h.make_node("ConstantOfShape", [f"m{j}"], [f"z{j}"]))
        outs.append(h.make_tensor_value_info(f"z{j}", F, None))
    return _model(nodes, ins, outs)


def large_rank(n_values: int, rank: int):
    """``n_values`` inputs of ``rank`` unnamed dims, the shape of each taken (a value too
    long to propagate), the first two added (broadcast dim by dim)."""
    ins = [h.make_tensor_value_info(f"x{i}", F, [None] * rank) for i in range(n_values)]
    nodes = [h.make_node("Shape", [f"x{i}"], [f"s{i}"]) for i in range(n_values)]
    nodes.append(h.make_node("Add", ["x0", "x1"], ["y0"]))
    outs = [h.make_tensor_value_info(f"s{i}", I64, None) for i in range(n_values)]
    outs.append(h.make_tensor_value_info("y0", F, None))
    return _model(nodes, ins, outs)


def rank_fold(n_values: int, rank: int):
    """``n_values`` inputs of ``rank`` unnamed dims added one after another: every sum gets
    ``rank`` fresh names, which the next Add reads (resolves and broadcasts) again."""
    ins = [h.make_tensor_value_info(f"x{i}", F, [None] * rank) for i in range(n_values)]
    nodes = [h.make_node("Add", ["x0", "x1"], ["y1"])]
    nodes += [h.make_node("Add", [f"y{i}", f"x{i + 1}"], [f"y{i + 1}"]) for i in range(1, n_values - 1)]
    nodes += [h.make_node("Relu", [f"y{n_values - 1}"], ["r"]), h.make_node("Shape", ["r"], ["s"])]
    outs = [h.make_tensor_value_info("r", F, None), h.make_tensor_value_info("s", I64, None)]
    return _model(nodes, ins, outs)


def mul_chain(n: int, k: int = 1 << 62):
    """A shape value multiplied ``n`` times by ``k``: its expression's coefficient grows
    without bound (``k**n * n``) unless capped."""
    ins = [h.make_tensor_value_info("x", F, ["n"])]
    nodes = [h.make_node("Shape", ["x"], ["v0"])]
    nodes += [h.make_node("Mul", [f"v{i}", "k"], [f"v{i + 1}"]) for i in range(n)]
    nodes.append(h.make_node("ConstantOfShape", [f"v{n}"], ["z"]))
    graph = h.make_graph(nodes, "g", ins, [h.make_tensor_value_info("z", F, None)],
                         initializer=[h.make_tensor("k", I64, [1], [k])])
    return h.make_model(graph, opset_imports=OPSET)


def minus_dim_param(n: int):
    """An input dim written as ``n`` unary minus signs before a name."""
    ins = [h.make_tensor_value_info("x", F, ["-" * n + "n"])]
    nodes = [h.make_node("Relu", ["x"], ["y"]), h.make_node("Shape", ["x"], ["s"])]
    outs = [h.make_tensor_value_info("y", F, None), h.make_tensor_value_info("s", I64, None)]
    return _model(nodes, ins, outs)


def neg_chain(n: int):
    """A shape value through ``n`` Neg nodes, then Abs, then ConstantOfShape."""
    ins = [h.make_tensor_value_info("x", F, ["n"])]
    nodes = [h.make_node("Shape", ["x"], ["v0"])]
    nodes += [h.make_node("Neg", [f"v{i}"], [f"v{i + 1}"]) for i in range(n)]
    nodes += [h.make_node("Abs", [f"v{n}"], ["a"]), h.make_node("ConstantOfShape", ["a"], ["z"])]
    return _model(nodes, ins, [h.make_tensor_value_info("z", F, None)])


def _dims(model, name: str) -> list:
    """The inferred dims of value ``name``: ints, dim_param texts, or None."""
    g = model.graph
    for v in list(g.value_info) + list(g.output):
        if v.name == name:
            out = []
            for d in v.type.tensor_type.shape.dim:
                out.append(d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None)
            return out
    raise AssertionError(f"{name} was not inferred")


def _symbolic(model):
    return irmodel.infer_shapes(model, symbolic=True)


def _survivor(names) -> str:
    """The name an equality chain keeps (`dims.record_equal` eliminates the smaller name)."""
    return max(names)


# -- chains of proven equalities -----------------------------------------------------------

def test_broadcast_chain_proves_every_dim_equal():
    n = 300
    out = _symbolic(broadcast_chain(n))
    keep = _survivor(f"a{i}" for i in range(n + 1))
    assert _dims(out, "z") == [f"{keep} + 2"]
    assert _dims(out, f"y{n - 1}") == [f"{keep} + 2"]


def test_concat_chain_proves_every_dim_equal():
    n = 300
    out = _symbolic(concat_chain(n))
    keep = _survivor(f"d{i}" for i in range(n + 1))
    assert _dims(out, "z") == [keep, 4]
    assert _dims(out, f"y{n - 1}") == [keep, 4]


def test_matmul_chain_proves_the_ends_equal():
    n = 300
    out = _symbolic(matmul_chain(n))
    keep = _survivor(f"a{i}" for i in range(n + 1))
    assert _dims(out, "z") == ["m", keep]
    # without the equalities (plain inference) the broadcast of a0 and a300 stays unknown
    assert _dims(irmodel.infer_shapes(matmul_chain(n)), "z")[1] not in {f"a{i}" for i in range(n + 1)}


class _Count:
    """Counts the canonical expressions made (`expr._make`: every arithmetic result)."""

    def __init__(self, monkeypatch):
        self.n = 0
        real = X._make

        def counted(acc):
            self.n += 1
            return real(acc)
        monkeypatch.setattr(X, "_make", counted)


@pytest.mark.parametrize("build", [broadcast_chain, concat_chain, matmul_chain], ids=lambda f: f.__name__)
def test_equality_chain_work_is_linear(monkeypatch, build):
    counter = _Count(monkeypatch)
    counts = []
    for n in (100, 400):
        model = build(n)
        before = counter.n
        _symbolic(model)
        counts.append(counter.n - before)
    # four times the equalities: about four times the expressions (quadratic would be 16x)
    assert counts[1] <= 5 * counts[0], counts


# -- Max and Min past the expression cap -------------------------------------------------------

def test_max_min_past_the_cap_is_a_fresh_name():
    out = _symbolic(max_min(6, 60))
    for j in range(6):
        (d,) = _dims(out, f"z{j}")
        assert d.startswith("unk__"), d


def test_max_min_within_the_cap_is_exact():
    out = _symbolic(max_min(2, 3))
    assert _dims(out, "z0") == ["max(d0, d1, d2)"]
    assert _dims(out, "z1") == ["min(d0, d1, d2)"]


def test_max_min_comparisons_bounded_per_node(monkeypatch):
    calls = []
    real = X._never_beats

    def counted(kind, e, f):
        calls.append(1)
        return real(kind, e, f)
    monkeypatch.setattr(X, "_never_beats", counted)
    for inputs in (60, 240):
        calls.clear()
        _symbolic(max_min(4, inputs))
        # folded input by input, each new argument compared with the kept ones only,
        # and nothing past the cap: a bound independent of the number of inputs
        assert len(calls) <= 4 * 2 * X.MAX_SIZE * X.MAX_SIZE, (inputs, len(calls))


def test_extremum_with_more_arguments_than_the_cap_is_unknown():
    names = [X.sym(f"v{i}") for i in range(X.MAX_SIZE + 1)]
    assert X.maximum(*names) is None
    assert X.minimum(*names[:3]) is not None


# -- numbers in expressions ---------------------------------------------------------------

def test_growing_coefficient_becomes_a_fresh_name():
    # 2**62 * n is within the cap (a dim of a tensor with n == 0 or 1); (2**62)**2 * n is not
    assert _dims(_symbolic(mul_chain(1)), "z") == [f"{1 << 62}*n"]
    for n in (2, 300):
        (d,) = _dims(_symbolic(mul_chain(n)), "z")
        assert d.startswith("unk__"), d


def test_coefficient_cap():
    n = X.sym("n")
    assert X.mul(n, X.const(X.MAX_COEFF)) is not None
    assert X.mul(n, X.const(X.MAX_COEFF + 1)) is None
    assert X.add(X.const(X.MAX_COEFF), n) is not None
    assert X.add(X.add(X.const(X.MAX_COEFF), n), X.ONE) is None
    # every number an expression holds is one `parse` reads back
    e = X.sub(X.mul(n, X.const(X.MAX_COEFF)), X.const(X.MAX_COEFF))
    assert P.parse(X.to_text(e)) == e


# -- large rank -------------------------------------------------------------------------------

def test_large_rank_of_unnamed_dims():
    rank = 3000
    out = _symbolic(large_rank(4, rank))
    assert len(_dims(out, "y0")) == rank
    assert _dims(out, "s0") == [rank]


def test_fresh_names_are_not_parsed(monkeypatch):
    calls = []
    real = P._tokens

    def counted(text):
        calls.append(text)
        return real(text)
    monkeypatch.setattr(P, "_tokens", counted)
    rank = 2000
    out = _symbolic(rank_fold(4, rank))
    dims = _dims(out, "r")
    assert len(dims) == rank and all(d.startswith("unk__") for d in dims)
    assert calls == []  # a plain name is its own canonical form: read without the parser


# -- expression depth is not model depth ------------------------------------------------------

@pytest.mark.parametrize("signs, expected", [(990, "n"), (991, "-n")])
def test_minus_signs_in_a_dim_param_are_no_nesting(signs, expected):
    out = _symbolic(minus_dim_param(signs))
    assert _dims(out, "y") == [expected]


def test_parse_counts_a_run_of_signs():
    assert P.parse("-" * 1000 + "n") == X.sym("n")
    assert P.parse("- + -" * 200 + "n") == X.sym("n")
    assert P.parse("-" * 1001 + "(a + 1)") == P.parse("-a - 1")
    with pytest.raises(P.ParseError):
        P.parse("-" * (X.MAX_TEXT + 1) + "n")
    with pytest.raises(P.ParseError):  # deep parentheses: not an expression, never a RecursionError
        P.parse("(" * 300 + "n" + ")" * 300)


def test_deep_parentheses_in_a_dim_param_stay_a_name():
    text = "(" * 300 + "n" + ")" * 300
    ins = [h.make_tensor_value_info("x", F, [text])]
    out = _symbolic(_model([h.make_node("Relu", ["x"], ["y"])], ins, [h.make_tensor_value_info("y", F, None)]))
    assert _dims(out, "y") == [text]


def test_neg_chain_is_no_nesting():
    out = _symbolic(neg_chain(990))
    assert _dims(out, "z") == ["n"]


# -- the command line ---------------------------------------------------------------------------

SMALL = {
    "broadcast": lambda: broadcast_chain(100),
    "concat": lambda: concat_chain(100),
    "matmul": lambda: matmul_chain(100),
    "max_min": lambda: max_min(4, 60),
    "rank": lambda: large_rank(3, 2000),
    "rank_fold": lambda: rank_fold(3, 2000),
    "minus_text": lambda: minus_dim_param(990),
    "neg_chain": lambda: neg_chain(300),
    "mul_chain": lambda: mul_chain(300),
}


@pytest.mark.parametrize("case", sorted(SMALL))
def test_cli_symbolic_small(tmp_path, case):
    path = str(tmp_path / f"{case}.onnx")
    irmodel.save(SMALL[case](), path)
    p = run("infer", "--symbolic", path)
    assert p.returncode == 0, p.stderr
    assert "nested too deeply" not in p.stdout + p.stderr
    status, _, err = run_cli(["infer", "--symbolic", "--explain", path])  # in process: faster
    assert status == 0, err


def test_cli_symbolic_shows_the_proven_name(tmp_path):
    path = str(tmp_path / "concat.onnx")
    irmodel.save(concat_chain(50), path)
    p = run("infer", "--symbolic", path)
    keep = _survivor(f"d{i}" for i in range(51))
    assert f"output  z    FLOAT[{keep}, 4]" in p.stdout, p.stdout


# -- full size, bounded ---------------------------------------------------------------------------

LIMITED = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
resource.setrlimit(resource.RLIMIT_CPU, (10, 10))
from irmodel import cli
sys.exit(cli.main(sys.argv[1:]))
"""

FULL = {
    "broadcast": lambda: broadcast_chain(3000),
    "concat": lambda: concat_chain(3000),
    "matmul": lambda: matmul_chain(3000),
    "max_min": lambda: max_min(40, 250),
    "rank": lambda: large_rank(10, 100_000),
    "minus_text": lambda: minus_dim_param(990),
    "neg_chain": lambda: neg_chain(990),
    "mul_chain": lambda: mul_chain(3000),
}


@pytest.fixture(scope="module")
def full_size(tmp_path_factory):
    """The path of a full-size case's file, built once per module (the largest takes seconds)."""
    paths: dict = {}

    def get(case: str) -> str:
        if case not in paths:
            paths[case] = str(tmp_path_factory.mktemp("symbolic_full") / f"{case}.onnx")
            irmodel.save(FULL[case](), paths[case])
        return paths[case]
    return get


@pytest.mark.slow
@pytest.mark.parametrize("flags", [("--symbolic",), ("--symbolic", "--explain")], ids=" ".join)
@pytest.mark.parametrize("case", sorted(FULL))
def test_full_size_within_limits(full_size, case, flags):
    path = full_size(case)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, "-c", LIMITED, "infer", *flags, path], capture_output=True,
                       cwd=root, timeout=600)
    # killed by the CPU limit would be -SIGXCPU; a MemoryError would be a traceback or exit 3
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    assert b"Traceback" not in p.stderr
