"""Arithmetic on dims, in one place (see `types` for what a dim is).

By default these are the reference's rules: a result is known only when every
operand is known, with the identities it applies (``1 * d``, ``d * 1``, ``d / 1``,
``d + 0``, ``d - 0`` keep ``d``).  Overflow of the int64 a dim holds is an error where
the reference checks it.  Operator functions call these and never compute with dims
themselves.

**Symbolic mode** (``infer_shapes(..., symbolic=True)``): while a
`SymbolicState` is active (`use_symbolic`), the "unknown" branches compute integer
expressions instead (`irmodel.inference.symbolic.expr`).  An expression dim is still a
``str`` -- its canonical text, e.g. ``"past + seq"`` -- so every operator rule that
treats a name as "a size known by name" treats an expression the same way, soundly:
two dims with the same canonical text are the same size.  `expr` reads a dim (an
int, a name, or the text of an expression, parsed back and cached) as an `Expr`,
`dim` writes one back (an int when constant, None past the size cap).

Equalities proven by an operator's semantics (MatMul's inner dims, ...) are recorded
with `record_equal` (in a union-find store, `symbolic.equalities`) and applied to every
dim read afterwards (`resolve`).
"""

from __future__ import annotations

import math
import struct
from contextvars import ContextVar

from .symbolic import expr as X
from .symbolic import parsing as P
from .symbolic.equalities import Equalities
from .errors import fail_shape
from .types import Dim

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_F32 = struct.Struct("<f")


def wrap64(v: int) -> int:
    """``v`` as C++ int64 arithmetic leaves it (two's complement wrap-around)."""
    if INT64_MIN <= v <= INT64_MAX:
        return v
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


def int64_of_float(x, rounding=math.trunc) -> int:
    """A number from a file (a scale, a size, a depth read from a float tensor) as the int64
    the reference's ``static_cast<int64_t>`` makes of it on x86-64, after ``rounding``
    (``math.trunc``, the cast itself; ``math.floor``; ...): NaN, the infinities and every
    value outside int64 give INT64_MIN (the processor's "integer indefinite"; C++ leaves
    them undefined).  An int stays as it is.  The one conversion of a float from a file to
    an int in inference: ``int(inf)`` would raise, and ``int(1e300)`` is a 301-digit int."""
    if type(x) is int:
        return x
    if not math.isfinite(x):
        return INT64_MIN
    v = rounding(x)
    return v if INT64_MIN <= v <= INT64_MAX else INT64_MIN


def f32(x: float) -> float:
    """``x`` rounded to float32 as C's ``(float)x`` does: past float32's range, an infinity
    (``struct`` refuses to pack those; the reference's float arithmetic gives inf)."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def float_div(a: float, b: float) -> float:
    """IEEE ``a / b`` as C++ divides doubles: by zero, a signed infinity (NaN for 0/0)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def int32(v: int) -> int:
    """``static_cast<int>`` of an int64, as the reference narrows axes and counts: the low 32 bits."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= (1 << 31) else v


def checked_mul(a: int, b: int) -> int:
    r = a * b
    if r < INT64_MIN or r > INT64_MAX:
        raise fail_shape("Integer overflow while multiplying dimension values ", a, " and ", b)
    return r


def checked_add(a: int, b: int) -> int:
    r = a + b
    if r < INT64_MIN or r > INT64_MAX:
        raise fail_shape("Integer overflow while adding dimension values ", a, " and ", b)
    return r


def checked_sub(a: int, b: int) -> int:
    r = a - b
    if r < INT64_MIN or r > INT64_MAX:
        raise fail_shape("Integer overflow while subtracting dimension values ", b, " from ", a)
    return r


def trunc_div(a: int, b: int) -> int:
    """C++ integer division (rounds toward zero); ``b`` must not be 0."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_rem(a: int, b: int) -> int:
    """C++ ``%`` (the sign of the dividend); ``b`` must not be 0."""
    return a - b * trunc_div(a, b)


def checked_div(a: int, b: int) -> int:
    if b == 0:
        raise fail_shape("Division by zero while inferring a dimension")
    if a == INT64_MIN and b == -1:
        raise fail_shape("Integer overflow while dividing dimension values ", a, " and ", b)
    return trunc_div(a, b)


def mul(a: Dim, b: Dim) -> Dim:
    """``dim1 * dim2``: known when both are; ``1 * d`` is ``d``; else unknown (or symbolic)."""
    if type(a) is int and type(b) is int:
        return checked_mul(a, b)
    if type(a) is int and a == 1:
        return b
    if type(b) is int and b == 1:
        return a
    if _STATE.get() is not None:
        return _binary(X.mul, a, b)
    return None


def mul_int(a: Dim, k: int) -> Dim:
    if type(a) is int:
        return checked_mul(a, k)
    if k != 1 and _STATE.get() is not None:
        return _binary(X.mul, a, k)
    return a if k == 1 else None


def div_int(a: Dim, k: int) -> Dim:
    """``a / k`` as C++ divides (toward zero); symbolic only for k > 0 (a dim is >= 0)."""
    if type(a) is int:
        return checked_div(a, k)
    if k > 1 and _STATE.get() is not None:
        return _binary(X.floordiv, a, k)
    return a if k == 1 else None


def add_int(a: Dim, k: int) -> Dim:
    if type(a) is int:
        return checked_add(a, k)
    if k != 0 and _STATE.get() is not None:
        return _binary(X.add, a, k)
    return a if k == 0 else None


def sub_int(a: Dim, k: int) -> Dim:
    if type(a) is int:
        return checked_sub(a, k)
    if k != 0 and _STATE.get() is not None:
        return _binary(X.sub, a, k)
    return a if k == 0 else None


def product(shape, start: int = 0, stop: int | None = None) -> Dim:
    """``multiplyDims``: the product of ``shape[start:stop]``, starting from 1."""
    result: Dim = 1
    for d in shape[start:stop]:
        result = mul(result, d)
    return result


def is_known(d: Dim) -> bool:
    return type(d) is int


def same(a: Dim, b: Dim) -> bool:
    """Provably the same size: equal values, or the same name."""
    if type(a) is int:
        return type(b) is int and a == b
    return type(a) is str and type(b) is str and a == b


def unify(source: Dim, target: Dim) -> Dim:
    """``unifyDim(source, target)``: the target refined by the source; values must agree."""
    if type(source) is int:
        if type(target) is int:
            if source != target:
                raise fail_shape("Dimension mismatch in unification between ", source, " and ", target)
            return target
        return source
    if target is not None:
        return target
    return source


def check_equal(a: Dim, b: Dim) -> None:
    """``unifyDim(dim1, dim2)`` of two read-only dims: values, when both known, must agree."""
    if type(a) is int and type(b) is int and a != b:
        raise fail_shape("Dimension mismatch in unification between ", a, " and ", b)


def unify_value(d: Dim, value: int) -> Dim:
    """``unifyDim(dim, value)``."""
    if type(d) is int:
        if d != value:
            raise fail_shape("Dimension mismatch in unification between ", d, " and ", value)
        return d
    return value


# -- symbolic mode ------------------------------------------------------------------------

class SymbolicState:
    """One symbolic inference run: the parse cache and the proven equalities.

    ``subst`` holds each eliminated dim name and the expression it was proven equal to
    (`Equalities`: brought up to date lazily, so recording an equality costs the same
    whether it is the first or the ten-thousandth).
    """

    __slots__ = ("subst", "_parsed", "_resolved", "_ops", "_tuples", "frozen")

    def __init__(self):
        self.frozen = 0  # > 0 inside a sub-graph: it may never run, so it proves nothing outside
        self.subst = Equalities()
        self._ops: dict = {}  # (operation, dim, dim) -> dim, valid until the next proven equality
        self._parsed: dict = {}  # text -> Expr or None (not an expression of ours)
        self._resolved: dict = {}  # dim text -> dim after substitution
        # shape or value tuple -> the same tuple resolved (the tuple itself when unchanged):
        # a model repeats a few shapes on thousands of values
        self._tuples: dict = {}

    @property
    def version(self) -> int:
        """Changes with every proven equality (and every one dropped past the cap): `outcome_token`."""
        return self.subst.changes + self.subst.drops

    def remember(self, text: str, e) -> None:
        """``text`` is the canonical text of ``e`` (`expr.to_text`): reading it back later
        is a lookup, not a parse (a Max folded input by input would re-parse, and prune
        again, every longer prefix of its arguments)."""
        parsed = self._parsed
        if text not in parsed:
            if len(parsed) > 100000:
                parsed.clear()
            parsed[text] = e

    def parse(self, text: str):
        try:
            return self._parsed[text]
        except KeyError:
            pass
        try:
            e = P.parse(text)
        except P.ParseError:
            e = None
        if e is not None and e.is_const:
            e = None  # a name such as "2" stays a name
        if len(self._parsed) > 100000:
            self._parsed.clear()
        self._parsed[text] = e
        return e


_STATE: ContextVar = ContextVar("irmodel_symbolic_state", default=None)


def use_symbolic(state: SymbolicState | None):
    """Make ``state`` the active one (None: the reference's rules); returns a token for `reset_symbolic`."""
    return _STATE.set(state)


def reset_symbolic(token) -> None:
    _STATE.reset(token)


def symbolic_state() -> SymbolicState | None:
    return _STATE.get()


def expr(d) -> X.Expr | None:
    """A dim (or an int) as an expression: None when unknown or a name no expression can hold."""
    if type(d) is int:
        return X.const(d)
    if type(d) is not str:
        return d if type(d) is X.Expr else None
    st = _STATE.get()
    if st is None:
        try:
            return P.parse(d)
        except P.ParseError:
            return None
    e = st.parse(d)
    if e is not None and st.subst:
        e = st.subst.apply(e)
    return e


def dim(e: X.Expr | None) -> Dim:
    """An expression as a dim: an int when constant, else its canonical text (None for None)."""
    if e is None:
        return None
    if e.is_const:
        v = e.const
        return v if INT64_MIN <= v <= INT64_MAX else None
    text = X.to_text(e)
    st = _STATE.get()
    if st is not None:
        st.remember(text, e)
    return text


def _binary(op, a, b) -> Dim:
    st = _STATE.get()
    key = (op, a, b)
    if st is not None:
        got = st._ops.get(key, st)  # models repeat the same arithmetic layer after layer
        if got is not st:
            return got
    ea = expr(a)
    eb = expr(b) if ea is not None else None
    out = None if ea is None or eb is None else dim(op(ea, eb))
    if st is not None:
        if len(st._ops) > 100000:
            st._ops.clear()
        st._ops[key] = out
    return out


def memo(key: tuple, compute):
    """``compute()``, remembered under ``key`` until the next proven equality (symbolic
    mode; ``compute`` must be a pure function of the dims in ``key``)."""
    st = _STATE.get()
    if st is None:
        return compute()
    got = st._ops.get(key, st)
    if got is not st:
        return got
    out = compute()
    if len(st._ops) > 100000:
        st._ops.clear()
    st._ops[key] = out
    return out


def add(a, b) -> Dim:
    """``a + b`` of dims or ints: an int when both are known; ``0 + d`` is ``d``; else an
    expression (symbolic mode) or None."""
    if type(a) is int and type(b) is int:
        return checked_add(a, b)
    if type(a) is int and a == 0:
        return b
    if type(b) is int and b == 0:
        return a
    return _binary(X.add, a, b) if _STATE.get() is not None else None


def sub(a, b) -> Dim:
    if type(a) is int and type(b) is int:
        return checked_sub(a, b)
    return _binary(X.sub, a, b) if _STATE.get() is not None else None


def floordiv(a, b) -> Dim:
    """``a // b`` with Python's floor semantics (callers decide whether that is the operator's)."""
    if type(a) is int and type(b) is int:
        return None if b == 0 else a // b
    return _binary(X.floordiv, a, b) if _STATE.get() is not None else None


def mod(a, b) -> Dim:
    """``a % b`` with Python's semantics (the sign of the divisor)."""
    if type(a) is int and type(b) is int:
        return None if b == 0 else a % b
    return _binary(X.mod, a, b) if _STATE.get() is not None else None


def minimum(a, b) -> Dim:
    if type(a) is int and type(b) is int:
        return min(a, b)
    return _binary(X.minimum, a, b) if _STATE.get() is not None else None


def maximum(a, b) -> Dim:
    if type(a) is int and type(b) is int:
        return max(a, b)
    return _binary(X.maximum, a, b) if _STATE.get() is not None else None


def bounds(d) -> tuple:
    """An interval holding the value of ``d`` (names are dims, >= 0); unknown: (-inf, inf)."""
    if type(d) is str:
        if d.isidentifier():  # a plain name (not eliminated): a dim, nothing more known
            st = _STATE.get()
            if (st is None or d not in st.subst) and P.is_name(d):
                return 0, X.INF
        return memo(("bounds", d), lambda: _bounds(d))
    return _bounds(d)


def _bounds(d) -> tuple:
    e = expr(d)
    if e is None:
        return -X.INF, X.INF
    return X.bounds(e)


def provably_not_one(d) -> bool:
    """True when ``d`` can never be 1 (so broadcasting cannot stretch it)."""
    if type(d) is int:
        return d != 1
    lo, hi = bounds(d)
    return lo >= 2 or hi <= 0


def provably_equal(a, b) -> bool:
    """Equal for every value of the names: the same canonical expression."""
    if type(a) is int and type(b) is int:
        return a == b
    ea, eb = expr(a), expr(b)
    return ea is not None and ea == eb


def resolve(d) -> Dim:
    """``d`` with the proven equalities applied, in canonical text (symbolic mode only)."""
    if type(d) is not str:
        return d
    st = _STATE.get()
    if st is None:
        return d
    got = st._resolved.get(d, st)
    if got is not st:
        return got
    out: Dim
    if d.isidentifier() and d not in st.subst:
        out = d  # a plain name no equality eliminated is its own canonical text
    else:
        e = expr(d)
        out = d if e is None else dim(e)
        if out is None:
            out = d
    if len(st._resolved) > 100000:
        st._resolved.clear()
    st._resolved[d] = out
    return out


def resolve_tuple(dims: tuple) -> tuple:
    """`resolve` of each element of a shape or a propagated value: the same tuple object
    when nothing changes (cached per tuple until the next proven equality)."""
    st = _STATE.get()
    if st is None:
        return dims
    cache = st._tuples
    got = cache.get(dims)
    if got is not None:
        return got
    out = dims
    for d in dims:
        if type(d) is str:
            new = tuple(resolve(x) for x in dims)
            if new != dims:
                out = new
            break
    if len(cache) > 100000:
        cache.clear()
    cache[dims] = out
    return out


def record_equal(a, b) -> None:
    """Record ``a == b``, proven by an operator's semantics (no-op outside symbolic mode).

    One name is eliminated: a name that the other side does not mention and that
    appears linearly with coefficient +-1 (a fresh ``unk__`` name preferred).  Nothing
    is recorded when the difference cannot be solved that way.
    """
    if a == b or (type(a) is int and type(b) is int):
        return  # nothing to learn (known values are checked by the operator's rule)
    st = _STATE.get()
    if st is None or st.frozen:
        return
    ea, eb = expr(a), expr(b)
    if ea is None or eb is None or ea == eb:
        return
    diff = X.sub(ea, eb)
    if diff is None or diff.is_const:
        return
    best = None
    for m, c in diff.terms:
        if len(m) == 1 and type(m[0]) is str and c in (1, -1):
            name = m[0]
            if sum(1 for mm, _ in diff.terms for x in mm if x == name) != 1:
                continue
            if any(type(x) is not str and name in _atom_symbols(x) for mm, _ in diff.terms for x in mm):
                continue
            rank = (0 if name.startswith("unk__") else 1, name)
            if best is None or rank < best[0]:
                best = (rank, name, c)
    if best is None:
        return
    _, name, c = best
    rest = X.sub(diff, X.scale(X.sym(name), c))  # diff = c*name + rest == 0
    if rest is None:
        return
    value = rest if c == -1 else X.neg(rest)
    _add_subst(st, name, value)


def _atom_symbols(a) -> set:
    out: set = set()
    for x in a.args:
        out |= x.symbols()
    return out


def _add_subst(st: SymbolicState, name: str, value) -> None:
    st.subst.add(name, value)  # values mentioning ``name`` are brought up to date when read
    st._resolved.clear()
    st._ops.clear()
    st._tuples.clear()


def broadcast_names(column: list) -> Dim:
    """Symbolic mode: one output dim of multidirectional broadcasting, from the inputs' dims.

    Each input dim is either 1 or the output's size.  A dim that can never be 1 (a value
    other than 1, or an expression whose bounds exclude 1) therefore *is* the output's
    size, and every other such dim equals it (recorded); the rest stay "1 or that".
    With no such dim and several different names, the result stays unknown.
    """
    fixed = None
    for d in column:
        if d is not None and provably_not_one(d):
            if fixed is None:
                fixed = d
            elif not provably_equal(fixed, d):
                record_equal(fixed, d)
    return fixed
