"""Integer expressions over dim names, in one canonical form.

An `Expr` is a sum of products with integer coefficients over *atoms*.  An atom is a
dim name (a Python identifier) or one of the operations that do not distribute:
floor division, modulo, ``min``, ``max``, whose arguments are themselves canonical
expressions.  Canonical means: terms sorted by their monomial, factors of a monomial
sorted, zero coefficients dropped, constants folded, nested ``min``/``max``
flattened with duplicate arguments removed, a divisor made positive and the
multiples of it pulled out of a numerator (``(2*a + b + 5)//2`` is
``a + 2 + (b + 1)//2``).  So ``past + seq`` and ``seq + past`` are one value, and
textual equality of two printed expressions is equality of the expressions.

Semantics are Python's integer arithmetic (``//`` and ``%`` round toward minus
infinity), exactly: every rewrite here is an identity over all integers, so an
expression is never simplified into something that can differ from its input.
Operator rules decide *whether* an operation applies (e.g. ONNX's truncating
division only where its operands are known non-negative); this module only computes.

Text form: Python syntax as onnxruntime's symbolic inference writes dims
(``past + seq``, ``2*seq``, ``(H - 3)//2 + 1``, ``max(a, b)``), `to_text`; the sibling
module `parsing` reads it back.
Sizes are capped (`MAX_SIZE` nodes, `MAX_DEPTH` nestings, numbers up to `MAX_COEFF` in
magnitude): an operation whose result would be larger returns None, and the caller uses
a fresh symbol instead.  So no expression is deep (the recursive walks below go at most
`MAX_DEPTH` levels down) and no operation on expressions costs more than a bounded amount
(Max and Min refuse more than `MAX_SIZE` arguments before comparing them pairwise).
"""

from __future__ import annotations

MAX_SIZE = 48  # nodes (symbols, constants, operations) in one expression
MAX_TEXT = 1024  # characters of a dim_param parsed as an expression
MAX_DEPTH = 16  # nesting of floor division, modulo, min and max
#: Largest magnitude of a coefficient or constant: 19 digits, as `parse` reads them (every
#: expression written parses back).  A dim is below 2**63, so an expression whose numbers
#: pass this is no size a tensor can have; and a number grown by repeated multiplication
#: (2**62 times 2**62 ...) is never carried on, thousands of digits long, nor formatted.
MAX_COEFF = 10**19 - 1

_KINDS = ("//", "%", "max", "min")


class Atom:
    """A non-distributing operation: ``kind`` in ``//``, ``%``, ``min``, ``max``; ``args`` Exprs."""

    __slots__ = ("kind", "args", "key", "size", "depth")

    def __init__(self, kind: str, args: tuple):
        self.kind = kind
        self.args = args
        self.key = (1, kind, tuple(a.key for a in args))
        self.size = 1 + sum(a.size for a in args)
        self.depth = 1 + max(a.depth for a in args)

    def __eq__(self, other) -> bool:
        return type(other) is Atom and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def _atom_key(a) -> tuple:
    return (0, a) if type(a) is str else a.key


def _atom_size(a) -> int:
    return 1 if type(a) is str else a.size


def _atom_depth(a) -> int:
    return 0 if type(a) is str else a.depth


class Expr:
    """A canonical integer expression (immutable, hashable; compare with ``==``).

    ``terms``: tuple of ``(monomial, coefficient)`` sorted by monomial; a monomial is a
    sorted tuple of atoms (repeated for powers), ``()`` for the constant term.
    """

    __slots__ = ("terms", "key", "size", "depth", "_text")
    _text: str | None

    def __init__(self, terms: tuple):
        self.terms = terms
        self.key = tuple((tuple(_atom_key(a) for a in m), c) for m, c in terms)
        self.size = sum(1 + sum(_atom_size(a) for a in m) for m, _ in terms)
        self.depth = max((_atom_depth(a) for m, _ in terms for a in m), default=0)
        self._text = None

    def __eq__(self, other) -> bool:
        return type(other) is Expr and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Expr({to_text(self)!r})"

    @property
    def is_const(self) -> bool:
        return not self.terms or (len(self.terms) == 1 and not self.terms[0][0])

    @property
    def const(self) -> int:
        """The constant term (the value, for a constant expression)."""
        if self.terms and not self.terms[-1][0]:
            return self.terms[-1][1]
        return 0

    def symbol(self) -> str | None:
        """The name, when the expression is exactly one dim name."""
        if len(self.terms) == 1:
            m, c = self.terms[0]
            if c == 1 and len(m) == 1 and type(m[0]) is str:
                return m[0]
        return None

    def symbols(self) -> set:
        out: set = set()
        for m, _ in self.terms:
            for a in m:
                if type(a) is str:
                    out.add(a)
                else:
                    for x in a.args:
                        out |= x.symbols()
        return out


def _mono_key(m) -> tuple:
    # the constant term sorts last; then by degree (higher first), then by the factors
    return (0 if m else 1, -len(m), tuple(_atom_key(a) for a in m))


def _make(acc: dict) -> Expr:
    """The canonical Expr of a {monomial: coefficient} map."""
    terms = [(m, c) for m, c in acc.items() if c != 0]
    terms.sort(key=lambda t: _mono_key(t[0]))
    return Expr(tuple(terms))


def const(v: int) -> Expr:
    e = _CONSTS.get(v)
    if e is None:
        e = Expr((((), v),)) if v else Expr(())
        if -1024 <= v <= 1 << 16:
            _CONSTS[v] = e
    return e


def sym(name: str) -> Expr:
    e = _SYMS.get(name)
    if e is None:
        e = Expr((((name,), 1),))
        if len(_SYMS) > 100000:
            _SYMS.clear()
        _SYMS[name] = e
    return e


# Interned leaves (an Expr is immutable): dims read as expressions are mostly small
# numbers and plain names, made again and again.
_CONSTS: dict = {}
_SYMS: dict = {}


ZERO = const(0)
ONE = const(1)


def _checked(e: Expr | None) -> Expr | None:
    if e is None or e.size > MAX_SIZE or e.depth > MAX_DEPTH:
        return None
    for _, c in e.terms:
        if not -MAX_COEFF <= c <= MAX_COEFF:
            return None
    return e


def add(a: Expr, b: Expr) -> Expr | None:
    acc = dict(a.terms)
    for m, c in b.terms:
        acc[m] = acc.get(m, 0) + c
    return _checked(_make(acc))


def scale(a: Expr, k: int) -> Expr:
    if k == 0:
        return ZERO
    return Expr(tuple((m, c * k) for m, c in a.terms))


def neg(a: Expr) -> Expr:
    return scale(a, -1)


def sub(a: Expr, b: Expr) -> Expr | None:
    return add(a, neg(b))


def mul(a: Expr, b: Expr) -> Expr | None:
    if len(a.terms) * len(b.terms) > MAX_SIZE:
        return None
    acc: dict = {}
    for ma, ca in a.terms:
        for mb, cb in b.terms:
            m = tuple(sorted(ma + mb, key=_atom_key))
            acc[m] = acc.get(m, 0) + ca * cb
    return _checked(_make(acc))


def _split_multiples(a: Expr, k: int) -> tuple:
    """``a == k*q + r`` with each coefficient of ``r`` in ``[0, k)`` (k > 0)."""
    q: dict = {}
    r: dict = {}
    for m, c in a.terms:
        qc, rc = divmod(c, k)
        if qc:
            q[m] = qc
        if rc:
            r[m] = rc
    return _make(q), _make(r)


def floordiv(a: Expr, b: Expr) -> Expr | None:
    """``a // b`` (Python's floor division); None when ``b`` is 0 or the result is too large."""
    if b.is_const:
        k = b.const
        if k == 0:
            return None
        if k < 0:
            a, k = neg(a), -k
        if k == 1:
            return a
        q, r = _split_multiples(a, k)
        if not r.terms:
            return q
        if r.is_const:
            return add(q, const(r.const // k))
        lo, hi = bounds(r)
        if lo >= 0 and hi < k:
            return q  # 0 <= r < k: r//k is 0 (names are dims, >= 0)
        return add(q, _atom_expr(Atom("//", (r, const(k)))))
    if not a.terms:
        return ZERO if _nonzero(b) else None
    return _checked(_atom_expr(Atom("//", (a, b))))


def mod(a: Expr, b: Expr) -> Expr | None:
    """``a % b`` (Python's modulo: the sign of the divisor); None when ``b`` is 0."""
    if b.is_const:
        k = b.const
        if k == 0:
            return None
        if k < 0:
            r = mod(neg(a), const(-k))
            return None if r is None else neg(r)
        if k == 1:
            return ZERO
        _, r = _split_multiples(a, k)
        if r.is_const:
            return const(r.const % k)
        return _checked(_atom_expr(Atom("%", (r, const(k)))))
    if not a.terms:
        return ZERO if _nonzero(b) else None
    return _checked(_atom_expr(Atom("%", (a, b))))


def _nonzero(b: Expr) -> bool:
    lo, hi = bounds(b)
    return lo > 0 or hi < 0


def _atom_expr(atom: Atom) -> Expr:
    return Expr((((atom,), 1),))


def _same_kind_args(kind: str, e: Expr) -> tuple | None:
    """The arguments of ``e`` when it is exactly one ``kind`` (min or max) call."""
    if len(e.terms) == 1 and e.terms[0][1] == 1 and len(e.terms[0][0]) == 1:
        a = e.terms[0][0][0]
        if type(a) is Atom and a.kind == kind:
            return a.args
    return None


def _extremum(kind: str, args) -> Expr | None:
    flat: list = []
    # The first argument's own arguments, when it is a canonical call of this kind, never
    # beat one another (it was made here): they are kept without comparing them again, so
    # a Max folded input by input costs one comparison per kept argument, not all pairs.
    settled = 0
    for i, e in enumerate(args):
        inner = _same_kind_args(kind, e)
        if inner is not None:
            flat.extend(inner)
            if i == 0:
                settled = sum(1 for x in inner if not x.is_const)
        else:
            flat.append(e)
    pick = max if kind == "max" else min
    consts = [e.const for e in flat if e.is_const]
    rest: list = []
    seen: set = set()
    for e in flat:
        if not e.is_const and e not in seen:
            seen.add(e)
            rest.append(e)
    if len(rest) > MAX_SIZE:
        return None  # more arguments than a capped expression holds: no quadratic pruning
    if consts:
        rest.append(const(pick(consts)))
    # drop an argument that can never be the one picked: for max, one that is never
    # greater than another (their difference has bounds of one sign; names are dims >= 0)
    kept: list = rest[:settled]
    for e in rest[settled:]:
        if any(_never_beats(kind, e, f) for f in kept):
            continue
        kept = [f for f in kept if not _never_beats(kind, f, e)]
        kept.append(e)
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=lambda e: e.key)
    return _checked(_atom_expr(Atom(kind, tuple(kept))))


def _never_beats(kind: str, e: Expr, f: Expr) -> bool:
    """``max(e, f) == f`` (kind max) or ``min(e, f) == f`` (kind min) for every value of the names."""
    d = sub(e, f)
    if d is None:
        return False
    lo, hi = bounds(d)
    return hi <= 0 if kind == "max" else lo >= 0


def maximum(*args: Expr) -> Expr | None:
    return _extremum("max", args)


def minimum(*args: Expr) -> Expr | None:
    return _extremum("min", args)


# -- evaluation and bounds -----------------------------------------------------------

def evaluate(e: Expr, env: dict) -> int:
    """The value of ``e`` with each name bound in ``env`` (KeyError for a missing one)."""
    total = 0
    for m, c in e.terms:
        v = c
        for a in m:
            v *= env[a] if type(a) is str else _eval_atom(a, env)
        total += v
    return total


def _eval_atom(a: Atom, env: dict) -> int:
    vals = [evaluate(x, env) for x in a.args]
    if a.kind == "//":
        return vals[0] // vals[1]
    if a.kind == "%":
        return vals[0] % vals[1]
    return max(vals) if a.kind == "max" else min(vals)


INF = float("inf")


def _imul(a: tuple, b: tuple) -> tuple:
    def m(x, y):
        if x == 0 or y == 0:
            return 0
        return x * y
    vals = [m(a[0], b[0]), m(a[0], b[1]), m(a[1], b[0]), m(a[1], b[1])]
    return min(vals), max(vals)


def _ifloor(x, k: int):
    return x if x in (INF, -INF) else x // k


def bounds(e: Expr) -> tuple:
    """An interval ``(lo, hi)`` holding every value of ``e`` when each name is a dim (>= 0).

    Infinite ends are ``float('inf')``; the interval is sound, not always tight.
    """
    lo, hi = 0, 0
    for m, c in e.terms:
        iv = (c, c)
        for a in m:
            iv = _imul(iv, (0, INF) if type(a) is str else _atom_bounds(a))
        lo += iv[0]
        hi += iv[1]
    return lo, hi


def _atom_bounds(a: Atom) -> tuple:
    ivs = [bounds(x) for x in a.args]
    if a.kind == "//":
        (nlo, nhi), (dlo, dhi) = ivs
        if dlo > 0 and dlo == dhi:
            return _ifloor(nlo, dlo), _ifloor(nhi, dlo)
        if dlo > 0 and nlo >= 0:
            return 0, nhi
        return -INF, INF
    if a.kind == "%":
        dlo, dhi = ivs[1]
        if dlo > 0:
            return 0, dhi - 1
        if dhi < 0:
            return dlo + 1, 0
        return -INF, INF
    if a.kind == "max":
        return max(i[0] for i in ivs), max(i[1] for i in ivs)
    return min(i[0] for i in ivs), min(i[1] for i in ivs)


def substitute(e: Expr, mapping: dict) -> Expr | None:
    """``e`` with each name in ``mapping`` replaced by its expression (None if too large)."""
    if not mapping:
        return e
    total: Expr | None = ZERO
    for m, c in e.terms:
        v: Expr | None = const(c)
        for a in m:
            if type(a) is str:
                f = mapping.get(a)
                if f is None:
                    f = sym(a)
            else:
                args = []
                for x in a.args:
                    y = substitute(x, mapping)
                    if y is None:
                        return None
                    args.append(y)
                f = _apply(a.kind, args)
            if f is None:
                return None
            v = mul(v, f) if v is not None else None
            if v is None:
                return None
        if v is None:
            return None
        total = add(total, v) if total is not None else None
        if total is None:
            return None
    return total


def _apply(kind: str, args: list) -> Expr | None:
    if kind == "//":
        return floordiv(args[0], args[1])
    if kind == "%":
        return mod(args[0], args[1])
    return maximum(*args) if kind == "max" else minimum(*args)


# -- text ---------------------------------------------------------------------------------

def to_text(e: Expr) -> str:
    t = e._text
    if t is None:
        t = _text(e)
        e._text = t
    return t


def _text(e: Expr) -> str:
    if not e.terms:
        return "0"
    parts: list = []
    for i, (m, c) in enumerate(e.terms):
        negative = c < 0
        body = _mono_text(m, -c if negative else c, i == 0 and negative)
        if i == 0:
            parts.append("-" + body if negative else body)
        else:
            parts.append((" - " if negative else " + ") + body)
    return "".join(parts)


def _mono_text(m: tuple, c: int, after_unary_minus: bool = False) -> str:
    """``c*a*b`` for a monomial with a positive coefficient."""
    if not m:
        return str(c)
    factors = [] if c == 1 else [str(c)]
    alone = c == 1 and len(m) == 1 and not after_unary_minus
    for a in m:
        if type(a) is str:
            factors.append(a)
        else:
            t = _atom_text(a)
            factors.append(t if alone or a.kind in ("min", "max") else f"({t})")
    return "*".join(factors)


def _operand(e: Expr) -> str:
    """An argument of ``//`` or ``%``: parenthesized unless a name or a non-negative number."""
    t = to_text(e)
    if e.symbol() is not None or (e.is_const and e.const >= 0):
        return t
    if len(e.terms) == 1 and e.terms[0][1] == 1 and len(e.terms[0][0]) == 1:
        a = e.terms[0][0][0]
        if type(a) is Atom and a.kind in ("min", "max"):
            return t  # a call binds tighter than // and %
    return f"({t})"


def _atom_text(a: Atom) -> str:
    if a.kind in ("//", "%"):
        return f"{_operand(a.args[0])}{a.kind}{_operand(a.args[1])}"
    return f"{a.kind}({', '.join(to_text(x) for x in a.args)})"
