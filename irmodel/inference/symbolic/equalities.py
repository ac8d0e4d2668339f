"""The proven equalities of one symbolic run: each eliminated dim name and its expression.

Operators prove equalities between dims (MatMul's inner dims, the non-axis dims of a
Concat, broadcast dims that cannot be 1); `dims.record_equal` solves each for one name
and stores it here.  Every dim read afterwards has the eliminated names replaced
(`apply`), so two dims proven equal print alike.

The store is a union-find over expressions.  A stored value mentions only names that
were free when it was stored, but one of those may be eliminated later; instead of
rewriting every stored value at each new equality (quadratic: 3,000 chained equalities
took minutes), a value is brought up to date when it is read (`find`), with the
names it mentions resolved first and the result written back -- path compression.  A
value is known to be up to date when it was last resolved under the current number of
equalities, else a scan of its names (at most `expr.MAX_SIZE` nodes) decides.  The
graph of values is acyclic (a value never mentions a name eliminated before it), and
the walk keeps its own stack: a chain of any length is resolved without recursion.

A value that grows past the expression cap when brought up to date is dropped: its name
becomes free again (an unknown but named size, as if that equality had not been
proven).  Every expression handed out stays an identity of the model's dims, so this
loses precision, never soundness.
"""

from __future__ import annotations

from . import expr as X


def names_of(e: X.Expr) -> list:
    """The dim names ``e`` mentions, each once, without recursion (atoms nest ``MAX_DEPTH`` deep)."""
    out: list = []
    seen: set = set()
    todo = [e]
    while todo:
        for m, _ in todo.pop().terms:
            for a in m:
                if type(a) is str:
                    if a not in seen:
                        seen.add(a)
                        out.append(a)
                else:
                    todo.extend(a.args)
    return out


class Equalities:
    """Eliminated names and their expressions (see the module's docstring)."""

    __slots__ = ("_value", "_fresh", "changes", "drops")

    def __init__(self):
        self._value: dict = {}  # name -> Expr (possibly mentioning names eliminated later)
        self._fresh: dict = {}  # name -> `changes` when its value was last known up to date
        self.changes = 0  # counts the stored equalities (a value is up to date as of one count)
        self.drops = 0  # counts the values dropped past the cap

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        return len(self._value)

    def __contains__(self, name) -> bool:
        return name in self._value

    def add(self, name: str, value: X.Expr) -> None:
        """Eliminate ``name``: ``value`` must mention only free names (it is up to date)."""
        self.changes += 1
        self._value[name] = value
        self._fresh[name] = self.changes

    def find(self, name: str) -> X.Expr | None:
        """The expression ``name`` equals, over free names only; None for a free name."""
        values = self._value
        if name not in values:
            return None
        fresh = self._fresh
        now = self.changes
        if fresh.get(name) == now:
            return values[name]
        stack = [name]
        while stack:
            n = stack[-1]
            if n not in values or fresh.get(n) == now:
                stack.pop()
                continue
            v = values[n]
            stale = [s for s in names_of(v) if s in values and fresh.get(s) != now]
            if stale:
                stack.extend(stale)  # resolve what it mentions first (acyclic: this ends)
                continue
            stack.pop()
            mapping = {s: values[s] for s in names_of(v) if s in values}
            if mapping:
                w = X.substitute(v, mapping)
                if w is None:  # past the cap: the name is free again (a value up to
                    del values[n]  # date stays so: a freed name cannot make it stale)
                    fresh.pop(n, None)
                    self.drops += 1
                    continue
                values[n] = w
            fresh[n] = now
        return values.get(name)

    def apply(self, e: X.Expr) -> X.Expr | None:
        """``e`` with every eliminated name replaced (None when the result passes the cap)."""
        values = self._value
        mapping = None
        for s in names_of(e):
            if s in values:
                v = self.find(s)
                if v is not None:
                    if mapping is None:
                        mapping = {}
                    mapping[s] = v
        if mapping is None:
            return e
        return X.substitute(e, mapping)
