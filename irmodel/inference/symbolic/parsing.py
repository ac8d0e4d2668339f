"""Reading expressions: a dim_param written in Python syntax as an `expr.Expr`.

The text form is the one `expr.to_text` writes (``past + seq``, ``2*seq``,
``(H - 3)//2 + 1``, ``max(a, b)``), read with Python's precedence; anything else is a
`ParseError` (the dim then stays a plain name).  Bounded: at most `expr.MAX_TEXT`
characters, numbers of at most 19 digits, parentheses nested at most ``4 *
expr.MAX_DEPTH`` deep, a run of unary signs counted in a loop (990 minus signs before a
name are no nesting), every intermediate result within the expression cap.
"""

from __future__ import annotations

from .expr import (MAX_DEPTH, MAX_TEXT, Expr, add, const, floordiv, maximum, minimum, mod, mul, neg,
                   sub, sym)


def is_name(s: str) -> bool:
    """A dim name that can stand in an expression (a Python identifier, not min/max)."""
    if not s.isidentifier() or s in ("min", "max"):
        return False
    import keyword  # noqa: PLC0415
    return not keyword.iskeyword(s)


class ParseError(ValueError):
    """Text that is not an expression of this algebra."""


def parse(text: str) -> Expr:
    """The canonical form of an expression written in Python syntax (`ParseError` if not one)."""
    if len(text) > MAX_TEXT:
        raise ParseError("expression too long")
    if text.isidentifier():  # a plain name, by far the most common dim: no tokens, no parser
        if not is_name(text):
            raise ParseError(f"{text!r} cannot be a dim name")
        return sym(text)
    toks = _tokens(text)
    p = _Parser(toks)
    e = p.expr(0)
    if p.i != len(toks):
        raise ParseError("unexpected text after the expression")
    return e


def _tokens(text: str) -> list:
    out: list = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t":
            i += 1
        elif ch.isdigit() and ch.isascii():
            j = i
            while j < n and text[j].isascii() and text[j].isdigit():
                j += 1
            if j - i > 19:
                raise ParseError("number too long")
            out.append(("num", int(text[i:j])))
            i = j
        elif ch.isidentifier():
            j = i + 1
            while j < n and ("a" + text[j]).isidentifier():
                j += 1
            out.append(("name", text[i:j]))
            i = j
        elif text.startswith("//", i):
            out.append(("op", "//"))
            i += 2
        elif ch in "+-*%(),":
            out.append(("op", ch))
            i += 1
        else:
            raise ParseError(f"unexpected character {ch!r}")
    return out


class _Parser:
    """Precedence climbing over Python's rules for ``+ -`` (lowest), ``* // %``, unary ``-``."""

    def __init__(self, toks: list):
        self.toks = toks
        self.i = 0
        self.depth = 0

    def _peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def _take(self, value) -> None:
        if self._peek() != ("op", value):
            raise ParseError(f"expected {value!r}")
        self.i += 1

    def expr(self, level: int) -> Expr:
        if level == 0:
            e = self.expr(1)
            while self._peek() in (("op", "+"), ("op", "-")):
                op = self._peek()[1]
                self.i += 1
                r = self.expr(1)
                e = _must(add(e, r) if op == "+" else sub(e, r))
            return e
        if level == 1:
            e = self.unary()
            while self._peek() in (("op", "*"), ("op", "//"), ("op", "%")):
                op = self._peek()[1]
                self.i += 1
                r = self.unary()
                e = _must(mul(e, r) if op == "*" else floordiv(e, r) if op == "//" else mod(e, r))
            return e
        raise AssertionError(level)

    def unary(self) -> Expr:
        # a run of signs is counted, not recursed into: "- - - ... n" is as deep as "n"
        negative = False
        while True:
            kind, value = self._peek()
            if (kind, value) not in (("op", "-"), ("op", "+")):
                break
            self.i += 1
            negative ^= value == "-"
        e = self.primary()
        return neg(e) if negative else e

    def primary(self) -> Expr:
        kind, value = self._peek()
        self.depth += 1
        if self.depth > MAX_DEPTH * 4:
            raise ParseError("expression nested too deeply")
        try:
            if kind == "num":
                self.i += 1
                return const(value)
            if kind == "name":
                self.i += 1
                if value in ("min", "max"):
                    self._take("(")
                    args = [self.expr(0)]
                    while self._peek() == ("op", ","):
                        self.i += 1
                        args.append(self.expr(0))
                    self._take(")")
                    return _must(maximum(*args) if value == "max" else minimum(*args))
                if not is_name(value):
                    raise ParseError(f"{value!r} cannot be a dim name")
                return sym(value)
            if (kind, value) == ("op", "("):
                self.i += 1
                e = self.expr(0)
                self._take(")")
                return e
            raise ParseError("expected a number, a name or '('")
        finally:
            self.depth -= 1


def _must(e: Expr | None) -> Expr:
    if e is None:
        raise ParseError("expression too large or divides by zero")
    return e
