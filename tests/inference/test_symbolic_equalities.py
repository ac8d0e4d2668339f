"""The store of proven equalities (`irmodel.inference.symbolic.equalities`): lazy, exact, bounded.

Its answers are checked against the eager store it replaced (every stored value rewritten
at each new equality) on generated sequences of equalities; a chain of any length
resolves without recursion; a value past the expression cap frees its name.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from irmodel.inference.symbolic import expr as X, parsing as P
from irmodel.inference.symbolic.equalities import Equalities, names_of

NAMES = [f"n{i}" for i in range(8)]


class _Eager:
    """The former store: every value kept fully substituted (quadratic, but plainly right)."""

    def __init__(self):
        self.subst: dict = {}

    def add(self, name, value) -> bool:
        new = {}
        for k, v in self.subst.items():
            w = X.substitute(v, {name: value})
            if w is None:
                return False
            new[k] = w
        new[name] = value
        self.subst = new
        return True

    def apply(self, e):
        return X.substitute(e, self.subst)


def _linear(terms) -> X.Expr:
    e = X.ZERO
    for coef, name in terms:
        e = X.add(e, X.scale(X.sym(name), coef))
    return e


equality = st.tuples(st.sampled_from(NAMES), st.lists(
    st.tuples(st.integers(-3, 3), st.sampled_from(NAMES)), max_size=3), st.integers(0, 5))


@settings(max_examples=200, deadline=None)
@given(st.lists(equality, max_size=12))
def test_lazy_store_agrees_with_the_eager_one(equalities):
    lazy, eager = Equalities(), _Eager()
    for name, terms, k in equalities:
        # as `dims.record_equal` stores: a free name, and a value over free names without it
        if name in lazy:
            continue
        value = lazy.apply(X.add(_linear(terms), X.const(k)))
        if value is None or name in names_of(value):
            continue
        assert eager.add(name, value)  # small linear values: never past the cap
        lazy.add(name, value)
        for n in NAMES:
            assert lazy.apply(X.sym(n)) == eager.apply(X.sym(n)), (n, equalities)


def test_a_long_chain_resolves_without_recursion():
    s = Equalities()
    n = 5000  # five times Python's default recursion limit
    for i in range(n):  # n_i == n_{i+1} + 1, recorded oldest first: n_0 reaches n_n only through all
        s.add(f"c{i}", X.add(X.sym(f"c{i + 1}"), X.ONE))
    assert s.find("c0") == X.add(X.sym(f"c{n}"), X.const(n))
    assert s.find(f"c{n - 1}") == X.add(X.sym(f"c{n}"), X.ONE)
    assert s.find(f"c{n}") is None  # free


def test_resolving_is_amortized(monkeypatch):
    calls = []
    real = X.substitute

    def counted(e, mapping):
        calls.append(len(mapping))
        return real(e, mapping)
    monkeypatch.setattr(X, "substitute", counted)
    s = Equalities()
    n = 3000
    for i in range(n):  # a chain, with its first name read after every new equality
        s.add(f"c{i}", X.sym(f"c{i + 1}"))
        assert s.find("c0") == X.sym(f"c{i + 1}")
    assert len(calls) <= 3 * n


def test_a_value_past_the_cap_frees_its_name():
    s = Equalities()
    s.add("a", X.mul(X.sym("b"), X.sym("b")))  # a == b*b
    big = X.ZERO
    for i in range(10):
        big = X.add(big, X.sym(f"v{i}"))
    s.add("b", big)  # b == v0 + ... + v9: b*b has 55 terms, past the cap
    assert s.find("b") == big
    assert s.find("a") is None and "a" not in s
    assert s.drops == 1
    assert s.apply(X.sym("a")) == X.sym("a")


def test_names_of_nested_atoms():
    e = P.parse("max(a, b//c) + (d % 3)*e")
    assert sorted(names_of(e)) == ["a", "b", "c", "d", "e"]
